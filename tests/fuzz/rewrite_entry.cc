// The rewrite target: every rewrite of a random graph that the matcher finds and the
// rewriter accepts is checked against the graph it came from.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "fuzz_check.h"
#include "fuzz_entries.h"
#include "random_graph.h"
#include "taso/ir/executor.h"

namespace taso::fuzz {
namespace {

constexpr int kMaxRewrites = 16;  // checked per input: each runs the rewritten graph

// The same output names with the same shapes, and every node's outputs what shape
// inference gives for its inputs.
void CheckShapes(const Graph& before, const Graph& after, const std::string& what) {
  FUZZ_CHECK(after.Validate().ok(), what, after.Validate().ToString());
  FUZZ_CHECK(after.outputs().size() == before.outputs().size(), what);
  for (size_t i = 0; i < before.outputs().size(); ++i) {
    const Value& b = before.value(before.outputs()[i]);
    const ValueId a = after.FindValue(b.name);
    FUZZ_CHECK(a != kNoValue && after.value(a).shape == b.shape, what, "output ", b.name, " lost or reshaped");
  }
  for (NodeId n = 0; n < after.num_nodes(); ++n) {
    const Node& node = after.node(n);
    auto inferred = node.op->InferTypes(node.params, after.InputInfos(node));
    FUZZ_CHECK(inferred.ok(), what, "node ", node.name, ": ", inferred.status().ToString());
    for (size_t o = 0; o < node.outputs.size(); ++o)
      FUZZ_CHECK((*inferred)[o].shape == after.value(node.outputs[o]).shape, what, "node ", node.name);
  }
}

void CheckRewrite(const Graph& before, const TensorMap& inputs, const TensorMap& expected, const Graph& after,
                  const std::string& rule) {
  const std::string what =
      absl::StrCat("rule ", rule, " rewrote\n", before.DebugString(), "into\n", after.DebugString(), "\n");
  CheckShapes(before, after, what);
  auto got = RunReference(after, inputs);
  FUZZ_CHECK(got.ok(), what, got.status().ToString());
  FUZZ_CHECK(RelativeDifference(expected, *got) <= 1e-3, what, "outputs differ by ", MaxAbsDifference(expected, *got));
}

// Whether every operator of the rule's source occurs in the graph (else FindAll finds
// nothing; skipping it keeps the target fast).
bool MayMatch(const RuleMatcher& matcher, const GraphIndex& index) {
  for (const RuleOp& op : matcher.rule().source.ops)
    if (!index.nodes_of.contains(op.op)) return false;
  return true;
}

bool AllFinite(const TensorMap& outputs) {
  for (const auto& [name, t] : outputs)
    for (float x : t.data)
      if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

int FuzzRewrite(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  const Graph graph = RandomRuleGraph(in);
  if (graph.outputs().empty()) return 0;
  const TensorMap inputs = RandomInputs(graph, in.U64());
  auto expected = RunReference(graph, inputs);
  FUZZ_CHECK(expected.ok(), "the random graph does not run: ", expected.status().ToString(), "\n", graph.DebugString());
  if (!AllFinite(*expected)) return 0;  // nothing to compare against
  const GraphIndex index(graph);
  const std::vector<RuleMatcher>& matchers = ShippedMatchers();
  const size_t first = in.Below(matchers.size());  // the cap on rewrites must not favour early rules
  int rewrites = 0;
  for (size_t i = 0; i < matchers.size(); ++i) {
    const RuleMatcher& matcher = matchers[(first + i) % matchers.size()];
    if (!MayMatch(matcher, index)) continue;
    for (const Match& m : matcher.FindAll(graph, index)) {
      auto after = ApplyMatch(graph, matcher, m);
      if (!after.ok()) continue;
      CheckRewrite(graph, inputs, *expected, *after, matcher.rule().name);
      if (++rewrites == kMaxRewrites) return 0;
    }
  }
  return 0;
}

}  // namespace taso::fuzz
