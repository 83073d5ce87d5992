// Graph substitution rules: what taso-gen writes, taso-verify proves and taso-opt applies.
// Rules are shape-agnostic: parameters are symbolic where sizes matter (padding modes,
// split points stated as dimensions of the rule's own tensors).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/ir/graph.h"

namespace taso {

struct DimRef {
  int tensor = 0;
  int dim = 0;
  bool operator==(const DimRef&) const = default;
  auto operator<=>(const DimRef&) const = default;
};
using SymbolicSize = std::vector<DimRef>;  // a sum of dimensions

struct RuleOp {
  const OpDef* op = nullptr;
  Params params;                                           // a bound parameter holds one of its variable's values
  std::map<std::string, std::string> bound;                // parameter -> rule variable
  std::map<std::string, std::vector<SymbolicSize>> sizes;  // symbolic parameters
  std::vector<int> inputs;
  int num_outputs = 1;
};

struct RuleGraph {
  std::vector<RuleOp> ops;
  std::vector<int> outputs;
};

struct RuleInput {
  std::string name;
  Shape example_shape;
  bool weight = false;
};

// A rule variable: the rule holds with each of `values` put wherever it is bound.
struct RuleVar {
  std::string name;
  std::vector<ParamValue> values;
};

struct Rule {
  std::string name;
  std::vector<RuleInput> inputs;
  RuleGraph source, target;
  std::vector<RuleVar> vars;  // none: a concrete rule
};

struct RuleSet {
  int max_ops = 0;
  std::vector<std::string> operators;
  std::string command;
  std::string proved_by;  // non-empty: every rule was proved (taso-verify --write-proved)
  std::vector<Rule> rules;
};

absl::StatusOr<RuleSet> ReadRuleSet(const std::string& path);
absl::Status WriteRuleSet(const RuleSet& rules, const std::string& path);
std::string RuleSetText(const RuleSet& rules);
std::string RuleText(const Rule& rule);

// The concrete rules a parametric rule stands for, one per combination of its variables'
// values (named "<rule>/<index>"); a concrete rule stands for itself.
std::vector<Rule> Instances(const Rule& rule);

// Rule names repeat across databases (each numbers its own rules r0000, r0001, ...). A tool
// reading several tells them apart by the database's file stem: QualifiedRuleName("/x/rules/
// gemm_merges_k4.pb", "r0320") is "gemm_merges_k4:r0320". Rule names hold no ':'.
std::string QualifiedRuleName(const std::string& path, const std::string& name);

// The rules of one database and the path they were read from.
struct RuleDatabase {
  std::string path;
  std::vector<Rule> rules;
};

// Several databases' rules as one list, in order: the first database's rules keep their
// names (as reports and scripts name them); every later one's are renamed
// QualifiedRuleName(path, name). The qualified name of each rule is reserved too, so a
// database listed twice, or two of one file stem, are refused with the name they share.
absl::StatusOr<std::vector<Rule>> CombineRuleDatabases(std::vector<RuleDatabase> databases);

// How a tool reads the databases it is given. The errors name taso-opt's flags.
struct RuleReadOptions {
  int64_t max_bytes = 0;        // a larger file is refused (--max-rules-bytes)
  bool allow_unproved = false;  // else a database taso-verify has not proved is refused
};

// The rules of all `paths`, each read and checked as `options` say, combined as
// CombineRuleDatabases does (the first database's names kept, later ones qualified).
absl::StatusOr<std::vector<Rule>> ReadRuleDatabases(const std::vector<std::string>& paths,
                                                    const RuleReadOptions& options);

// The name a rule has in its own file: `name` without a "<stem>:" prefix (everything up to
// its last ':'), or `name` unchanged if it has none. Names of instances ("gemm_merges_k4:
// r0320/1") and of reversed rules ("...~") keep their suffixes.
std::string RuleNameInFile(const std::string& name);

// An operator's parameters with its symbolic sizes computed from the shapes of the side's
// tensors (its inputs, then its operators' outputs).
absl::StatusOr<Params> ResolvedParams(const Rule& rule, const RuleOp& op,
                                      const std::function<const Shape&(int tensor)>& shape_of);

// The rule read the other way (target to source), named "<rule>~". Rules are equations:
// the optimizer applies them in both directions.
Rule Reversed(const Rule& rule);

// A name Instances and Reversed make, read back: "<rule>", "<rule>/<index>", either with
// "~" after it.
struct AppliedRuleName {
  std::string rule;       // the name of the rule in its database
  std::string concrete;   // the rule's or the instance's name, without "~"
  bool reversed = false;  // applied target to source
};
AppliedRuleName ParseAppliedRuleName(absl::string_view name);

// Builds one side of a rule as a graph on concrete input shapes, resolving the symbolic
// parameters; fails if a shape rule does not hold for these shapes.
absl::StatusOr<Graph> InstantiateRuleGraph(const Rule& rule, const RuleGraph& side,
                                           const std::vector<Shape>& input_shapes);

}  // namespace taso
