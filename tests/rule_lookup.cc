#include "rule_lookup.h"

#include <catch2/catch.hpp>

#include <cctype>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "taso/rewrite/match.h"

namespace taso::testing {

namespace {

const RuleSet* ReadShipped(const std::string& file) {
  auto s = ReadRuleSet(std::string(TASO_SOURCE_DIR) + "/rules/" + file);
  REQUIRE(s.ok());
  return new RuleSet(*std::move(s));
}

}  // namespace

const RuleSet& ShippedRules() {
  static const RuleSet* const set = ReadShipped("taso_k3.pb");
  return *set;
}

const RuleSet& ShippedMergeRules() {
  static const RuleSet* const set = ReadShipped("gemm_merges_k4.pb");
  return *set;
}

const RuleSet& ShippedBlockDiagRules() {
  static const RuleSet* const set = ReadShipped("gemm_blockdiag_k4.pb");
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

std::vector<const Rule*> ShippedRulesLike(absl::string_view source, absl::string_view target, int input_rank,
                                          const RuleSet* database) {
  const RuleReading wanted = ReadRule(absl::StrCat(source, " => ", target));
  std::vector<const Rule*> found;
  for (const Rule& rule : (database ? *database : ShippedRules()).rules) {
    if (input_rank >= 0 && !AllInputsOfRank(rule, input_rank)) continue;
    if (ReadsAs(ReadRule(absl::StrCat(RuleSideText(rule, rule.source), " => ", RuleSideText(rule, rule.target))),
                wanted))
      found.push_back(&rule);
  }
  return found;
}

const Rule& ShippedRuleLike(absl::string_view source, absl::string_view target, int input_rank,
                            const RuleSet* database) {
  const std::vector<const Rule*> found = ShippedRulesLike(source, target, input_rank, database);
  if (found.size() != 1) {
    std::vector<std::string> names;
    for (const Rule* rule : found) names.push_back(rule->name);
    const std::string ranks = input_rank < 0 ? "" : absl::StrCat(" with inputs of rank ", input_rank);
    FAIL(found.size() << " shipped rules (" << absl::StrJoin(names, ", ") << ") read " << source << " => " << target
                      << ranks << "; expected one");
  }
  return *found.front();
}

std::optional<Graph> ApplyFirstMatch(const Graph& g, const Rule& rule) {
  for (const Rule& instance : Instances(rule)) {
    auto matcher = RuleMatcher::Create(instance);
    REQUIRE(matcher.ok());
    const std::vector<Match> matches = matcher->FindAll(g, GraphIndex(g));
    if (matches.empty()) continue;
    auto applied = ApplyMatch(g, *matcher, matches[0]);
    REQUIRE(applied.ok());
    return *std::move(applied);
  }
  return std::nullopt;
}

}  // namespace taso::testing
