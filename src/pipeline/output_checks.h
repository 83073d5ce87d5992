// That the optimized graph computes what the input computes (the self-check, on the
// reference kernels), and how fast both run on the backend's executor (which checks
// their outputs agree there too).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "pipeline/check_plan.h"
#include "pipeline/cut_run.h"
#include "pipeline/value_numbering.h"
#include "taso/ir/graph.h"
#include "taso/ir/output_agreement.h"
#include "taso/pipeline/pipeline.h"

namespace taso::pipeline {

// Fails when a library node reads a value the self-check cannot give it: an opaque
// node's output of unknown shape or of a type other than float32, or a run-time input of
// such a type (the importer keeps such readers opaque, so this names a bug).
absl::Status CheckSelfCheckCanRun(const Graph& graph);

// Runs both graphs with the reference kernels, cut at opaque nodes (pipeline/cut_run.h):
// the same random run-time inputs and opaque outputs (from `seed`) go into both, and
// the graph outputs and opaque nodes' inputs are compared. Where the graphs disagree
// (other opaque nodes, a compared value beyond tolerance) the coverage's `mismatch` says
// where; fails only when a graph cannot be run.
// `scales`: the inputs' ranges, each a run of both graphs (default: kInputScales).
absl::StatusOr<SelfCheckCoverage> SelfCheck(const Graph& before, const Graph& after, uint64_t seed,
                                            std::vector<double> scales = {});

// SelfCheck of several graphs against one input graph, which is run once per input scale
// for all of them (a pipeline that checks the search's graph and then the input as read
// runs the input once rather than twice). A checked graph runs only what it computes
// otherwise than the input (pipeline/check_plan.h): a check point computed alike is the
// input's, and a value computed alike is taken from the input's run (run again for the
// values an earlier check did not keep). `before` must outlive it.
class SelfChecker {
 public:
  SelfChecker(const Graph& before, uint64_t seed, std::vector<double> scales = {})
      : before_(before),
        seed_(seed),
        scales_(scales.empty() ? std::vector<double>(std::begin(kInputScales), std::end(kInputScales))
                               : std::move(scales)) {}
  absl::StatusOr<SelfCheckCoverage> Check(const Graph& after);

 private:
  struct InputRun {  // the input's run at one scale of kInputScales
    double scale;
    TensorMap inputs, fed;
    CutRun expected;  // its kept values: those of `before_` that checked graphs read
  };
  absl::Status RunInput(const std::vector<ValueId>& keep);
  absl::Status KeepAlso(const std::vector<ValueId>& values);
  absl::StatusOr<SelfCheckCoverage> Compare(const Graph& after, const CheckPlan& plan) const;
  SelfCheckCoverage Coverage(const Graph& after) const;

  const Graph& before_;
  uint64_t seed_;
  std::vector<double> scales_;
  ValueNumbering numbering_;
  std::vector<uint32_t> before_numbers_;
  std::vector<InputRun> runs_;  // made by the first Check
};

// Fails when a node is outside the operator library (--measure compares graphs, which no
// executor runs then), saying so of --measure.
absl::Status CheckMeasurable(const Graph& graph);

// Times both graphs on `executor` (runs in turn over kMeasurePairs executor pairs);
// fails when the outputs there differ beyond tolerance.
absl::StatusOr<PipelineResult::Measurement> MeasureBoth(Backend executor, const Graph& before, const Graph& after,
                                                        int runs);

}  // namespace taso::pipeline
