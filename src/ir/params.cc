#include "taso/ir/params.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso {

Params& Params::Set(absl::string_view name, ParamValue v) {
  values_[std::string(name)] = std::move(v);
  return *this;
}

bool Params::Has(absl::string_view name) const { return values_.find(name) != values_.end(); }

void Params::Erase(absl::string_view name) {
  auto it = values_.find(name);
  if (it != values_.end()) values_.erase(it);
}

namespace {

// The variant's alternatives, in ParamValue's order, as the mismatch message names them.
constexpr const char* kTypeNames[] = {"int", "float", "string", "ints", "floats", "tensor"};
static_assert(std::size(kTypeNames) == std::variant_size_v<ParamValue>);

[[noreturn]] void TypeMismatch(absl::string_view name, size_t asked, size_t held) {
  std::fprintf(stderr, "taso: parameter '%.*s' read as %s but holds %s\n", static_cast<int>(name.size()), name.data(),
               kTypeNames[asked], kTypeNames[held]);
  std::abort();
}

// The value of parameter `name` if present; aborts if it is present with another type.
template <typename T>
const T* Lookup(const std::map<std::string, ParamValue, std::less<>>& m, absl::string_view name) {
  auto it = m.find(name);
  if (it == m.end()) return nullptr;
  if (const T* v = std::get_if<T>(&it->second)) return v;
  TypeMismatch(name, ParamValue(std::in_place_type<T>).index(), it->second.index());
}

}  // namespace

int64_t Params::Int(absl::string_view name, int64_t def) const {
  const int64_t* v = Lookup<int64_t>(values_, name);
  return v ? *v : def;
}
double Params::Float(absl::string_view name, double def) const {
  const double* v = Lookup<double>(values_, name);
  return v ? *v : def;
}
std::string Params::Str(absl::string_view name, absl::string_view def) const {
  const std::string* v = Lookup<std::string>(values_, name);
  return v ? *v : std::string(def);
}
std::vector<int64_t> Params::Ints(absl::string_view name, std::vector<int64_t> def) const {
  const std::vector<int64_t>* v = Lookup<std::vector<int64_t>>(values_, name);
  return v ? *v : def;
}
std::vector<double> Params::Floats(absl::string_view name) const {
  const std::vector<double>* v = Lookup<std::vector<double>>(values_, name);
  return v ? *v : std::vector<double>{};
}
TensorDataPtr Params::Tensor(absl::string_view name) const {
  const TensorDataPtr* v = Lookup<TensorDataPtr>(values_, name);
  return v ? *v : nullptr;
}

uint64_t Params::Hash() const {
  uint64_t h = 0x5EED;
  for (const auto& [k, v] : values_) {
    uint64_t hv = std::visit(
        [](const auto& x) -> uint64_t {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, TensorDataPtr>)
            return x ? x->ContentHash() : 0;
          else
            return absl::HashOf(x);
        },
        v);
    h = absl::HashOf(h, k, v.index(), hv);
  }
  return h;
}

std::string ParamValueText(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>)
          return absl::StrCat(x);
        else if constexpr (std::is_same_v<T, std::string>)
          return absl::StrCat("\"", x, "\"");
        else if constexpr (std::is_same_v<T, TensorDataPtr>)
          return x ? absl::StrCat("tensor", ShapeToString(x->shape()), "#", x->ContentHash()) : "null";
        else
          return absl::StrCat("[", absl::StrJoin(x, ","), "]");
      },
      v);
}

std::string Params::ToString() const {
  std::vector<std::string> parts;
  for (const auto& [k, v] : values_) parts.push_back(absl::StrCat(k, "=", ParamValueText(v)));
  return absl::StrJoin(parts, " ");
}

bool Params::operator==(const Params& o) const {
  if (values_.size() != o.values_.size()) return false;
  for (auto a = values_.begin(), b = o.values_.begin(); a != values_.end(); ++a, ++b) {
    if (a->first != b->first || a->second.index() != b->second.index()) return false;
    if (const auto* ta = std::get_if<TensorDataPtr>(&a->second)) {
      const auto& tb = std::get<TensorDataPtr>(b->second);
      if ((ta->get() == nullptr) != (tb == nullptr)) return false;
      if (*ta && !(*ta)->SameContent(*tb)) return false;
    } else if (a->second != b->second) {
      return false;
    }
  }
  return true;
}

}  // namespace taso
