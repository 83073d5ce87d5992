// Graph passes as data: a stage of the pipeline that rewrites a graph without search is a
// named list of passes run in order by RunPasses, so what a stage does is read in one
// place, and adding a pass is adding a line.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "taso/ir/graph.h"

namespace taso {

struct GraphPass {
  absl::string_view name;
  absl::StatusOr<Graph> (*run)(const Graph& graph);
};

// What one pass did: its name and the graph's node count before and after it.
struct PassRecord {
  std::string name;
  int nodes_before = 0, nodes_after = 0;
};

// `graph` through each of `passes` in order; a pass's failure is returned as it is, and
// ends the list. `records`, when given, gets one record per pass run.
absl::StatusOr<Graph> RunPasses(absl::Span<const GraphPass> passes, const Graph& graph,
                                std::vector<PassRecord>* records = nullptr);

}  // namespace taso
