#include "left_out_rules.h"

#include <catch2/catch.hpp>

namespace taso::testing {

std::vector<verify::Outcome> ProveLeftOut(const RuleSet& generated, const RuleSet& shipped,
                                          const std::set<std::string>& also) {
  std::set<std::string> kept;
  for (const Rule& r : shipped.rules)
    if (!also.count(r.name)) kept.insert(r.name);
  std::vector<Rule> left_out;
  for (const Rule& r : generated.rules)
    if (!kept.count(r.name)) left_out.push_back(r);
  auto axioms = verify::LoadAxioms(std::string(TASO_SOURCE_DIR) + "/axioms");
  REQUIRE(axioms.ok());
  auto encoded = verify::EncodeRules(*axioms, left_out);
  REQUIRE(encoded.ok());
  return verify::ProveRules(*axioms, *encoded, verify::ProveOptions{});
}

void CheckNoneProved(const std::vector<verify::Outcome>& outcomes, const std::string& database) {
  for (const verify::Outcome& o : outcomes) {
    INFO(o.rule << " is proved now: regenerate " << database << " (see rules/README.md)");
    CHECK(o.verdict != verify::Verdict::kProved);
  }
}

}  // namespace taso::testing
