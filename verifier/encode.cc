#include "encode.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "taso/ir/status_macros.h"

namespace taso::verify {
namespace {}  // namespace

absl::StatusOr<std::string> SmtArgument(const std::string& name, const ParamValue& v,
                                        std::set<std::string>* constants) {
  if (auto* i = std::get_if<int64_t>(&v)) return absl::StrCat(*i);
  if (auto* s = std::get_if<std::string>(&v)) {
    std::string c = *s;
    for (char& ch : c) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    constants->insert(c);
    return c;
  }
  if (auto* list = std::get_if<std::vector<int64_t>>(&v))
    if (list->size() == 2 && (*list)[0] == (*list)[1]) return absl::StrCat((*list)[0]);
  return absl::InvalidArgumentError(absl::StrCat("parameter ", name, "=", ParamValueText(v), " has no SMT encoding"));
}

namespace {

absl::StatusOr<std::vector<std::string>> EncodeSide(const RuleGraph& g, std::vector<std::string> terms,
                                                    EncodedRule* e) {
  for (const RuleOp& op : g.ops) {
    ASSIGN_OR_RETURN(SmtForm form,
                     op.op->rule_form().Smt(op.params, static_cast<int>(op.inputs.size()), op.num_outputs));
    if (static_cast<int>(form.functions.size()) != op.num_outputs)
      return absl::InvalidArgumentError(absl::StrCat(op.op->name(), " has ", op.num_outputs, " outputs"));
    std::vector<std::string> args;
    for (const auto& [name, value] : form.params) {
      auto bound = op.bound.find(name);
      if (bound != op.bound.end()) {
        args.push_back(bound->second);
      } else {
        ASSIGN_OR_RETURN(std::string code, SmtArgument(name, value, &e->constants));
        args.push_back(code);
      }
    }
    for (int i : op.inputs) args.push_back(terms[i]);
    for (const std::string& fn : form.functions) {
      e->symbols.insert(fn);
      terms.push_back(absl::StrCat("(", fn, " ", absl::StrJoin(args, " "), ")"));
    }
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
  std::vector<std::string> inputs;
  for (const RuleInput& in : rule.inputs) {
    absl::StrAppend(&e.query, "(declare-const ", in.name, " T)\n");
    inputs.push_back(in.name);
  }
  for (const RuleVar& v : rule.vars) {
    absl::StrAppend(&e.query, "(declare-const ", v.name, " Int)\n");
    std::vector<std::string> choices;
    for (const ParamValue& value : v.values) {
      auto code = SmtArgument(v.name, value, &e.constants);
      if (!code.ok()) return fail(code.status());
      choices.push_back(absl::StrCat("(= ", v.name, " ", *code, ")"));
    }
    absl::StrAppend(&e.query, "(assert (or ", absl::StrJoin(choices, " "), " false))\n");
  }
  auto source = EncodeSide(rule.source, inputs, &e);
  if (!source.ok()) return fail(source.status());
  auto target = EncodeSide(rule.target, inputs, &e);
  if (!target.ok()) return fail(target.status());
  std::vector<std::string> equal;
  for (size_t i = 0; i < source->size(); ++i)
    equal.push_back(absl::StrCat("(= (value ", (*source)[i], ") (value ", (*target)[i], "))"));
  absl::StrAppend(&e.query, "(assert (not (and ", absl::StrJoin(equal, " "), " true)))\n");
  return e;
}

}  // namespace taso::verify
