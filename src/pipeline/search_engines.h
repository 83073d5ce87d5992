// The substitution search engines behind one interface: TASO's backtracking search
// (rewrite/search.h) and equality saturation with extraction (egraph/engine.h). Each
// returns what every search finds, its own figures with the stop reason it really had,
// and the other graphs it found worth timing.
#pragma once

#include <memory>
#include <vector>

#include "pipeline/cost_setup.h"
#include "taso/egraph/engine.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/search.h"

namespace taso::pipeline {

struct EngineRun {
  SearchFound found;
  EngineStats stats;  // BacktrackingStats or egraph::EGraphStats
  // Other graphs the speed check may time where the found one does not pay (the
  // e-graph's other extractions); none from the backtracking search.
  std::vector<egraph::Alternative> alternatives;
};

class SubstitutionEngine {
 public:
  virtual ~SubstitutionEngine() = default;
  // Searches from `graph` with `rules`; what it finds never costs more than `graph` by
  // the cost model it prices graphs with.
  virtual EngineRun Search(const Graph& graph, const std::vector<RuleMatcher>& rules) = 0;
};

// The engine the options name, pricing by `costs` (which must outlive it): the
// backtracking search prices graphs by `costs.search()`; the e-graph prices e-nodes by
// the backend's model and graphs by `costs.search()`. Where only layouts are searched,
// both engines are the backtracking search with no expansion (the input graph, priced at
// its layouts).
std::unique_ptr<SubstitutionEngine> MakeSearchEngine(const PipelineOptions& options, CostModels& costs);

}  // namespace taso::pipeline
