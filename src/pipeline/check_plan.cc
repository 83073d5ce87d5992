#include "pipeline/check_plan.h"

#include "absl/container/flat_hash_map.h"
#include "pipeline/cut_run.h"

namespace taso::pipeline {

namespace {

int64_t Bytes(const Value& v) { return NumElements(v.shape) * static_cast<int64_t>(sizeof(float)); }

// The library nodes of `graph` that compute `values`, walking back from them; `stop(v)`
// says where not to go further (a value given to the run).
template <typename Stop>
std::vector<bool> WalkBack(const Graph& graph, std::vector<ValueId> values, Stop stop) {
  std::vector<bool> nodes(graph.num_nodes(), false), seen(graph.num_values(), false);
  while (!values.empty()) {
    const ValueId v = values.back();
    values.pop_back();
    if (v == kNoValue || seen[v]) continue;
    seen[v] = true;
    const NodeId producer = graph.value(v).producer;
    if (producer == kNoNode || graph.node(producer).op->is_opaque() || stop(v)) continue;
    nodes[producer] = true;
    for (ValueId in : graph.node(producer).inputs) values.push_back(in);
  }
  return nodes;
}

}  // namespace

std::vector<bool> NodesComputing(const Graph& graph, const std::vector<ValueId>& values,
                                 const absl::flat_hash_set<ValueId>& given) {
  return WalkBack(graph, values, [&](ValueId v) { return given.contains(v); });
}

CheckPlan PlanCheck(const Graph& before, const std::vector<uint32_t>& before_numbers, const Graph& after,
                    const std::vector<uint32_t>& after_numbers) {
  const std::vector<std::pair<std::string, ValueId>> before_list = CheckPoints(before);
  const absl::flat_hash_map<std::string, ValueId> before_points(before_list.begin(), before_list.end());
  absl::flat_hash_map<uint32_t, ValueId> before_computed;  // by number: values its library nodes compute
  for (NodeId n = 0; n < before.num_nodes(); ++n)
    if (!before.node(n).op->is_opaque())
      for (ValueId v : before.node(n).outputs)
        if (Computable(before.value(v))) before_computed.emplace(before_numbers[v], v);

  CheckPlan plan;
  std::vector<ValueId> compared;
  const std::vector<std::pair<std::string, ValueId>> after_points = CheckPoints(after);
  for (auto& [key, v] : after_points) {
    const auto it = before_points.find(key);
    if (it != before_points.end() && before_numbers[it->second] == after_numbers[v])
      plan.alike_keys.insert(key);
    else
      compared.push_back(v);
  }
  plan.all_alike = compared.empty() && after_points.size() == before_list.size();
  int64_t borrowed_bytes = 0;
  plan.after_nodes = WalkBack(after, compared, [&](ValueId v) {
    if (!Computable(after.value(v))) return false;
    const auto it = before_computed.find(after_numbers[v]);
    if (it == before_computed.end()) return false;
    plan.borrowed.emplace_back(v, it->second);
    borrowed_bytes += Bytes(after.value(v));
    return true;
  });
  if (borrowed_bytes > kMaxBorrowedBytes) {
    plan.borrowed.clear();
    plan.after_nodes = WalkBack(after, compared, [](ValueId) { return false; });
  }
  return plan;
}

}  // namespace taso::pipeline
