#include "taso/rules/rules.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "rules.pb.h"
#include "taso/ir/file_limits.h"
#include "taso/ir/status_macros.h"

namespace taso {
namespace {

constexpr int kFormatVersion = 1;
// No operator of the library has more outputs than this (a Split into as many parts is the
// most); a file stating more is corrupt, and would make the rewriter name each of them.
constexpr int kMaxOutputsPerOp = 64;

void SizeToProto(const SymbolicSize& s, proto::Size* out) {
  for (const DimRef& r : s) {
    auto* t = out->add_terms();
    t->set_tensor(r.tensor);
    t->set_dim(r.dim);
  }
}

void ValueToProto(const ParamValue& value, proto::Param* p) {
  if (auto* i = std::get_if<int64_t>(&value))
    p->set_int_value(*i);
  else if (auto* f = std::get_if<double>(&value))
    p->set_float_value(*f);
  else if (auto* s = std::get_if<std::string>(&value))
    p->set_string_value(*s);
  else if (auto* v = std::get_if<std::vector<int64_t>>(&value))
    for (int64_t x : *v) p->mutable_ints()->add_values(x);
}

absl::StatusOr<ParamValue> ValueFromProto(const proto::Param& p) {
  switch (p.value_case()) {
    case proto::Param::kIntValue:
      return ParamValue(p.int_value());
    case proto::Param::kFloatValue:
      return ParamValue(p.float_value());
    case proto::Param::kStringValue:
      return ParamValue(p.string_value());
    case proto::Param::kInts:
      return ParamValue(std::vector<int64_t>(p.ints().values().begin(), p.ints().values().end()));
    default:
      return absl::InvalidArgumentError(absl::StrCat("parameter '", p.name(), "' has no value"));
  }
}

void GraphToProto(const RuleGraph& g, proto::RuleGraph* out) {
  for (const RuleOp& op : g.ops) {
    auto* o = out->add_ops();
    o->set_op(std::string(op.op->name()));
    for (const auto& [name, value] : op.params.entries()) {
      auto* p = o->add_params();
      p->set_name(name);
      ValueToProto(value, p);
    }
    for (const auto& [param, var] : op.bound) {
      auto* b = o->add_bound();
      b->set_param(param);
      b->set_var(var);
    }
    for (const auto& [name, sizes] : op.sizes) {
      auto* p = o->add_params();
      p->set_name(name);
      auto* list = p->mutable_sizes();
      for (const SymbolicSize& s : sizes) SizeToProto(s, list->add_sizes());
    }
    for (int i : op.inputs) o->add_inputs(i);
    o->set_num_outputs(op.num_outputs);
  }
  for (int i : g.outputs) out->add_outputs(i);
}

absl::Status GraphFromProto(const proto::RuleGraph& g, int num_inputs, RuleGraph* out) {
  int tensors = num_inputs;
  for (const auto& o : g.ops()) {
    RuleOp op;
    op.op = OpRegistry::Global().Find(o.op());
    if (op.op == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown operator '", o.op(), "'"));
    for (const auto& p : o.params()) {
      switch (p.value_case()) {
        case proto::Param::kSizes: {
          auto& sizes = op.sizes[p.name()];
          for (const auto& s : p.sizes().sizes()) {
            SymbolicSize sum;
            for (const auto& t : s.terms()) {
              if (t.tensor() < 0 || t.tensor() >= tensors)
                return absl::InvalidArgumentError(
                    absl::StrCat("size refers to tensor ", t.tensor(), " before it exists"));
              sum.push_back({t.tensor(), t.dim()});
            }
            sizes.push_back(std::move(sum));
          }
          break;
        }
        default: {
          ASSIGN_OR_RETURN(ParamValue v, ValueFromProto(p));
          op.params.Set(p.name(), std::move(v));
        }
      }
    }
    for (const auto& b : o.bound()) {
      if (!op.params.Has(b.param()))
        return absl::InvalidArgumentError(
            absl::StrCat(o.op(), " binds parameter '", b.param(), "', which it does not have"));
      op.bound[b.param()] = b.var();
    }
    for (int i : o.inputs()) {
      if (i < 0 || i >= tensors)
        return absl::InvalidArgumentError(absl::StrCat(o.op(), " reads tensor ", i, ", which does not exist yet"));
      op.inputs.push_back(i);
    }
    if (o.num_outputs() < 1) return absl::InvalidArgumentError(absl::StrCat(o.op(), " has no outputs"));
    if (o.num_outputs() > kMaxOutputsPerOp)
      return absl::InvalidArgumentError(
          absl::StrCat(o.op(), " has ", o.num_outputs(), " outputs (at most ", kMaxOutputsPerOp, ")"));
    op.num_outputs = o.num_outputs();
    tensors += op.num_outputs;
    out->ops.push_back(std::move(op));
  }
  if (g.outputs().empty()) return absl::InvalidArgumentError("a rule graph has no outputs");
  for (int i : g.outputs()) {
    if (i < 0 || i >= tensors) return absl::InvalidArgumentError(absl::StrCat("output ", i, " does not exist"));
    out->outputs.push_back(i);
  }
  return absl::OkStatus();
}

// Every binding names a declared variable, and every variable is bound somewhere.
absl::Status CheckBindings(const Rule& r) {
  std::set<std::string> declared, used;
  for (const RuleVar& v : r.vars)
    if (!declared.insert(v.name).second)
      return absl::InvalidArgumentError(absl::StrCat("variable '", v.name, "' declared twice"));
  for (const RuleGraph* g : {&r.source, &r.target})
    for (const RuleOp& op : g->ops)
      for (const auto& [param, var] : op.bound) {
        if (!declared.count(var)) return absl::InvalidArgumentError(absl::StrCat("undeclared variable '", var, "'"));
        used.insert(var);
      }
  if (used.size() != declared.size()) return absl::InvalidArgumentError("a declared variable is never bound");
  return absl::OkStatus();
}

// Every size of a graph's operator refers to a tensor bound when the matcher reaches that
// operator (operators are matched in order, either side of a rule may be matched): a rule
// input this or an earlier operator reads, or an earlier operator's output.
absl::Status CheckSizesBound(const Rule& r) {
  for (const RuleGraph* g : {&r.source, &r.target}) {
    std::vector<bool> bound(r.inputs.size(), false);
    for (const RuleOp& op : g->ops) {
      for (int t : op.inputs) bound[t] = true;
      for (const auto& [name, sizes] : op.sizes)
        for (const SymbolicSize& s : sizes)
          for (const DimRef& d : s)
            if (!bound[d.tensor])
              return absl::InvalidArgumentError(absl::StrCat(op.op->name(), " size '", name, "' refers to tensor ",
                                                             d.tensor, ", which is not bound when it is matched"));
      bound.resize(bound.size() + op.num_outputs, true);
    }
  }
  return absl::OkStatus();
}

// The parameters a rule may give an operator, with their types (ParamValue's alternative):
// those of its generator variants; null for an operator taso-gen does not enumerate.
using ParamTypes = absl::flat_hash_map<std::string, size_t>;
using ParamTypeCache = absl::flat_hash_map<const OpDef*, std::optional<ParamTypes>>;

const ParamTypes* VariantParamTypes(const OpDef* op, ParamTypeCache& cache) {
  auto [it, added] = cache.try_emplace(op);
  if (added) {
    const std::vector<GeneratorVariant> variants = op->rule_form().GeneratorVariants();
    if (!variants.empty()) it->second.emplace();
    for (const GeneratorVariant& v : variants)
      for (const auto& [name, value] : v.params.entries()) it->second->emplace(name, value.index());
  }
  return it->second ? &*it->second : nullptr;
}

// Every operator is one taso-gen enumerates, with parameters of the types its variants
// give them, and every value of a variable has the type of the parameters it is bound to:
// operators read their parameters with typed getters, which refuse another type.
absl::Status CheckParamTypes(const Rule& r, ParamTypeCache& cache) {
  for (const RuleGraph* g : {&r.source, &r.target})
    for (const RuleOp& op : g->ops) {
      const ParamTypes* known = VariantParamTypes(op.op, cache);
      if (known == nullptr)
        return absl::InvalidArgumentError(absl::StrCat(op.op->name(), " is no operator taso-gen enumerates"));
      const ParamTypes& types = *known;
      for (const auto& [name, value] : op.params.entries()) {
        auto it = types.find(name);
        if (it == types.end())
          return absl::InvalidArgumentError(absl::StrCat(op.op->name(), " has no parameter '", name, "'"));
        if (it->second != value.index())
          return absl::InvalidArgumentError(
              absl::StrCat(op.op->name(), " parameter '", name, "' has another type than the operator's"));
      }
      // Symbolic sizes become a list of integers once the sizes are known; the variants
      // do not name such parameters (their values depend on the shapes), but one they name
      // must take a list.
      const size_t kInts = ParamValue(std::vector<int64_t>{}).index();
      for (const auto& [name, unused] : op.sizes)
        if (auto it = types.find(name); it != types.end() && it->second != kInts)
          return absl::InvalidArgumentError(
              absl::StrCat(op.op->name(), " parameter '", name, "' takes no list of sizes"));
      for (const auto& [param, var] : op.bound) {
        auto type = types.find(param);
        if (type == types.end())
          return absl::InvalidArgumentError(absl::StrCat(op.op->name(), " has no parameter '", param, "'"));
        for (const RuleVar& v : r.vars)
          for (const ParamValue& value : v.values)
            if (v.name == var && value.index() != type->second)
              return absl::InvalidArgumentError(
                  absl::StrCat("variable '", var, "' has a value of another type than parameter '", param, "'"));
      }
    }
  return absl::OkStatus();
}

std::string TensorName(const Rule& r, int id) {
  return id < static_cast<int>(r.inputs.size()) ? r.inputs[id].name : absl::StrCat("t", id);
}

std::string SizeText(const Rule& r, const SymbolicSize& s) {
  std::vector<std::string> terms;
  for (const DimRef& d : s) terms.push_back(absl::StrCat(TensorName(r, d.tensor), ".dim", d.dim));
  return absl::StrJoin(terms, "+");
}

std::string GraphText(const Rule& r, const RuleGraph& g) {
  std::string s;
  int next = static_cast<int>(r.inputs.size());
  for (const RuleOp& op : g.ops) {
    std::vector<std::string> outs, ins, params;
    for (int i = 0; i < op.num_outputs; ++i) outs.push_back(TensorName(r, next++));
    for (int i : op.inputs) ins.push_back(TensorName(r, i));
    for (const auto& [name, value] : op.params.entries()) {
      auto var = op.bound.find(name);
      params.push_back(absl::StrCat(name, "=", var == op.bound.end() ? ParamValueText(value) : var->second));
    }
    for (const auto& [name, sizes] : op.sizes) {
      std::vector<std::string> parts;
      for (const auto& sz : sizes) parts.push_back(SizeText(r, sz));
      params.push_back(absl::StrCat(name, "=[", absl::StrJoin(parts, ","), "]"));
    }
    absl::StrAppend(&s, "    ", absl::StrJoin(outs, ", "), " = ", op.op->name(),
                    params.empty() ? "" : absl::StrCat("{", absl::StrJoin(params, " "), "}"), "(",
                    absl::StrJoin(ins, ", "), ")\n");
  }
  std::vector<std::string> outs;
  for (int o : g.outputs) outs.push_back(TensorName(r, o));
  absl::StrAppend(&s, "    -> ", absl::StrJoin(outs, ", "), "\n");
  return s;
}

}  // namespace

absl::StatusOr<RuleSet> ReadRuleSet(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open rules file '", path, "'"));
  proto::RuleSet p;
  if (!p.ParseFromIstream(&f) || p.format_version() != kFormatVersion)
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a taso rules file (format ", kFormatVersion, ")"));
  RuleSet set;
  set.max_ops = p.max_ops();
  set.operators.assign(p.operators().begin(), p.operators().end());
  set.command = p.command();
  set.proved_by = p.proved_by();
  ParamTypeCache param_types;
  for (const auto& pr : p.rules()) {
    Rule r;
    r.name = pr.name();
    for (const auto& in : pr.inputs())
      r.inputs.push_back({in.name(), Shape(in.example_shape().begin(), in.example_shape().end()), in.weight()});
    const int n = static_cast<int>(r.inputs.size());
    absl::Status s = GraphFromProto(pr.source(), n, &r.source);
    if (s.ok()) s = GraphFromProto(pr.target(), n, &r.target);
    if (s.ok() && r.source.outputs.size() != r.target.outputs.size())
      s = absl::InvalidArgumentError("source and target have different numbers of outputs");
    for (const auto& pv : pr.vars()) {
      if (!s.ok()) break;
      RuleVar var{pv.name(), {}};
      for (const auto& value : pv.values()) {
        auto v = ValueFromProto(value);
        if (!v.ok())
          s = v.status();
        else
          var.values.push_back(*std::move(v));
      }
      if (s.ok() && var.values.empty())
        s = absl::InvalidArgumentError(absl::StrCat("variable '", var.name, "' has no values"));
      r.vars.push_back(std::move(var));
    }
    if (s.ok()) s = CheckBindings(r);
    if (s.ok()) s = CheckSizesBound(r);
    if (s.ok()) s = CheckParamTypes(r, param_types);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("'", path, "', rule '", r.name, "': ", s.message()));
    set.rules.push_back(std::move(r));
  }
  return set;
}

absl::Status WriteRuleSet(const RuleSet& set, const std::string& path) {
  proto::RuleSet p;
  p.set_format_version(kFormatVersion);
  p.set_max_ops(set.max_ops);
  for (const auto& o : set.operators) p.add_operators(o);
  p.set_command(set.command);
  p.set_proved_by(set.proved_by);
  for (const Rule& r : set.rules) {
    auto* pr = p.add_rules();
    pr->set_name(r.name);
    for (const RuleInput& in : r.inputs) {
      auto* pi = pr->add_inputs();
      pi->set_name(in.name);
      for (int64_t d : in.example_shape) pi->add_example_shape(d);
      pi->set_weight(in.weight);
    }
    GraphToProto(r.source, pr->mutable_source());
    GraphToProto(r.target, pr->mutable_target());
    for (const RuleVar& var : r.vars) {
      auto* pv = pr->add_vars();
      pv->set_name(var.name);
      for (const ParamValue& v : var.values) ValueToProto(v, pv->add_values());
    }
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
    // Deterministic bytes: the same rules always give the same file.
    std::string bytes;
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    p.SerializeToCodedStream(&coded);
    coded.Trim();
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f.flush()) return absl::InternalError(absl::StrCat("failed writing '", path, "'"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

std::string RuleText(const Rule& r) {
  std::vector<std::string> ins;
  for (const RuleInput& in : r.inputs) ins.push_back(absl::StrCat(in.name, ShapeToString(in.example_shape)));
  std::vector<std::string> vars;
  for (const RuleVar& v : r.vars) {
    std::vector<std::string> values;
    for (const ParamValue& x : v.values) values.push_back(ParamValueText(x));
    vars.push_back(absl::StrCat(v.name, " in {", absl::StrJoin(values, ", "), "}"));
  }
  return absl::StrCat("rule ", r.name, " (", absl::StrJoin(ins, ", "), ")",
                      vars.empty() ? "" : absl::StrCat(" for ", absl::StrJoin(vars, ", ")), "\n  source:\n",
                      GraphText(r, r.source), "  target:\n", GraphText(r, r.target));
}

std::string RuleSetText(const RuleSet& set) {
  std::string s = absl::StrCat("# taso rules: ", set.rules.size(), " rules, up to ", set.max_ops,
                               " operators per graph\n# operators: ", absl::StrJoin(set.operators, " "),
                               "\n# generated by: ", set.command, "\n");
  if (!set.proved_by.empty()) absl::StrAppend(&s, "# every rule proved by: ", set.proved_by, "\n");
  for (const Rule& r : set.rules) absl::StrAppend(&s, "\n", RuleText(r));
  return s;
}

std::vector<Rule> Instances(const Rule& rule) {
  if (rule.vars.empty()) return {rule};
  std::vector<Rule> out;
  std::vector<size_t> pick(rule.vars.size(), 0);
  while (true) {
    Rule r = rule;
    r.name = absl::StrCat(rule.name, "/", out.size());
    r.vars.clear();
    for (RuleGraph* g : {&r.source, &r.target})
      for (RuleOp& op : g->ops) {
        for (const auto& [param, var] : op.bound)
          for (size_t v = 0; v < rule.vars.size(); ++v)
            if (rule.vars[v].name == var) op.params.Set(param, rule.vars[v].values[pick[v]]);
        op.bound.clear();
      }
    out.push_back(std::move(r));
    size_t v = 0;  // the next combination, the first variable fastest
    while (v < pick.size() && ++pick[v] == rule.vars[v].values.size()) pick[v++] = 0;
    if (v == pick.size()) return out;
  }
}

std::string QualifiedRuleName(const std::string& path, const std::string& name) {
  return absl::StrCat(std::filesystem::path(path).stem().string(), ":", name);
}

absl::StatusOr<std::vector<Rule>> CombineRuleDatabases(std::vector<RuleDatabase> databases) {
  std::vector<Rule> all;
  absl::flat_hash_map<std::string, std::string> path_of;  // every name taken -> its database
  auto take = [&path_of](const std::string& name, const std::string& path) -> absl::Status {
    const auto [it, fresh] = path_of.emplace(name, path);
    if (fresh) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("two rules named ", name, " (in ", it->second, " and ", path, ")"));
  };
  for (size_t i = 0; i < databases.size(); ++i) {
    const std::string& path = databases[i].path;
    for (Rule& rule : databases[i].rules) {
      const std::string qualified = QualifiedRuleName(path, rule.name);
      if (i > 0) rule.name = qualified;
      RETURN_IF_ERROR(take(rule.name, path));
      if (i == 0) RETURN_IF_ERROR(take(qualified, path));
      all.push_back(std::move(rule));
    }
  }
  return all;
}

absl::StatusOr<std::vector<Rule>> ReadRuleDatabases(const std::vector<std::string>& paths,
                                                    const RuleReadOptions& options) {
  std::vector<RuleDatabase> databases;
  for (const std::string& path : paths) {
    RETURN_IF_ERROR(CheckFileSize(path, options.max_bytes, "rules file", "--max-rules-bytes"));
    ASSIGN_OR_RETURN(RuleSet rules, ReadRuleSet(path));
    if (rules.proved_by.empty() && !options.allow_unproved)
      return absl::FailedPreconditionError(absl::StrCat(path, " holds rules not proved: prove them with taso-verify ",
                                                        "--write-proved, or pass --allow-unproved"));
    databases.push_back({path, std::move(rules.rules)});
  }
  return CombineRuleDatabases(std::move(databases));
}

std::string RuleNameInFile(const std::string& name) {
  const size_t colon = name.rfind(':');
  return colon == std::string::npos ? name : name.substr(colon + 1);
}

Rule Reversed(const Rule& rule) {
  Rule r = rule;
  r.name = rule.name + "~";
  std::swap(r.source, r.target);
  return r;
}

AppliedRuleName ParseAppliedRuleName(absl::string_view name) {
  AppliedRuleName parsed;
  parsed.reversed = absl::ConsumeSuffix(&name, "~");
  parsed.concrete = std::string(name);
  parsed.rule = std::string(name.substr(0, name.find('/')));
  return parsed;
}

absl::StatusOr<Params> ResolvedParams(const Rule& rule, const RuleOp& op,
                                      const std::function<const Shape&(int tensor)>& shape_of) {
  Params params = op.params;
  for (const auto& [name, sizes] : op.sizes) {
    std::vector<int64_t> values;
    for (const SymbolicSize& s : sizes) {
      int64_t v = 0;
      for (const DimRef& d : s) {
        const Shape& shape = shape_of(d.tensor);
        if (d.dim < 0 || d.dim >= static_cast<int>(shape.size()))
          return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, ": size refers to a missing dimension"));
        v += shape[d.dim];
      }
      values.push_back(v);
    }
    params.Set(name, values);
  }
  return params;
}

absl::StatusOr<Graph> InstantiateRuleGraph(const Rule& rule, const RuleGraph& side,
                                           const std::vector<Shape>& input_shapes) {
  if (input_shapes.size() != rule.inputs.size())
    return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, " has ", rule.inputs.size(), " inputs, ",
                                                   input_shapes.size(), " shapes given"));
  Graph g;
  std::vector<ValueId> tensors;
  for (size_t i = 0; i < rule.inputs.size(); ++i) {
    ASSIGN_OR_RETURN(ValueId v, g.AddInput(rule.inputs[i].name, DataType::kFloat32, input_shapes[i]));
    tensors.push_back(v);
  }
  for (const RuleOp& op : side.ops) {
    ASSIGN_OR_RETURN(Params params,
                     ResolvedParams(rule, op, [&](int t) -> const Shape& { return g.value(tensors[t]).shape; }));
    std::vector<ValueId> ins;
    for (int i : op.inputs) ins.push_back(tensors[i]);
    ASSIGN_OR_RETURN(std::vector<ValueId> outs, g.AddNode(op.op, std::move(params), std::move(ins)));
    if (static_cast<int>(outs.size()) != op.num_outputs)
      return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, ": ", op.op->name(), " gives ", outs.size(),
                                                     " outputs, the rule expects ", op.num_outputs));
    tensors.insert(tensors.end(), outs.begin(), outs.end());
  }
  for (int o : side.outputs) RETURN_IF_ERROR(g.AddOutput(tensors[o]));
  return g;
}

}  // namespace taso
