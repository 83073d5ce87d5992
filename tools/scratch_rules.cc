#include <cstdio>
#include <string>
#include "taso/rules.h"
int main(int argc, char** argv) {
  auto rules = taso::ReadRuleSet("/work/main/rules/taso_k3.pb");
  for (auto& r : rules->rules)
    for (int i = 1; i < argc; ++i)
      if (r.name == argv[i]) std::printf("%s\n", taso::RuleText(r).c_str());
}
