// Typed operator parameters: a small sorted map from name to value, so generic code
// (hashing, printing, the rule database) can handle every operator's parameters alike.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/ir/tensor.h"

namespace taso {

using ParamValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, TensorDataPtr>;

// One value as Params::ToString writes it: 3, "same", [1,1].
std::string ParamValueText(const ParamValue& v);

class Params {
 public:
  Params& Set(absl::string_view name, ParamValue v);
  bool Has(absl::string_view name) const;
  void Erase(absl::string_view name);

  // Typed getters. An absent parameter gives the default: operators read optional
  // parameters this way. A parameter present with another type (an Int read of a string, a
  // Floats read of ints) means the operator's writer and its reader disagree: a programming
  // error, since every value is typed by code (ONNX import checks attribute types, the rule
  // file stores each value's type). Returning the default would quietly compute something
  // else, and the getters have no error channel (kernels, shape inference and hooks call
  // them), so they print one line naming the parameter, the type asked for and the type
  // held, and abort. An int is never read as a float or the reverse: each parameter has one
  // type in every writer.
  int64_t Int(absl::string_view name, int64_t def = 0) const;
  double Float(absl::string_view name, double def = 0) const;
  std::string Str(absl::string_view name, absl::string_view def = "") const;
  std::vector<int64_t> Ints(absl::string_view name, std::vector<int64_t> def = {}) const;
  std::vector<double> Floats(absl::string_view name) const;
  TensorDataPtr Tensor(absl::string_view name) const;

  const std::map<std::string, ParamValue, std::less<>>& entries() const { return values_; }
  uint64_t Hash() const;
  std::string ToString() const;
  bool operator==(const Params& o) const;

 private:
  std::map<std::string, ParamValue, std::less<>> values_;
};

}  // namespace taso
