// The cost models of one pipeline run, built from its options.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/cpu_cost.h"
#include "taso/backends/cuda_cost.h"
#include "taso/backends/layouts.h"
#include "taso/backends/measured_cost.h"
#include "taso/backends/ort_worker.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/cost.h"

namespace taso::pipeline {

struct CostModels {
  std::unique_ptr<CostModel> backend;             // the backend's: estimates the graphs before and after
  MeasuredCost* measured = nullptr;               // `backend`, when it measures kernels
  CpuCost* cpu = nullptr;                         // `backend`, on the cpu backend
  std::unique_ptr<LayoutAwareCost> layout_aware;  // when layouts are searched
  // ONNX Runtime, when it prices the graphs or times them (the ort target's speed check).
  std::shared_ptr<OrtWorker> ort_worker;

  // What the search prices a graph by: at its best layouts when layouts are searched.
  CostModel& search() { return layout_aware ? *layout_aware : *backend; }
  // Where the measured backend's costs came from so far; unset on the analytic backend.
  std::optional<PipelineResult::CostSources> Sources() const;
  // Fails when the measured costs could not be put in seconds (MeasuredCost::status).
  absl::Status MeasuredStatus() const { return measured ? measured->status() : absl::OkStatus(); }
};

// Opens the cost cache the options name, starts ONNX Runtime where the options need it
// and makes the backend's cost model. Fails when the cache cannot be opened or the
// backend or the target cannot be used here.
absl::StatusOr<CostModels> MakeCostModels(const PipelineOptions& options);

}  // namespace taso::pipeline
