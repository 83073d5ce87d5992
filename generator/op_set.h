// The generator's operator set: the library operators that declare generator variants
// (their parameter choices live in their own files under ops/, see taso/ir/op_variants.h),
// and the small input tensors graphs are built over (TASO section 2.3).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/ir/op_variants.h"

namespace taso::gen {

// One operator with fixed parameters, as the generator enumerates it.
using Variant = OpVariant;

struct GenInput {
  std::string name;
  Shape shape;
  bool activation = false;  // else a weight (or the scalar)
  // Per dimension, which sizes must stay equal when rules are tried at other sizes:
  // "n" batch, "c" channels, "h"/"w" image height/width, "m" matrix sizes; "k" marks a
  // kernel size, free for each input on its own.
  std::vector<std::string> dim_classes;
  bool bias = false;  // read only where a variant's role asks for a bias (GenRole::kBias)
};

struct OpSet {
  std::vector<std::string> op_names;  // as given to --ops
  std::vector<Variant> variants;
  std::vector<GenInput> inputs;
};

// Per input, the last input before it that is alike (the same shape, kind, role and
// dimension classes), or -1. Alike inputs can stand for each other in any graph, so a
// graph reading the second and not the first is a renaming of one reading the first.
std::vector<int> EarlierAlike(const OpSet& set);

// The variants of the named operators (all of GeneratorOperators() when `ops` is empty);
// an unknown name is an error.
absl::StatusOr<OpSet> MakeOpSet(const std::vector<std::string>& ops);

}  // namespace taso::gen
