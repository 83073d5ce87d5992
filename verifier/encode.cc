#include "encode.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "taso/status_macros.h"

namespace taso::verify {
namespace {

// One parameter as an integer term: a variable's name, or the value's code.
class ParamEncoder {
 public:
  ParamEncoder(const Rule& rule, const RuleOp& op) : rule_(rule), op_(op) {}

  absl::StatusOr<std::string> Get(const std::string& name, const ParamValue& fallback) const {
    auto bound = op_.bound.find(name);
    if (bound != op_.bound.end()) return bound->second;
    const auto& entries = op_.params.entries();
    auto it = entries.find(name);
    return Code(name, it == entries.end() ? fallback : it->second);
  }

  // The integer a parameter value stands for in the signature.
  static absl::StatusOr<std::string> Code(const std::string& name, const ParamValue& v) {
    if (auto* i = std::get_if<int64_t>(&v)) return absl::StrCat(*i);
    if (auto* s = std::get_if<std::string>(&v)) {
      if (*s == "same") return std::string("SAME");
      if (*s == "valid") return std::string("VALID");
      if (*s == "none") return std::string("NONE");
      if (*s == "relu") return std::string("RELU");
    }
    if (auto* list = std::get_if<std::vector<int64_t>>(&v))
      if (list->size() == 2 && (*list)[0] == (*list)[1]) return absl::StrCat((*list)[0]);  // square strides, kernels
    return absl::InvalidArgumentError(
        absl::StrCat("parameter ", name, "=", Params().Set("v", v).ToString().substr(2), " has no SMT encoding"));
  }

 private:
  const Rule& rule_;
  const RuleOp& op_;
};

absl::StatusOr<std::vector<std::string>> EncodeOp(const Rule& rule, const RuleOp& op,
                                                  const std::vector<std::string>& in, std::set<std::string>* used) {
  const std::string name(op.op->name());
  ParamEncoder p(rule, op);
  auto call = [&](const std::string& fn, std::vector<std::string> args) {
    used->insert(fn);
    return absl::StrCat("(", fn, " ", absl::StrJoin(args, " "), ")");
  };
  auto need = [&](size_t n) -> absl::Status {
    if (in.size() != n) return absl::InvalidArgumentError(absl::StrCat(name, " with ", in.size(), " inputs has no SMT encoding"));
    return absl::OkStatus();
  };
  const ParamValue none;
  if (name == "Add" || name == "Mul" || name == "ScalarMul" || name == "MatMul") {
    RETURN_IF_ERROR(need(2));
    const char* fn = name == "Add" ? "ewadd" : name == "Mul" ? "ewmul" : name == "ScalarMul" ? "smul" : "matmul";
    return std::vector<std::string>{call(fn, in)};
  }
  if (name == "Relu" || name == "I_matmul" || name == "I_ewmul") {
    RETURN_IF_ERROR(need(1));
    const char* fn = name == "Relu" ? "relu" : name == "I_matmul" ? "imatmul" : "iewmul";
    return std::vector<std::string>{call(fn, in)};
  }
  if (name == "Transpose") {
    RETURN_IF_ERROR(need(1));
    if (op.params.Ints("perm") != std::vector<int64_t>{1, 0})
      return absl::InvalidArgumentError("only the matrix Transpose (perm [1,0]) has an SMT encoding");
    return std::vector<std::string>{call("transpose", in)};
  }
  if (name == "Concat") {
    RETURN_IF_ERROR(need(2));
    ASSIGN_OR_RETURN(std::string axis, p.Get("axis", ParamValue(int64_t{0})));
    return std::vector<std::string>{call("concat", {axis, in[0], in[1]})};
  }
  if (name == "Split") {
    RETURN_IF_ERROR(need(1));
    if (op.num_outputs != 2) return absl::InvalidArgumentError("only a Split in two has an SMT encoding");
    ASSIGN_OR_RETURN(std::string axis, p.Get("axis", ParamValue(int64_t{0})));
    return std::vector<std::string>{call("split0", {axis, in[0]}), call("split1", {axis, in[0]})};
  }
  if (name == "Conv2D") {
    RETURN_IF_ERROR(need(2));
    const std::string grouping = op.params.Str("grouping", "");
    if (grouping != "dense" && grouping != "depthwise")
      return absl::InvalidArgumentError("only a dense or depthwise Conv2D (parameter grouping) has an SMT encoding");
    ASSIGN_OR_RETURN(std::string s, p.Get("strides", ParamValue(std::vector<int64_t>{1, 1})));
    ASSIGN_OR_RETURN(std::string pad, p.Get("padding", ParamValue(std::string("valid"))));
    ASSIGN_OR_RETURN(std::string act, p.Get("activation", ParamValue(std::string("none"))));
    return std::vector<std::string>{call(grouping == "dense" ? "conv" : "dconv", {s, pad, act, in[0], in[1]})};
  }
  if (name == "MaxPool" || name == "AveragePool") {
    RETURN_IF_ERROR(need(1));
    if (name == "AveragePool" && op.params.Int("count_include_pad", 0) != 1)
      return absl::InvalidArgumentError("only AveragePool counting padding has an SMT encoding");
    ASSIGN_OR_RETURN(std::string k, p.Get("kernel", none));
    ASSIGN_OR_RETURN(std::string s, p.Get("strides", ParamValue(std::vector<int64_t>{1, 1})));
    ASSIGN_OR_RETURN(std::string pad, p.Get("padding", ParamValue(std::string("valid"))));
    return std::vector<std::string>{call(name == "MaxPool" ? "poolmax" : "poolavg", {k, s, pad, in[0]})};
  }
  if (name == "Enlarge") {
    RETURN_IF_ERROR(need(2));
    return std::vector<std::string>{call("enlarge", in)};
  }
  if (name == "C_pool" || name == "I_conv") {
    RETURN_IF_ERROR(need(1));
    ASSIGN_OR_RETURN(std::string k, p.Get("kernel", none));
    return std::vector<std::string>{call(name == "C_pool" ? "cpool" : "iconv", {k, in[0]})};
  }
  return absl::InvalidArgumentError(absl::StrCat("operator ", name, " has no SMT encoding"));
}

absl::StatusOr<std::vector<std::string>> EncodeSide(const Rule& rule, const RuleGraph& g,
                                                    std::set<std::string>* used) {
  std::vector<std::string> terms;
  for (const RuleInput& in : rule.inputs) terms.push_back(in.name);
  for (const RuleOp& op : g.ops) {
    std::vector<std::string> args;
    for (int i : op.inputs) args.push_back(terms[i]);
    ASSIGN_OR_RETURN(std::vector<std::string> outs, EncodeOp(rule, op, args, used));
    if (static_cast<int>(outs.size()) != op.num_outputs)
      return absl::InvalidArgumentError(absl::StrCat(op.op->name(), " has ", op.num_outputs, " outputs"));
    terms.insert(terms.end(), outs.begin(), outs.end());
  }
  std::vector<std::string> out;
  for (int o : g.outputs) out.push_back(terms[o]);
  return out;
}

}  // namespace

absl::StatusOr<EncodedRule> EncodeRule(const Rule& rule) {
  EncodedRule e;
  e.name = rule.name;
  auto fail = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, ": ", s.message()));
  };
  for (const RuleInput& in : rule.inputs) absl::StrAppend(&e.query, "(declare-const ", in.name, " T)\n");
  for (const RuleVar& v : rule.vars) {
    absl::StrAppend(&e.query, "(declare-const ", v.name, " Int)\n");
    std::vector<std::string> choices;
    for (const ParamValue& value : v.values) {
      auto code = ParamEncoder::Code(v.name, value);
      if (!code.ok()) return fail(code.status());
      choices.push_back(absl::StrCat("(= ", v.name, " ", *code, ")"));
    }
    absl::StrAppend(&e.query, "(assert (or ", absl::StrJoin(choices, " "), " false))\n");
  }
  auto source = EncodeSide(rule, rule.source, &e.symbols);
  if (!source.ok()) return fail(source.status());
  auto target = EncodeSide(rule, rule.target, &e.symbols);
  if (!target.ok()) return fail(target.status());
  std::vector<std::string> equal;
  for (size_t i = 0; i < source->size(); ++i) equal.push_back(absl::StrCat("(= ", (*source)[i], " ", (*target)[i], ")"));
  absl::StrAppend(&e.query, "(assert (not (and ", absl::StrJoin(equal, " "), " true)))\n");
  return e;
}

}  // namespace taso::verify
