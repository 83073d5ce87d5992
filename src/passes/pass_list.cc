#include "taso/passes/pass_list.h"

#include <optional>

#include "taso/ir/status_macros.h"

namespace taso {

absl::StatusOr<Graph> RunPasses(absl::Span<const GraphPass> passes, const Graph& graph,
                                std::vector<PassRecord>* records) {
  std::optional<Graph> current;  // the last pass's graph; none before the first
  for (const GraphPass& pass : passes) {
    const Graph& from = current ? *current : graph;
    ASSIGN_OR_RETURN(Graph next, pass.run(from));
    if (records != nullptr) records->push_back({std::string(pass.name), from.num_nodes(), next.num_nodes()});
    current = std::move(next);
  }
  if (!current) return graph;
  return *std::move(current);
}

}  // namespace taso
