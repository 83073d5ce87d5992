// The onnx_mutate target's structure-aware mutator: each mutation makes a valid model
// invalid (or odd but valid) in one way real exporters or hand edits do, so the fuzzer
// spends its time in the importer's checks rather than in the protobuf parser.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz_entries.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/rng.h"

namespace taso::fuzz {
namespace {

using onnx::AttributeProto;
using onnx::ModelProto;

size_t Pick(Rng& rng, size_t n) { return n == 0 ? 0 : rng.Next() % n; }

// Every tensor name the graph defines: inputs, initializers and node outputs.
std::vector<std::string> TensorNames(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& i : g.input()) names.push_back(i.name());
  for (const auto& i : g.initializer()) names.push_back(i.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(o);
  return names;
}

// Every declared shape: of graph inputs, outputs and intermediate values.
std::vector<onnx::TensorShapeProto*> DeclaredShapes(onnx::GraphProto& g) {
  std::vector<onnx::TensorShapeProto*> shapes;
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (auto& info : *list)
      if (info.type().has_tensor_type()) shapes.push_back(info.mutable_type()->mutable_tensor_type()->mutable_shape());
  return shapes;
}

// Sizes that break arithmetic on sizes: empty, negative, beyond memory, beyond int32.
int64_t OddDim(Rng& rng) {
  static const int64_t kDims[] = {
      0, -1, -7, 1, 3, int64_t{1} << 31, 30'000'000'000, std::numeric_limits<int64_t>::max()};
  return kDims[Pick(rng, std::size(kDims))];
}

AttributeProto* PickAttribute(onnx::GraphProto& g, Rng& rng) {
  std::vector<AttributeProto*> attrs;
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) attrs.push_back(&a);
  return attrs.empty() ? nullptr : attrs[Pick(rng, attrs.size())];
}

// An attribute written with another type: ints as floats, an int as a string, ...
bool RetypeAttribute(ModelProto& m, Rng& rng) {
  AttributeProto* a = PickAttribute(*m.mutable_graph(), rng);
  if (a == nullptr) return false;
  AttributeProto old = *a;
  a->clear_i(), a->clear_f(), a->clear_s(), a->clear_ints(), a->clear_floats(), a->clear_t();
  switch (Pick(rng, 4)) {
    case 0:
      a->set_type(AttributeProto::FLOATS);
      for (int64_t v : old.ints()) a->add_floats(static_cast<float>(v));
      if (old.has_i()) a->add_floats(static_cast<float>(old.i()));
      break;
    case 1:
      a->set_type(AttributeProto::STRING);
      a->set_s(absl::StrCat(old.i()));
      break;
    case 2:
      a->set_type(AttributeProto::INT);
      a->set_i(static_cast<int64_t>(old.f()) + (old.ints_size() > 0 ? old.ints(0) : 0));
      break;
    default:  // a type that does not match the fields set
      a->set_type(static_cast<AttributeProto::AttributeType>(Pick(rng, 15)));
      a->set_f(old.f());
  }
  return true;
}

bool DropNodeInput(ModelProto& m, Rng& rng) {
  auto* nodes = m.mutable_graph()->mutable_node();
  if (nodes->empty()) return false;
  auto& n = (*nodes)[Pick(rng, nodes->size())];
  if (n.input().empty()) return false;
  const size_t i = Pick(rng, n.input_size());
  if (rng.Next() % 2) {
    n.set_input(static_cast<int>(i), "");  // an omitted optional input
  } else {
    n.mutable_input()->erase(n.mutable_input()->begin() + i);
  }
  return true;
}

bool AddNodeInput(ModelProto& m, Rng& rng) {
  auto* g = m.mutable_graph();
  if (g->node().empty()) return false;
  const std::vector<std::string> names = TensorNames(*g);
  auto& n = (*g->mutable_node())[Pick(rng, g->node_size())];
  n.add_input(rng.Next() % 4 == 0 || names.empty() ? "undefined_tensor" : names[Pick(rng, names.size())]);
  return true;
}

// A declared shape that disagrees with what the nodes compute.
bool LieAboutShape(ModelProto& m, Rng& rng) {
  std::vector<onnx::TensorShapeProto*> shapes = DeclaredShapes(*m.mutable_graph());
  if (shapes.empty()) return false;
  onnx::TensorShapeProto* s = shapes[Pick(rng, shapes.size())];
  switch (Pick(rng, 3)) {
    case 0:
      s->add_dim()->set_dim_value(2);
      break;
    case 1:
      if (s->dim().empty()) return false;
      s->mutable_dim()->RemoveLast();
      break;
    default:
      if (s->dim().empty()) return false;
      auto* d = s->mutable_dim(static_cast<int>(Pick(rng, s->dim_size())));
      d->set_dim_value(d->dim_value() == std::numeric_limits<int64_t>::max() ? 1 : d->dim_value() + 1);
  }
  return true;
}

bool OddDimension(ModelProto& m, Rng& rng) {
  auto* g = m.mutable_graph();
  if (rng.Next() % 2 && !g->initializer().empty()) {
    auto& t = (*g->mutable_initializer())[Pick(rng, g->initializer_size())];
    if (t.dims().empty()) return false;
    t.set_dims(static_cast<int>(Pick(rng, t.dims_size())), OddDim(rng));
    return true;
  }
  std::vector<onnx::TensorShapeProto*> shapes = DeclaredShapes(*g);
  if (shapes.empty()) return false;
  onnx::TensorShapeProto* s = shapes[Pick(rng, shapes.size())];
  if (s->dim().empty()) return false;
  s->mutable_dim(static_cast<int>(Pick(rng, s->dim_size())))->set_dim_value(OddDim(rng));
  return true;
}

// A node output renamed to a tensor that already exists: two definitions of one name
// (with a node output: two nodes writing one tensor).
bool DuplicateName(ModelProto& m, Rng& rng) {
  auto* g = m.mutable_graph();
  const std::vector<std::string> names = TensorNames(*g);
  if (g->node().empty() || names.empty()) return false;
  auto& n = (*g->mutable_node())[Pick(rng, g->node_size())];
  if (n.output().empty()) return false;
  n.set_output(static_cast<int>(Pick(rng, n.output_size())), names[Pick(rng, names.size())]);
  return true;
}

bool DropInitializer(ModelProto& m, Rng& rng) {
  auto* inits = m.mutable_graph()->mutable_initializer();
  if (inits->empty()) return false;
  inits->erase(inits->begin() + Pick(rng, inits->size()));
  return true;
}

// An optional output omitted (an LSTM written with outputs ["", "Y_h"]), or one more.
bool ChangeNodeOutputs(ModelProto& m, Rng& rng) {
  auto* nodes = m.mutable_graph()->mutable_node();
  if (nodes->empty()) return false;
  auto& n = (*nodes)[Pick(rng, nodes->size())];
  if (rng.Next() % 2 && !n.output().empty())
    n.set_output(static_cast<int>(Pick(rng, n.output_size())), "");
  else
    n.add_output(absl::StrCat("extra_output_", rng.Next() % 100));
  return true;
}

// A node's operator swapped for another node's: right attributes, wrong operator.
bool SwapOpType(ModelProto& m, Rng& rng) {
  auto* nodes = m.mutable_graph()->mutable_node();
  if (nodes->size() < 2) return false;
  const std::string other = (*nodes)[Pick(rng, nodes->size())].op_type();
  (*nodes)[Pick(rng, nodes->size())].set_op_type(other);
  return true;
}

bool ChangeElementType(ModelProto& m, Rng& rng) {
  auto* g = m.mutable_graph();
  const int type = static_cast<int>(Pick(rng, 18));
  if (rng.Next() % 2 && !g->initializer().empty()) {
    (*g->mutable_initializer())[Pick(rng, g->initializer_size())].set_data_type(type);
    return true;
  }
  if (g->input().empty()) return false;
  (*g->mutable_input())[Pick(rng, g->input_size())].mutable_type()->mutable_tensor_type()->set_elem_type(type);
  return true;
}

// The initializer listed among the graph inputs too, so a caller may override it.
bool InitializerAsInput(ModelProto& m, Rng& rng) {
  auto* g = m.mutable_graph();
  if (g->initializer().empty()) return false;
  const onnx::TensorProto& t = g->initializer(static_cast<int>(Pick(rng, g->initializer_size())));
  auto* in = g->add_input();
  in->set_name(t.name());
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(t.data_type());
  for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return true;
}

bool ChangeOpset(ModelProto& m, Rng& rng) {
  if (m.opset_import().empty()) return false;
  (*m.mutable_opset_import())[0].set_version(static_cast<int64_t>(Pick(rng, 22)));
  return true;
}

// A model-local function's body spoiled: a node calling the function itself, a name
// defined twice or read undefined, a node dropped, an attribute referring to one the call
// may not give, the function's opset changed.
bool SpoilFunction(ModelProto& m, Rng& rng) {
  if (m.functions().empty()) return false;
  onnx::FunctionProto& f = (*m.mutable_functions())[Pick(rng, m.functions_size())];
  if (f.node().empty()) return false;
  const int index = static_cast<int>(Pick(rng, f.node_size()));
  onnx::NodeProto& n = (*f.mutable_node())[index];
  switch (Pick(rng, 6)) {
    case 0:
      n.set_op_type(f.name());
      n.set_domain(f.domain());
      return true;
    case 1: {
      const onnx::NodeProto& other = f.node(static_cast<int>(Pick(rng, f.node_size())));
      if (n.output().empty() || (other.output().empty() && f.input().empty())) return false;
      n.set_output(0, other.output().empty() ? f.input(0) : other.output(0));
      return true;
    }
    case 2:
      if (n.input().empty()) return false;
      n.set_input(static_cast<int>(Pick(rng, n.input_size())), "undefined_in_function");
      return true;
    case 3:
      f.mutable_node()->erase(f.mutable_node()->begin() + index);
      return true;
    case 4: {
      AttributeProto* a = n.attribute().empty() ? n.add_attribute() : n.mutable_attribute(0);
      if (a->name().empty()) a->set_name("alpha");
      a->set_ref_attr_name(rng.Next() % 2 && f.attribute_size() > 0 ? f.attribute(0) : "not_given");
      return true;
    }
    default:
      if (f.opset_import().empty()) return false;
      f.mutable_opset_import(0)->set_version(static_cast<int64_t>(Pick(rng, 22)));
      return true;
  }
}

using Mutation = bool (*)(ModelProto&, Rng&);
constexpr Mutation kMutations[] = {RetypeAttribute, DropNodeInput,     AddNodeInput,       LieAboutShape,
                                   OddDimension,    DuplicateName,     DropInitializer,    ChangeNodeOutputs,
                                   SwapOpType,      ChangeElementType, InitializerAsInput, ChangeOpset,
                                   SpoilFunction};

}  // namespace

size_t MutateOnnxModel(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph()) return 0;
  Rng rng(seed);
  bool mutated = false;
  for (int attempt = 0; attempt < 8 && !mutated; ++attempt)
    mutated = kMutations[Pick(rng, std::size(kMutations))](model, rng);
  const std::string bytes = model.SerializeAsString();
  if (!mutated || bytes.size() > max_size) return 0;
  std::copy(bytes.begin(), bytes.end(), data);
  return bytes.size();
}

}  // namespace taso::fuzz
