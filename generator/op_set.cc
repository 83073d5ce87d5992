#include "op_set.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso::gen {
namespace {

// Small inputs as TASO used: two activations and four kernels (3x3 twice, 1x3, 1x1) of
// four channels, three 4x4 matrices, and a scalar; and a 3x3 kernel of eight outputs on
// one channel per group (four groups of an activation; class "g": kept when other
// classes change), which grouped convolutions read; and two bias vectors of four, which
// only products with a bias (Gemm) and concatenations of biases read: two, so that two
// products each with its own bias can be merged into one with the biases concatenated.
// A fourth matrix joins them where an operator enumerated only when named is in the set:
// two products of different inputs and weights take four.
std::vector<GenInput> SmallInputs(bool fourth_matrix) {
  const std::vector<std::string> image = {"n", "c", "h", "w"}, kernel = {"c", "c", "k", "k"}, matrix = {"m", "m"};
  std::vector<GenInput> inputs = {
      {"X", {1, 4, 5, 5}, true, image},
      {"Y", {1, 4, 5, 5}, true, image},
      {"W1", {4, 4, 3, 3}, false, kernel},
      {"W2", {4, 4, 3, 3}, false, kernel},
      {"W3", {4, 4, 1, 3}, false, kernel},
      {"W4", {4, 4, 1, 1}, false, kernel},
      {"W5", {8, 1, 3, 3}, false, {"g", "g", "k", "k"}},
      {"A", {4, 4}, true, matrix},
      {"B", {4, 4}, true, matrix},
      {"C", {4, 4}, true, matrix},
      {"s", {}, false, {}},
      {"b", {4}, false, {"m"}, true},
      {"c", {4}, false, {"m"}, true},
  };
  if (fourth_matrix) inputs.insert(inputs.begin() + 10, GenInput{"D", {4, 4}, true, matrix});
  return inputs;
}

// The default set: every generator operator but those enumerated only when named.
std::vector<std::string> DefaultOperators() {
  std::vector<std::string> names;
  for (const std::string& name : GeneratorOperators()) {
    const std::vector<Variant> variants = VariantsOf(*OpRegistry::Global().Find(name));
    if (std::none_of(variants.begin(), variants.end(), [](const Variant& v) { return v.spec.only_when_named; }))
      names.push_back(name);
  }
  return names;
}

}  // namespace

std::vector<int> EarlierAlike(const OpSet& set) {
  std::vector<int> earlier(set.inputs.size(), -1);
  for (size_t i = 0; i < set.inputs.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const GenInput& a = set.inputs[j];
      const GenInput& b = set.inputs[i];
      if (a.shape == b.shape && a.activation == b.activation && a.bias == b.bias && a.dim_classes == b.dim_classes)
        earlier[i] = static_cast<int>(j);
    }
  return earlier;
}

absl::StatusOr<OpSet> MakeOpSet(const std::vector<std::string>& ops) {
  const std::vector<std::string> known = GeneratorOperators();
  OpSet set;
  set.op_names = ops.empty() ? DefaultOperators() : ops;
  bool fourth_matrix = false;
  for (const std::string& name : set.op_names) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      return absl::InvalidArgumentError(
          absl::StrCat("unknown operator '", name, "' in --ops (known: ", absl::StrJoin(known, ","), ")"));
    for (OpVariant& v : VariantsOf(*OpRegistry::Global().Find(name))) {
      fourth_matrix = fourth_matrix || v.spec.only_when_named;
      set.variants.push_back(std::move(v));
    }
  }
  set.inputs = SmallInputs(fourth_matrix);
  return set;
}

}  // namespace taso::gen
