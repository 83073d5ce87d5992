// A rule as an SMT-LIB2 query over the axioms' signature: its inputs are tensor
// constants, its variables integer constants limited to their values, and the query
// asserts that the value of some output of the source differs from the target's: unsat
// is a proof. A term of sort T is a tensor with its concatenation history (where a Split
// cuts it, TASO's split trees); a rule equates only the outputs' values (`value`, sort
// Value), since a Split in a model states its sizes and reads no history.
#pragma once

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "taso/rules/rules.h"

namespace taso::verify {

struct EncodedRule {
  std::string name;
  std::string query;                // declarations and assertions, after the signature
  std::set<std::string> symbols;    // the functions it uses
  std::set<std::string> constants;  // the named parameter values it uses (SAME, RELU...)
};

// The argument a parameter value stands for in the signature (see SmtForm): an integer,
// or a constant the signature defines (added to `constants`).
absl::StatusOr<std::string> SmtArgument(const std::string& name, const ParamValue& v, std::set<std::string>* constants);

// Each operator says how it is written (OpDef::Smt); fails for an operator or a parameter
// value the signature cannot express.
absl::StatusOr<EncodedRule> EncodeRule(const Rule& rule);

}  // namespace taso::verify
