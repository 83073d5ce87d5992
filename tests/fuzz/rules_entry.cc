// The rules target: the rule database reader and what the optimizer does with each rule
// it reads (instances, both directions prepared for matching, matched against its own
// source graph and rewritten).
#include "fuzz_entries.h"
#include "google/protobuf/text_format.h"
#include "rules.pb.h"
#include "scratch.h"
#include "taso/rewrite/match.h"
#include "taso/rules/rules.h"

namespace taso::fuzz {
namespace {

// Rule instances tried per input: an input stands for many, and each is matched.
constexpr int kMaxInstances = 64;

// The binary form of the database the bytes give: as they are, or from the protobuf text
// form after a leading 't'; unset when the text does not parse.
std::optional<std::string> BinaryForm(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.empty() || bytes[0] != 't') return bytes;
  proto::RuleSet set;
  if (!google::protobuf::TextFormat::ParseFromString(bytes.substr(1), &set)) return std::nullopt;
  return set.SerializeAsString();
}

// The rule's source built on its example shapes, matched and rewritten: a bad rule must
// fail with a Status anywhere on the way.
void MatchOwnSource(const RuleMatcher& matcher) {
  const Rule& rule = matcher.rule();
  std::vector<Shape> shapes;
  for (const RuleInput& in : rule.inputs) shapes.push_back(in.example_shape);
  auto graph = InstantiateRuleGraph(rule, rule.source, shapes);
  if (!graph.ok()) return;
  const GraphIndex index(*graph);
  for (const Match& m : matcher.FindAll(*graph, index)) (void)ApplyMatch(*graph, matcher, m).status();
}

}  // namespace

int FuzzRules(const uint8_t* data, size_t size) {
  const std::optional<std::string> bytes = BinaryForm(data, size);
  if (!bytes) return 0;
  auto set = ReadRuleSet(WriteScratchFile("rules.pb", *bytes));
  if (!set.ok()) return 0;
  int instances = 0;
  for (const Rule& rule : set->rules)
    for (const Rule& instance : Instances(rule)) {
      if (++instances > kMaxInstances) return 0;
      for (const Rule& directed : {instance, Reversed(instance)})
        if (auto matcher = RuleMatcher::Create(directed); matcher.ok()) MatchOwnSource(*matcher);
    }
  return 0;
}

}  // namespace taso::fuzz
