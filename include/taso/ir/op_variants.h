// The operator variants taso-gen enumerates and taso-verify validates the axioms over:
// each library operator paired with one of its GeneratorVariants, and the parameters a
// variant that cuts its input at a concatenation (split_at_concat) runs with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "taso/ir/op.h"
#include "taso/ir/params.h"

namespace taso {

// One operator with fixed parameters.
struct OpVariant {
  const OpDef* op = nullptr;
  GeneratorVariant spec;
  // The operator's name, followed by the variant's label in braces when it has one.
  std::string label() const;
};

// The names of the operators that declare generator variants, sorted.
std::vector<std::string> GeneratorOperators();
// The operator's variants, in the order it declares them.
std::vector<OpVariant> VariantsOf(const OpDef& op);
// The variants of every operator of GeneratorOperators(), operator by operator.
std::vector<OpVariant> AllOperatorVariants();

// A split_at_concat variant's contract: its "axis" parameter names the dimension cut,
// and the cut's two sizes are passed as its "sizes" parameter.
inline constexpr const char* kCutSizesParam = "sizes";
int CutAxis(const GeneratorVariant& v);
Params WithCut(const GeneratorVariant& v, int64_t first, int64_t second);

}  // namespace taso
