#include "test_util.h"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/rng.h"

namespace taso::testing {

onnx::ModelProto NewModel(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("taso-tests");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

namespace {
void FillType(onnx::ValueInfoProto* vi, const std::vector<int64_t>& shape, int elem_type) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* s = tt->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}
}  // namespace

void AddInput(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape, int elem_type) {
  auto* vi = m.mutable_graph()->add_input();
  vi->set_name(name);
  FillType(vi, shape, elem_type);
}

void AddOutput(onnx::ModelProto& m, const std::string& name) {
  auto* vi = m.mutable_graph()->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

void AddFloatInit(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> shape, float fill) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : shape) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t->add_float_data(fill + 0.01f * static_cast<float>(i % 7));
}

void AddInt64Init(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name.empty() ? op_type + "_" + outputs[0] : name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

onnx::TensorShapeProto::Dimension* InputDim(onnx::ModelProto& m, int input, int axis) {
  return m.mutable_graph()->mutable_input(input)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(
      axis);
}

void SetIntsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void SetStringAttr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

onnx::ModelProto SmallConvReluModel() {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", {1, 4, 8, 8});
  AddFloatInit(m, "w", {4, 4, 3, 3}, 0.25f);
  onnx::NodeProto* conv = AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  SetIntsAttr(conv, "kernel_shape", {3, 3});
  AddNode(m, op_names::kRelu, {"c"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

onnx::ModelProto ComputedViewModel() {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {1, 8, 12});
  InputDim(m, 0, 0)->set_dim_param("N");
  AddInt64Init(m, "at0", {0});
  AddInt64Init(m, "rest", {8, 3, 4});
  AddFloatInit(m, "w", {4, 4}, 0.25f);
  AddNode(m, "Shape", {"x"}, {"shape"});
  SetIntAttr(AddNode(m, "Gather", {"shape", "at0"}, {"n"}), "axis", 0);
  SetIntAttr(AddNode(m, op_names::kConcat, {"n", "rest"}, {"target"}), "axis", 0);
  AddNode(m, op_names::kReshape, {"x", "target"}, {"view"});
  AddNode(m, op_names::kMatMul, {"view", "w"}, {"y"});
  AddOutput(m, "y");
  return m;
}

onnx::ModelProto RuntimeLayerNormModel() {
  onnx::ModelProto m = NewModel(15);
  AddInput(m, "x", {2, 3, 8});
  AddFloatInit(m, "scale", {8}, 1.5f);
  AddFloatInit(m, "bias", {8}, 0.25f);
  AddFloatInit(m, "w", {8, 4});
  AddNode(m, op_names::kLayerNormalization, {"x", "scale", "bias"}, {"n"}, "norm");
  AddNode(m, "MatMul", {"n", "w"}, {"y"}, "proj");
  AddOutput(m, "y");
  return m;
}

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::path(TASO_BINARY_DIR) / "test-tmp" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void WriteFile(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

int64_t PrivateMemoryBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("RssAnon:", 0) == 0) return std::stoll(line.substr(8)) * 1024;
  return -1;
}

const OpDef* Op(const std::string& name) { return OpRegistry::Global().Find(name); }

Tensor<float> RandomTensor(Shape shape, uint64_t seed) {
  Rng rng(seed);
  Tensor<float> t(std::move(shape));
  for (float& v : t.data) v = static_cast<float>(rng.Uniform(-1, 1));
  return t;
}

ValueId AddWeight(Graph& g, const std::string& name, Shape shape, uint64_t seed) {
  Tensor<float> t = RandomTensor(shape, seed);
  auto v = g.AddWeight(name, TensorData::Float(shape, t.data));
  REQUIRE(v.ok());
  return *v;
}

Graph ConcatenatedWeightLayer() {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {8, 16});
  REQUIRE(x.ok());
  const ValueId w1 = AddWeight(g, "w1", {16, 32}, 1), w2 = AddWeight(g, "w2", {16, 24}, 2);
  const ValueId both = AddOp(g, op_names::kConcat, {w1, w2}, "both", Params().Set("axis", int64_t{1}));
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {*x, both}, "y")).ok());
  return g;
}

ValueId AddOp(Graph& g, const std::string& op, std::vector<ValueId> inputs, const std::string& out, Params p) {
  auto v = g.AddNode(Op(op), std::move(p), std::move(inputs), out, {out});
  REQUIRE(v.ok());
  return (*v)[0];
}

int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (NodeId i = 0; i < g.num_nodes(); ++i) n += g.node(i).op == Op(op);
  return n;
}

int OpaqueNodes(const Graph& g) {
  int n = 0;
  for (NodeId id = 0; id < g.num_nodes(); ++id) n += g.node(id).op->is_opaque();
  return n;
}

OnnxModel ImportFolded(const onnx::ModelProto& proto) {
  ImportOptions folding;
  folding.fold_shape_arithmetic = true;
  absl::StatusOr<OnnxModel> model = ImportOnnx(proto, folding);
  REQUIRE(model.ok());
  return *std::move(model);
}

std::multiset<std::string> OperatorNames(const Graph& graph) {
  std::multiset<std::string> ops;
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    ops.insert(node.op->is_opaque() ? node.onnx_node->op_type() : std::string(node.op->name()));
  }
  return ops;
}

CommandResult RunCommand(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

Params Axis(int64_t axis) { return Params().Set("axis", axis); }
Params Pieces(int64_t axis, std::vector<int64_t> sizes) { return Axis(axis).Set("sizes", sizes); }
Params DenseSameConv(const std::string& activation) {
  return Params()
      .Set("grouping", "dense")
      .Set("strides", std::vector<int64_t>{1, 1})
      .Set("padding", "same")
      .Set("activation", activation);
}

std::string ImportError(const onnx::ModelProto& m, const ImportOptions& options) {
  auto r = ImportOnnx(m, options);
  return r.ok() ? "" : std::string(r.status().message());
}

double OutputDifference(const Graph& a, const Graph& b, uint64_t seed) {
  const TensorMap inputs = RandomInputs(a, seed);
  auto x = RunReference(a, inputs);
  auto y = RunReference(b, inputs);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  return MaxAbsDifference(*x, *y);
}

Graph ProductChain() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {256, 4});
  const ValueId y = *g.AddInput("y", DataType::kFloat32, {4, 256});
  const ValueId z = *g.AddInput("z", DataType::kFloat32, {256, 4});
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {AddOp(g, op_names::kMatMul, {x, y}, "xy"), z}, "out")).ok());
  return g;
}

Graph GatedMixture(const MixtureForm& form) {
  Graph g;
  const int64_t d = form.d, h = form.h;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {form.rows, d});
  const Params linear = Params().Set("transB", int64_t{1});
  auto layer = [&](ValueId in, int64_t out, int64_t features, const std::string& name) {
    const uint64_t seed = std::hash<std::string>()(name);
    const ValueId w = AddWeight(g, name + "_w", {out, features}, seed);
    const ValueId b = AddWeight(g, name + "_b", {out}, seed + 1);
    return AddOp(g, op_names::kGemm, {in, w, b}, name, linear);
  };
  const ValueId gate = AddOp(g, op_names::kSoftmax, {layer(x, form.experts, d, "gate_logits")}, "gate",
                             Params().Set("axis", int64_t{-1}));
  const ValueId squashed = form.shared_input ? x : AddOp(g, op_names::kTanh, {x}, "x_squashed");
  auto ints = [&](const std::string& name, int64_t v) { return *g.AddWeight(name, TensorData::Int64({1}, {v})); };
  const int summed = form.summed < 0 ? form.experts : form.summed;
  ValueId sum = form.residual ? x : kNoValue;
  for (int k = 0; k < summed; ++k) {
    const int e = form.residual ? summed - 1 - k : k;
    const std::string tag = absl::StrCat("e", e);
    const ValueId column =
        AddOp(g, op_names::kSlice, {gate, ints(tag + "_start", e), ints(tag + "_end", e + 1), ints(tag + "_axis", 1)},
              tag + "_g");
    const ValueId first = layer(e % 2 == 1 ? squashed : x, h, d, tag + "_first");
    const ValueId hidden = AddOp(g, op_names::kRelu, {first}, tag + "_hidden");
    const ValueId term = AddOp(g, op_names::kMul, {column, layer(hidden, d, h, tag + "_second")}, tag + "_term");
    sum = sum == kNoValue ? term : AddOp(g, op_names::kAdd, {sum, term}, k + 1 == summed ? "y" : tag + "_sum");
  }
  REQUIRE(g.AddOutput(sum).ok());
  return g;
}

OnnxModel TorchPatternExport(const std::string& pattern, const ImportOptions& options) {
  const std::filesystem::path dir = TempDir("torch_patterns_" + pattern);
  const std::string cmd = "/usr/bin/python3 " + std::string(TASO_SOURCE_DIR) + "/bench/exports/patterns.py " +
                          dir.string() + " " + pattern + " > " + dir.string() + "/log 2>&1";
  if (std::system(cmd.c_str()) != 0) FAIL("exporting " << pattern << " failed; see " << dir.string() << "/log");
  absl::StatusOr<OnnxModel> model = ImportOnnxFile((dir / (pattern + ".onnx")).string(), options);
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  return *std::move(model);
}

int WaitForExit(int child_pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int status = 0;
    if (waitpid(child_pid, &status, WNOHANG) == child_pid) return status;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(child_pid, SIGKILL);
  waitpid(child_pid, nullptr, 0);
  return -1;
}

ScopedEnv::ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  value ? setenv(name, value->c_str(), 1) : unsetenv(name);
}

ScopedEnv::~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

}  // namespace taso::testing
