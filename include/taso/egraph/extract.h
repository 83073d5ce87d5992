// Extraction: one e-node per needed e-class, so that the chosen e-nodes form an acyclic
// graph of least estimated cost, and that graph rebuilt as a Graph.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/egraph/egraph.h"
#include "taso/rewrite/cost.h"

namespace taso::egraph {

// The input graph an e-graph was built from (its classes' EClass::origin values are this
// graph's), so that e-nodes are priced among the neighbours they will have: a runtime
// such as ONNX Runtime converts layouts where an operator and its producer or reader run
// in different ones (OrtCost charges the reader), which a node priced alone never shows.
struct PricingContext {
  const Graph* graph = nullptr;
  const UseIndex* uses = nullptr;  // of `graph`
};

// Per e-node id: what it costs to run, priced by `cost` as a one-node graph at its
// classes' types. Leaves, opaque nodes (kept as they are whatever is chosen) and e-nodes
// computable ahead of time (reading only weight-only classes: folded after extraction)
// cost nothing. An operator with several outputs is priced once, shared by its outputs.
// With `only`, e-nodes whose operator's first output (FirstOutput) is not marked in it
// are left at 0 and not priced. With `context`, each computed child class is produced by
// the operator that computes it in the input graph, and each e-node (each output of an
// operator) also pays what its class's readers there pay more for reading its output
// than for reading a fed tensor; an edge between two e-nodes is so charged at both ends,
// which changes no choice between the e-nodes of one class (the input is priced the
// same way). With `only`, the marked operators are first measured together, before
// `stop` (CostModel::MeasureTogether). E-nodes reached after `stop` (in id order: the
// input's own operators come first) whose costs are not known by then are not priced:
// NaN.
std::vector<double> PriceENodes(
    const EGraph& egraph, CostModel& cost, const std::vector<bool>* only = nullptr,
    const PricingContext* context = nullptr,
    std::chrono::steady_clock::time_point stop = std::chrono::steady_clock::time_point::max());

// The e-node of the operator's first output that e-node `n` belongs to (`n` itself for a
// first output; kNoENode if it is gone).
ENodeId FirstOutput(const EGraph& egraph, ENodeId n);

// Whether a tree cost of `node` counts its child i: present, not an earlier child again,
// and not read only for its shape (a regrouped convolution's MergeGroups reads the
// activation's shape: counting the activation's tree there would count it twice, and
// no extraction by tree costs would choose the regrouping).
bool TreeCostCounts(const ENode& node, size_t i);

// Per e-node id: whether it is near-optimal and the roots reach its class through
// near-optimal e-nodes. With the greedy extraction's best tree cost per class, an e-node
// is near-optimal when its tree cost exceeds its class's best by at most the price of
// the class's best e-node (a factor of two locally). None when greedy fails.
std::vector<bool> NearOptimalENodes(const EGraph& egraph, const std::vector<double>& prices,
                                    const std::vector<ClassId>& roots);

// What PriceWithPruning measured.
struct PricingStats {
  int64_t priced = 0;    // operators priced by the analytic model (every one that costs something)
  int64_t measured = 0;  // operators priced by the measured model (the candidates kept)
  double scale = 1;      // measured over analytic price, over the measured operators
};

// Prices e-nodes by `measured` only where the analytic model leaves them near-optimal
// (NearOptimalENodes at analytic prices: the factor of two allows for the analytic
// model's error), so that extraction does not measure kernels for thousands of e-nodes
// no good graph uses. Every other e-node keeps its analytic price times the
// measured/analytic ratio of the measured ones, so that all prices are comparable.
std::vector<double> PriceWithPruning(const EGraph& egraph, CostModel& analytic, CostModel& measured,
                                     const std::vector<ClassId>& roots, PricingStats& stats,
                                     const PricingContext* context = nullptr);

// PriceWithPruning's prices, to which more measured e-nodes can be added: an extraction
// that chose an e-node priced only by scaling its analytic price (a grouped convolution
// regrouped, whose operator's ratio the dense convolutions set) has it measured, and
// the scaled prices follow the ratios of all measured e-nodes.
class PrunedPricing {
 public:
  // Measures until `measure_until`; the operators left keep their scaled analytic prices.
  PrunedPricing(const EGraph& egraph, CostModel& analytic, CostModel& measured, const std::vector<ClassId>& roots,
                const PricingContext* context = nullptr,
                std::chrono::steady_clock::time_point measure_until = std::chrono::steady_clock::time_point::max());
  const std::vector<double>& prices() const { return prices_; }
  const PricingStats& stats() const { return stats_; }
  // Measures the operators of `nodes` that cost something and are not measured yet; the
  // number it measured.
  int64_t MeasureToo(const std::vector<ENodeId>& nodes);

 private:
  int64_t Measure(std::vector<bool> more);  // marked on operators' first outputs; the number measured
  void Reprice();

  const EGraph& eg_;
  CostModel& measured_;
  const PricingContext* context_;
  std::chrono::steady_clock::time_point measure_until_;
  std::vector<double> analytic_prices_, measured_prices_, prices_;
  std::vector<bool> candidates_;  // measured, marked on operators' first outputs
  bool all_measured_ = false;     // where greedy failed at analytic prices
  PricingStats stats_;
};

struct Extraction {
  std::vector<ENodeId> choice;  // per class id (canonical ones): the e-node chosen, or kNoENode
  std::vector<ClassId> order;   // the chosen classes, each after the classes its e-node reads
};

// Greedy bottom-up extraction (Knuth's generalization of Dijkstra's algorithm to
// e-graphs): a class is chosen once all children of one of its e-nodes are, with the
// e-node of least tree cost (its price plus its distinct children's costs); so the
// choice is acyclic by construction. Tree costs count a shared subgraph once per reader:
// exact on trees, an over-estimate on DAGs. `roots` (the graph's computed outputs) may
// not be leaves. Fails when a root cannot be chosen without a cycle.
absl::StatusOr<Extraction> ExtractGreedy(const EGraph& egraph, const std::vector<double>& prices,
                                         const std::vector<ClassId>& roots);

// Greedy extraction by DAG costs: a class's cost is the sum of the prices of the
// operators its choice uses below it, each once (an operator shared by two readers, or
// the Split of a merge feeding two classes, counted once), where tree costs count a
// shared subgraph once per reader, which in a recurrence grows with the number of steps
// and makes the tree-cost greedy prefer forms that read the state fewer times. Each
// class keeps the set it uses; an e-node whose children's sets hold its own class (a
// cycle) is refused. Repeats until no class improves; none when `time_limit` seconds
// pass first or the roots' choices make a cycle.
std::optional<Extraction> ExtractGreedyDag(const EGraph& egraph, const std::vector<double>& prices,
                                           const std::vector<ClassId>& roots, double time_limit);

// Local search on an extraction by its DAG cost (each chosen e-node's price once, an
// operator of several outputs once): for every class used, every other e-node of it is
// tried, a multi-output e-node taking the used classes of its other outputs along (so
// that two products become one merged product and its Split in one move); a move is
// kept when it lowers the DAG cost and leaves the choice acyclic. Passes repeat until
// none improves or `time_limit` seconds pass. Recomputes extraction.order.
void ImproveExtraction(const EGraph& egraph, const std::vector<double>& prices, const std::vector<ClassId>& roots,
                       Extraction& extraction, double time_limit);

// The sum of the prices of the e-nodes the roots use through `choice`, an operator of
// several outputs once (its price times its outputs); infinite where it has a cycle.
double DagCost(const EGraph& egraph, const std::vector<double>& prices, const std::vector<ClassId>& roots,
               const std::vector<ENodeId>& choice);

// How ExtractExact ended.
enum class ExactStatus { kOptimal, kTimeLimit, kNoBetter, kTooLarge };

struct ExactExtraction {
  ExactStatus status = ExactStatus::kTooLarge;
  Extraction extraction;  // the program's choice; empty unless optimal or better than the incumbent
  double cost = 0;        // its DagCost; the incumbent's where it has no choice
};

// Exact extraction as an integer program (Z3's optimizer, MaxSAT over the operators'
// prices): a Boolean per allowed e-node, per class (needed) and per operator (priced
// once); a needed class has a chosen e-node, a chosen e-node needs its children's
// classes and its operator; an integer order per class that a chosen e-node's class
// exceeds its children's (no cycles); the roots are needed and no leaf answers a root.
// Only e-nodes marked in `allowed` take part (the incumbent's are added); with more than
// `max_enodes` of them the program is not built (kTooLarge). Stops at `time_limit`
// seconds with the best choice found if any (kTimeLimit). The result is returned when
// its DagCost is below the incumbent's, or the program proved it optimal.
ExactExtraction ExtractExact(const EGraph& egraph, const std::vector<double>& prices, const std::vector<ClassId>& roots,
                             std::vector<bool> allowed, const Extraction& incumbent, int64_t max_enodes,
                             double time_limit);

// The classes the roots use through `choice`, each after its chosen e-node's children.
std::vector<ClassId> TopologicalClasses(const EGraph& egraph, const std::vector<ClassId>& roots,
                                        const std::vector<ENodeId>& choice);

// The graph the extraction chooses, from the graph the e-graph was built from: its
// inputs, outputs (under their names) and weights (those still read); each computed
// value named after a graph value of its class where one exists.
absl::StatusOr<Graph> ExtractedGraph(const Graph& original, const GraphEGraph& built, const Extraction& extraction);

// The e-nodes an extraction uses to compute the original graph's outputs.
std::vector<ENodeId> UsedENodes(const Graph& original, const GraphEGraph& built, const Extraction& extraction);

}  // namespace taso::egraph
