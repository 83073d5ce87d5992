#include "test_util.h"

#include <catch2/catch.hpp>

#include <cctype>
#include <fstream>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "taso/rng.h"

namespace taso::testing {

onnx::ModelProto NewModel(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("taso-tests");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

namespace {
void FillType(onnx::ValueInfoProto* vi, const std::vector<int64_t>& shape, int elem_type) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* s = tt->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}
}  // namespace

void AddInput(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape, int elem_type) {
  auto* vi = m.mutable_graph()->add_input();
  vi->set_name(name);
  FillType(vi, shape, elem_type);
}

void AddOutput(onnx::ModelProto& m, const std::string& name) {
  auto* vi = m.mutable_graph()->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

void AddFloatInit(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape, float fill) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : shape) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t->add_float_data(fill + 0.01f * static_cast<float>(i % 7));
}

void AddInt64Init(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name.empty() ? op_type + "_" + outputs[0] : name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetIntsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

onnx::ModelProto SmallConvReluModel() {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", {1, 4, 8, 8});
  AddFloatInit(m, "w", {4, 4, 3, 3}, 0.25f);
  onnx::NodeProto* conv = AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  SetIntsAttr(conv, "kernel_shape", {3, 3});
  AddNode(m, "Relu", {"c"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::path(TASO_BINARY_DIR) / "test-tmp" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void WriteFile(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

const OpDef* Op(const std::string& name) { return OpRegistry::Global().Find(name); }

Tensor<float> RandomTensor(Shape shape, uint64_t seed) {
  Rng rng(seed);
  Tensor<float> t(std::move(shape));
  for (float& v : t.data) v = static_cast<float>(rng.Uniform(-1, 1));
  return t;
}

ValueId AddWeight(Graph& g, const std::string& name, Shape shape, uint64_t seed) {
  Tensor<float> t = RandomTensor(shape, seed);
  auto v = g.AddWeight(name, TensorData::Float(shape, t.data));
  REQUIRE(v.ok());
  return *v;
}

ValueId AddOp(Graph& g, const std::string& op, std::vector<ValueId> inputs, const std::string& out, Params p) {
  auto v = g.AddNode(Op(op), std::move(p), std::move(inputs), out, {out});
  REQUIRE(v.ok());
  return (*v)[0];
}

const RuleSet& ShippedRules() {
  static const RuleSet* const set = [] {
    auto s = ReadRuleSet(std::string(TASO_SOURCE_DIR) + "/rules/taso_k3.pb");
    REQUIRE(s.ok());
    return new RuleSet(*std::move(s));
  }();
  return *set;
}

namespace {

// The parameters of an operator as RuleSideText writes them: "{axis=0}", or nothing.
std::string ParamsText(const Params& params) {
  std::vector<std::string> entries;
  for (const auto& [name, value] : params.entries()) entries.push_back(absl::StrCat(name, "=", ParamValueText(value)));
  return entries.empty() ? "" : absl::StrCat("{", absl::StrJoin(entries, ", "), "}");
}

// Tensor `t` of a rule side (the rule's inputs, then each operator's outputs in order) as
// RuleSideText writes it.
std::string TensorText(const Rule& rule, const RuleGraph& side, int t) {
  int first = static_cast<int>(rule.inputs.size());
  if (t < first) return rule.inputs[t].name;
  for (const RuleOp& op : side.ops) {
    if (t < first + op.num_outputs) {
      std::vector<std::string> args;
      for (int input : op.inputs) args.push_back(TensorText(rule, side, input));
      std::string text = absl::StrCat(op.op->name(), ParamsText(op.params), "(", absl::StrJoin(args, ", "), ")");
      if (op.num_outputs > 1) absl::StrAppend(&text, "[", t - first, "]");
      return text;
    }
    first += op.num_outputs;
  }
  return "?";
}

// A rule read from text (RuleSideText's form): its structure, without spaces or
// parameters and with the inputs renamed $0, $1, ... in order of first appearance, and
// the parameters given at each operator, in the order the operators appear.
struct RuleReading {
  std::string structure;
  std::vector<std::map<std::string, std::string>> params;
};

bool StartsWord(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool InWord(char c) { return StartsWord(c) || std::isdigit(static_cast<unsigned char>(c)); }

// "axis=0, sizes=[1,2]" as a map (values without spaces).
std::map<std::string, std::string> ReadParams(absl::string_view text) {
  std::map<std::string, std::string> params;
  int depth = 0;
  std::string entry;
  auto add = [&] {
    if (const size_t eq = entry.find('='); eq != std::string::npos) params[entry.substr(0, eq)] = entry.substr(eq + 1);
    entry.clear();
  };
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ',' && depth == 0) {
      add();
    } else {
      entry += c;
    }
  }
  add();
  return params;
}

RuleReading ReadRule(absl::string_view text) {
  RuleReading reading;
  absl::flat_hash_map<std::string, int> inputs;
  size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    if (!StartsWord(text[i])) {
      reading.structure += text[i++];
      continue;
    }
    const size_t start = i;
    while (i < text.size() && InWord(text[i])) ++i;
    const std::string word(text.substr(start, i - start));
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && (text[i] == '(' || text[i] == '{')) {  // an operator
      reading.structure += word;
      std::map<std::string, std::string>& params = reading.params.emplace_back();
      if (text[i] == '{') {
        const size_t close = text.find('}', i);
        params = ReadParams(text.substr(i + 1, close - i - 1));
        i = close == absl::string_view::npos ? text.size() : close + 1;
      }
    } else {
      const int number = inputs.emplace(word, static_cast<int>(inputs.size())).first->second;
      absl::StrAppend(&reading.structure, "$", number);
    }
  }
  return reading;
}

// Whether a rule reads as `wanted`: the same structure, and every parameter `wanted`
// gives is the rule's.
bool ReadsAs(const RuleReading& rule, const RuleReading& wanted) {
  if (rule.structure != wanted.structure || rule.params.size() != wanted.params.size()) return false;
  for (size_t op = 0; op < wanted.params.size(); ++op)
    for (const auto& [name, value] : wanted.params[op])
      if (auto it = rule.params[op].find(name); it == rule.params[op].end() || it->second != value) return false;
  return true;
}

bool AllInputsOfRank(const Rule& rule, int rank) {
  for (const RuleInput& input : rule.inputs)
    if (static_cast<int>(input.example_shape.size()) != rank) return false;
  return true;
}

}  // namespace

std::string RuleSideText(const Rule& rule, const RuleGraph& side) {
  std::vector<std::string> outputs;
  for (int t : side.outputs) outputs.push_back(TensorText(rule, side, t));
  return absl::StrJoin(outputs, ", ");
}

std::vector<const Rule*> ShippedRulesLike(absl::string_view source, absl::string_view target, int input_rank) {
  const RuleReading wanted = ReadRule(absl::StrCat(source, " => ", target));
  std::vector<const Rule*> found;
  for (const Rule& rule : ShippedRules().rules) {
    if (input_rank >= 0 && !AllInputsOfRank(rule, input_rank)) continue;
    if (ReadsAs(ReadRule(absl::StrCat(RuleSideText(rule, rule.source), " => ", RuleSideText(rule, rule.target))),
                wanted))
      found.push_back(&rule);
  }
  return found;
}

const Rule& ShippedRuleLike(absl::string_view source, absl::string_view target, int input_rank) {
  const std::vector<const Rule*> found = ShippedRulesLike(source, target, input_rank);
  if (found.size() != 1) {
    std::vector<std::string> names;
    for (const Rule* rule : found) names.push_back(rule->name);
    const std::string ranks = input_rank < 0 ? "" : absl::StrCat(" with inputs of rank ", input_rank);
    FAIL(found.size() << " shipped rules (" << absl::StrJoin(names, ", ") << ") read " << source << " => " << target
                      << ranks << "; expected one");
  }
  return *found.front();
}

}  // namespace taso::testing
