#include "pipeline/cost_setup.h"

#include <utility>

#include "taso/status_macros.h"

namespace taso::pipeline {

namespace {

// Null for "none": costs are then kept for this run only.
absl::StatusOr<std::unique_ptr<CostCache>> OpenCostCache(const std::string& path) {
  if (path == "none") return nullptr;
  return CostCache::Open(path.empty() ? DefaultCostCachePath() : path);
}

}  // namespace

std::optional<PipelineResult::CostSources> CostModels::Sources() const {
  if (measured == nullptr) return std::nullopt;
  return PipelineResult::CostSources{measured->device(), measured->counts()};
}

absl::StatusOr<CostModels> MakeCostModels(const PipelineOptions& options) {
  CostModels costs;
  if (options.backend == Backend::kAnalytic) {
    costs.backend = std::make_unique<AnalyticCost>();
  } else if (options.backend == Backend::kCpu) {
    ASSIGN_OR_RETURN(std::unique_ptr<CostCache> cache, OpenCostCache(options.cost_cache));
    auto cpu = std::make_unique<CpuCost>(std::move(cache));
    costs.cpu = cpu.get();
    costs.measured = cpu.get();
    costs.backend = std::move(cpu);
  } else {
    ASSIGN_OR_RETURN(std::unique_ptr<CostCache> cache, OpenCostCache(options.cost_cache));
    ASSIGN_OR_RETURN(std::unique_ptr<MeasuredCost> cuda, MakeCudaCost(std::move(cache)));
    costs.measured = cuda.get();
    costs.backend = std::move(cuda);
  }
  if (options.search != SearchKind::kSubstitutions) costs.layout_aware = std::make_unique<LayoutAwareCost>(*costs.cpu);
  return costs;
}

}  // namespace taso::pipeline
