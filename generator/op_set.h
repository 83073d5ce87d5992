// The generator's operator set: the library operators that declare generator variants
// (their parameter choices live in their own files under ops/), and the small input
// tensors graphs are built over (TASO section 2.3).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/op.h"

namespace taso::gen {

// One operator with fixed parameters, as the generator enumerates it.
struct Variant {
  const OpDef* op = nullptr;
  GeneratorVariant spec;
  std::string label() const;
};

struct GenInput {
  std::string name;
  Shape shape;
  bool activation = false;  // else a weight (or the scalar)
  // Per dimension, which sizes must stay equal when rules are tried at other sizes:
  // "n" batch, "c" channels, "h"/"w" image height/width, "m" matrix sizes; "k" marks a
  // kernel size, free for each input on its own.
  std::vector<std::string> dim_classes;
};

struct OpSet {
  std::vector<std::string> op_names;  // as given to --ops
  std::vector<Variant> variants;
  std::vector<GenInput> inputs;
};

// For split_at_concat variants: the dimension cut, and the parameters with the cut sizes.
inline constexpr const char* kCutSizesParam = "sizes";
inline int CutAxis(const GeneratorVariant& v) { return static_cast<int>(v.params.Int("axis", 0)); }
inline Params WithCut(const GeneratorVariant& v, int64_t first, int64_t second) {
  Params p = v.params;
  p.Set(kCutSizesParam, std::vector<int64_t>{first, second});
  return p;
}

// The operators that take part in generation (the default set), sorted by name.
std::vector<std::string> GeneratorOperators();
// The variants of the named operators (all when `ops` is empty); an unknown name is an error.
absl::StatusOr<OpSet> MakeOpSet(const std::vector<std::string>& ops);

}  // namespace taso::gen
