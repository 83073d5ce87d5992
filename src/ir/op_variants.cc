#include "taso/ir/op_variants.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace taso {

std::string OpVariant::label() const {
  return spec.label.empty() ? std::string(op->name()) : absl::StrCat(op->name(), "{", spec.label, "}");
}

std::vector<std::string> GeneratorOperators() {
  std::vector<std::string> names;
  for (const OpDef* op : OpRegistry::Global().All())
    if (!op->rule_form().GeneratorVariants().empty()) names.emplace_back(op->name());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<OpVariant> VariantsOf(const OpDef& op) {
  std::vector<OpVariant> variants;
  for (GeneratorVariant& v : op.rule_form().GeneratorVariants()) variants.push_back({&op, std::move(v)});
  return variants;
}

std::vector<OpVariant> AllOperatorVariants() {
  std::vector<OpVariant> variants;
  for (const std::string& name : GeneratorOperators()) {
    std::vector<OpVariant> of_op = VariantsOf(*OpRegistry::Global().Find(name));
    variants.insert(variants.end(), of_op.begin(), of_op.end());
  }
  return variants;
}

int CutAxis(const GeneratorVariant& v) { return static_cast<int>(v.params.Int("axis", 0)); }

Params WithCut(const GeneratorVariant& v, int64_t first, int64_t second) {
  Params p = v.params;
  p.Set(kCutSizesParam, std::vector<int64_t>{first, second});
  return p;
}

}  // namespace taso
