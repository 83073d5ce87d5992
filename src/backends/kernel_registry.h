// A backend's kernels (or views) by operator name. Entries register from static
// initializers, where no error can be returned and the operator registry may not be
// complete yet: a name registered twice is recorded, and the first lookup checks the
// registry as a whole (Validate), ending the program with one line naming the kernel
// when it is broken. A misspelled name would otherwise quietly mean "no kernel", and a
// duplicate would quietly replace the first.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "taso/ir/op.h"

namespace taso {

template <typename T>
class KernelRegistry {
 public:
  // `kind` names the entries in errors ("cpu kernel").
  explicit KernelRegistry(std::string kind) : kind_(std::move(kind)) {}

  void Register(const std::string& op, std::unique_ptr<T> entry) {
    if (!entries_.try_emplace(op, std::move(entry)).second) duplicates_.push_back(op);
  }

  // Fails, naming the offenders, when a name was registered twice or names no operator
  // of `ops`.
  absl::Status Validate(const OpRegistry& ops) const {
    if (!duplicates_.empty())
      return absl::InternalError(absl::StrCat(kind_, " registered twice: ", absl::StrJoin(duplicates_, ", ")));
    std::vector<std::string> unknown;
    for (const auto& [name, entry] : entries_)
      if (ops.Find(name) == nullptr) unknown.push_back(name);
    std::sort(unknown.begin(), unknown.end());
    if (!unknown.empty())
      return absl::InternalError(absl::StrCat(kind_, " for no operator: ", absl::StrJoin(unknown, ", ")));
    return absl::OkStatus();
  }

  // The entry for an operator, or null. The first call validates the registry against
  // the global operators and exits (status 70, without
  // running destructors) with one line on stderr if it is broken.
  const T* Find(absl::string_view op) const {
    std::call_once(checked_, [this] { ExitIfInvalid(Validate(OpRegistry::Global())); });
    auto it = entries_.find(op);
    return it == entries_.end() ? nullptr : it->second.get();
  }

 private:
  static void ExitIfInvalid(const absl::Status& status) {
    if (status.ok()) return;
    std::fprintf(stderr, "taso: internal error: %s\n", std::string(status.message()).c_str());
    std::_Exit(70);  // EX_SOFTWARE: the program itself is broken
  }

  std::string kind_;
  absl::flat_hash_map<std::string, std::unique_ptr<T>> entries_;
  std::vector<std::string> duplicates_;
  mutable std::once_flag checked_;
};

}  // namespace taso
