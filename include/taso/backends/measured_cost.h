// Costs measured on a backend: each operator's kernel is prepared for its parameters and
// shapes and run (warm-up, then the median of repeated runs), in turn with a reference
// kernel (a square matrix product, 256 wide on a CPU), and kept as a multiple of the
// reference's time: the machine's speed drifts on a shared machine, and a kernel timed
// in a slow minute must not look dearer than one timed in a fast minute. Measurements are kept in an
// on-disk cache (cost_cache.h) under their cost key (cost_key.h) and the backend's device
// string, so a second run on the same machine measures nothing new. Operators the backend
// has no kernel for get the analytic estimate.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/cost_key.h"
#include "taso/ir/graph.h"
#include "taso/ir/op.h"
#include "taso/ir/params.h"
#include "taso/rewrite/cost.h"

namespace taso {

// Costs measured on a backend, read from the cache when measured before; an operator
// the backend has no kernel for gets the analytic estimate.
class MeasuredCost : public CostModel {
 public:
  double NodeCost(const Graph& graph, NodeId n) override;
  // Measures the nodes' kernels not known yet (nor their alternatives) in turn with one
  // another, a few of similar size at a time, each group against one reference median:
  // timed one by one, each against the reference at its own moment, two convolutions
  // that ONNX Runtime ran 1.6 and 2.0 ms in turn were priced 1.5 and 2.6 ms (the 256x256
  // reference product itself ranged 0.32-0.62 ms within seconds).
  std::vector<bool> MeasureTogether(absl::Span<const NodeOf> nodes,
                                    std::chrono::steady_clock::time_point until) override;
  // The cost of an operator with these parameters and types (a node as it could be);
  // `measurable` says whether a kernel ran (else: the analytic estimate).
  double Cost(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
              absl::Span<const OutputType> outputs, bool* measurable = nullptr);
  // What the measurements are keyed under besides the cost key: kernels, libraries,
  // machine. Files written by earlier runs are keyed by it.
  const std::string& device() const { return device_; }

  struct Counts {
    int measured = 0;   // run now
    int cached = 0;     // read from the cache file
    int estimated = 0;  // no kernel (or it failed): analytic estimate
  };
  const Counts& counts() const { return counts_; }
  // Whether every measurement could be put in seconds. When the reference kernel cannot
  // be timed, times kept as multiples of it (the cache file's, and those measured now)
  // mean nothing: the costs asked for since are analytic estimates, and this holds the
  // error, which the caller must report rather than trust those costs.
  const absl::Status& status() const { return status_; }

 protected:
  // `cache` may be null (nothing kept between runs).
  MeasuredCost(std::unique_ptr<CostCache> cache, std::string device);
  // One run of the backend's kernel on buffers of its own, returning its seconds; nullopt
  // where it has none.
  using KernelRun = std::function<absl::StatusOr<double>()>;
  virtual std::optional<KernelRun> PrepareRun(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                              absl::Span<const OutputType> outputs) = 0;
  // Other parameters of the same operator and shapes that a choice weighs against these
  // (the node in another data layout). Those not known yet are measured in turn with
  // them, so that a change in the machine's speed between two measurements cannot decide
  // the choice.
  virtual std::vector<Params> Alternatives(const OpDef&, const Params&, absl::Span<const InputInfo>,
                                           absl::Span<const OutputType>) const {
    return {};
  }
  // The side of the reference kernel, a square matrix product: one that takes the
  // machine's time, not a kernel launch's (on a GPU, a 256x256 product is all launch).
  virtual int64_t ReferenceSide() const { return 256; }
  // Whether the backend's executor runs the operator as a view of its input (it costs
  // nothing).
  virtual bool IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                      absl::Span<const OutputType> outputs) const = 0;
  // The median time of each run in seconds as the costs are: timed in turn with the
  // reference and scaled by the reference's time at the start, so that a time taken
  // while the machine runs slower than it did then is comparable with the costs.
  std::optional<std::vector<double>> TimeLikeCosts(std::vector<KernelRun> runs);

 private:
  struct Known {
    double seconds;
    bool measured;
  };
  // The cost under `key`, not in the memo yet, found under the parameters' canonical
  // spelling where the operator has one.
  Known FindCanonical(const CostKey& key);
  // The cost under `key`, not in the memo yet: zero for a view, else from the cache file,
  // a measurement, or the analytic estimate.
  Known Find(const CostKey& key);
  // The time kept under `key` in the cache file, as a multiple of the reference's; nullopt
  // where there is none (or no file, or no reference to scale it by).
  std::optional<double> FromCacheFile(const CostKey& key);
  // Whether a time is in the memo or the cache file.
  bool IsKnown(const CostKey& key);
  // Measures the kernel under `key` with its alternatives not known yet, in turn; keeps
  // every time measured (memo and cache file) and returns the one under `key`.
  std::optional<double> MeasureWithAlternatives(const CostKey& key);
  // Adds the run of the kernel under `key` and of its alternatives, each where it is not
  // known yet nor in `keys` already.
  void AddUnknownRuns(const CostKey& key, std::vector<KernelRun>& runs, std::vector<CostKey>& keys);
  // Times `runs` in turn and keeps each time under its key (none where a run fails).
  void KeepTimedInTurn(std::vector<KernelRun> runs, const std::vector<CostKey>& keys);
  // Prepares the kernel under `key`; on success adds it to `runs` and its key (owned) to
  // `keys`.
  bool AddRun(const CostKey& key, std::vector<KernelRun>& runs, std::vector<CostKey>& keys);
  // The median time of each run, timed in turn with the reference, as multiples of the
  // reference's time (seconds where there is no reference); nullopt if a run fails.
  std::optional<std::vector<double>> TimeInTurn(std::vector<KernelRun> runs);
  // Keeps a time measured now under `key`: in the memo, and in the cache file where it is
  // a multiple of the reference's; returns it in seconds (nullopt, keeping nothing, when
  // it cannot be put in seconds).
  std::optional<double> Keep(const CostKey& key, double references);
  // The analytic estimate, counted as one.
  Known Estimate(const CostKey& key);
  // A multiple of the reference's time in seconds; nullopt, with the error kept in
  // status_, when the reference cannot be timed.
  std::optional<double> InSeconds(double references);
  // The reference kernel, prepared on first use; null where the backend cannot run it
  // (then times are kept as they are, and not in the cache file).
  KernelRun* Reference();
  // What one run of the reference takes now (timed once, when first needed, success or
  // failure alike): a multiple of it times this is seconds.
  absl::StatusOr<double> SecondsPerReference();
  absl::StatusOr<double> TimeReference();
  absl::Status WarmUp(KernelRun& reference);

  std::unique_ptr<CostCache> cache_;
  std::string device_;
  AnalyticCost fallback_;
  // Keyed by owned keys, looked up by keys that refer to the node's parts: the search
  // asks for the cost of every node of every candidate graph, so a lookup copies nothing
  // and builds no text. The text is built only to read or write the cache file.
  absl::flat_hash_map<CostKey, Known> memo_;
  Counts counts_;
  std::optional<KernelRun> reference_;
  bool reference_prepared_ = false;
  std::optional<absl::StatusOr<double>> seconds_per_reference_;
  absl::Status status_;
};

}  // namespace taso
