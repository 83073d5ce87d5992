#include "taso/ir/graph_regions.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"

#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"

namespace taso {

namespace {

// One graph's side: per node its signature, per value its identity (DifferingRegions).
struct Side {
  const Graph& graph;
  std::vector<uint64_t> signature;  // per node
  std::vector<uint64_t> identity;   // per value
  std::vector<bool> shared;         // per node: the other graph has a node of its signature
};

uint64_t TypeHash(const Value& value) {
  return absl::HashOf(static_cast<int>(value.dtype), std::vector<int64_t>(value.shape.begin(), value.shape.end()));
}

// Names of computed values, with their types.
absl::flat_hash_set<std::pair<std::string, uint64_t>> ComputedNames(const Graph& graph) {
  absl::flat_hash_set<std::pair<std::string, uint64_t>> names;
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    for (ValueId v : graph.node(n).outputs) names.emplace(graph.value(v).name, TypeHash(graph.value(v)));
  return names;
}

absl::Status Identify(Side& side, const absl::flat_hash_set<std::pair<std::string, uint64_t>>& other_names) {
  const Graph& g = side.graph;
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, g.TopologicalOrder());
  side.identity.assign(g.num_values(), 0);
  side.signature.assign(g.num_nodes(), 0);
  for (size_t i = 0; i < g.inputs().size(); ++i)
    side.identity[g.inputs()[i]] = absl::HashOf(absl::string_view("input"), i, TypeHash(g.value(g.inputs()[i])));
  for (ValueId v = 0; v < g.num_values(); ++v)
    if (g.value(v).is_constant())
      side.identity[v] = absl::HashOf(absl::string_view("weight"), g.value(v).data->ContentHash());
  for (NodeId n : order) {
    const Node& node = g.node(n);
    uint64_t h = absl::HashOf(node.op->name(), node.params.Hash(), node.outputs.size());
    if (node.onnx_node) h = absl::HashOf(h, node.onnx_node->SerializeAsString());
    for (ValueId in : node.inputs) h = absl::HashOf(h, in == kNoValue ? 0 : side.identity[in]);
    side.signature[n] = h;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const Value& out = g.value(node.outputs[i]);
      const bool named = other_names.contains(std::make_pair(out.name, TypeHash(out)));
      side.identity[node.outputs[i]] =
          named ? absl::HashOf(absl::string_view("named"), out.name, TypeHash(out)) : absl::HashOf(h, i);
    }
  }
  return absl::OkStatus();
}

void MarkShared(Side& side, const Side& other) {
  const absl::flat_hash_set<uint64_t> other_signatures(other.signature.begin(), other.signature.end());
  side.shared.assign(side.graph.num_nodes(), false);
  for (NodeId n = 0; n < side.graph.num_nodes(); ++n) side.shared[n] = other_signatures.contains(side.signature[n]);
}

// Adds to `neighbours` the signatures of the shared nodes next to the nodes of `side`
// that differ or are among `reached` (the neighbours of the hops before).
void AddNeighbours(const Side& side, const absl::flat_hash_set<uint64_t>& reached,
                   absl::flat_hash_set<uint64_t>& neighbours) {
  const Graph& g = side.graph;
  const UseIndex uses(g);
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    if (side.shared[n] && !reached.contains(side.signature[n])) continue;
    for (ValueId v : g.node(n).inputs)
      if (v != kNoValue && g.value(v).producer != kNoNode && side.shared[g.value(v).producer])
        neighbours.insert(side.signature[g.value(v).producer]);
    for (ValueId v : g.node(n).outputs)
      for (NodeId reader : uses.readers(v))
        if (side.shared[reader]) neighbours.insert(side.signature[reader]);
  }
}

// The region of `side`, in a topological order: the nodes that differ and the shared
// ones among `neighbours`.
std::vector<NodeId> Region(const Side& side, const absl::flat_hash_set<uint64_t>& neighbours, int& differing) {
  std::vector<NodeId> region;
  differing = 0;
  const std::vector<NodeId> order = *side.graph.TopologicalOrder();  // acyclic: Identify ordered it
  for (NodeId n : order) {
    differing += !side.shared[n];
    if (!side.shared[n] || neighbours.contains(side.signature[n])) region.push_back(n);
  }
  return region;
}

// The nodes of `region` (topologically ordered) copied into a graph of their own.
absl::StatusOr<Graph> RegionGraph(const Graph& g, const std::vector<NodeId>& region) {
  std::vector<bool> in_region(g.num_nodes(), false);
  for (NodeId n : region) in_region[n] = true;
  const UseIndex uses(g);
  GraphCopy copy(g);
  std::vector<ValueId> outputs;
  for (NodeId n : region) {
    for (ValueId v : g.node(n).inputs) {
      if (v == kNoValue || copy.Made(v) || g.value(v).is_weight()) continue;
      const Value& value = g.value(v);
      if (!value.shape_known) return absl::FailedPreconditionError(absl::StrCat(value.name, " has no known shape"));
      ASSIGN_OR_RETURN(const ValueId input, copy.graph().AddInput(value.name, value.dtype, value.shape));
      copy.Replace(v, input);
    }
    RETURN_IF_ERROR(copy.CopyNode(n));
    for (ValueId v : g.node(n).outputs) {
      bool read_outside = uses.is_graph_output(v);
      for (NodeId reader : uses.readers(v)) read_outside = read_outside || !in_region[reader];
      if (read_outside) outputs.push_back(v);
    }
  }
  for (ValueId v : outputs) {
    ASSIGN_OR_RETURN(const ValueId made, copy.Use(v));
    RETURN_IF_ERROR(copy.graph().AddOutput(made));
  }
  return std::move(copy.graph());
}

}  // namespace

absl::StatusOr<std::optional<DifferingRegions>> FindDifferingRegions(const Graph& before, const Graph& after,
                                                                     int hops) {
  Side a{before, {}, {}, {}}, b{after, {}, {}, {}};
  RETURN_IF_ERROR(Identify(a, ComputedNames(after)));
  RETURN_IF_ERROR(Identify(b, ComputedNames(before)));
  MarkShared(a, b);
  MarkShared(b, a);
  absl::flat_hash_set<uint64_t> neighbours;
  for (int hop = 0; hop < hops; ++hop) {
    const absl::flat_hash_set<uint64_t> reached = neighbours;
    AddNeighbours(a, reached, neighbours);
    AddNeighbours(b, reached, neighbours);
  }
  DifferingRegions regions;
  regions.nodes_before = Region(a, neighbours, regions.differing_before);
  regions.nodes_after = Region(b, neighbours, regions.differing_after);
  if (regions.differing_before == 0 && regions.differing_after == 0) return std::nullopt;
  ASSIGN_OR_RETURN(regions.before, RegionGraph(before, regions.nodes_before));
  ASSIGN_OR_RETURN(regions.after, RegionGraph(after, regions.nodes_after));
  return regions;
}

}  // namespace taso
