// Joint data layouts on the cpu backend (TASO section 2.7, with measured costs). An
// operator with a blocked kernel may run in oneDNN's channel-blocked layout (parameter
// layout=blocked); explicit LayoutConvert operators convert wherever a tensor is read in
// the other layout, and are measured like any operator. Layouts are chosen node by node
// in dependency order: each takes the layout whose measured cost, with the conversions of
// its inputs and, when no reader could take the blocked layout, of its outputs, is least.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "taso/backends/cpu_cost.h"
#include "taso/ir/graph.h"
#include "taso/rewrite/cost.h"

namespace taso {

namespace internal {
class LayoutContext;  // layouts.cc
}

class CpuLayouts {
 public:
  explicit CpuLayouts(CpuCost& cost) : cost_(cost) {}

  struct Plan {
    std::vector<bool> blocked;  // per node
    double seconds = 0;         // the graph's cost so, conversions included
    int conversions = 0;
  };
  // Layouts for a graph whose nodes are all plain (no layout parameters).
  Plan Choose(const Graph& graph);
  // All nodes plain: the cost of the graph as it is.
  Plan AllPlain(const Graph& graph);
  // Every node the cpu kernels can run blocked, blocked: the plan with every blocked kernel
  // and conversion the graph can have, for checking them. Nothing is measured, so the
  // plan is not priced (`seconds` 0), and a kernel that cannot be prepared fails the run.
  Plan AllBlocked(const Graph& graph);
  // The graph as planned: blocked nodes carry layout=blocked and LayoutConvert nodes
  // convert between layouts. Names of outputs are kept.
  absl::StatusOr<Graph> Apply(const Graph& graph, const Plan& plan);

 private:
  double Evaluate(internal::LayoutContext& ctx, Plan& plan);
  CpuCost& cost_;
};

// The cost model of the joint search: a graph costs what it costs at the layouts
// CpuLayouts chooses for it. A node costs its cheaper layout (the search's quick
// estimate of a rewrite, conversions left out).
class LayoutAwareCost : public CostModel {
 public:
  explicit LayoutAwareCost(CpuCost& cost) : cost_(cost), layouts_(cost) {}
  std::string name() const override { return "cpu+layouts"; }
  double NodeCost(const Graph& graph, NodeId n) override;
  double TotalCost(const Graph& graph) override { return layouts_.Choose(graph).seconds; }

 private:
  CpuCost& cost_;
  CpuLayouts layouts_;
};

}  // namespace taso
