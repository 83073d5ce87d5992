// What taso-opt's stages after the search hand each other (OptimizeModel): the graph a
// stage would write, with what describes it, and the two ways to make one: a searched graph
// finished and checked, or the input as read.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pipeline/cost_setup.h"
#include "pipeline/output_checks.h"
#include "taso/ir/graph.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/search.h"

namespace taso::pipeline {

// Tells the options' on_stage, where set, that `stage` starts.
void Announce(const PipelineOptions& options, absl::string_view stage, absl::string_view detail);

// The input prepared for the search (kBeforeSearch: fused into convolutions, biases set
// apart, products on rows), and a searched graph finished (kAfterSearch: rows at their
// rank, weights folded, fusions back, nested pieces joined).
absl::StatusOr<Graph> PrepareFused(const Graph& activations);
absl::StatusOr<Graph> FinishGraph(const Graph& searched);

// The graphs both ends of the pipeline work from: as imported, and as the search starts
// (fused, biases set apart) with its lossless clean-up (`cleaned`: FinishGraph of it).
struct StageInputs {
  const Graph& imported;
  const Graph& separated;
  const Graph& cleaned;
  pipeline::SelfChecker& checker;  // of graphs against `imported`
};

// A graph a stage would write, with what describes it in the report: what the backend's
// executor runs (it at its layouts), the search's rewrites it applies, the backend's
// estimates of the input and of it, its layouts and its self-check. Each stage takes the
// last stage's output and returns the one to write, with its own record beside it.
struct StageOutput {
  Graph graph, run_graph;
  std::map<std::string, int> rules_applied;
  std::vector<AppliedRewrite> path;
  double cost_before = 0, cost_after = 0;  // seconds, by the backend's cost model
  std::optional<PipelineResult::Layouts> layouts;
  std::optional<SelfCheckCoverage> self_check;
  // Where the graph is one of the e-graph's other extractions: that graph as extracted, and
  // its price in the search's cost model (what the report gives for the search's graph).
  struct Extraction {
    Graph graph;
    double search_cost = 0;
  };
  std::optional<Extraction> extraction;

  std::string Mismatch() const { return self_check ? self_check->mismatch : std::string(); }
};

// The searched graph, with the rewrites that made it, finished (weights folded, fusions
// back), priced, laid out and checked against the imported one.
absl::StatusOr<StageOutput> FinishAndCheck(const StageInputs& in, const Graph& searched,
                                           std::map<std::string, int> rules_applied, std::vector<AppliedRewrite> path,
                                           CostModels& costs, const PipelineOptions& options);

// The input as read, its weight-only nodes folded and nothing else, checked and priced
// as the input: what is written where no rewrite is. Fails where the self-check finds it
// different from the input.
absl::StatusOr<StageOutput> AsReadOutput(const StageInputs& in, CostModels& costs, const PipelineOptions& options);

}  // namespace taso::pipeline
