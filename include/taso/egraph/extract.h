// Extraction: one e-node per needed e-class, so that the chosen e-nodes form an acyclic
// graph of least estimated cost, and that graph rebuilt as a Graph.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "taso/cost.h"
#include "taso/egraph/egraph.h"

namespace taso::egraph {

// Per e-node id: what it costs to run, priced by `cost` as a one-node graph at its
// classes' types. Leaves, opaque nodes (kept as they are whatever is chosen) and e-nodes
// computable ahead of time (reading only weight-only classes: folded after extraction)
// cost nothing. An operator with several outputs is priced once, shared by its outputs.
std::vector<double> PriceENodes(const EGraph& egraph, CostModel& cost);

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

// Local search on an extraction by its DAG cost (each chosen e-node's price once, an
// operator of several outputs once): for every class used, every other e-node of it is
// tried, a multi-output e-node taking the used classes of its other outputs along (so
// that two products become one merged product and its Split in one move); a move is
// kept when it lowers the DAG cost and leaves the choice acyclic. Passes repeat until
// none improves or `time_limit` seconds pass. Recomputes extraction.order.
void ImproveExtraction(const EGraph& egraph, const std::vector<double>& prices, const std::vector<ClassId>& roots,
                       Extraction& extraction, double time_limit);

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
