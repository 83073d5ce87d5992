// Costs measured on a backend: each operator's kernel is prepared for its parameters and
// shapes and run (warm-up, then the median of repeated runs), in turn with a reference
// kernel (a 256x256 matrix product), and kept as a multiple of the reference's time:
// the machine's speed drifts (2x over minutes on a shared machine), and a kernel timed in
// a slow minute must not look dearer than one timed in a fast minute. Measurements are
// kept in an on-disk cache (SQLite) keyed by device, operator, parameters and shapes, so
// a second run on the same machine measures nothing new. Operators the backend has no
// kernel for get the analytic estimate.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "taso/cost.h"

struct sqlite3;

namespace taso {

class CostCache {
 public:
  // Opens or creates the cache file (and its directory).
  static absl::StatusOr<std::unique_ptr<CostCache>> Open(const std::string& path);
  ~CostCache();
  std::optional<double> Lookup(const std::string& device, const std::string& key);
  absl::Status Store(const std::string& device, const std::string& key, double seconds);

 private:
  sqlite3* db_ = nullptr;
};

// The cache file used when none is named: $XDG_CACHE_HOME/taso/costs.sqlite, else
// ~/.cache/taso/costs.sqlite.
std::string DefaultCostCachePath();

// Costs measured on a backend, read from the cache when measured before; an operator
// the backend has no kernel for gets the analytic estimate.
class MeasuredCost : public CostModel {
 public:
  double NodeCost(const Graph& graph, NodeId n) override;
  // The cost of an operator with these parameters and types (a node as it could be);
  // `measurable` says whether a kernel ran (else: the analytic estimate).
  double Cost(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
              absl::Span<const OutputType> outputs, bool* measurable = nullptr);
  // What the measurements are keyed under besides the operator: kernels, libraries, machine.
  const std::string& device() const { return device_; }

  struct Counts {
    int measured = 0;   // run now
    int cached = 0;     // read from the cache file
    int estimated = 0;  // no kernel (or it failed): analytic estimate
  };
  const Counts& counts() const { return counts_; }

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
  // them, so a change in the machine's speed between two measurements cannot decide the
  // choice (a cache filled while the machine ran at half speed once kept ResNet-50 plain).
  virtual std::vector<Params> Alternatives(const OpDef&, const Params&, absl::Span<const InputInfo>,
                                           absl::Span<const OutputType>) const {
    return {};
  }
  // Whether the backend's executor runs the operator as a view of its input (it costs
  // nothing).
  virtual bool IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                      absl::Span<const OutputType> outputs) const = 0;

 private:
  std::unique_ptr<CostCache> cache_;
  std::string device_;
  AnalyticCost fallback_;
  struct Known {
    double seconds;
    bool measured;
  };
  // A measurement's keys: the hash the memo is keyed by, the text the cache file is.
  struct Keys {
    uint64_t hash;
    std::string text;
  };
  // The cost of what is not in the memo yet (`hash` its key there): zero for a view, else
  // from the cache file, a measurement, or the analytic estimate.
  Known Find(const OpDef& op, const Params& params, uint64_t hash, absl::Span<const InputInfo> inputs,
             absl::Span<const OutputType> outputs);
  // Measures the kernel for `params` with its alternatives not known yet, in turn; keeps
  // every time measured (memo and cache file) and returns the one for `params`.
  std::optional<double> MeasureWithAlternatives(const OpDef& op, const Params& params, Keys keys,
                                                absl::Span<const InputInfo> inputs,
                                                absl::Span<const OutputType> outputs);
  // Whether a time is in the memo or the cache file.
  bool IsKnown(const Keys& keys);
  // The reference kernel, prepared on first use; null where the backend cannot run it
  // (then times are kept as they are, and not in the cache file).
  KernelRun* Reference();
  // What one run of the reference takes now (timed once, when first needed): a multiple
  // of it times this is seconds.
  double SecondsPerReference();

  // Keyed by a 64-bit hash of the cost key (CostKeyHash), not its text: the search asks
  // for the cost of every node of every candidate graph, and building the text took a
  // quarter of NasNet-A's search time. The text is built only to read or write the cache.
  absl::flat_hash_map<uint64_t, Known> memo_;
  Counts counts_;
  std::optional<KernelRun> reference_;
  bool reference_prepared_ = false;
  std::optional<double> seconds_per_reference_;
};

// oneDNN kernel times (ops/cpu/).
class CpuCost : public MeasuredCost {
 public:
  explicit CpuCost(std::unique_ptr<CostCache> cache);
  std::string name() const override { return "cpu"; }

 protected:
  std::optional<KernelRun> PrepareRun(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                      absl::Span<const OutputType> outputs) override;
  std::vector<Params> Alternatives(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                   absl::Span<const OutputType> outputs) const override;
  bool IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
              absl::Span<const OutputType> outputs) const override;
};

// cuDNN, cuBLAS and our CUDA kernels' times (ops/cuda/), taken with CUDA events. Fails
// where this build has no cuda backend or no GPU can be used, saying which.
absl::StatusOr<std::unique_ptr<MeasuredCost>> MakeCudaCost(std::unique_ptr<CostCache> cache);

// The key a measurement is stored under: operator, parameters, input and output shapes.
std::string CostKey(const Graph& graph, NodeId n);
std::string CostKey(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                    absl::Span<const OutputType> outputs);
// A 64-bit hash of what CostKey writes out, for memos within a run.
uint64_t CostKeyHash(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                     absl::Span<const OutputType> outputs);

}  // namespace taso
