// Parametric rules: rules that differ only in operator parameters (a convolution's stride,
// padding or activation, a pool's stride and padding, an axis) and that were found for
// every combination of the values they take become one rule with variables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "canonical.h"
#include "taso/rules/rules.h"

namespace taso::gen {

// A family of two rules or more merged into its first member: the variables it gets and
// where they are bound.
struct FamilyVars {
  std::vector<size_t> members;  // indices into `found`, in order; the first stands for all
  std::vector<RuleVar> vars;
  struct Bound {
    int side, op;  // side 0: the source
    std::string param, var;
  };
  std::vector<Bound> bound;
};

class ParameterFamilies {
 public:
  explicit ParameterFamilies(const OpSet& set);
  ~ParameterFamilies();
  // Rules merge only within a group (the same skeleton): its hash, so that the rules can
  // be merged a share of the groups at a time.
  uint64_t GroupHash(const PRule& rule) const;
  // The families of two rules or more among `found`, the rules in their final order; a
  // family's members are all in the same group, so a share of the groups gives the same
  // families as all of them.
  std::vector<FamilyVars> Families(const std::vector<PRule>& found) const;
  // Binds a family's variables in its first member, written out.
  static void Bind(const FamilyVars& family, Rule& first);

 private:
  struct Erasure;
  const OpSet& set_;
  std::unique_ptr<Erasure> erasure_;
};

// `rules[i]` is `found[i]` written out. Returns the rules with each complete family merged
// into its first member, in the order of their first members; names are left to the caller.
std::vector<Rule> MergeParameters(const OpSet& set, const std::vector<PRule>& found, std::vector<Rule> rules);

}  // namespace taso::gen
