// Costs measured on a backend: each operator's kernel is prepared for its parameters and
// shapes and run (warm-up, then the median of repeated runs). Measurements are kept in
// an on-disk cache (SQLite) keyed by device, operator, parameters and shapes, so a
// second run on the same machine measures nothing new. Operators the backend has no
// kernel for get the analytic estimate.
#pragma once

#include <memory>
#include <string>

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

class CpuCost : public CostModel {
 public:
  // `cache` may be null (nothing kept between runs).
  explicit CpuCost(std::unique_ptr<CostCache> cache);
  std::string name() const override { return "cpu"; }
  double NodeCost(const Graph& graph, NodeId n) override;
  // The cost of an operator with these parameters and types (a node as it could be);
  // `measurable` says whether a kernel ran (else: the analytic estimate).
  double Cost(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
              absl::Span<const OutputType> outputs, bool* measurable = nullptr);
  const std::string& device() const { return device_; }

  struct Counts {
    int measured = 0;   // run now
    int cached = 0;     // read from the cache file
    int estimated = 0;  // no kernel (or it failed): analytic estimate
  };
  const Counts& counts() const { return counts_; }

 private:
  std::unique_ptr<CostCache> cache_;
  std::string device_;
  AnalyticCost fallback_;
  struct Known {
    double seconds;
    bool measured;
  };
  absl::flat_hash_map<std::string, Known> memo_;
  Counts counts_;
};

// The key a measurement is stored under: operator, parameters, input and output shapes.
std::string CostKey(const Graph& graph, NodeId n);
std::string CostKey(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                    absl::Span<const OutputType> outputs);

}  // namespace taso
