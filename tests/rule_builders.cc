#include "rule_builders.h"

#include "test_util.h"

namespace taso::testing {

RuleOp MakeRuleOp(const std::string& name, std::vector<int> inputs, Params params, int outputs) {
  RuleOp op;
  op.op = Op(name);
  op.params = std::move(params);
  op.inputs = std::move(inputs);
  op.num_outputs = outputs;
  return op;
}

Rule MakeRule(const std::string& name, const std::vector<std::pair<std::string, Shape>>& inputs, RuleGraph source,
              RuleGraph target) {
  Rule r;
  r.name = name;
  for (const auto& [in, shape] : inputs) r.inputs.push_back({in, shape, false});
  r.source = std::move(source);
  r.target = std::move(target);
  return r;
}

}  // namespace taso::testing
