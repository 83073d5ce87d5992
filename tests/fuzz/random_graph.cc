#include "random_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "fuzz_check.h"
#include "taso/ir/op_variants.h"
#include "taso/ir/rng.h"
#include "taso/rewrite/search.h"
#include "taso/rules/rules.h"

namespace taso::fuzz {
namespace {

constexpr int kMaxRules = 3;     // rule sources per graph
constexpr int kMaxExtraOps = 4;  // random operators added around them
constexpr int64_t kMaxDim = 8;   // sizes stay small: every rewrite is run

// The rule examples' sizes, each mapped to another (equal sizes stay equal, so the
// rules' shape conditions still hold).
class SizeMap {
 public:
  explicit SizeMap(FuzzInput& in) : in_(in) {}
  Shape Map(const Shape& example) {
    Shape s;
    for (int64_t d : example) {
      auto [it, added] = sizes_.try_emplace(d, d);
      if (added && in_.Bool()) it->second = std::clamp<int64_t>(d + in_.InRange(-2, 3), 1, kMaxDim);
      s.push_back(it->second);
    }
    return s;
  }

 private:
  FuzzInput& in_;
  absl::flat_hash_map<int64_t, int64_t> sizes_;
};

TensorDataPtr RandomData(const Shape& shape, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> values(NumElements(shape));
  for (float& x : values) x = static_cast<float>(rng.Uniform(-1.0, 1.0));
  return TensorData::Float(shape, std::move(values));
}

// A rule input: an earlier value of that shape when the input asks to share one, else a
// new graph input or weight.
absl::StatusOr<ValueId> RuleInputValue(Graph& g, const RuleInput& in, const Shape& shape, FuzzInput& choices) {
  std::vector<ValueId> same;
  for (ValueId v = 0; v < g.num_values(); ++v)
    if (g.value(v).shape == shape && g.value(v).is_weight() == in.weight) same.push_back(v);
  if (!same.empty() && choices.Bool()) return same[choices.Below(same.size())];
  const std::string name = absl::StrCat(in.weight ? "w" : "x", g.num_values());
  if (in.weight) return g.AddWeight(name, RandomData(shape, g.num_values()));
  return g.AddInput(name, DataType::kFloat32, shape);
}

// Adds the rule's source, as InstantiateRuleGraph builds it, into `g`.
absl::Status AddRuleSource(Graph& g, const Rule& rule, SizeMap& sizes, FuzzInput& in) {
  std::vector<ValueId> tensors;
  for (const RuleInput& input : rule.inputs) {
    auto v = RuleInputValue(g, input, sizes.Map(input.example_shape), in);
    if (!v.ok()) return v.status();
    tensors.push_back(*v);
  }
  for (const RuleOp& op : rule.source.ops) {
    auto params = ResolvedParams(rule, op, [&](int t) -> const Shape& { return g.value(tensors[t]).shape; });
    if (!params.ok()) return params.status();
    std::vector<ValueId> inputs;
    for (int t : op.inputs) inputs.push_back(tensors[t]);
    auto outs = g.AddNode(op.op, *std::move(params), std::move(inputs));
    if (!outs.ok()) return outs.status();
    tensors.insert(tensors.end(), outs->begin(), outs->end());
  }
  return absl::OkStatus();
}

// One operator variant on earlier values; a cut variant cuts its axis at a random point.
void AddRandomOp(Graph& g, FuzzInput& in) {
  static const std::vector<OpVariant> kVariants = AllOperatorVariants();
  const OpVariant& v = kVariants[in.Below(kVariants.size())];
  std::vector<ValueId> inputs;
  for (int i = 0; i < v.spec.arity; ++i) inputs.push_back(in.Below(g.num_values()));
  Params params = v.spec.params;
  if (v.spec.split_at_concat) {
    const Shape& s = g.value(inputs[0]).shape;
    const int axis = CutAxis(v.spec);
    if (axis >= static_cast<int>(s.size()) || s[axis] < 2) return;
    const int64_t first = in.InRange(1, s[axis] - 1);
    params = WithCut(v.spec, first, s[axis] - first);
  }
  std::vector<Shape> shapes;
  for (ValueId i : inputs) shapes.push_back(g.value(i).shape);
  if (!v.spec.AcceptsShapes(shapes)) return;
  (void)g.AddNode(v.op, std::move(params), std::move(inputs)).status();
}

// Every value no node reads is an output; other values too where the input says so
// (then a match must not swallow them).
void AddOutputs(Graph& g, FuzzInput& in) {
  std::vector<bool> read(g.num_values(), false);
  for (NodeId n = 0; n < g.num_nodes(); ++n)
    for (ValueId v : g.node(n).inputs) read[v] = true;
  for (ValueId v = 0; v < g.num_values(); ++v)
    if (g.value(v).producer != kNoNode && (!read[v] || in.Below(4) == 0)) FUZZ_CHECK(g.AddOutput(v).ok(), v);
}

}  // namespace

const std::vector<RuleMatcher>& ShippedMatchers() {
  static const std::vector<RuleMatcher>* matchers = [] {
    auto set = ReadRuleSet(TASO_FUZZ_RULES);
    FUZZ_CHECK(set.ok(), set.status().ToString());
    return new std::vector<RuleMatcher>(PrepareRules(set->rules));
  }();
  return *matchers;
}

Graph RandomRuleGraph(FuzzInput& in) {
  const std::vector<RuleMatcher>& matchers = ShippedMatchers();
  Graph g;
  SizeMap sizes(in);
  const int rules = static_cast<int>(in.InRange(1, kMaxRules));
  for (int r = 0; r < rules; ++r) {
    Graph before = g;
    if (!AddRuleSource(g, matchers[in.Below(matchers.size())].rule(), sizes, in).ok()) g = std::move(before);
  }
  const int extra = static_cast<int>(in.InRange(0, kMaxExtraOps));
  for (int i = 0; i < extra && g.num_values() > 0; ++i) AddRandomOp(g, in);
  AddOutputs(g, in);
  return g;
}

}  // namespace taso::fuzz
