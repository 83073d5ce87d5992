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
std::vector<GenInput> SmallInputs() {
  const std::vector<std::string> image = {"n", "c", "h", "w"}, kernel = {"c", "c", "k", "k"}, matrix = {"m", "m"};
  return {
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
}

}  // namespace

absl::StatusOr<OpSet> MakeOpSet(const std::vector<std::string>& ops) {
  const std::vector<std::string> known = GeneratorOperators();
  OpSet set;
  set.op_names = ops.empty() ? known : ops;
  for (const std::string& name : set.op_names) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      return absl::InvalidArgumentError(
          absl::StrCat("unknown operator '", name, "' in --ops (known: ", absl::StrJoin(known, ","), ")"));
    for (OpVariant& v : VariantsOf(*OpRegistry::Global().Find(name))) set.variants.push_back(std::move(v));
  }
  set.inputs = SmallInputs();
  return set;
}

}  // namespace taso::gen
