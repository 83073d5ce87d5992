// ONNX import and export: bad inputs get one clear error; what the model holds survives
// a round trip; nodes in any order are accepted; operators outside the library pass
// through opaque.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"

#include "taso/ir/graph_copy.h"
#include "taso/ir/onnx_fold.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_isolated_inference.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// A constant and its input info, and an ONNX operator's import-time folding rule applied
// (taso/ir/onnx_fold.h): for the tests of shape arithmetic.
TensorDataPtr Ints(Shape shape, std::vector<int64_t> v) { return TensorData::Int64(std::move(shape), std::move(v)); }
TensorDataPtr Floats(Shape shape, std::vector<float> v) { return TensorData::Float(std::move(shape), std::move(v)); }
InputInfo Known(const TensorDataPtr& d) { return InputInfo{true, d->dtype(), d->shape(), true, d.get()}; }
std::optional<TensorDataPtr> FoldByRule(const std::string& op, const std::vector<InputInfo>& in,
                                        onnx::NodeProto node = {}, int opset = 13) {
  node.set_op_type(op);
  OnnxFolder f = FindOnnxFolder(op);
  REQUIRE(f != nullptr);
  return f(node, opset, in);
}

// x[1,3,8,8] -> Conv(w) -> Relu -> y
onnx::ModelProto ConvReluModel(int opset = 13) {
  auto m = NewModel(opset);
  AddInput(m, "x", {1, 3, 8, 8});
  AddFloatInit(m, "w", {4, 3, 3, 3});
  auto* conv = AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  AddNode(m, op_names::kRelu, {"c"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

}  // namespace

TEST_CASE("Bad files are rejected with one clear line") {
  auto dir = TempDir("bad_files");
  auto err = [](const std::string& path) {
    auto r = ImportOnnxFile(path);
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(err((dir / "missing.onnx").string()), Catch::Contains("cannot open"));
  CHECK_THAT(err(dir.string()), Catch::Contains("is a directory"));
  WriteFile(dir / "text.onnx", "this is not a protobuf, it is a text file\n");
  CHECK_THAT(err((dir / "text.onnx").string()), Catch::Contains("not an ONNX model"));
  WriteFile(dir / "empty.onnx", "");
  CHECK_THAT(err((dir / "empty.onnx").string()), Catch::Contains("empty"));
  // A real model cut short at many points: every prefix is refused.
  const std::string bytes = ConvReluModel().SerializeAsString();
  for (size_t cut : {size_t{7}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 5}) {
    WriteFile(dir / "truncated.onnx", bytes.substr(0, cut));
    CHECK_THAT(err((dir / "truncated.onnx").string()), Catch::Contains("ONNX model"));
  }
}

TEST_CASE("Graphs with a cycle, an undefined input or shapes that do not fit are rejected") {
  {
    auto m = NewModel();
    AddInput(m, "x", {2, 2});
    AddNode(m, op_names::kAdd, {"x", "b"}, {"a"}, "first");
    AddNode(m, op_names::kRelu, {"a"}, {"b"}, "second");
    AddOutput(m, "b");
    CHECK_THAT(ImportError(m), Catch::Contains("cycle"));
  }
  {
    auto m = NewModel();
    AddInput(m, "x", {2, 2});
    AddNode(m, op_names::kAdd, {"x", "ghost"}, {"y"}, "add");
    AddOutput(m, "y");
    CHECK_THAT(ImportError(m), Catch::Contains("reads 'ghost', which no node, graph input or initializer produces"));
  }
  {
    auto m = NewModel();
    AddInput(m, "x", {2, 3});
    AddInput(m, "z", {4, 5});
    AddNode(m, op_names::kAdd, {"x", "z"}, {"y"}, "add");
    AddOutput(m, "y");
    CHECK_THAT(ImportError(m), Catch::Contains("node 'add' (Add)") && Catch::Contains("do not broadcast"));
  }
  {
    auto m = ConvReluModel();
    m.mutable_graph()->mutable_initializer(0)->clear_dims();  // re-declare w as [4,5,3,3]
    for (int64_t d : {4, 5, 3, 3}) m.mutable_graph()->mutable_initializer(0)->add_dims(d);
    m.mutable_graph()->mutable_initializer(0)->clear_float_data();
    for (int i = 0; i < 4 * 5 * 9; ++i) m.mutable_graph()->mutable_initializer(0)->add_float_data(0.1f);
    CHECK_THAT(ImportError(m), Catch::Contains("node 'conv' (Conv)") && Catch::Contains("per group"));
  }
  {
    auto m = ConvReluModel();
    AddOutput(m, "nowhere");
    CHECK_THAT(ImportError(m), Catch::Contains("graph output 'nowhere' is not produced"));
  }
}

TEST_CASE("Opsets 11 to 26 are read, older ones converted to 11 first") {
  for (int opset : {7, 9, 10}) {
    absl::StatusOr<OnnxModel> converted = ImportOnnx(ConvReluModel(opset));
    REQUIRE(converted.ok());
    CHECK(converted->opset == 11);
    CHECK(converted->converted_from_opset == opset);
    CHECK(converted->graph.num_nodes() == 2);
  }
  CHECK(ImportOnnx(ConvReluModel(11))->converted_from_opset == 0);
  // What the version converter cannot convert is refused with its reason.
  auto unconvertible = ConvReluModel(9);
  AddNode(unconvertible, "NoSuchOperator", {"y"}, {"z"}, "odd");
  AddOutput(unconvertible, "z");
  CHECK_THAT(ImportError(unconvertible), Catch::Contains("opset 9 could not be converted to opset 11"));
  CHECK_THAT(ImportError(ConvReluModel(27)), Catch::Contains("unsupported opset 27"));
  auto m = ConvReluModel();
  m.clear_opset_import();
  CHECK_THAT(ImportError(m), Catch::Contains("does not import the default ONNX opset"));
  for (int opset = 11; opset <= 26; ++opset) {
    absl::StatusOr<OnnxModel> read = ImportOnnx(ConvReluModel(opset));
    REQUIRE(read.ok());
    CHECK(OpaqueNodes(read->graph) == 0);  // the library reads Conv and Relu at every opset
  }
}

TEST_CASE("Nodes in any order are accepted and sorted") {
  auto m = ConvReluModel();
  m.mutable_graph()->mutable_node()->SwapElements(0, 1);  // Relu before the Conv it reads
  auto r = ImportOnnx(m);
  REQUIRE(r.ok());
  auto order = r->graph.TopologicalOrder();
  REQUIRE(order.ok());
  REQUIRE(r->graph.node((*order)[0]).op->name() == op_names::kConv2D);
  REQUIRE(r->graph.node((*order)[1]).op->name() == op_names::kRelu);
}

TEST_CASE("A round trip keeps names, initializers, metadata, opaque nodes and value_info") {
  auto m = ConvReluModel(13);
  m.set_doc_string("a model for tests");
  m.set_model_version(42);
  auto* meta = m.add_metadata_props();
  meta->set_key("author");
  meta->set_value("taso tests");
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  // An operator from another domain, with attributes of several kinds: kept opaque.
  auto* op = AddNode(m, "FancyOp", {"y", "w"}, {"z"}, "fancy");
  op->set_domain("com.example");
  SetIntAttr(op, "alpha", 3);
  SetIntsAttr(op, "dims", {1, 2, 3});
  op->set_doc_string("does something fancy");
  auto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("z");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 4, 8, 8})
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  AddOutput(m, "z");
  // An unused initializer that is also listed as a graph input, and a Constant feeding a Reshape.
  AddFloatInit(m, "unused", {3});
  AddInput(m, "unused", {3});
  auto* k = AddNode(m, op_names::kConstant, {}, {"shape"}, "const_shape");
  auto* attr = k->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  attr->mutable_t()->add_dims(2);
  attr->mutable_t()->add_int64_data(4);
  attr->mutable_t()->add_int64_data(-1);
  AddNode(m, op_names::kReshape, {"y", "shape"}, {"flat"}, "reshape");
  AddOutput(m, "flat");

  auto first = ImportOnnx(m);
  REQUIRE(first.ok());
  const Graph& g = first->graph;
  REQUIRE(g.value(g.FindValue("flat")).shape == Shape{4, 64});
  NodeId fancy = g.value(g.FindValue("z")).producer;
  REQUIRE(g.node(fancy).op->is_opaque());
  REQUIRE(g.value(g.FindValue("z")).shape == Shape{1, 4, 8, 8});  // from the model's value_info

  auto exported = ExportOnnx(*first);
  REQUIRE(exported.ok());
  CHECK(exported->doc_string() == "a model for tests");
  CHECK(exported->model_version() == 42);
  REQUIRE(exported->metadata_props_size() == 1);
  CHECK(exported->metadata_props(0).value() == "taso tests");
  CHECK(exported->opset_import_size() == 2);
  const auto& eg = exported->graph();
  CHECK(eg.input_size() == 2);
  CHECK(eg.input(1).name() == "unused");
  CHECK(eg.initializer_size() == 2);
  CHECK(eg.output_size() == 3);
  bool found_fancy = false;
  for (const auto& n : eg.node())
    if (n.name() == "fancy") {
      found_fancy = true;
      CHECK(n.SerializeAsString() == op->SerializeAsString());
    }
  CHECK(found_fancy);
  std::set<std::string> names;
  for (const auto& n : eg.node()) names.insert(n.name());
  CHECK(names == std::set<std::string>{"conv", "relu", "fancy", "const_shape", "reshape"});

  auto second = ImportOnnx(*exported);
  REQUIRE(second.ok());
  CHECK(second->graph.DebugString() == g.DebugString());
  CHECK(second->graph.StructuralHash() == g.StructuralHash());
}

TEST_CASE("Split sizes round-trip as an attribute before opset 13 and as an input from 13") {
  for (int opset : {11, 13, 17}) {
    auto m = NewModel(opset);
    AddInput(m, "x", {6, 4});
    onnx::NodeProto* split;
    if (opset < 13) {
      split = AddNode(m, op_names::kSplit, {"x"}, {"a", "b"}, "split");
      SetIntsAttr(split, "split", {2, 4});
    } else {
      AddInt64Init(m, "sizes", {2, 4});
      split = AddNode(m, op_names::kSplit, {"x", "sizes"}, {"a", "b"}, "split");
    }
    SetIntAttr(split, "axis", 0);
    AddOutput(m, "a");
    AddOutput(m, "b");
    auto first = ImportOnnx(m);
    REQUIRE(first.ok());
    REQUIRE(first->graph.value(first->graph.FindValue("b")).shape == Shape{4, 4});
    REQUIRE_FALSE(first->graph.node(0).op->is_opaque());
    auto exported = ExportOnnx(*first);
    REQUIRE(exported.ok());
    auto second = ImportOnnx(*exported);
    REQUIRE(second.ok());
    CHECK(second->graph.DebugString() == first->graph.DebugString());
  }
}

TEST_CASE("Meanings the library cannot represent exactly keep a node opaque") {
  auto m = NewModel(11);
  AddInput(m, "x", {2, 3, 4});
  SetIntAttr(AddNode(m, op_names::kSoftmax, {"x"}, {"s"}, "softmax"), "axis",
             1);  // opset-11 Softmax flattens axes 1..2
  AddInput(m, "img", {1, 1, 4, 4});
  auto* pool = AddNode(m, op_names::kMaxPool, {"img"}, {"p"}, "pool");
  SetIntsAttr(pool, "kernel_shape", {2, 2});
  SetIntAttr(pool, "storage_order", 1);
  AddOutput(m, "s");
  AddOutput(m, "p");
  auto r = ImportOnnx(m);
  REQUIRE(r.ok());
  for (NodeId n = 0; n < r->graph.num_nodes(); ++n) CHECK(r->graph.node(n).op->is_opaque());
  CHECK(r->graph.value(r->graph.FindValue("p")).shape == Shape{1, 1, 3, 3});  // from ONNX shape inference
  auto exported = ExportOnnx(*r);
  REQUIRE(exported.ok());
  for (int i = 0; i < 2; ++i)
    CHECK(exported->graph().node(i).SerializeAsString() == m.graph().node(i).SerializeAsString());

  auto invalid = ConvReluModel();
  SetIntAttr(invalid.mutable_graph()->mutable_node(1), "unheard_of", 1);  // not valid ONNX
  auto kept = ImportOnnx(invalid);
  REQUIRE(kept.ok());
  auto refused = ExportOnnx(*kept);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("fails the ONNX checker"));
}

TEST_CASE("An attribute of another type than ONNX defines is refused at import") {
  // Conv strides as FLOATS [2.0, 2.0]: invalid ONNX, never read as the default stride 1.
  auto m = ConvReluModel();
  auto* strides = m.mutable_graph()->mutable_node(0)->add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::FLOATS);
  strides->add_floats(2.0f);
  strides->add_floats(2.0f);
  CHECK_THAT(ImportError(m), Catch::Contains("'conv'") && Catch::Contains("attribute 'strides'") &&
                                 Catch::Contains("INTS") && Catch::Contains("FLOATS"));

  auto valid = ConvReluModel();
  SetIntsAttr(valid.mutable_graph()->mutable_node(0), "strides", {2, 2});
  auto r = ImportOnnx(valid);
  REQUIRE(r.ok());
  const Node& conv = r->graph.node(r->graph.value(r->graph.FindValue("c")).producer);
  CHECK_FALSE(conv.op->is_opaque());
  CHECK(conv.params.Ints("strides") == std::vector<int64_t>{2, 2});
  CHECK(r->graph.value(r->graph.FindValue("c")).shape == Shape{1, 4, 4, 4});
}

TEST_CASE("A stride of 0 and an initializer whose size overflows are refused at import") {
  auto zero_stride = ConvReluModel();
  SetIntsAttr(zero_stride.mutable_graph()->mutable_node(0), "strides", {0, 1});
  CHECK_THAT(ImportError(zero_stride), Catch::Contains("'conv'") && Catch::Contains("strides must be positive"));

  auto huge = ConvReluModel();
  onnx::TensorProto* w = huge.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  for (int64_t d : {int64_t{1} << 62, int64_t{4}}) w->add_dims(d);
  w->clear_float_data();
  CHECK_THAT(ImportError(huge), Catch::Contains("more than the memory limit"));
}

TEST_CASE("Opaque nodes at sizes a runtime refuses are refused at import, saying why") {
  // x[1,1,4] -> a 1-D convolution (opaque) of kernel 10: ONNX infers an empty output.
  auto conv = NewModel(13);
  AddInput(conv, "x", {1, 1, 4});
  AddFloatInit(conv, "w", {2, 1, 10});
  AddNode(conv, "Conv", {"x", "w"}, {"y"}, "conv1d");
  AddOutput(conv, "y");
  CHECK_THAT(ImportError(conv), Catch::Contains("node 'conv1d' (Conv): window [10] is larger than the padded input "
                                                "[1,1,4]"));
  SetIntsAttr(conv.mutable_graph()->mutable_node(0), "pads", {3, 3});  // 4 + 6 fits 10
  CHECK(ImportOnnx(conv).ok());
  SetIntsAttr(conv.mutable_graph()->mutable_node(0), "dilations", {2});  // a window of 19
  CHECK_THAT(ImportError(conv), Catch::Contains("window [10] (dilations [2], pads [3,3]) is larger than the padded "
                                                "input [1,1,4]"));

  // A 3-D pool of 3 over 2: refused, unless ceil_mode lets a window start inside.
  auto pool = NewModel(13);
  AddInput(pool, "x", {1, 1, 2, 4, 4});
  auto* node = AddNode(pool, op_names::kMaxPool, {"x"}, {"y"}, "pool3d");
  SetIntsAttr(node, "kernel_shape", {3, 3, 3});
  SetIntsAttr(node, "strides", {2, 2, 2});
  AddOutput(pool, "y");
  CHECK_THAT(ImportError(pool), Catch::Contains("node 'pool3d' (MaxPool): window [3,3,3]"));
  SetIntAttr(pool.mutable_graph()->mutable_node(0), "ceil_mode", 1);
  CHECK(ImportOnnx(pool).ok());

  // A reflecting Pad needs each padded axis longer than its pads; constant mode does not.
  auto pad = NewModel(13);
  AddInput(pad, "x", {1, 3, 2, 5});
  AddInt64Init(pad, "pads", {0, 0, 2, 2, 0, 0, 2, 2});
  SetStringAttr(AddNode(pad, "Pad", {"x", "pads"}, {"y"}, "mirror"), "mode", "reflect");
  AddOutput(pad, "y");
  CHECK_THAT(ImportError(pad), Catch::Contains("node 'mirror' (Pad): reflect pads [0,0,2,2,0,0,2,2] need each "
                                               "padded axis longer than its pads; the input is [1,3,2,5]"));
  InputDim(pad, 0, 2)->set_dim_value(3);
  CHECK(ImportOnnx(pad).ok());
  InputDim(pad, 0, 2)->set_dim_value(2);
  pad.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_s("constant");
  CHECK(ImportOnnx(pad).ok());
}

TEST_CASE("auto_pad is resolved to the explicit pads it means") {
  auto m = NewModel(13);
  AddInput(m, "x", {1, 2, 7, 7});
  auto* pool = AddNode(m, op_names::kMaxPool, {"x"}, {"y"}, "pool");
  SetIntsAttr(pool, "kernel_shape", {3, 3});
  SetIntsAttr(pool, "strides", {2, 2});
  SetStringAttr(pool, "auto_pad", "SAME_UPPER");
  AddOutput(m, "y");
  auto r = ImportOnnx(m);
  REQUIRE(r.ok());
  CHECK(r->graph.value(r->graph.FindValue("y")).shape == Shape{1, 2, 4, 4});
  CHECK(r->graph.node(0).params.Ints("pads") == std::vector<int64_t>{1, 1, 1, 1});
}

TEST_CASE("Exported files are written whole or not at all") {
  auto dir = TempDir("export_file");
  auto r = ImportOnnx(ConvReluModel());
  REQUIRE(r.ok());
  REQUIRE(ExportOnnxFile(*r, (dir / "ok.onnx").string()).ok());
  REQUIRE(ImportOnnxFile((dir / "ok.onnx").string()).ok());
  auto bad = ExportOnnxFile(*r, (dir / "no-such-dir" / "x.onnx").string());
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.message()), Catch::Contains("cannot write"));
  CHECK_FALSE(std::filesystem::exists(dir / "no-such-dir"));
}

TEST_CASE("Nodes that share a name are written under distinct names") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {2, 3});
  REQUIRE(x.ok());
  auto a = g.AddNode(Op(op_names::kRelu), {}, {*x}, "twin", {"a"});
  REQUIRE(a.ok());
  auto b = g.AddNode(Op(op_names::kRelu), {}, {(*a)[0]}, "twin", {"b"});
  REQUIRE(b.ok());
  REQUIRE(g.AddOutput((*b)[0]).ok());
  auto proto = ExportOnnx(NewOnnxModel(std::move(g), 13));
  REQUIRE(proto.ok());
  REQUIRE(proto->graph().node_size() == 2);
  CHECK(proto->graph().node(0).name() == "twin");
  CHECK(proto->graph().node(1).name() != "twin");
  CHECK_FALSE(proto->graph().node(1).name().empty());
}

TEST_CASE("Shape arithmetic on int64 constants folds by each operator's rule") {
  const TensorDataPtr dims = Ints({3}, {16, 2, 768}), three = Ints({}, {3}), zero = Ints({}, {0}),
                      axis0 = Ints({1}, {0});
  // Shape of a static tensor, then the last dimension, divided, unsqueezed, concatenated.
  auto shape = FoldByRule("Shape", {InputInfo{true, DataType::kFloat32, {16, 2, 768}}});
  REQUIRE(shape.has_value());
  CHECK((*shape)->ints() == dims->ints());
  auto last = FoldByRule("Gather", {Known(dims), Known(Ints({}, {-1}))});
  REQUIRE(last.has_value());
  CHECK((*last)->shape().empty());
  auto third = FoldByRule(op_names::kDiv, {Known(*last), Known(three)});
  REQUIRE(third.has_value());
  CHECK((*third)->ints()[0] == 256);
  CHECK(FoldByRule(op_names::kSub, {Known(*third), Known(three)}).value()->ints()[0] == 253);
  auto unsqueezed = FoldByRule("Unsqueeze", {Known(*third), Known(axis0)});
  REQUIRE(unsqueezed.has_value());
  CHECK((*unsqueezed)->shape() == Shape{1});
  auto joined = FoldByRule(op_names::kConcat, {Known(*unsqueezed), Known(Ints({2}, {-1, 64}))});
  REQUIRE(joined.has_value());
  CHECK(std::vector<int64_t>((*joined)->ints().begin(), (*joined)->ints().end()) == std::vector<int64_t>{256, -1, 64});
  CHECK(FoldByRule("Squeeze", {Known(*unsqueezed), Known(axis0)}).value()->shape().empty());
  onnx::NodeProto cast;
  auto* to = cast.add_attribute();
  to->set_name("to");
  to->set_i(onnx::TensorProto::INT64);
  CHECK(FoldByRule("Cast", {Known(three)}, cast).value()->ints()[0] == 3);
  // PyTorch's expand(n, -1, -1): the target flattened, compared with -1, ones put there.
  auto flat = FoldByRule(op_names::kReshape, {Known(*joined), Known(Ints({1}, {-1}))});
  REQUIRE(flat.has_value());
  CHECK((*flat)->shape() == Shape{3});
  onnx::NodeProto ones_node;
  auto* value = ones_node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
  auto ones = FoldByRule("ConstantOfShape", {Known(Ints({1}, {3}))}, ones_node);
  REQUIRE(ones.has_value());
  CHECK(std::vector<int64_t>((*ones)->ints().begin(), (*ones)->ints().end()) == std::vector<int64_t>{1, 1, 1});
  auto is_minus = FoldByRule("Equal", {Known(*flat), Known(Ints({}, {-1}))});
  REQUIRE(is_minus.has_value());
  CHECK((*is_minus)->dtype() == DataType::kBool);
  InputInfo condition{true, DataType::kBool, (*is_minus)->shape(), true, is_minus->get()};
  auto chosen = FoldByRule("Where", {condition, Known(*ones), Known(*flat)});
  REQUIRE(chosen.has_value());
  CHECK(std::vector<int64_t>((*chosen)->ints().begin(), (*chosen)->ints().end()) == std::vector<int64_t>{256, 1, 64});
  CHECK_FALSE(FoldByRule(op_names::kReshape, {Known(*joined), Known(Ints({1}, {2}))}).has_value());  // 3 values, not 2
  CHECK_FALSE(FoldByRule("ConstantOfShape", {Known(Ints({1}, {3}))}).has_value());  // float zeros: no shape arithmetic
  CHECK_FALSE(FoldByRule("ConstantOfShape", {Known(Ints({2}, {4096, 2}))}, ones_node).has_value());  // too large
  CHECK_FALSE(FoldByRule("Where", {Known(*flat), Known(*ones), Known(*flat)}).has_value());  // no bool condition
  // Left to run time: a division by zero, a float input, a tensor of unknown shape.
  CHECK_FALSE(FoldByRule(op_names::kDiv, {Known(three), Known(zero)}).has_value());
  CHECK_FALSE(FoldByRule(op_names::kAdd, {Known(three), InputInfo{true, DataType::kFloat32, {}}}).has_value());
  InputInfo unknown{true, DataType::kFloat32, {}};
  unknown.shape_known = false;
  CHECK_FALSE(FoldByRule("Shape", {unknown}).has_value());
}

TEST_CASE("F.pad's list as PyTorch computes it folds: Mod, a reversing Slice, Transpose") {
  auto values = [](const std::optional<TensorDataPtr>& d) {
    REQUIRE(d.has_value());
    return std::vector<int64_t>((*d)->ints().begin(), (*d)->ints().end());
  };
  // Swin's padding to a multiple of the window, (7 - 54 % 7) % 7, and ONNX's two Mods.
  const TensorDataPtr seven = Ints({}, {7});
  const auto remainder = FoldByRule("Mod", {Known(Ints({}, {54})), Known(seven)});
  CHECK(values(remainder) == std::vector<int64_t>{5});
  CHECK(values(FoldByRule("Mod", {Known(Ints({}, {7 - 5})), Known(seven)})) == std::vector<int64_t>{2});
  const TensorDataPtr signs = Ints({4}, {-7, 7, -7, 7});
  CHECK(values(FoldByRule("Mod", {Known(Ints({4}, {5, -5, -5, 5})), Known(signs)})) ==
        std::vector<int64_t>{-2, 2, -5, 5});
  onnx::NodeProto c_mod;
  auto* fmod = c_mod.add_attribute();
  fmod->set_name("fmod");
  fmod->set_i(1);
  CHECK(values(FoldByRule("Mod", {Known(Ints({4}, {5, -5, -5, 5})), Known(signs)}, c_mod)) ==
        std::vector<int64_t>{5, -5, -5, 5});
  CHECK_FALSE(FoldByRule("Mod", {Known(seven), Known(Ints({}, {0}))}).has_value());  // left to run time
  // The pairs reversed (a step of -1 from the end), transposed, as F.pad's list becomes pads.
  const TensorDataPtr pairs = Ints({4, 2}, {0, 0, 0, 2, 0, 0, 0, 0});
  const auto reversed =
      FoldByRule(op_names::kSlice, {Known(pairs), Known(Ints({1}, {-1})), Known(Ints({1}, {INT64_MIN + 1})),
                                    Known(Ints({1}, {0})), Known(Ints({1}, {-1}))});
  CHECK(values(reversed) == std::vector<int64_t>{0, 0, 0, 0, 0, 2, 0, 0});
  REQUIRE(reversed.has_value());
  CHECK((*reversed)->shape() == Shape{4, 2});
  onnx::NodeProto transpose;
  auto* perm = transpose.add_attribute();
  perm->set_name("perm");
  perm->add_ints(1);
  perm->add_ints(0);
  const auto pads = FoldByRule(op_names::kTranspose, {Known(*reversed)}, transpose);
  CHECK(values(pads) == std::vector<int64_t>{0, 0, 0, 0, 0, 0, 2, 0});
  REQUIRE(pads.has_value());
  CHECK((*pads)->shape() == Shape{2, 4});
  // Float data, or bounds known only at run time, are not shape arithmetic.
  CHECK_FALSE(FoldByRule(op_names::kTranspose, {Known(Floats({4}, {1, 1, 1, 1}))}).has_value());
  CHECK_FALSE(
      FoldByRule(op_names::kSlice, {Known(pairs), InputInfo{true, DataType::kInt64, {1}}, Known(Ints({1}, {2}))})
          .has_value());
}

TEST_CASE("A detection transform's sizes fold through floats: the scale, floored, padded to 32") {
  auto fold = [](const std::string& op, const std::vector<InputInfo>& in, onnx::NodeProto node = {}) {
    std::optional<TensorDataPtr> r = FoldByRule(op, in, std::move(node), 11);
    REQUIRE(r.has_value());
    return *r;
  };
  auto cast_to = [](int to) {
    onnx::NodeProto node;
    auto* a = node.add_attribute();
    a->set_name("to");
    a->set_i(to);
    return node;
  };
  auto as_float = [&](const TensorDataPtr& d) { return fold("Cast", {Known(d)}, cast_to(onnx::TensorProto::FLOAT)); };
  // torchvision's GeneralizedRCNNTransform on a 320x480 image: scale = min(800 / 320,
  // 1333 / 480), the sides floor(side * scale), then each padded up to a multiple of 32.
  const TensorDataPtr sides = Ints({2}, {320, 480});
  const TensorDataPtr shorter = fold("ReduceMin", {Known(sides)}), longer = fold("ReduceMax", {Known(sides)});
  CHECK(shorter->shape() == Shape{1});  // keepdims defaults to 1
  CHECK(shorter->ints()[0] == 320);
  CHECK(longer->ints()[0] == 480);
  const TensorDataPtr to_short =
      fold(op_names::kMul, {Known(fold("Reciprocal", {Known(as_float(shorter))})), Known(Floats({}, {800.0f}))});
  const TensorDataPtr to_long = fold(op_names::kDiv, {Known(Floats({}, {1333.0f})), Known(as_float(longer))});
  const TensorDataPtr scale = fold("Min", {Known(to_short), Known(to_long)});
  CHECK(scale->floats()[0] == std::min(800.0f * (1.0f / 320.0f), 1333.0f / 480.0f));
  const TensorDataPtr width = fold("Floor", {Known(fold(op_names::kMul, {Known(Floats({}, {480.0f})), Known(scale)}))});
  CHECK(width->floats()[0] == std::floor(480.0f * scale->floats()[0]));
  const TensorDataPtr blocks = fold("Ceil", {Known(fold(op_names::kDiv, {Known(width), Known(Floats({}, {32.0f}))}))});
  const TensorDataPtr padded = fold("Cast", {Known(blocks)}, cast_to(onnx::TensorProto::INT64));
  CHECK(padded->dtype() == DataType::kInt64);
  CHECK(padded->ints()[0] == (static_cast<int64_t>(width->floats()[0]) + 31) / 32);
  const TensorDataPtr pair = fold(
      op_names::kConcat, {Known(fold("Unsqueeze", {Known(width), Known(Ints({1}, {0}))})), Known(Floats({1}, {2.5f}))});
  CHECK(pair->shape() == Shape{2});
  CHECK(pair->floats()[1] == 2.5f);
  // Kept axes; and values for run time to decide: with a NaN, or beyond int64.
  onnx::NodeProto rows;
  auto* axes = rows.add_attribute();
  axes->set_name("axes");
  axes->add_ints(1);
  const TensorDataPtr per_row = fold("ReduceMax", {Known(Ints({2, 3}, {1, 5, 2, 7, 0, 3}))}, rows);
  CHECK(per_row->shape() == Shape{2, 1});
  CHECK(std::vector<int64_t>(per_row->ints().begin(), per_row->ints().end()) == std::vector<int64_t>{5, 7});
  CHECK_FALSE(FoldByRule("ReduceMax", {Known(Floats({2}, {1.0f, NAN}))}).has_value());
  CHECK_FALSE(FoldByRule("Cast", {Known(Floats({}, {1e19f}))}, cast_to(onnx::TensorProto::INT64)).has_value());
}

TEST_CASE("The sizes ONNX's inference invents are written unnamed") {
  // x[1,4] -> NonZero -> [2, count]: ONNX names the count "unk__0" in both tensors after it.
  auto m = NewModel(13);
  AddInput(m, "x", {1, 4});
  AddNode(m, "NonZero", {"x"}, {"nz"}, "nonzero");
  AddNode(m, op_names::kTranspose, {"nz"}, {"t"}, "transpose");
  AddNode(m, "Identity", {"t"}, {"y"}, "identity");
  AddOutput(m, "y");
  auto* declared = m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  declared->set_elem_type(onnx::TensorProto::INT64);
  declared->mutable_shape()->add_dim();
  declared->mutable_shape()->add_dim()->set_dim_value(2);
  auto model = ImportOnnx(m);
  REQUIRE(model.ok());
  auto exported = ExportOnnx(*model);
  REQUIRE(exported.ok());
  int unnamed = 0;
  for (const auto& vi : exported->graph().value_info())
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      CHECK_FALSE(absl::StartsWith(d.dim_param(), "unk__"));
      unnamed += !d.has_dim_value() && !d.has_dim_param();
    }
  CHECK(unnamed >= 2);  // the count, in "nz" and in "t"
}

TEST_CASE("LayerNormalization imports where only Y is asked for, and exports at opset 17") {
  auto m = NewModel(17);
  AddInput(m, "x", {2, 8});
  AddFloatInit(m, "scale", {8}, 1.5f);
  AddFloatInit(m, "bias", {8}, 0.25f);
  AddNode(m, op_names::kLayerNormalization, {"x", "scale", "bias"}, {"y"}, "norm");
  AddNode(m, op_names::kLayerNormalization, {"x", "scale"}, {"z", "mean"}, "with_stats");
  AddOutput(m, "y");
  AddOutput(m, "z");
  AddOutput(m, "mean");
  auto r = ImportOnnx(m);
  REQUIRE(r.ok());
  REQUIRE(r->graph.num_nodes() == 2);
  CHECK(r->graph.node(0).op->name() == op_names::kLayerNormalization);
  CHECK(r->graph.node(1).op->is_opaque());  // its Mean output has no place in the library
  auto exported = ExportOnnx(*r);
  REQUIRE(exported.ok());  // the ONNX checker and strict shape inference ran
  CHECK(exported->graph().node(0).op_type() == op_names::kLayerNormalization);
  auto again = ImportOnnx(*exported);
  REQUIRE(again.ok());
  CHECK(again->graph.DebugString() == r->graph.DebugString());
}

TEST_CASE("ONNX's shape inference runs in a child process and reports when it gives nothing", "[onnx]") {
  onnx::ModelProto m = ConvReluModel();
  m.mutable_graph()->clear_value_info();
  REQUIRE(InferShapesIsolated(&m));
  const auto conv_out = std::find_if(m.graph().value_info().begin(), m.graph().value_info().end(),
                                     [](const onnx::ValueInfoProto& vi) { return vi.name() == "c"; });
  REQUIRE(conv_out != m.graph().value_info().end());
  const auto& dims = conv_out->type().tensor_type().shape().dim();
  REQUIRE(dims.size() == 4);
  CHECK(dims[1].dim_value() == 4);
  CHECK(dims[3].dim_value() == 8);

  // A child that cannot answer in time leaves the model as it was.
  onnx::ModelProto untouched = ConvReluModel();
  untouched.mutable_graph()->clear_value_info();
  CHECK_FALSE(InferShapesIsolated(&untouched, /*timeout_seconds=*/0));
  CHECK(untouched.graph().value_info().empty());
}

TEST_CASE("An opaque node is written reading its inputs under the names they have now") {
  auto m = NewModel(17);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  AddInput(m, "x", {4, 6});
  AddNode(m, op_names::kRelu, {"x"}, {"r"}, "relu");
  AddNode(m, "FancyOp", {"r"}, {"z"}, "fancy")->set_domain("com.example");
  auto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("z");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {4, 6}) vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  AddOutput(m, "z");
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  const Graph& g = imported->graph;
  // The Relu rewritten under another name, as a rewrite or the e-graph may write it.
  GraphCopy copy(g);
  REQUIRE(copy.CopyInputs().ok());
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    if (node.op->is_opaque()) {
      REQUIRE(copy.CopyNode(n).ok());
      continue;
    }
    auto outs = copy.AddNodeLike(n, node.params, {*copy.Use(node.inputs[0])}, {"renamed"});
    REQUIRE(outs.ok());
    copy.Replace(node.outputs[0], (*outs)[0]);
  }
  auto renamed = copy.Finish();
  REQUIRE(renamed.ok());
  OnnxModel model = *imported;
  model.graph = *std::move(renamed);
  auto exported = ExportOnnx(model);  // runs the ONNX checker
  INFO(exported.status().message());
  REQUIRE(exported.ok());
  for (const auto& node : exported->graph().node())
    if (node.op_type() == "FancyOp") CHECK(node.input(0) == "renamed");
}
