#include "parametric.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "form_store.h"

namespace taso::gen {
namespace {

// A parameter of one operator of a rule: side 0 is the source, 1 the target.
struct Field {
  int side, op;
  std::string param;
};

// Which parameters of each operator vary between its generator variants (the rest are
// part of what the operator is), and each variant with those parameters erased.
struct Erasure {
  std::map<std::string, std::set<std::string>> fields;  // operator -> parameter names
  std::vector<int> erased;                              // variant -> id of its erased form
};

Erasure Erase(const OpSet& set) {
  Erasure e;
  std::map<std::string, std::map<std::string, std::set<std::string>>> seen;  // op -> param -> values
  for (const Variant& v : set.variants)
    for (const auto& [name, value] : v.spec.params.entries())
      if (std::find(v.spec.fixed_params.begin(), v.spec.fixed_params.end(), name) == v.spec.fixed_params.end())
        seen[std::string(v.op->name())][name].insert(ParamValueText(value));
  for (const auto& [op, params] : seen)
    for (const auto& [name, values] : params)
      if (values.size() > 1) e.fields[op].insert(name);
  std::map<std::string, int> ids;
  for (const Variant& v : set.variants) {
    Params kept = v.spec.params;
    for (const std::string& f : e.fields[std::string(v.op->name())]) kept.Erase(f);
    const std::string key = absl::StrCat(v.op->name(), "{", kept.ToString(), "}/", v.spec.arity);
    e.erased.push_back(ids.emplace(key, static_cast<int>(ids.size())).first->second);
  }
  return e;
}

struct Member {
  size_t rule;
  std::vector<std::string> values;  // per field, in the skeleton's order
  std::vector<Field> fields;
};

struct Family {
  std::vector<size_t> members;               // indices into the group
  std::vector<std::vector<size_t>> classes;  // fields that take one variable, each
};

// The classes of `varying` fields over `members`: fields equal in every member share a
// class (one variable), in order of their first field.
std::vector<std::vector<size_t>> FieldClasses(const std::vector<Member>& group, const std::vector<size_t>& members,
                                              const std::vector<size_t>& varying) {
  auto value = [&](size_t m, size_t f) -> const std::string& { return group[m].values[f]; };
  std::vector<std::vector<size_t>> classes;
  for (size_t f : varying) {
    bool placed = false;
    for (auto& c : classes)
      if (std::all_of(members.begin(), members.end(), [&](size_t m) { return value(m, f) == value(m, c[0]); })) {
        c.push_back(f);
        placed = true;
        break;
      }
    if (!placed) classes.push_back({f});
  }
  return classes;
}

// Are the members, all different, every combination of their classes' values?
bool FullProduct(const std::vector<Member>& group, const std::vector<size_t>& members,
                 const std::vector<std::vector<size_t>>& classes) {
  size_t product = 1;
  for (const auto& c : classes) {
    std::set<std::string> values;
    for (size_t m : members) values.insert(group[m].values[c[0]]);
    product *= values.size();
  }
  std::set<std::vector<std::string>> distinct;
  for (size_t m : members) distinct.insert(group[m].values);
  return distinct.size() == members.size() && product == members.size();
}

// Splits a group of rules with the same skeleton into families, each the full product of
// its variables' values; fields equal in every member share a variable.
void Partition(const std::vector<Member>& group, std::vector<size_t> members, std::vector<Family>* out) {
  if (members.size() == 1) {
    out->push_back({members, {}});
    return;
  }
  const size_t num_fields = group[members[0]].values.size();
  auto value = [&](size_t m, size_t f) -> const std::string& { return group[m].values[f]; };
  std::vector<size_t> varying;
  for (size_t f = 0; f < num_fields; ++f)
    for (size_t m : members)
      if (value(m, f) != value(members[0], f)) {
        varying.push_back(f);
        break;
      }
  if (varying.empty()) {  // the same values: nothing to merge
    for (size_t m : members) out->push_back({{m}, {}});
    return;
  }
  std::vector<std::vector<size_t>> classes = FieldClasses(group, members, varying);
  if (FullProduct(group, members, classes)) {
    out->push_back({members, std::move(classes)});
    return;
  }
  std::map<std::string, std::vector<size_t>> by_value;
  for (size_t m : members) by_value[value(m, varying[0])].push_back(m);
  for (auto& [v, part] : by_value) Partition(group, part, out);
}

// Does either graph of the rule split at a concatenation? A split's sizes are sums of
// dimensions along the axes of the concatenations that built its input, so such rules
// keep all their parameters.
bool HasSplit(const OpSet& set, const PRule& rule) {
  bool splits = false;
  for (const PGraph* g : {&rule.a, &rule.b})
    for (const auto& op : g->ops) splits |= set.variants[op.variant].spec.split_at_concat;
  return splits;
}

// Rule `i` as a member of its skeleton's group: its erasable parameters' values and where
// they are, in the order the skeleton's canonical form writes the operators.
Member MemberOf(const OpSet& set, const Erasure& erasure, const PRule& rule, size_t i, const CanonicalOrder& order) {
  Member m{i, {}, {}};
  for (int part = 0; part < 2; ++part) {
    const int side = (part == 0) != order.swapped ? 0 : 1;
    const PGraph& g = side == 0 ? rule.a : rule.b;
    for (int op : part == 0 ? order.first : order.second) {
      const Variant& v = set.variants[g.ops[op].variant];
      auto fields = erasure.fields.find(std::string(v.op->name()));
      if (fields == erasure.fields.end()) continue;
      for (const std::string& f : fields->second) {
        auto it = v.spec.params.entries().find(f);
        m.values.push_back(it == v.spec.params.entries().end() ? "" : ParamValueText(it->second));
        m.fields.push_back({side, op, f});
      }
    }
  }
  return m;
}

// The key of a rule's group (its skeleton: the canonical form with parameters erased, or
// the rule itself where it splits), and the operator order that canonical form writes.
std::string SkeletonKey(const OpSet& set, const Erasure& erasure, const PRule& rule, CanonicalOrder* order) {
  const bool splits = HasSplit(set, rule);
  PRule skeleton = rule;
  for (PGraph* g : {&skeleton.a, &skeleton.b})
    for (auto& op : g->ops)
      if (!splits) op.variant = erasure.erased[op.variant];
  return (splits ? "concrete:" : "erased:") + Canonical(skeleton, order);
}

// The rules grouped by skeleton.
std::map<std::string, std::vector<Member>> GroupBySkeleton(const OpSet& set, const Erasure& erasure,
                                                           const std::vector<PRule>& found) {
  std::map<std::string, std::vector<Member>> groups;
  for (size_t i = 0; i < found.size(); ++i) {
    CanonicalOrder order;
    const std::string key = SkeletonKey(set, erasure, found[i], &order);
    groups[key].push_back(HasSplit(set, found[i]) ? Member{i, {}, {}} : MemberOf(set, erasure, found[i], i, order));
  }
  return groups;
}

// The variable `name` of one class of fields: the values the family's members give them,
// sorted by their text.
RuleVar ClassVariable(const OpSet& set, const std::vector<PRule>& found, const std::vector<Member>& group,
                      const Family& fam, const std::vector<size_t>& fields, std::string name) {
  RuleVar var{std::move(name), {}};
  std::map<std::string, ParamValue> values;
  for (size_t m : fam.members) {
    const Field& f = group[m].fields[fields[0]];
    const PGraph& g = f.side == 0 ? found[group[m].rule].a : found[group[m].rule].b;
    const Params& p = set.variants[g.ops[f.op].variant].spec.params;
    values.emplace(group[m].values[fields[0]], p.entries().find(f.param)->second);
  }
  for (auto& [text, v] : values) var.values.push_back(v);
  return var;
}

// The family's variables, to be bound in its first member's rule.
FamilyVars VarsOf(const OpSet& set, const std::vector<PRule>& found, const std::vector<Member>& group,
                  const Family& fam) {
  FamilyVars out;
  for (size_t m : fam.members) out.members.push_back(group[m].rule);
  const Member& first = group[fam.members[0]];
  for (size_t c = 0; c < fam.classes.size(); ++c) {
    RuleVar var = ClassVariable(set, found, group, fam, fam.classes[c], absl::StrCat("p", c));
    for (size_t f : fam.classes[c]) {
      const Field& field = first.fields[f];
      out.bound.push_back({field.side, field.op, field.param, var.name});
    }
    out.vars.push_back(std::move(var));
  }
  return out;
}

}  // namespace

struct ParameterFamilies::Erasure : gen::Erasure {};

ParameterFamilies::ParameterFamilies(const OpSet& set) : set_(set), erasure_(new Erasure{Erase(set)}) {}
ParameterFamilies::~ParameterFamilies() = default;

uint64_t ParameterFamilies::GroupHash(const PRule& rule) const {
  return KeyOf(SkeletonKey(set_, *erasure_, rule, nullptr)).lo;
}

std::vector<FamilyVars> ParameterFamilies::Families(const std::vector<PRule>& found) const {
  std::vector<FamilyVars> out;
  for (auto& [key, group] : GroupBySkeleton(set_, *erasure_, found)) {
    std::vector<size_t> all(group.size());
    for (size_t m = 0; m < group.size(); ++m) all[m] = m;
    std::vector<Family> families;
    Partition(group, all, &families);
    for (const Family& fam : families)
      if (fam.members.size() >= 2) out.push_back(VarsOf(set_, found, group, fam));
  }
  return out;
}

void ParameterFamilies::Bind(const FamilyVars& family, Rule& r) {
  for (const FamilyVars::Bound& b : family.bound) {
    RuleGraph& side = b.side == 0 ? r.source : r.target;
    side.ops[b.op].bound[b.param] = b.var;
  }
  for (const RuleVar& v : family.vars) r.vars.push_back(v);
}

std::vector<Rule> MergeParameters(const OpSet& set, const std::vector<PRule>& found, std::vector<Rule> rules) {
  // Each family becomes its first member with variables bound; the others are dropped.
  std::vector<bool> keep(rules.size(), true);
  for (const FamilyVars& fam : ParameterFamilies(set).Families(found)) {
    ParameterFamilies::Bind(fam, rules[fam.members[0]]);
    for (size_t k = 1; k < fam.members.size(); ++k) keep[fam.members[k]] = false;
  }
  std::vector<Rule> out;
  for (size_t i = 0; i < rules.size(); ++i)
    if (keep[i]) out.push_back(std::move(rules[i]));
  return out;
}

}  // namespace taso::gen
