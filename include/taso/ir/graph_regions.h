// Where two graphs of one computation differ, as two small graphs a runtime can time:
// how a rewrite is priced where the runtime fuses or changes layouts across operators
// (a merged product and the Relu reading it, a regrouped convolution between the
// blocked ones), which no operator timed alone shows.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

// The nodes only one graph has, with the nodes both have next to them (producers of what
// they read, readers of what they compute), each set copied into a graph of its own:
// what the nodes read from outside becomes a graph input (a weight stays a weight), what
// is read outside or is a graph output becomes an output. The neighbours are the same in
// both regions, so that the operators that differ run between the same ones as in their
// graphs.
//
// A node is in both graphs when one of the other's has its operator, parameters and
// inputs. Inputs are the same by position, weights by content, and a computed value by
// how it is computed, or by its name where the other graph computes a value of that name
// and type too: a rewrite names what it computes in place of a value by that value's
// name, and the nodes reading it then read the same value in both graphs (the caller
// knows the two graphs compute alike: the names only say where).
struct DifferingRegions {
  Graph before, after;
  std::vector<NodeId> nodes_before, nodes_after;  // of the regions, in their graphs
  int differing_before = 0, differing_after = 0;  // nodes only one graph has
};

// Nullopt where the two graphs compute alike (no node differs); an error where a region
// cannot be made into a graph (a value of unknown shape at its edge, a cycle).
// `hops`: how far the neighbours reach (1: the nodes next to those that differ; 2: and the
// nodes next to those; ...).
absl::StatusOr<std::optional<DifferingRegions>> FindDifferingRegions(const Graph& before, const Graph& after,
                                                                     int hops = 1);

}  // namespace taso
