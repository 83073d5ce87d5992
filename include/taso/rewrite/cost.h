// What a graph costs to run: the sum of its operators' costs (TASO 2.6). Operators that
// read only weights cost nothing: they are computed ahead of time (folded before export).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "taso/ir/graph.h"

namespace taso {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  // Estimated seconds for one run of node `n` of `graph`.
  virtual double NodeCost(const Graph& graph, NodeId n) = 0;
  // Estimated seconds for one run of the whole graph: by default the sum of the costs of
  // the nodes that are not weight-only.
  virtual double TotalCost(const Graph& graph);
  // A node of a graph that a caller is about to price.
  struct NodeOf {
    const Graph* graph;
    NodeId node;
  };
  // Said before pricing nodes whose costs a choice weighs against each other: a measured
  // model times those it does not know yet together, in turn with one another, so that
  // the machine's speed at two moments cannot decide between them, starting no more
  // measuring after `until`. Per node: whether its cost is known now (pricing it measures
  // nothing). By default all are (an estimate needs no measuring).
  virtual std::vector<bool> MeasureTogether(absl::Span<const NodeOf> nodes,
                                            std::chrono::steady_clock::time_point until) {
    return std::vector<bool>(nodes.size(), true);
  }
};

// A roofline estimate from each operator's FLOPs and bytes (OpDef::Metrics), plus a fixed
// launch overhead per operator, for when nothing can be measured.
class AnalyticCost : public CostModel {
 public:
  struct Machine {
    double flops_per_second = 1e11;  // about one core's vector throughput
    double bytes_per_second = 2e10;
    double launch_seconds = 2e-6;
  };
  AnalyticCost() = default;
  explicit AnalyticCost(Machine m) : machine_(m) {}
  std::string name() const override { return "analytic"; }
  double NodeCost(const Graph& graph, NodeId n) override;
  double Estimate(const OpMetrics& m) const;

 private:
  Machine machine_;
};

// The analytic model's machine with each operator's fixed cost set to the mean price
// `target` gives the operators of `graph` that cost it something and are not weight-only
// (the default machine where there are none): a model by which an operator saved is
// worth what an operator of this graph costs the target on average, whatever its work.
// One-operator timings miss what a runtime gains from fewer, larger operators (a shared
// input read once, fewer parallel sections): ONNX Runtime on two threads ran Q, K and V
// projections merged 5% faster than apart, where their timings alone priced the merge
// no cheaper.
AnalyticCost::Machine OperatorsAtMeanPrice(CostModel& target, const Graph& graph);

// What is computable ahead of time: constants (Value::is_constant: weights the user
// cannot feed), the nodes that read only such values, and their outputs.
struct WeightOnly {
  std::vector<bool> nodes;   // per node
  std::vector<bool> values;  // per value
};
WeightOnly FindWeightOnly(const Graph& graph);
// Whether `node` is computable ahead of time, given per value of its graph whether that
// value is: a library operator whose present inputs all are, or that reads only shapes.
bool IsWeightOnlyNode(const Node& node, const std::vector<bool>& weight_only_values);

}  // namespace taso
