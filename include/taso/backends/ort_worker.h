// ONNX Runtime driven from C++ through a long-lived Node.js worker (tools/ort/ort_worker.js):
// this machine has ONNX Runtime only as the npm package onnxruntime-node, without C or C++
// headers. One worker serves a whole taso-opt run; requests and replies are one JSON
// object a line over pipes. Every failure (no Node.js, ONNX Runtime that cannot load, a
// worker that dies, hangs or answers nonsense) comes back as a Status, never a crash.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "taso/backends/paired_timing.h"

namespace taso {

struct OrtWorkerOptions {
  // The worker script: empty, $TASO_ORT_WORKER, else tools/ort/ort_worker.js of the source tree.
  std::string script;
  std::string node = "node";  // found on PATH unless it holds a '/'
  // How long one request may take before the worker is given up (and killed).
  absl::Duration timeout = absl::Seconds(300);
};

// The script used when the options name none.
std::string DefaultOrtWorkerScript();

// ONNX Runtime's intra-op threads as they are passed to it: a positive count, or 0 for
// what its default session takes (a user's InferenceSession unless told otherwise). The
// default is not the explicit count of the physical cores: on a 2-core machine here it
// starts no pool thread, while 2 asked for ran small models twice as slow.
// The words for reports ("2 threads", "its default threads") and the part of a cost
// cache key that names them (default: with the CPUs this process may run on).
std::string OrtThreadsName(int threads);
std::string OrtThreadsKey(int threads);

class OrtWorker {
 public:
  // Starts the worker and greets it; fails with a message naming what is missing (Node.js,
  // the script, onnxruntime-node) when it cannot serve.
  static absl::StatusOr<std::unique_ptr<OrtWorker>> Start(const OrtWorkerOptions& options = {});
  ~OrtWorker();
  OrtWorker(const OrtWorker&) = delete;
  OrtWorker& operator=(const OrtWorker&) = delete;

  // ONNX Runtime's version, as the worker reported it ("1.30.0").
  const std::string& version() const { return version_; }
  pid_t pid() const { return pid_; }

  // One request (a JSON object without newlines) and its reply line. A reply holding
  // "error" becomes an error carrying its text; after a timeout, a dead worker or a
  // reply that is no JSON object the worker is unusable and every later call fails.
  absl::StatusOr<std::string> Request(absl::string_view json);

  // A session of the model at `path` (`threads` intra-op threads); its id.
  absl::StatusOr<int64_t> Load(const std::string& path, int threads);
  // A run of a loaded session, in seconds as the worker timed it: with a burst, the
  // median of runs made back to back for that long (after one run not counted), else one.
  absl::StatusOr<double> Run(int64_t session, absl::Duration burst = absl::ZeroDuration());
  absl::Status Release(int64_t session);
  // `pairs` pairs of sessions of `a` and `b`, made in both orders, each timed for `rounds`
  // rounds in turn (`apart`: each session of a pair timed alone, made after the other was
  // released): per pair, the medians in seconds.
  using PairMedians = taso::PairMedians;
  absl::StatusOr<PairMedians> Compare(const std::string& a, const std::string& b, int threads, int pairs, int rounds,
                                      bool apart = false);

 private:
  OrtWorker() = default;
  absl::Status Send(absl::string_view json);
  absl::StatusOr<std::string> ReadLine();
  // Kills and reaps the worker; later requests fail with `why`.
  void Stop(const absl::Status& why);

  OrtWorkerOptions options_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  std::string buffered_;  // read past the last line returned
  std::string version_;
  absl::Status broken_;  // set once the worker cannot be used
};

// Reading the worker's flat replies: a number, an array of numbers or a string under `key`.
absl::StatusOr<double> JsonNumber(absl::string_view json, absl::string_view key);
absl::StatusOr<std::vector<double>> JsonNumbers(absl::string_view json, absl::string_view key);
absl::StatusOr<std::string> JsonString(absl::string_view json, absl::string_view key);
// `text` as a JSON string literal, quoted and escaped.
std::string JsonQuote(absl::string_view text);

}  // namespace taso
