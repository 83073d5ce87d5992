// That the optimized graph computes what the input computes (the self-check, on the
// reference kernels), and how fast both run on the backend's executor (which checks
// their outputs agree there too).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "taso/graph.h"
#include "taso/pipeline.h"

namespace taso::pipeline {

// Fails when a node is outside the operator library: the self-check could not run it.
absl::Status CheckSelfCheckCanRun(const Graph& graph);

// Runs both graphs with the reference kernels on the same random inputs (from `seed`)
// and returns the largest output difference; fails when it is beyond tolerance.
absl::StatusOr<double> SelfCheck(const Graph& before, const Graph& after, uint64_t seed);

// Times both graphs on `executor` (runs in turn over kMeasurePairs executor pairs);
// fails when the outputs there differ beyond tolerance.
absl::StatusOr<PipelineResult::Measurement> MeasureBoth(Backend executor, const Graph& before, const Graph& after,
                                                        int runs);

}  // namespace taso::pipeline
