// ONNX import and export across opsets 11 to 26, symbolic input dimensions, and weights
// stored as external data.
#include <catch2/catch.hpp>

#include "taso/ir/ops/names.h"
#include "taso/onnx/shared_weights_file.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// x[2,6,4] -> ReduceMean(axes [2], keepdims) -> Split(axis 1, [2, 4]) -> a, b; the axes
// and sizes are attributes or inputs as the opset has them.
onnx::ModelProto ReduceSplitModel(int opset) {
  auto m = NewModel(opset);
  AddInput(m, "x", {2, 6, 4});
  onnx::NodeProto* mean = AddNode(m, op_names::kReduceMean, {"x"}, {"m"}, "mean");
  if (opset < 18) {
    SetIntsAttr(mean, "axes", {2});
  } else {
    AddInt64Init(m, "axes", {2});
    mean->add_input("axes");
  }
  onnx::NodeProto* split = AddNode(m, op_names::kSplit, {"m"}, {"a", "b"}, "split");
  SetIntAttr(split, "axis", 1);
  if (opset < 13) {
    SetIntsAttr(split, "split", {2, 4});
  } else {
    AddInt64Init(m, "sizes", {2, 4});
    split->add_input("sizes");
  }
  AddOutput(m, "a");
  AddOutput(m, "b");
  return m;
}

TensorMap Run(const Graph& g) {
  auto out = RunReference(g, RandomInputs(g, 7));
  REQUIRE(out.ok());
  return *out;
}

// x[batch,3,8,8] -> Relu -> y[batch,3,8,8]
onnx::ModelProto SymbolicReluModel() {
  auto m = NewModel(13);
  AddInput(m, "x", {1, 3, 8, 8});
  InputDim(m, 0, 0)->set_dim_param("batch");
  AddNode(m, op_names::kRelu, {"x"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

}  // namespace

TEST_CASE("ReduceMean and Split are library operators at opsets 11 to 26, and keep the opset") {
  for (int opset : {11, 13, 17, 18, 21, 22, 26}) {
    INFO("opset " << opset);
    auto imported = ImportOnnx(ReduceSplitModel(opset));
    REQUIRE(imported.ok());
    CHECK(imported->opset == opset);
    CHECK(OpaqueNodes(imported->graph) == 0);
    auto exported = ExportOnnx(*imported);
    REQUIRE(exported.ok());
    CHECK(exported->opset_import(0).version() == opset);
    auto again = ImportOnnx(*exported);
    REQUIRE(again.ok());
    CHECK(OpaqueNodes(again->graph) == 0);
    CHECK(MaxAbsDifference(Run(imported->graph), Run(again->graph)) == 0);
  }
}

TEST_CASE("Split at opset 18 reads num_outputs, with a smaller last piece") {
  auto m = NewModel(18);
  AddInput(m, "x", {5, 2});
  SetIntAttr(AddNode(m, op_names::kSplit, {"x"}, {"a", "b"}, "split"), "num_outputs", 2);
  AddOutput(m, "a");
  AddOutput(m, "b");
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  REQUIRE(OpaqueNodes(imported->graph) == 0);
  CHECK(imported->graph.value(imported->graph.outputs()[0]).shape == Shape{3, 2});
  CHECK(imported->graph.value(imported->graph.outputs()[1]).shape == Shape{2, 2});
}

TEST_CASE("ReduceMean with axes known only at run time, or noop_with_empty_axes, stays opaque") {
  auto m = NewModel(18);
  AddInput(m, "x", {2, 6});
  AddInput(m, "axes", {1}, onnx::TensorProto::INT64);
  AddNode(m, op_names::kReduceMean, {"x", "axes"}, {"y"}, "mean");
  AddOutput(m, "y");
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  CHECK(OpaqueNodes(imported->graph) == 1);

  auto noop = NewModel(18);
  AddInput(noop, "x", {2, 6});
  SetIntAttr(AddNode(noop, op_names::kReduceMean, {"x"}, {"y"}, "mean"), "noop_with_empty_axes", 1);
  AddOutput(noop, "y");
  auto kept = ImportOnnx(noop);
  REQUIRE(kept.ok());
  CHECK(OpaqueNodes(kept->graph) == 1);
}

TEST_CASE("The ONNX checker covers opsets up to 17 only") {
  CHECK(OnnxCheckerCovers(17));
  CHECK_FALSE(OnnxCheckerCovers(18));
}

TEST_CASE("Symbolic input dimensions are built at 1, or at the size given") {
  auto at_one = ImportOnnx(SymbolicReluModel());
  REQUIRE(at_one.ok());
  CHECK(at_one->graph.value(at_one->graph.inputs()[0]).shape == Shape{1, 3, 8, 8});
  REQUIRE(at_one->symbolic_dims.size() == 1);
  CHECK(at_one->symbolic_dims[0].param == "batch");
  CHECK_FALSE(at_one->symbolic_dims[0].given);
  CHECK(at_one->source != nullptr);

  ImportOptions options;
  options.input_shapes["x"] = {4, 3, 8, 8};
  auto at_four = ImportOnnx(SymbolicReluModel(), options);
  REQUIRE(at_four.ok());
  CHECK(at_four->graph.value(at_four->graph.outputs()[0]).shape == Shape{4, 3, 8, 8});
  CHECK(at_four->symbolic_dims[0].given);
  CHECK(at_four->symbolic_dims[0].value == 4);
}

TEST_CASE("An unnamed dynamic dimension is symbolic too") {
  auto m = SymbolicReluModel();
  InputDim(m, 0, 0)->clear_dim_param();
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  REQUIRE(imported->symbolic_dims.size() == 1);
  CHECK(imported->symbolic_dims[0].Key() == "x[0]");
}

TEST_CASE("Export writes a model at its built sizes, and dim_params where it is told to") {
  auto imported = ImportOnnx(SymbolicReluModel());
  REQUIRE(imported.ok());
  auto fixed = ExportOnnx(*imported);
  REQUIRE(fixed.ok());
  CHECK(fixed->graph().input(0).type().tensor_type().shape().dim(0).dim_value() == 1);

  imported->symbolic_shapes["x"] = {std::string("batch"), std::nullopt, std::nullopt, std::nullopt};
  imported->symbolic_shapes["y"] = {std::string(""), std::nullopt, std::nullopt, std::nullopt};
  auto symbolic = ExportOnnx(*imported);
  REQUIRE(symbolic.ok());
  const auto& in = symbolic->graph().input(0).type().tensor_type().shape();
  CHECK(in.dim(0).dim_param() == "batch");
  CHECK_FALSE(in.dim(0).has_dim_value());
  CHECK(in.dim(1).dim_value() == 3);
  const auto& out = symbolic->graph().output(0).type().tensor_type().shape().dim(0);
  CHECK_FALSE(out.has_dim_value());  // dynamic (ONNX's shape inference may name it after the input's)
}

TEST_CASE("Bad input shapes are refused with one clear line") {
  auto given = [](const std::string& name, Shape shape) {
    ImportOptions options;
    options.input_shapes[name] = std::move(shape);
    return options;
  };
  CHECK_THAT(ImportError(SymbolicReluModel(), given("z", {1, 3, 8, 8})),
             Catch::Contains("--input-shape names 'z', which is not an input of the model (inputs: x)"));
  CHECK_THAT(ImportError(SymbolicReluModel(), given("x", {1, 3, 8})),
             Catch::Contains("--input-shape gives 3 dimensions for input 'x', which has 4"));
  CHECK_THAT(ImportError(SymbolicReluModel(), given("x", {2, 5, 8, 8})),
             Catch::Contains("gives 5 for dimension 1 of input 'x', which is fixed at 3"));

  auto two = SymbolicReluModel();
  AddInput(two, "x2", {1, 3, 8, 8});
  InputDim(two, 1, 0)->set_dim_param("batch");
  AddNode(two, op_names::kAdd, {"y", "x2"}, {"z"}, "add");
  AddOutput(two, "z");
  CHECK_THAT(ImportError(two, given("x", {2, 3, 8, 8})),
             Catch::Contains("dimension 'batch' is 2 in input 'x' but 1 in input 'x2'"));
  CHECK(ImportError(two).empty());

  // An input of no shape: even its rank is unknown, unless --input-shape gives it.
  auto shapeless = SymbolicReluModel();
  shapeless.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  CHECK_THAT(ImportError(shapeless),
             Catch::StartsWith("input 'x' has no tensor shape (not even its rank): give one with --input-shape"));
  CHECK(ImportError(shapeless, given("x", {1, 3, 8, 8})).empty());
}

namespace {

// x[1,3,4,4] -> Conv(w[16,3,3,3]) -> y, with w (1728 bytes) in the file `location`
// beside the model.
onnx::ModelProto ExternalConvModel(const std::string& location, int64_t offset = 0, int64_t length = -1) {
  auto m = NewModel(13);
  AddInput(m, "x", {1, 3, 4, 4});
  AddFloatInit(m, "w", {16, 3, 3, 3}, 0.25f);
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [w](const std::string& key, const std::string& value) {
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  if (offset) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  AddNode(m, "Conv", {"x", "w"}, {"y"}, "conv");
  AddOutput(m, "y");
  return m;
}

// The weight's values, 0.25 each, after 16 bytes of something else.
void WriteWeightFile(const std::filesystem::path& path, float value = 0.25f) {
  std::string bytes(16, 'x');
  const std::vector<float> values(16 * 27, value);
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  WriteFile(path, bytes);
}

std::string ImportFileError(const std::filesystem::path& dir, const onnx::ModelProto& m) {
  const auto path = dir / "model.onnx";
  WriteFile(path, m.SerializeAsString());
  auto r = ImportOnnxFile(path.string());
  return r.ok() ? "" : std::string(r.status().message());
}

}  // namespace

TEST_CASE("Weights stored as external data are read, and written the same way") {
  const auto dir = TempDir("external_data");
  WriteWeightFile(dir / "weights.bin");
  WriteFile(dir / "model.onnx", ExternalConvModel("weights.bin", 16).SerializeAsString());
  auto imported = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(imported.ok());
  CHECK(imported->external_data);
  const TensorData& w = *imported->graph.value(imported->graph.FindValue("w")).data;
  REQUIRE(w.floats().size() == 16 * 27);
  CHECK(w.floats()[0] == 0.25f);
  CHECK(w.floats().back() == 0.25f);

  const auto out = dir / "out.onnx";
  REQUIRE(ExportOnnxFile(*imported, out.string()).ok());
  REQUIRE(std::filesystem::exists(ExternalDataPath(out.string())));
  auto written = ReadModelFile(out.string());
  REQUIRE(written.ok());
  CHECK(written->graph().initializer(0).data_location() == onnx::TensorProto::EXTERNAL);
  auto again = ImportOnnxFile(out.string());
  REQUIRE(again.ok());
  CHECK(again->graph.value(again->graph.FindValue("w")).data->floats() == w.floats());
}

TEST_CASE("A weight stored as external data is shared with a graph holding its values") {
  const auto dir = TempDir("external_data_shared");
  WriteWeightFile(dir / "weights.bin");
  WriteFile(dir / "model.onnx", ExternalConvModel("weights.bin", 16).SerializeAsString());
  auto first = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(first.ok());
  const auto weight = [](const OnnxModel& m) { return m.graph.value(m.graph.FindValue("w")).data; };

  ImportOptions sharing;
  sharing.shared_weights = &first->graph;
  auto again = ImportOnnxFile((dir / "model.onnx").string(), sharing);
  REQUIRE(again.ok());
  CHECK(weight(*again) == weight(*first));  // the same tensor, not read again

  // The file changed under the same name: read, not shared.
  const auto other = TempDir("external_data_shared_other");
  WriteWeightFile(other / "weights.bin", 0.5f);
  WriteFile(other / "model.onnx", ExternalConvModel("weights.bin", 16).SerializeAsString());
  auto changed = ImportOnnxFile((other / "model.onnx").string(), sharing);
  REQUIRE(changed.ok());
  CHECK(weight(*changed) != weight(*first));
  CHECK(weight(*changed)->floats()[0] == 0.5f);
}

TEST_CASE("Weights stored as external data are read in place, where their offset allows") {
  const auto dir = TempDir("external_data_mapped");
  // x[1,3,4,4] -> Conv(w[1024,1024,4,4]) -> y: a 64 MiB weight, each value its index.
  std::vector<float> values(int64_t{1024} * 1024 * 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 4099);
  WriteFile(dir / "weights.bin",
            std::string(16, 'x') + std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  onnx::ModelProto m = ExternalConvModel("weights.bin", 16);
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  for (int64_t d : {1024, 1024, 4, 4}) w->add_dims(d);
  InputDim(m, 0, 1)->set_dim_value(1024);
  WriteFile(dir / "model.onnx", m.SerializeAsString());

  const int64_t before = PrivateMemoryBytes();
  auto imported = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(imported.ok());
  const TensorDataPtr weight = imported->graph.value(imported->graph.FindValue("w")).data;
  REQUIRE(weight->mapped_file() != nullptr);
  CHECK(weight->mapped_offset() == 16);
  // Not the weight's 64 MiB (ASan's own bookkeeping of the import took 16 MiB).
  CHECK(PrivateMemoryBytes() - before < (int64_t{32} << 20));
  REQUIRE(weight->floats().size() == values.size());
  CHECK(std::equal(values.begin(), values.end(), weight->floats().begin()));
  CHECK(TensorData(*weight).mapped_file() == weight->mapped_file());

  // A reference run reads it in place too.
  const TensorMap inputs = RandomInputs(imported->graph, 3);
  const int64_t before_run = PrivateMemoryBytes();
  auto mapped_run = RunReference(imported->graph, inputs);
  REQUIRE(mapped_run.ok());
  CHECK(PrivateMemoryBytes() - before_run < (int64_t{32} << 20));

  // Read again: the same mapping.
  auto again = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(again.ok());
  CHECK(again->graph.value(again->graph.FindValue("w")).data->mapped_file() == weight->mapped_file());

  // Values at an offset a float cannot be read at are read into memory.
  WriteFile(dir / "odd.bin",
            std::string(18, 'x') + std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  auto* location = w->mutable_external_data(0);
  location->set_value("odd.bin");
  w->mutable_external_data(1)->set_value("18");
  WriteFile(dir / "odd.onnx", m.SerializeAsString());
  auto odd = ImportOnnxFile((dir / "odd.onnx").string());
  REQUIRE(odd.ok());
  const TensorData& read = *odd->graph.value(odd->graph.FindValue("w")).data;
  CHECK(read.mapped_file() == nullptr);
  CHECK(std::equal(values.begin(), values.end(), read.floats().begin(), read.floats().end()));
  auto read_run = RunReference(odd->graph, inputs);
  REQUIRE(read_run.ok());
  CHECK(read_run->at("y").data == mapped_run->at("y").data);
}

TEST_CASE("A model too large for one file is written with its weights beside it") {
  const auto dir = TempDir("external_data_large");
  WriteWeightFile(dir / "weights.bin");
  WriteFile(dir / "model.onnx", ExternalConvModel("weights.bin", 16).SerializeAsString());
  auto imported = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(imported.ok());
  imported->external_data = false;  // as a model read from one file, or built in code

  const auto small = dir / "small.onnx";
  REQUIRE(ExportOnnxFile(*imported, small.string()).ok());
  CHECK_FALSE(std::filesystem::exists(ExternalDataPath(small.string())));
  // Over the limit (protobuf's 2 GiB, here a few bytes) the weights go to a data file.
  const auto large = dir / "large.onnx";
  REQUIRE(ExportOnnxFile(*imported, large.string(), /*max_inline_bytes=*/64).ok());
  REQUIRE(std::filesystem::exists(ExternalDataPath(large.string())));
  CHECK(std::filesystem::file_size(large) < std::filesystem::file_size(small));
  auto again = ImportOnnxFile(large.string());
  REQUIRE(again.ok());
  CHECK(again->external_data);
  const auto weights = [](const OnnxModel& m) { return m.graph.value(m.graph.FindValue("w")).data->floats(); };
  CHECK(weights(*again) == weights(*imported));
}

TEST_CASE("A model written without its weights is built again sharing them, and only so") {
  const auto dir = TempDir("without_weights");
  WriteWeightFile(dir / "weights.bin");
  WriteFile(dir / "model.onnx", ExternalConvModel("weights.bin", 16).SerializeAsString());
  auto first = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(first.ok());
  const auto weight = [](const OnnxModel& m) { return m.graph.value(m.graph.FindValue("w")).data; };

  absl::StatusOr<onnx::ModelProto> bare = ExportOnnxWithoutWeights(*first);
  REQUIRE(bare.ok());
  const onnx::TensorProto& w = bare->graph().initializer(0);
  CHECK(w.name() == "w");
  CHECK_FALSE(w.has_raw_data());
  CHECK(w.data_location() != onnx::TensorProto::EXTERNAL);
  CHECK(std::vector<int64_t>(w.dims().begin(), w.dims().end()) == std::vector<int64_t>{16, 3, 3, 3});

  ImportOptions sharing;
  sharing.shared_weights = &first->graph;
  CHECK_THAT(std::string(ImportOnnx(*bare, sharing).status().message()),  // not said to be left out
             Catch::Contains("wrong number of values"));
  sharing.weights_left_out = true;
  auto again = ImportOnnx(*bare, sharing);
  REQUIRE(again.ok());
  CHECK(weight(*again) == weight(*first));  // the same tensor

  // No graph to share, or one whose weight of that name has another shape: refused.
  CHECK_THAT(std::string(ImportOnnx(*bare).status().message()), Catch::Contains("wrong number of values"));
  Graph other;
  REQUIRE(other.AddWeight("w", TensorData::Float({4}, std::vector<float>(4, 0.25f))).ok());
  sharing.shared_weights = &other;
  CHECK_FALSE(ImportOnnx(*bare, sharing).ok());
}

TEST_CASE("A model the ONNX checker refuses leaves neither model nor data file") {
  const auto dir = TempDir("external_data_refused");
  WriteWeightFile(dir / "weights.bin");
  onnx::ModelProto m = ExternalConvModel("weights.bin", 16);
  m.mutable_graph()->mutable_output(0)->set_name("c");
  m.mutable_graph()->mutable_node(0)->set_output(0, "c");
  onnx::NodeProto* relu = AddNode(m, op_names::kRelu, {"c"}, {"y"}, "relu");
  relu->add_attribute()->set_name("unheard_of");  // not valid ONNX: kept opaque by import
  relu->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  relu->mutable_attribute(0)->set_i(1);
  m.mutable_graph()->mutable_output(0)->set_name("y");
  WriteFile(dir / "model.onnx", m.SerializeAsString());
  auto imported = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(imported.ok());

  const auto out_dir = TempDir("external_data_refused_out");
  const auto out = (out_dir / "out.onnx").string();
  const absl::Status refused = ExportOnnxFile(*imported, out, /*max_inline_bytes=*/0);
  CHECK_THAT(std::string(refused.message()), Catch::Contains("fails the ONNX checker"));
  CHECK(std::filesystem::is_empty(out_dir));
}

TEST_CASE("Models written beside one shared data file hold each weight once") {
  // y = x W and z = relu(x W) + V, W shared (the same tensor) and V only in the second,
  // both of 2 KiB (smaller ones stay in the model).
  Graph first, second;
  const TensorDataPtr w = TensorData::Float({16, 32}, std::vector<float>(16 * 32, 0.5f));
  const TensorDataPtr v = TensorData::Float({16, 32}, std::vector<float>(16 * 32, 0.25f));
  const ValueId x1 = *first.AddInput("x", DataType::kFloat32, {16, 16});
  REQUIRE(first.AddOutput(AddOp(first, op_names::kMatMul, {x1, *first.AddWeight("w", w)}, "y")).ok());
  const ValueId x2 = *second.AddInput("x", DataType::kFloat32, {16, 16});
  const ValueId p = AddOp(second, op_names::kMatMul, {x2, *second.AddWeight("w", w)}, "p");
  const ValueId r = AddOp(second, op_names::kRelu, {p}, "r");
  REQUIRE(second.AddOutput(AddOp(second, op_names::kAdd, {r, *second.AddWeight("v", v)}, "z")).ok());

  const auto dir = TempDir("shared_weights_file");
  SharedWeightsFile weights((dir / "weights.data").string());
  REQUIRE(ExportOnnxFile(NewOnnxModel(std::move(first)), (dir / "a.onnx").string(), weights).ok());
  REQUIRE(ExportOnnxFile(NewOnnxModel(std::move(second)), (dir / "b.onnx").string(), weights).ok());
  CHECK(std::filesystem::file_size(dir / "weights.data") == 2 * 16 * 32 * sizeof(float));
  for (const char* name : {"a.onnx", "b.onnx"}) {
    auto read = ImportOnnxFile((dir / name).string());
    INFO(name << ": " << read.status());
    REQUIRE(read.ok());
    CHECK(read->graph.value(read->graph.FindValue("w")).data->floats() == w->floats());
  }
  auto b = ImportOnnxFile((dir / "b.onnx").string());
  REQUIRE(b.ok());
  CHECK(b->graph.value(b->graph.FindValue("v")).data->floats() == v->floats());
  // A model elsewhere cannot name the file.
  const auto other = TempDir("shared_weights_file_other");
  const absl::Status elsewhere = ExportOnnxFile(*b, (other / "c.onnx").string(), weights);
  CHECK(elsewhere.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::filesystem::is_empty(other));
}

TEST_CASE("Tied weights are written to a model's data file once") {
  // y = x W + x V, W and V the same tensor (as a decoder's embedding and output layer).
  const TensorDataPtr w = TensorData::Float({16, 32}, std::vector<float>(16 * 32, 0.5f));
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 16});
  const ValueId a = AddOp(g, op_names::kMatMul, {x, *g.AddWeight("w", w)}, "a");
  const ValueId b = AddOp(g, op_names::kMatMul, {x, *g.AddWeight("v", w)}, "b");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {a, b}, "y")).ok());
  const auto dir = TempDir("tied_weights");
  const auto out = (dir / "out.onnx").string();
  REQUIRE(ExportOnnxFile(NewOnnxModel(std::move(g)), out, /*max_inline_bytes=*/0).ok());
  CHECK(std::filesystem::file_size(ExternalDataPath(out)) == 16 * 32 * sizeof(float));
  auto again = ImportOnnxFile(out);
  REQUIRE(again.ok());
  for (const char* name : {"w", "v"})
    CHECK(again->graph.value(again->graph.FindValue(name)).data->floats() == w->floats());
}

TEST_CASE("Weights in a data file start where their values can be read in place") {
  // y = x + b (b of 259 floats: 1036 bytes), z = x W (W of 2 MiB): W follows b in the file.
  const TensorDataPtr b = TensorData::Float({259}, std::vector<float>(259, 1.5f));
  std::vector<float> big(512 * 1024);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 977);
  const TensorDataPtr w = TensorData::Float({512, 1024}, big);
  Graph g;
  const ValueId xb = *g.AddInput("xb", DataType::kFloat32, {259});
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {xb, *g.AddWeight("b", b)}, "y")).ok());
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 512});
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x, *g.AddWeight("w", w)}, "z")).ok());
  const auto dir = TempDir("aligned_data_file");
  const auto out = (dir / "out.onnx").string();
  REQUIRE(ExportOnnxFile(NewOnnxModel(std::move(g)), out, /*max_inline_bytes=*/0).ok());

  auto written = ReadModelFile(out);
  REQUIRE(written.ok());
  int64_t w_offset = -1, b_offset = -1;
  for (const onnx::TensorProto& t : written->graph().initializer())
    for (const auto& entry : t.external_data())
      if (entry.key() == "offset") (t.name() == "w" ? w_offset : b_offset) = std::stoll(entry.value());
  CHECK(b_offset % 16 == 0);
  CHECK(w_offset > 0);
  CHECK(w_offset % 4096 == 0);  // a page, for runtimes that map their weights
  auto again = ImportOnnxFile(out);
  REQUIRE(again.ok());
  const TensorData& read = *again->graph.value(again->graph.FindValue("w")).data;
  CHECK(read.mapped_file() != nullptr);
  CHECK(std::equal(big.begin(), big.end(), read.floats().begin(), read.floats().end()));
  CHECK(again->graph.value(again->graph.FindValue("b")).data->floats() == b->floats());
}

TEST_CASE("A shared data file that a write failed to fails every later write") {
  if (!std::filesystem::exists("/dev/full")) {
    WARN("no /dev/full here");
    return;
  }
  SharedWeightsFile full("/dev/full");  // every write to it fails, as on a full disk
  const TensorDataPtr w = TensorData::Float({16, 32}, std::vector<float>(16 * 32, 0.5f));
  onnx::TensorProto init;
  init.set_name("w");
  const absl::Status placed = full.Place(w, init);
  const absl::Status flushed = full.Flush();
  CHECK_FALSE((placed.ok() && flushed.ok()));
  onnx::TensorProto again;
  again.set_name("w");
  CHECK_THAT(std::string(full.Place(w, again).message()), Catch::Contains("an earlier write to '/dev/full' failed"));
}

TEST_CASE("Integer initializers stay in the model beside a data file") {
  // y = Gather(x, idx): 200 int64 indices (1600 bytes), which ONNX's shape inference may
  // read, beside a float weight of 2 KiB.
  auto m = NewModel(13);
  AddInput(m, "x", {300});
  onnx::TensorProto* idx = m.mutable_graph()->add_initializer();
  idx->set_name("idx");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_dims(200);
  for (int64_t i = 0; i < 200; ++i) idx->add_int64_data(i);
  AddFloatInit(m, "w", {200, 512 / 200 + 1}, 0.5f);
  AddNode(m, "Gather", {"x", "idx"}, {"g"}, "gather");
  AddNode(m, op_names::kMatMul, {"g", "w"}, {"y"}, "matmul");
  AddOutput(m, "y");
  auto imported = ImportOnnx(m);
  INFO(imported.status());
  REQUIRE(imported.ok());
  const auto dir = TempDir("integers_inline");
  const auto out = (dir / "out.onnx").string();
  REQUIRE(ExportOnnxFile(*imported, out, /*max_inline_bytes=*/0).ok());
  auto written = ReadModelFile(out);
  REQUIRE(written.ok());
  for (const onnx::TensorProto& t : written->graph().initializer()) {
    INFO(t.name());
    CHECK((t.data_location() == onnx::TensorProto::EXTERNAL) == (t.data_type() == onnx::TensorProto::FLOAT));
  }
  auto again = ImportOnnxFile(out);
  REQUIRE(again.ok());
  CHECK(again->graph.value(again->graph.FindValue("idx")).data->ints().size() == 200);
}

TEST_CASE("External data outside the model's directory or file is refused") {
  const auto dir = TempDir("external_data_bad");
  WriteWeightFile(dir / "weights.bin");
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("/etc/passwd")), Catch::Contains("is an absolute path"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("../weights.bin")),
             Catch::Contains("leaves the model's directory"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("sub/../../weights.bin")),
             Catch::Contains("leaves the model's directory"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("missing.bin")), Catch::Contains("cannot read data file"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("weights.bin", 4096)), Catch::Contains("beyond the end"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("weights.bin", 16, 100000)), Catch::Contains("beyond the end"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("weights.bin", 0)),  // 16 bytes too many
             Catch::Contains("wrong number of values"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("weights.bin", 16, 16 * 27 * 4 - 1)),  // not whole floats
             Catch::Contains("wrong number of values"));
  CHECK_THAT(ImportFileError(dir, ExternalConvModel("")), Catch::Contains("no location given"));
  CHECK_THAT(ImportError(ExternalConvModel("weights.bin", 16)), Catch::Contains("not read from a file"));
}

namespace {

// Models whose structure is broken, at `opset`, with the line import must refuse each
// with; before that check, ONNX's version converter crashed on several (opsets below 11).
std::vector<std::pair<onnx::ModelProto, std::string>> MalformedModels(int opset) {
  std::vector<std::pair<onnx::ModelProto, std::string>> cases;
  auto add = [&](const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                 const std::string& graph_output, std::vector<int64_t> x_shape, const std::string& message) {
    auto m = NewModel(opset);
    AddInput(m, "x", std::move(x_shape));
    AddNode(m, op, std::move(inputs), std::move(outputs), "n");
    AddOutput(m, graph_output);
    cases.emplace_back(std::move(m), message);
  };
  // The fuzzer's finding (issue 43): an unnamed Relu output, a graph output nothing makes.
  add(op_names::kRelu, {"x"}, {""}, "y", {2147483648, 3}, "node 'n' (Relu): output 0 ('Y') has no name");
  add(op_names::kRelu, {"x"}, {"z"}, "y", {2, 3}, "graph output 'y' is not produced by any node");
  add(op_names::kAdd, {"x", "w"}, {"y"}, "y", {2, 3},
      "node 'n' (Add) reads 'w', which no node, graph input or initializer");
  add("", {"x"}, {"y"}, "y", {2, 3}, "node 'n' has no op_type");
  add(op_names::kRelu, {"x"}, {"x"}, "x", {2, 3}, "tensor 'x' is defined more than once");
  add(op_names::kRelu, {"x"}, {"y"}, "", {2, 3}, "a graph output has no name");
  return cases;
}

}  // namespace

TEST_CASE("Malformed models are refused in one line before ONNX's code sees them, at every opset") {
  for (int opset : {6, 7, 8, 9, 10, 13}) {
    for (const auto& [model, message] : MalformedModels(opset)) {
      INFO("opset " << opset << ", expecting " << message);
      const std::string error = ImportError(model);
      CHECK_THAT(error, Catch::StartsWith(message));
      CHECK(error.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("Below opset 11, what ONNX's version converter cannot take is refused, not converted") {
  auto relu = [](int opset, const std::string& op, std::vector<int64_t> x_shape) {
    auto m = NewModel(opset);
    AddInput(m, "x", std::move(x_shape));
    AddNode(m, op, {"x"}, {"y"}, "n");
    AddOutput(m, "y");
    return m;
  };
  // The converter loops forever on a ConstantFill (which no opset has).
  CHECK_THAT(ImportError(relu(9, "ConstantFill", {2, 3})),
             Catch::EndsWith("(the oldest supported): node 'n' (ConstantFill): opset 9 has no such operator"));
  // It holds dimensions as int: 2^32 became 0.
  CHECK_THAT(ImportError(relu(8, op_names::kRelu, {0, 4294967296})),
             Catch::Contains("'x' has dimension 4294967296, beyond what ONNX's version converter holds"));
  // Its adapters assume nodes valid by their schema.
  auto two_inputs = relu(9, op_names::kRelu, {2, 3});
  two_inputs.mutable_graph()->mutable_node(0)->add_input("x");
  CHECK_THAT(ImportError(two_inputs), Catch::Contains("node 'n' (Relu) is not valid at opset 9: "));
  auto custom = relu(9, op_names::kRelu, {2, 3});
  custom.mutable_graph()->mutable_node(0)->set_domain("com.example");
  CHECK_THAT(ImportError(custom), Catch::Contains("only the default ONNX domain is converted from opset 9"));
  // A valid model still converts, and at opset 13 the same large dimension is the memory
  // check's to refuse, not the converter's.
  auto valid = ImportOnnx(relu(9, op_names::kRelu, {2, 3}));
  REQUIRE(valid.ok());
  CHECK(valid->converted_from_opset == 9);
  CHECK_THAT(ImportError(relu(13, op_names::kRelu, {4294967296, 4294967296})), !Catch::Contains("converter"));
}

TEST_CASE("A subgraph's outputs are checked: named, and defined in its scope") {
  auto m = NewModel(13);
  AddInput(m, "x", {2, 3});
  AddInput(m, "c", {}, onnx::TensorProto::BOOL);
  auto* node = AddNode(m, "If", {"c"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = node->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(branch);
    a->mutable_g()->add_output()->set_name("x");
  }
  AddOutput(m, "y");
  CHECK(ImportError(m).empty());  // a branch may give an outer value
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_output(0)->set_name("nowhere");
  CHECK_THAT(ImportError(m), Catch::StartsWith("node 'if' (If) reads 'nowhere', which no node"));
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_output(0)->set_name("");
  CHECK_THAT(ImportError(m), Catch::StartsWith("node 'if' (If): an output of its subgraph 'then_branch' has no name"));
}
