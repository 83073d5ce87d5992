// The file written is the file checked (WriteCheckedModel): a fault planted in how an
// operator is lowered to ONNX, or confined to a small output, or showing only for inputs
// beyond [-1, 1], is refused before anything is written, naming the output; a good model is
// written with the check's figures.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>

#include "absl/strings/str_cat.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/output_agreement.h"
#include "taso/onnx/onnx_static_copy.h"
#include "taso/pipeline/written_model.h"
#include "test_util.h"

using namespace taso;

namespace {

namespace fs = std::filesystem;

// Changes the exported model before it is written, as a wrong lowering would.
using Fault = std::function<void(onnx::ModelProto&)>;

ModelWriter WriterWith(Fault fault) {
  return [fault](const OnnxModel& model, const std::string& path) -> absl::Status {
    absl::StatusOr<onnx::ModelProto> proto = ExportOnnx(model);
    if (!proto.ok()) return proto.status();
    fault(*proto);
    return WriteModelFile(*proto, path);
  };
}

// The first node of `op_type`; fails the test when there is none.
onnx::NodeProto& NodeOf(onnx::ModelProto& m, const std::string& op_type) {
  for (onnx::NodeProto& n : *m.mutable_graph()->mutable_node())
    if (n.op_type() == op_type) return n;
  FAIL("no " << op_type << " node in the exported model");
  throw std::logic_error("unreachable");
}

// Gives the int64 initializer `name` other values (of the same count).
void SetInts(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& values) {
  for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer())
    if (t.name() == name) {
      t.clear_raw_data();
      t.clear_int64_data();
      for (int64_t v : values) t.add_int64_data(v);
      return;
    }
  FAIL("no initializer " << name);
}

// Gives the float initializer `name` other values (of the same count).
void SetFloats(onnx::ModelProto& m, const std::string& name, const std::vector<float>& values) {
  for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer())
    if (t.name() == name) {
      t.clear_float_data();
      t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
      return;
    }
  FAIL("no initializer " << name);
}

struct Files {
  fs::path dir;
  std::string input, destination;
};

// The model as the input file (written correctly), and where the output goes.
Files InputFile(const std::string& test, const OnnxModel& model) {
  Files f{testing::TempDir(test), "", ""};
  f.input = (f.dir / "input.onnx").string();
  f.destination = (f.dir / "out.onnx").string();
  REQUIRE(ExportOnnxFile(model, f.input).ok());
  return f;
}

WriteRequest RequestFor(const Files& f, const OnnxModel& model, Target target, ModelWriter writer) {
  WriteRequest r;
  r.input_path = f.input;
  r.input = &model;
  r.output = &model;
  r.destination = f.destination;
  r.target = target;
  r.ort_runner = TASO_SOURCE_DIR "/tools/ort/ort_run.js";
  r.writer = std::move(writer);
  return r;
}

// y = 2 x with x [N, 4] (N symbolic); "two" listed as an input too where `two_is_input`.
onnx::ModelProto TwiceModel(bool two_is_input = false) {
  onnx::ModelProto m = testing::NewModel();
  testing::AddInput(m, "x", {1, 4});
  testing::InputDim(m, 0, 0)->set_dim_param("N");
  if (two_is_input) testing::AddInput(m, "two", {});
  testing::AddFloatInit(m, "two", {}, 2.0f);
  testing::AddNode(m, op_names::kMul, {"x", "two"}, {"y"});
  testing::AddOutput(m, "y");
  return m;
}

// `proto` as the input file, read back as taso-opt reads it.
struct InputRead {
  Files files;
  OnnxModel model;
};
InputRead ReadAsInputFile(const std::string& test, const onnx::ModelProto& proto, const ImportOptions& options = {}) {
  const fs::path dir = testing::TempDir(test);
  InputRead read{Files{dir, (dir / "input.onnx").string(), (dir / "out.onnx").string()}, {}};
  testing::WriteFile(read.files.input, proto.SerializeAsString());
  absl::StatusOr<OnnxModel> model = ImportOnnxFile(read.files.input, options);
  REQUIRE(model.ok());
  read.model = *std::move(model);
  return read;
}

// Staged, checked and moved into place: the checks' figures.
absl::StatusOr<WrittenModel> Write(const Files& f, const OnnxModel& model, Target target, ModelWriter writer) {
  absl::StatusOr<StagedModel> staged = StageCheckedModel(RequestFor(f, model, target, std::move(writer)));
  if (!staged.ok()) return staged.status();
  if (absl::Status moved = staged->MoveIntoPlace(); !moved.ok()) return moved;
  return staged->checks();
}

// How many entries the folder holds.
int Entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++n;
  return n;
}

// Refused, naming `output`, and nothing left in the folder but the input file.
void ExpectRefused(const absl::StatusOr<WrittenModel>& written, const Files& f, const std::string& output,
                   const std::string& inputs = "") {
  REQUIRE_FALSE(written.ok());
  const std::string message(written.status().message());
  INFO(message);
  CHECK_THAT(message, Catch::Contains("output '" + output + "'") && Catch::Contains("it was not written"));
  if (!inputs.empty()) CHECK_THAT(message, Catch::Contains(inputs));
  CHECK(Entries(f.dir) == 1);
  CHECK_FALSE(fs::exists(f.destination));
}

OnnxModel ModelOf(Graph g) { return OnnxModel{std::move(g), nullptr, 13}; }

// y = BlockDiag(a, b), both matrices computed at run time (inputs), so it is lowered to
// Pad, Pad and Concat rather than folded.
OnnxModel BlockDiagModel() {
  Graph g;
  const ValueId a = *g.AddInput("a", DataType::kFloat32, {2, 3});
  const ValueId b = *g.AddInput("b", DataType::kFloat32, {4, 5});
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kBlockDiag, {a, b}, "y")).ok());
  return ModelOf(std::move(g));
}

// y = Enlarge(w, reference): the 1x1 kernel w padded to 3x3 (lowered to Pad).
OnnxModel EnlargeModel() {
  Graph g;
  const ValueId w = *g.AddInput("w", DataType::kFloat32, {4, 4, 1, 1});
  const ValueId reference = *g.AddInput("reference", DataType::kFloat32, {4, 4, 3, 3});
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kEnlarge, {w, reference}, "y")).ok());
  return ModelOf(std::move(g));
}

// y = Transpose(x) over its last two (equal) dimensions.
OnnxModel TransposeModel() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 3, 3});
  Params perm;
  perm.Set("perm", std::vector<int64_t>{0, 2, 1});
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kTranspose, {x}, "y", perm)).ok());
  return ModelOf(std::move(g));
}

}  // namespace

TEST_CASE("A fault planted in a lowering is refused before any file is written, naming the output") {
  // Each fault keeps every shape, so that only the values tell.
  SECTION("BlockDiag: the first block padded on the left") {
    const OnnxModel model = BlockDiagModel();
    const Files f = InputFile("e2e_blockdiag", model);
    const auto fault = [](onnx::ModelProto& m) { SetInts(m, NodeOf(m, op_names::kPad).input(1), {0, 5, 0, 0}); };
    ExpectRefused(Write(f, model, Target::kOrt, WriterWith(fault)), f, "y");
    ExpectRefused(Write(f, model, Target::kCpu, WriterWith(fault)), f, "y");
  }
  SECTION("Enlarge: the kernel padded into a corner") {
    const OnnxModel model = EnlargeModel();
    const Files f = InputFile("e2e_enlarge", model);
    const auto fault = [](onnx::ModelProto& m) {
      SetInts(m, NodeOf(m, op_names::kPad).input(1), {0, 0, 2, 2, 0, 0, 0, 0});
    };
    ExpectRefused(Write(f, model, Target::kOrt, WriterWith(fault)), f, "y");
  }
  SECTION("Transpose: the permutation lost") {
    const OnnxModel model = TransposeModel();
    const Files f = InputFile("e2e_transpose", model);
    const auto fault = [](onnx::ModelProto& m) {
      onnx::NodeProto& t = NodeOf(m, op_names::kTranspose);
      for (onnx::AttributeProto& a : *t.mutable_attribute())
        if (a.name() == "perm") {
          a.clear_ints();
          for (int64_t d : {0, 1, 2}) a.add_ints(d);
        }
    };
    ExpectRefused(Write(f, model, Target::kOrt, WriterWith(fault)), f, "y");
    ExpectRefused(Write(f, model, Target::kCpu, WriterWith(fault)), f, "y");
  }
}

TEST_CASE("An error in a small output beside a large one is refused") {
  // big = 1000 x, small = relu(x) + 0.5: an error of 0.01 in small is under 1e-3 of big's
  // size but 1% of its own.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {8});
  const ValueId thousand = *g.AddWeight("thousand", TensorData::Float({8}, std::vector<float>(8, 1000)));
  const ValueId half = *g.AddWeight("half", TensorData::Float({8}, std::vector<float>(8, 0.5f)));
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kMul, {x, thousand}, "big")).ok());
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kAdd, {testing::AddOp(g, op_names::kRelu, {x}, "r"), half}, "small"))
              .ok());
  const OnnxModel model = ModelOf(std::move(g));
  const Files f = InputFile("e2e_small_output", model);
  const auto fault = [](onnx::ModelProto& m) { SetFloats(m, "half", std::vector<float>(8, 0.51f)); };
  ExpectRefused(Write(f, model, Target::kOrt, WriterWith(fault)), f, "small");
}

TEST_CASE("An error that shows only for inputs beyond [-1, 1] is refused") {
  // Clip at 2 written as a Clip at 3: the same on [-1, 1].
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {64});
  const ValueId low = *g.AddWeight("low", TensorData::Float({}, {-2}));
  const ValueId high = *g.AddWeight("high", TensorData::Float({}, {2}));
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kClip, {x, low, high}, "y")).ok());
  const OnnxModel model = ModelOf(std::move(g));
  const Files f = InputFile("e2e_wide_inputs", model);
  const auto fault = [](onnx::ModelProto& m) { SetFloats(m, NodeOf(m, op_names::kClip).input(2), {3}); };
  ExpectRefused(Write(f, model, Target::kOrt, WriterWith(fault)), f, "y", "for inputs in [-10, 10]");
}

TEST_CASE("A model checked end to end is written with the check's figures") {
  const OnnxModel model = BlockDiagModel();
  const Files f = InputFile("e2e_good", model);
  for (Target target : {Target::kOrt, Target::kCpu}) {
    INFO(TargetName(target));
    const absl::StatusOr<WrittenModel> written = Write(f, model, target, nullptr);
    INFO(written.status());
    REQUIRE(written.ok());
    CHECK(fs::exists(f.destination));
    const EndToEndCheck& e = written->end_to_end;
    CHECK(e.not_run.empty());
    CHECK(e.outputs == 1);
    CHECK(e.input_scales == std::vector<double>(std::begin(kInputScales), std::end(kInputScales)));
    CHECK(e.max_difference == 0);
    CHECK_THAT(e.runtime, Catch::Contains(target == Target::kOrt ? "ONNX Runtime" : "cpu executor"));
    fs::remove(f.destination);
  }
}

// Older exporters list every weight as an input too (keep_initializers_as_inputs): such a
// weight is a run-time value with a default, of fixed shape, that the read-back takes no
// size for.
TEST_CASE("A model whose weights are inputs too is checked end to end on every target") {
  const InputRead read = ReadAsInputFile("e2e_weights_as_inputs", TwiceModel(/*two_is_input=*/true));
  const Files& f = read.files;
  const OnnxModel& model = read.model;
  for (Target target : {Target::kOrt, Target::kCpu}) {
    INFO(TargetName(target));
    const absl::StatusOr<WrittenModel> written = Write(f, model, target, nullptr);
    INFO(written.status());
    REQUIRE(written.ok());
    CHECK(written->end_to_end.not_run.empty());
    CHECK(written->end_to_end.outputs == 1);
    fs::remove(f.destination);
  }
}

TEST_CASE("A float16 model is checked end to end in ONNX Runtime, and a wrong one refused") {
  // y = x * two, all of float16 (0x4000 is 2.0, 0x4200 3.0).
  onnx::ModelProto m = testing::NewModel();
  testing::AddInput(m, "x", {4}, onnx::TensorProto::FLOAT16);
  onnx::TensorProto* two = m.mutable_graph()->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::FLOAT16);
  two->set_raw_data(std::string("\x00\x40", 2));
  testing::AddNode(m, op_names::kMul, {"x", "two"}, {"y"});
  testing::AddOutput(m, "y");
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT16);
  const InputRead read = ReadAsInputFile("e2e_float16", m);
  const Files& f = read.files;
  const OnnxModel& model = read.model;
  const absl::StatusOr<WrittenModel> written = Write(f, model, Target::kOrt, nullptr);
  INFO(written.status());
  REQUIRE(written.ok());
  CHECK(written->end_to_end.not_run.empty());
  CHECK(written->end_to_end.outputs == 1);
  CHECK(written->end_to_end.max_difference == 0);
  fs::remove(f.destination);
  const auto fault = [](onnx::ModelProto& proto) {
    for (onnx::TensorProto& t : *proto.mutable_graph()->mutable_initializer())
      if (t.name() == "two") t.set_raw_data(std::string("\x00\x42", 2));
  };
  ExpectRefused(Write(f, model, Target::kOrt, WriterWith(fault)), f, "y");
}

TEST_CASE("Where the runtime cannot run the input file, the model is written and the report says so") {
  // An operator of a domain ONNX Runtime does not know.
  onnx::ModelProto m = testing::NewModel();
  testing::AddInput(m, "x", {4});
  testing::AddOutput(m, "y");
  auto* type = m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_value(4);
  testing::AddNode(m, op_names::kRelu, {"x"}, {"r"});
  onnx::NodeProto* custom = testing::AddNode(m, "Mystery", {"r"}, {"y"});
  custom->set_domain("com.example");
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  const InputRead read = ReadAsInputFile("e2e_not_run", m);
  const Files& f = read.files;
  const OnnxModel& model = read.model;
  for (Target target : {Target::kOrt, Target::kCpu}) {
    const absl::StatusOr<WrittenModel> written = Write(f, model, target, nullptr);
    INFO(written.status());
    REQUIRE(written.ok());
    CHECK(fs::exists(f.destination));
    CHECK_THAT(written->end_to_end.not_run, Catch::Contains("cannot run the input file"));
    fs::remove(f.destination);
  }
}

TEST_CASE("A file whose view follows a symbolic batch is checked end to end on the cpu target") {
  ImportOptions as_taso_opt;  // as taso-opt reads a file
  as_taso_opt.fold_shape_arithmetic = true;
  const InputRead read = ReadAsInputFile("e2e_computed_view", testing::ComputedViewModel(), as_taso_opt);
  const Files& f = read.files;
  REQUIRE_FALSE(FirstOpaqueNode(read.model.graph).empty());  // Shape, Gather, Concat, Reshape
  const absl::StatusOr<WrittenModel> written = Write(f, read.model, Target::kCpu, nullptr);
  INFO(written.status());
  REQUIRE(written.ok());
  CHECK(written->end_to_end.not_run.empty());
  CHECK(written->end_to_end.outputs == 1);
  fs::remove(f.destination);
  // The files do run: a planted error in the weight is refused.
  const Fault fault = [](onnx::ModelProto& proto) { SetFloats(proto, "w", std::vector<float>(16, 0.5f)); };
  ExpectRefused(Write(f, read.model, Target::kCpu, WriterWith(fault)), f, "y");
}

TEST_CASE("Where a session would not fit in memory, the model is written and the report says why") {
  const OnnxModel model = BlockDiagModel();
  const Files f = InputFile("e2e_no_room", model);
  WriteRequest r = RequestFor(f, model, Target::kOrt, nullptr);
  r.available_memory = [] { return std::optional<int64_t>(int64_t{100} << 20); };  // less than the working margin
  absl::StatusOr<StagedModel> staged = StageCheckedModel(r);
  INFO(staged.status());
  REQUIRE(staged.ok());
  const std::string& not_run = staged->checks().end_to_end.not_run;
  CHECK_THAT(not_run, Catch::Contains("too little memory here to run the files in ONNX Runtime") &&
                          Catch::Contains("0.1 GB of memory are available"));
  CHECK(staged->checks().end_to_end.outputs == 0);
  REQUIRE(staged->MoveIntoPlace().ok());
  CHECK(fs::exists(f.destination));
  // Where the memory is not known, both files are run.
  r.available_memory = [] { return std::optional<int64_t>(); };
  absl::StatusOr<StagedModel> run = StageCheckedModel(r);
  REQUIRE(run.ok());
  CHECK(run->checks().end_to_end.not_run.empty());
  CHECK(run->checks().end_to_end.outputs == 1);
}

TEST_CASE("Outputs agree tensor by tensor, NaN and infinity compared as such") {
  const auto tensor = [](std::vector<float> v) {
    Tensor<float> t(Shape{static_cast<int64_t>(v.size())});
    t.data = std::move(v);
    return t;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  CHECK(TensorDifference(tensor({nan, 1}), tensor({nan, 1})) == 0);
  CHECK(std::isinf(TensorDifference(tensor({nan, 1}), tensor({0, 1}))));
  CHECK(std::isinf(TensorDifference(tensor({1, 1}), tensor({nan, 1}))));
  CHECK(TensorDifference(tensor({inf, -inf}), tensor({inf, -inf})) == 0);
  CHECK(std::isinf(TensorDifference(tensor({inf}), tensor({-inf}))));
  CHECK(std::isinf(TensorDifference(tensor({inf}), tensor({3e38f}))));
  CHECK(std::isinf(TensorDifference(tensor({1, 2}), tensor({1}))));
  // Each tensor to its own size: 0.01 off in a tensor of size 1 fails beside one of 1000.
  const OutputAgreement a = CompareOutputs({{"big", tensor({1000})}, {"small", tensor({0.5})}},
                                           {{"big", tensor({1000})}, {"small", tensor({0.51f})}});
  CHECK_FALSE(a.Agrees());
  CHECK(a.worst == "small");
  CHECK_FALSE(CompareOutputs({{"y", tensor({1})}}, {{"z", tensor({1})}}).Agrees());
  CHECK(CompareOutputs({{"big", tensor({1000})}}, {{"big", tensor({1000.5f})}}).Agrees());
}

TEST_CASE("A model that cannot be written or moved into place leaves nothing behind") {
  const OnnxModel model = BlockDiagModel();
  const Files f = InputFile("e2e_unwritable", model);
  const ModelWriter failing = [](const OnnxModel&, const std::string& path) {
    testing::WriteFile(path, "half a model");
    return absl::ResourceExhaustedError("no space left");
  };
  const absl::StatusOr<WrittenModel> not_written = Write(f, model, Target::kOrt, failing);
  CHECK(not_written.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(Entries(f.dir) == 1);
  {
    absl::StatusOr<StagedModel> staged = StageCheckedModel(RequestFor(f, model, Target::kOrt, nullptr));
    REQUIRE(staged.ok());
    // The destination's name taken, after the checks, by a folder that is not empty.
    fs::create_directories(fs::path(f.destination) / "taken");
    const absl::Status moved = staged->MoveIntoPlace();
    CHECK_THAT(std::string(moved.message()), Catch::Contains("cannot write '" + f.destination + "'"));
  }
  CHECK(Entries(f.dir) == 2);  // the input and the folder in the way
}

TEST_CASE("A model written with its weights beside it is checked and moved with them") {
  // y = x W, W of 2 KiB: large enough for the data file.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 16});
  const ValueId w = testing::AddWeight(g, "w", {16, 32}, 7);
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kMatMul, {x, w}, "y")).ok());
  const OnnxModel model = ModelOf(std::move(g));
  const Files f = InputFile("e2e_external_data", model);
  // As ExportOnnxFile writes a model over 2 GiB: the weights in a data file.
  const ModelWriter beside = [](const OnnxModel& m, const std::string& path) {
    return ExportOnnxFile(m, path, /*max_inline_bytes=*/0);
  };
  absl::StatusOr<StagedModel> staged = StageCheckedModel(RequestFor(f, model, Target::kOrt, beside));
  INFO(staged.status());
  REQUIRE(staged.ok());
  CHECK(staged->external_data());
  CHECK(staged->checks().end_to_end.not_run.empty());
  REQUIRE(staged->MoveIntoPlace().ok());
  CHECK(fs::exists(f.destination));
  CHECK(fs::file_size(ExternalDataPath(f.destination)) == 16 * 32 * sizeof(float));
}

TEST_CASE("A file that keeps a symbolic dimension is run at another size of it too") {
  const InputRead read = ReadAsInputFile("e2e_other_sizes", TwiceModel());  // imported at N = 1
  const Files& f = read.files;
  const OnnxModel& model = read.model;
  // Written at the size it was built at, as a wrong export of a kept dimension would be: it
  // runs at N = 1 and fails at N = 3.
  WriteRequest r = RequestFor(f, model, Target::kOrt, nullptr);
  r.other_sizes["N"] = 3;
  const absl::StatusOr<StagedModel> staged = StageCheckedModel(r);
  REQUIRE_FALSE(staged.ok());
  CHECK_THAT(std::string(staged.status().message()),
             Catch::Contains("cannot run the model written") && Catch::Contains("at N=3: "));
  CHECK(Entries(f.dir) == 1);
  // Without the other size the same file passes at N = 1.
  r.other_sizes.clear();
  const absl::StatusOr<StagedModel> at_built = StageCheckedModel(r);
  INFO(at_built.status());
  CHECK(at_built.ok());
}

TEST_CASE("A kept dimension's empty size is run too where the input file runs there") {
  // y = 2 x with x [N, 4], or y = 2 x[0] (which no input runs at N = 0), imported at N = 1.
  for (const bool reads_first_row : {false, true}) {
    onnx::ModelProto m = testing::NewModel();
    testing::AddInput(m, "x", {1, 4});
    testing::InputDim(m, 0, 0)->set_dim_param("N");
    testing::AddFloatInit(m, "two", {}, 2.0f);
    std::string x = "x";
    if (reads_first_row) {
      testing::AddInt64Init(m, "first", {0});
      testing::AddNode(m, "Gather", {"x", "first"}, {"row"});
      x = "row";
    }
    testing::AddNode(m, op_names::kMul, {x, "two"}, {"y"});
    testing::AddOutput(m, "y");
    const InputRead read = ReadAsInputFile(absl::StrCat("e2e_empty_sizes", reads_first_row), m);
    const Files& f = read.files;
    const OnnxModel& model = read.model;
    OnnxModel symbolic = model;  // written with N kept
    symbolic.symbolic_shapes["x"] = {std::string("N"), std::nullopt};
    if (!reads_first_row) symbolic.symbolic_shapes["y"] = {std::string("N"), std::nullopt};
    WriteRequest r = RequestFor(f, symbolic, Target::kOrt, nullptr);
    r.other_sizes["N"] = 3;
    r.empty_sizes = {{{"N", 0}}};
    const absl::StatusOr<StagedModel> staged = StageCheckedModel(r);
    INFO(staged.status());
    REQUIRE(staged.ok());
    CHECK(staged->checks().end_to_end.other_sizes == "N=3");
    CHECK(staged->checks().end_to_end.empty_sizes == (reads_first_row ? "" : "N=0"));
    if (reads_first_row) continue;
    // Written at the size built, N = 1, as a wrong rewrite at N = 0 would run: refused.
    r = RequestFor(f, model, Target::kOrt, nullptr);
    r.empty_sizes = {{{"N", 0}}};
    const absl::StatusOr<StagedModel> fixed = StageCheckedModel(r);
    REQUIRE_FALSE(fixed.ok());
    CHECK_THAT(std::string(fixed.status().message()),
               Catch::Contains("cannot run the model written") && Catch::Contains("at N=0: "));
  }
}
