#include "taso/onnx/onnx_inline_functions.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "onnx_structure.h"
#include "taso/ir/status_macros.h"

namespace taso {

namespace {

// Nested calls deeper than this are taken for a function calling itself.
constexpr int kMaxNestingDepth = 64;
// The most nodes inlining may add to a graph: a function calling another twice, which
// calls another twice, ..., grows exponentially.
constexpr int64_t kMaxInlinedNodes = int64_t{1} << 20;

// Fields of ONNX's IR 9 and 10 that version 1.12's classes do not know, so protobuf keeps
// them as unknown fields: a function's attribute defaults, its overload name, and a
// node's (the name of the overload it calls).
constexpr int kFunctionAttributeDefaultsField = 11;
constexpr int kFunctionOverloadField = 13;
constexpr int kNodeOverloadField = 8;

// The values of `message`'s unknown length-delimited field `number`.
std::vector<std::string> UnknownField(const google::protobuf::Message& message, int number) {
  std::vector<std::string> values;
  const google::protobuf::UnknownFieldSet& fields = message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < fields.field_count(); ++i)
    if (fields.field(i).number() == number &&
        fields.field(i).type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      values.push_back(fields.field(i).length_delimited());
  return values;
}

std::string Overload(const google::protobuf::Message& message, int field) {
  std::vector<std::string> values = UnknownField(message, field);
  return values.empty() ? "" : values.back();
}

struct FunctionKey {
  std::string domain, name, overload;
  bool operator==(const FunctionKey& o) const { return domain == o.domain && name == o.name && overload == o.overload; }
  template <typename H>
  friend H AbslHashValue(H h, const FunctionKey& k) {
    return H::combine(std::move(h), k.domain, k.name, k.overload);
  }
};

std::string DomainKey(const std::string& domain) { return IsDefaultDomain(domain) ? "" : domain; }

FunctionKey KeyOf(const onnx::NodeProto& n) {
  return {DomainKey(n.domain()), n.op_type(), Overload(n, kNodeOverloadField)};
}

FunctionKey KeyOf(const onnx::FunctionProto& f) {
  return {DomainKey(f.domain()), f.name(), Overload(f, kFunctionOverloadField)};
}

// The function's attributes with default values (IR 9's attribute_proto).
std::vector<onnx::AttributeProto> AttributeDefaults(const onnx::FunctionProto& f) {
  std::vector<onnx::AttributeProto> defaults;
  for (const std::string& bytes : UnknownField(f, kFunctionAttributeDefaultsField))
    if (onnx::AttributeProto a; a.ParseFromString(bytes)) defaults.push_back(std::move(a));
  return defaults;
}

bool HasSubgraph(const onnx::NodeProto& n) {
  bool found = false;
  ForEachSubgraph(n, [&](const onnx::GraphProto&) { found = true; });
  return found;
}

// Calls `visit` on every node of `g` and of its subgraphs.
void ForEachNodeDeep(const onnx::GraphProto& g, const std::function<void(const onnx::NodeProto&)>& visit) {
  for (const auto& n : g.node()) {
    visit(n);
    ForEachSubgraph(n, [&](const onnx::GraphProto& sg) { ForEachNodeDeep(sg, visit); });
  }
}

// Why `f`'s body cannot stand in for a call whatever the call: empty where it can.
// `opsets` are the model's imports by domain.
std::string WhyBodyNotInlinable(const onnx::FunctionProto& f, const std::map<std::string, int64_t>& opsets) {
  for (const auto& o : f.opset_import()) {
    auto it = opsets.find(DomainKey(o.domain()));
    if (it != opsets.end() && it->second != o.version())
      return absl::StrCat("it imports opset '", o.domain(), "' version ", o.version(), ", the model version ",
                          it->second);
  }
  absl::flat_hash_set<std::string> defined(f.input().begin(), f.input().end());
  if (defined.size() != static_cast<size_t>(f.input_size())) return "it names a formal input twice";
  for (const auto& n : f.node()) {
    if (HasSubgraph(n)) return absl::StrCat("its ", DescribeNode(n), " holds a subgraph");
    for (const auto& in : n.input())
      if (!in.empty() && !defined.contains(in))
        return absl::StrCat("its ", DescribeNode(n), " reads '", in, "' before anything defines it");
    for (const auto& out : n.output())
      if (!out.empty() && !defined.insert(out).second) return absl::StrCat("it defines '", out, "' twice");
  }
  absl::flat_hash_set<std::string> outputs;
  for (const auto& out : f.output()) {
    if (out.empty() || !outputs.insert(out).second) return "its outputs are not distinct names";
    if (!defined.contains(out) || std::count(f.input().begin(), f.input().end(), out) > 0)
      return absl::StrCat("no node of it computes its output '", out, "'");
  }
  return "";
}

class Inliner {
 public:
  explicit Inliner(onnx::ModelProto& model) : model_(model) {
    for (const auto& o : model.opset_import()) opsets_[DomainKey(o.domain())] = o.version();
    for (const auto& f : model.functions()) functions_.emplace(KeyOf(f), &f);
    NoteTakenNames(model.graph());
  }

  // The function `n` calls, where the model defines it.
  const onnx::FunctionProto* LocalFunction(const onnx::NodeProto& n) const {
    auto it = functions_.find(KeyOf(n));
    return it == functions_.end() ? nullptr : it->second;
  }

  // The main graph's nodes with each call it can inline replaced; what was kept, why.
  InlinedFunctions Run() {
    InlinedFunctions report;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    absl::flat_hash_set<const onnx::FunctionProto*> inlined;
    std::set<std::string> kept;
    for (const auto& n : model_.graph().node()) {
      const onnx::FunctionProto* f = LocalFunction(n);
      expanding_.clear();
      absl::StatusOr<std::vector<onnx::NodeProto>> body =
          f ? Expand(n, *f, absl::StrCat(n.name().empty() ? n.op_type() : n.name(), "/"), 0)
            : absl::StatusOr<std::vector<onnx::NodeProto>>(std::vector<onnx::NodeProto>{n});
      if (!body.ok()) {
        kept.insert(absl::StrCat(n.op_type(), ": ", body.status().message()));
        *nodes.Add() = n;
        continue;
      }
      if (f) ++report.calls;
      inlined.insert(expanding_.begin(), expanding_.end());
      for (auto& inner : *body) *nodes.Add() = std::move(inner);
    }
    if (report.calls == 0) {
      report.kept.assign(kept.begin(), kept.end());
      return report;
    }
    model_.mutable_graph()->mutable_node()->Swap(&nodes);
    for (const onnx::FunctionProto* f : inlined) {
      AddOpsetsOf(*f);
      report.functions.push_back(f->name());
    }
    std::sort(report.functions.begin(), report.functions.end());
    RemoveUncalled(inlined);
    report.kept.assign(kept.begin(), kept.end());
    return report;
  }

 private:
  void NoteTakenNames(const onnx::GraphProto& g) {
    for (const auto& i : g.input()) taken_.insert(i.name());
    for (const auto& i : g.initializer()) taken_.insert(i.name());
    for (const auto& v : g.value_info()) taken_.insert(v.name());
    for (const auto& o : g.output()) taken_.insert(o.name());
    ForEachNodeDeep(g, [&](const onnx::NodeProto& n) { taken_.insert(n.output().begin(), n.output().end()); });
  }

  // `name`, or `name` with a suffix, such that no other value has it.
  std::string Fresh(const std::string& name) {
    std::string candidate = name;
    for (int k = 1; taken_.contains(candidate); ++k) candidate = absl::StrCat(name, "_", k);
    taken_.insert(candidate);
    return candidate;
  }

  absl::Status CheckBody(const onnx::FunctionProto& f) {
    auto [it, fresh] = why_not_.emplace(&f, "");
    if (fresh) it->second = WhyBodyNotInlinable(f, opsets_);
    if (!it->second.empty()) return absl::FailedPreconditionError(it->second);
    return absl::OkStatus();
  }

  // `call`'s function body as nodes of the graph calling it (nested calls expanded).
  absl::StatusOr<std::vector<onnx::NodeProto>> Expand(const onnx::NodeProto& call, const onnx::FunctionProto& f,
                                                      const std::string& prefix, int depth) {
    if (depth > kMaxNestingDepth)
      return absl::FailedPreconditionError(
          absl::StrCat("calls nest more than ", kMaxNestingDepth, " deep (does a function call itself?)"));
    if (auto s = CheckBody(f); !s.ok())
      return depth == 0 ? s : absl::FailedPreconditionError(absl::StrCat("it calls ", f.name(), ": ", s.message()));
    expanding_.insert(&f);
    absl::flat_hash_map<std::string, std::string> names = FormalNames(call, f, prefix);
    const std::vector<onnx::AttributeProto> defaults = AttributeDefaults(f);
    std::vector<onnx::NodeProto> body;
    for (int k = 0; k < f.node_size(); ++k) {
      onnx::NodeProto n = f.node(k);
      n.set_name(absl::StrCat(prefix, n.name().empty() ? absl::StrCat(n.op_type(), "_", k) : n.name()));
      for (auto* list : {n.mutable_input(), n.mutable_output()})
        for (std::string& v : *list) {
          if (v.empty()) continue;
          auto [it, fresh] = names.try_emplace(v);
          if (fresh) it->second = Fresh(prefix + v);
          v = it->second;
        }
      BindAttributes(call, defaults, n);
      const onnx::FunctionProto* inner = LocalFunction(n);
      if (inner == nullptr) {
        body.push_back(std::move(n));
      } else {
        ASSIGN_OR_RETURN(std::vector<onnx::NodeProto> nested, Expand(n, *inner, n.name() + "/", depth + 1));
        std::move(nested.begin(), nested.end(), std::back_inserter(body));
      }
      if ((added_ += 1) > kMaxInlinedNodes)
        return absl::ResourceExhaustedError(
            absl::StrCat("inlined, the calls would add over ", kMaxInlinedNodes, " nodes"));
    }
    return body;
  }

  // The call's names for `f`'s formal inputs ("" where it gives none) and outputs (a new
  // name where it leaves one out).
  absl::flat_hash_map<std::string, std::string> FormalNames(const onnx::NodeProto& call, const onnx::FunctionProto& f,
                                                            const std::string& prefix) {
    absl::flat_hash_map<std::string, std::string> names;
    for (int i = 0; i < f.input_size(); ++i) names[f.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < f.output_size(); ++i)
      names[f.output(i)] =
          i < call.output_size() && !call.output(i).empty() ? call.output(i) : Fresh(prefix + f.output(i));
    return names;
  }

  // Each attribute of `n` that refers to one of the call's (ref_attr_name) becomes a copy
  // of it, or of the function's default where the call does not give it; an attribute
  // referring to one with neither is left out, as ONNX defines (the operator's default).
  static void BindAttributes(const onnx::NodeProto& call, const std::vector<onnx::AttributeProto>& defaults,
                             onnx::NodeProto& n) {
    auto* attributes = n.mutable_attribute();
    for (int i = attributes->size() - 1; i >= 0; --i) {
      onnx::AttributeProto& a = (*attributes)[i];
      if (a.ref_attr_name().empty()) continue;
      const onnx::AttributeProto* value = Named(call.attribute(), a.ref_attr_name());
      if (value == nullptr) value = Named(defaults, a.ref_attr_name());
      if (value == nullptr) {
        attributes->DeleteSubrange(i, 1);
        continue;
      }
      const std::string name = a.name();
      a = *value;
      a.set_name(name);
    }
  }

  template <typename Attributes>
  static const onnx::AttributeProto* Named(const Attributes& attributes, const std::string& name) {
    for (const onnx::AttributeProto& a : attributes)
      if (a.name() == name) return &a;
    return nullptr;
  }

  // The opsets an inlined function imports that the model does not.
  void AddOpsetsOf(const onnx::FunctionProto& f) {
    for (const auto& o : f.opset_import())
      if (opsets_.emplace(DomainKey(o.domain()), o.version()).second) *model_.add_opset_import() = o;
  }

  // Drops the functions of `inlined` nothing calls any more (the graph, its subgraphs, the
  // functions kept), and the opset imports of their domains nothing else uses. A function
  // the model did not call before is the model's and stays.
  void RemoveUncalled(const absl::flat_hash_set<const onnx::FunctionProto*>& inlined) {
    absl::flat_hash_set<FunctionKey> called;
    std::vector<const onnx::FunctionProto*> pending;
    auto note = [&](const onnx::NodeProto& n) {
      if (const onnx::FunctionProto* f = LocalFunction(n); f && called.insert(KeyOf(n)).second) pending.push_back(f);
    };
    ForEachNodeDeep(model_.graph(), note);
    while (!pending.empty()) {
      const onnx::FunctionProto* f = pending.back();
      pending.pop_back();
      for (const auto& n : f->node()) note(n);
    }
    absl::flat_hash_set<std::string> dropped_domains;
    auto* functions = model_.mutable_functions();
    for (int i = functions->size() - 1; i >= 0; --i) {
      if (!inlined.contains(&functions->Get(i)) || called.contains(KeyOf(functions->Get(i)))) continue;
      dropped_domains.insert(DomainKey(functions->Get(i).domain()));
      functions->DeleteSubrange(i, 1);
    }
    functions_.clear();  // its pointers point into the field just changed
    const absl::flat_hash_set<std::string> used = UsedDomains();
    auto* imports = model_.mutable_opset_import();
    for (int i = imports->size() - 1; i >= 0; --i) {
      const std::string domain = DomainKey(imports->Get(i).domain());
      if (dropped_domains.contains(domain) && !used.contains(domain)) imports->DeleteSubrange(i, 1);
    }
  }

  // The domains of the graph's nodes (subgraphs included) and of the functions' nodes,
  // and the functions' own.
  absl::flat_hash_set<std::string> UsedDomains() const {
    absl::flat_hash_set<std::string> used;
    ForEachNodeDeep(model_.graph(), [&](const onnx::NodeProto& n) { used.insert(DomainKey(n.domain())); });
    for (const auto& f : model_.functions()) {
      used.insert(DomainKey(f.domain()));
      for (const auto& n : f.node()) used.insert(DomainKey(n.domain()));
    }
    return used;
  }

  onnx::ModelProto& model_;
  std::map<std::string, int64_t> opsets_;
  absl::flat_hash_map<FunctionKey, const onnx::FunctionProto*> functions_;
  absl::flat_hash_map<const onnx::FunctionProto*, std::string> why_not_;
  absl::flat_hash_set<std::string> taken_;
  int64_t added_ = 0;
  // The functions the call being inlined expands, nested ones included.
  absl::flat_hash_set<const onnx::FunctionProto*> expanding_;
};

}  // namespace

bool CallsLocalFunction(const onnx::ModelProto& model) {
  if (model.functions_size() == 0) return false;
  absl::flat_hash_set<FunctionKey> defined;
  for (const auto& f : model.functions()) defined.insert(KeyOf(f));
  return std::any_of(model.graph().node().begin(), model.graph().node().end(),
                     [&](const onnx::NodeProto& n) { return defined.contains(KeyOf(n)); });
}

InlinedFunctions InlineLocalFunctions(onnx::ModelProto& model) {
  if (!CallsLocalFunction(model)) return {};
  return Inliner(model).Run();
}

}  // namespace taso
