#include "pipeline/search_engines.h"

#include <utility>

namespace taso::pipeline {

namespace {

class BacktrackingEngine : public SubstitutionEngine {
 public:
  BacktrackingEngine(CostModel& cost, SearchOptions options) : cost_(cost), options_(std::move(options)) {}
  EngineRun Search(const Graph& graph, const std::vector<RuleMatcher>& rules) override {
    SearchResult result = Optimize(graph, rules, cost_, options_);
    const BacktrackingStats stats = result.stats;
    return EngineRun{std::move(static_cast<SearchFound&>(result)), stats, {}};
  }

 private:
  CostModel& cost_;
  const SearchOptions options_;
};

class EGraphEngine : public SubstitutionEngine {
 public:
  EGraphEngine(CostModel& node_cost, CostModel& graph_cost, const PipelineOptions& options)
      : node_cost_(node_cost), graph_cost_(graph_cost), options_(options.egraph) {}
  EngineRun Search(const Graph& graph, const std::vector<RuleMatcher>& rules) override {
    egraph::EGraphSearchResult result = egraph::OptimizeWithEGraph(graph, rules, node_cost_, graph_cost_, options_);
    const egraph::EGraphStats stats = result.stats;
    std::vector<egraph::Alternative> alternatives = std::move(result.alternatives);
    return EngineRun{std::move(static_cast<SearchFound&>(result)), stats, std::move(alternatives)};
  }

 private:
  CostModel& node_cost_;
  CostModel& graph_cost_;
  const egraph::EGraphOptions options_;
};

}  // namespace

std::unique_ptr<SubstitutionEngine> MakeSearchEngine(const PipelineOptions& options, CostModels& costs) {
  if (options.search == SearchKind::kLayouts) {
    SearchOptions no_expansion = options.search_options;
    no_expansion.budget = 0;
    return std::make_unique<BacktrackingEngine>(costs.search(), std::move(no_expansion));
  }
  if (options.engine == SearchEngine::kBacktracking)
    return std::make_unique<BacktrackingEngine>(costs.search(), options.search_options);
  return std::make_unique<EGraphEngine>(*costs.backend, costs.search(), options);
}

}  // namespace taso::pipeline
