#include "pipeline/cost_setup.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "taso/backends/backends.h"
#include "taso/backends/ort_cost.h"
#include "taso/ir/status_macros.h"

namespace taso::pipeline {

namespace {

// Null for "none": costs are then kept for this run only.
absl::StatusOr<std::unique_ptr<CostCache>> OpenCostCache(const std::string& path) {
  if (path == "none") return nullptr;
  return CostCache::Open(path.empty() ? DefaultCostCachePath() : path);
}

// The worker, with a message naming what is missing and what to use instead.
absl::StatusOr<std::shared_ptr<OrtWorker>> StartOrt() {
  absl::StatusOr<std::unique_ptr<OrtWorker>> worker = OrtWorker::Start();
  if (!worker.ok())
    return absl::FailedPreconditionError(absl::StrCat("the ort target (ONNX Runtime) cannot be used here: ",
                                                      worker.status().message(), "; use --target cpu instead"));
  return std::shared_ptr<OrtWorker>(*std::move(worker));
}

// Prices by a model the caller owns (PipelineOptions::cost_model).
class BorrowedCost : public CostModel {
 public:
  explicit BorrowedCost(CostModel& model) : model_(model) {}
  std::string name() const override { return model_.name(); }
  double NodeCost(const Graph& graph, NodeId n) override { return model_.NodeCost(graph, n); }
  double TotalCost(const Graph& graph) override { return model_.TotalCost(graph); }

 private:
  CostModel& model_;
};

bool NeedsOrt(const PipelineOptions& options) {
  const bool times_in_ort = options.target == Target::kOrt && options.verify_speed && options.timer == nullptr;
  return options.backend == Backend::kOrt || times_in_ort;
}

}  // namespace

std::optional<PipelineResult::CostSources> CostModels::Sources() const {
  if (measured == nullptr) return std::nullopt;
  return PipelineResult::CostSources{measured->device(), measured->counts()};
}

absl::StatusOr<CostModels> MakeCostModels(const PipelineOptions& options) {
  CostModels costs;
  if (NeedsOrt(options)) {
    ASSIGN_OR_RETURN(costs.ort_worker, StartOrt());
  }
  if (options.backend == Backend::kAnalytic) {
    costs.backend = options.cost_model ? std::unique_ptr<CostModel>(std::make_unique<BorrowedCost>(*options.cost_model))
                                       : std::make_unique<AnalyticCost>();
  } else if (options.backend == Backend::kCpu) {
    ASSIGN_OR_RETURN(std::unique_ptr<CostCache> cache, OpenCostCache(options.cost_cache));
    auto cpu = std::make_unique<CpuCost>(std::move(cache));
    costs.cpu = cpu.get();
    costs.measured = cpu.get();
    costs.backend = std::move(cpu);
  } else if (options.backend == Backend::kOrt) {
    ASSIGN_OR_RETURN(std::unique_ptr<CostCache> cache, OpenCostCache(options.cost_cache));
    auto ort = std::make_unique<OrtCost>(std::move(cache), costs.ort_worker, options.ort_threads);
    costs.measured = ort.get();
    costs.backend = std::move(ort);
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

namespace taso {

absl::Status CheckTargetAvailable(Target target) {
  if (target == Target::kOrt) return pipeline::StartOrt().status();
  if (target == Target::kCpu) return absl::OkStatus();
  for (const BackendInfo& b : AvailableBackends())
    if (b.name == "cuda" && b.usable) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "the cuda target cannot be used here (no usable GPU or CUDA build); use --target cpu instead");
}

}  // namespace taso
