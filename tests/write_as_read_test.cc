// A model written as read where there is too little memory to optimize it: its external
// tensors copied into one data file beside the copy, nothing else changed, and the memory
// that decides it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "taso/backends/available_memory.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/write_as_read.h"
#include "taso/pipeline/pipeline.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// x[2,8] -> MatMul(w[8,4]) -> Add(b[4]) -> y, with w stored at offset 8 of weights/w.bin
// and b in b.bin (both under `dir`), and a scale kept inline: Mul(s[4]).
onnx::ModelProto ExternalLinearModel(const std::filesystem::path& dir) {
  auto m = NewModel(13);
  AddInput(m, "x", {2, 8});
  AddFloatInit(m, "w", {8, 4}, 0.5f);
  AddFloatInit(m, "b", {4}, -1.0f);
  AddFloatInit(m, "s", {4}, 2.0f);
  std::filesystem::create_directories(dir / "weights");
  const std::vector<float> w(32, 0.5f), b(4, -1.0f);
  std::string w_bytes(8, 'x');
  w_bytes.append(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
  WriteFile(dir / "weights" / "w.bin", w_bytes);
  WriteFile(dir / "b.bin", std::string(reinterpret_cast<const char*>(b.data()), b.size() * sizeof(float)));
  SetExternalData(*m.mutable_graph()->mutable_initializer(0), "weights/w.bin", 8, 128);
  SetExternalData(*m.mutable_graph()->mutable_initializer(1), "b.bin", 0, 16);
  m.mutable_graph()->mutable_initializer(0)->clear_float_data();
  m.mutable_graph()->mutable_initializer(1)->clear_float_data();
  AddNode(m, "MatMul", {"x", "w"}, {"xw"}, "mm");
  AddNode(m, "Add", {"xw", "b"}, {"z"}, "add");
  AddNode(m, "Mul", {"z", "s"}, {"y"}, "scale");
  AddOutput(m, "y");
  return m;
}

bool SameWeights(const OnnxModel& a, const OnnxModel& b) {
  if (a.graph.weights().size() != b.graph.weights().size()) return false;
  for (ValueId v : a.graph.weights()) {
    const ValueId w = b.graph.FindValue(a.graph.value(v).name);
    if (w < 0 || !a.graph.value(v).data->SameContent(*b.graph.value(w).data)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("A model written as read has its external tensors copied into one data file beside it") {
  const auto dir = TempDir("write_as_read");
  const onnx::ModelProto model = ExternalLinearModel(dir);
  WriteFile(dir / "model.onnx", model.SerializeAsString());
  const auto stored = StoredModelBytes(model, dir.string());
  REQUIRE(stored.ok());
  CHECK(stored->read == static_cast<int64_t>(model.ByteSizeLong()));
  CHECK(stored->mapped == 128 + 16);  // float32 at offsets 8 and 0: read in place
  // b at an offset a float cannot be read at is read into memory.
  onnx::ModelProto odd = model;
  const std::vector<float> b(4, -1.0f);
  WriteFile(dir / "b_odd.bin", "xy" + std::string(reinterpret_cast<const char*>(b.data()), sizeof(float) * 4));
  SetExternalData(*odd.mutable_graph()->mutable_initializer(1), "b_odd.bin", 2, 16);
  const auto odd_stored = StoredModelBytes(odd, dir.string());
  REQUIRE(odd_stored.ok());
  CHECK(odd_stored->read == static_cast<int64_t>(odd.ByteSizeLong()) + 16);
  CHECK(odd_stored->mapped == 128);
  CHECK(odd_stored->total() == odd_stored->read + odd_stored->mapped);
  // w's bytes read again as int64 values: read into memory too.
  onnx::TensorProto& as_ints = *odd.mutable_graph()->add_initializer();
  as_ints = odd.graph().initializer(0);
  as_ints.set_name("w_as_ints");
  as_ints.set_data_type(onnx::TensorProto::INT64);
  as_ints.clear_dims();
  as_ints.add_dims(16);
  const auto twice = StoredModelBytes(odd, dir.string());
  REQUIRE(twice.ok());
  CHECK(twice->read == static_cast<int64_t>(odd.ByteSizeLong()) + 16 + 128);
  CHECK(twice->mapped == 128);

  std::filesystem::create_directories(dir / "out");
  const std::string out = (dir / "out" / "copy.onnx").string();
  const auto wrote = WriteAsRead(model, dir.string(), out);
  REQUIRE(wrote.ok());
  CHECK(*wrote);
  CHECK(std::filesystem::file_size(ExternalDataPath(out)) == 128 + 16);
  auto written = ReadModelFile(out);
  REQUIRE(written.ok());
  for (const onnx::TensorProto& t : written->graph().initializer()) {
    if (t.name() == "s") {
      CHECK(t.data_location() != onnx::TensorProto::EXTERNAL);
      continue;
    }
    REQUIRE(t.data_location() == onnx::TensorProto::EXTERNAL);
    CHECK(t.external_data(0).value() == "copy.onnx.data");
  }
  // Nothing but where the bytes are differs from the input.
  CHECK(written->graph().node_size() == model.graph().node_size());
  auto input = ImportOnnxFile((dir / "model.onnx").string());
  auto copy = ImportOnnxFile(out);
  REQUIRE(input.ok());
  REQUIRE(copy.ok());
  CHECK(SameWeights(*input, *copy));
  CHECK(OutputDifference(input->graph, copy->graph) == 0.0);
}

TEST_CASE("A model of inline tensors is written as read unchanged; one that cannot be leaves no file") {
  const auto dir = TempDir("write_as_read_refused");
  const onnx::ModelProto inline_model = SmallConvReluModel();
  const std::string out = (dir / "copy.onnx").string();
  const auto wrote = WriteAsRead(inline_model, dir.string(), out);
  REQUIRE(wrote.ok());
  CHECK_FALSE(*wrote);
  CHECK_FALSE(std::filesystem::exists(ExternalDataPath(out)));
  auto written = ReadModelFile(out);
  REQUIRE(written.ok());
  CHECK(written->SerializeAsString() == inline_model.SerializeAsString());

  const std::string refused = (dir / "refused.onnx").string();
  onnx::ModelProto missing_data = ExternalLinearModel(dir);
  std::filesystem::remove(dir / "b.bin");
  CHECK_FALSE(StoredModelBytes(missing_data, dir.string()).ok());
  const auto no_data = WriteAsRead(missing_data, dir.string(), refused);
  REQUIRE_FALSE(no_data.ok());
  CHECK_THAT(std::string(no_data.status().message()), Catch::Contains("cannot read data file"));

  onnx::ModelProto dangling = SmallConvReluModel();
  dangling.mutable_graph()->mutable_node(0)->set_input(0, "nothing");
  const auto malformed = WriteAsRead(dangling, dir.string(), refused);
  REQUIRE_FALSE(malformed.ok());
  CHECK_THAT(std::string(malformed.status().message()), Catch::Contains("nothing"));
  for (const std::string& left :
       {refused, ExternalDataPath(refused), refused + ".tmp", ExternalDataPath(refused) + ".tmp"})
    CHECK_FALSE(std::filesystem::exists(left));
}

TEST_CASE("A model is optimized only where the memory available holds its tensors and the work on them") {
  constexpr int64_t kGB = 1'000'000'000;
  const StoredTensorBytes read{.read = 8 * kGB}, mapped{.mapped = 8 * kGB};
  // Read into memory: held by taso-opt, an eighth more, and by a session timing them.
  CHECK(MemoryToOptimize(read, Target::kCuda) > 9 * kGB);
  CHECK(MemoryToOptimize(read, Target::kCuda) < 10 * kGB);
  CHECK(MemoryToOptimize(read, Target::kOrt) > 17 * kGB);
  CHECK(MemoryToOptimize(read, Target::kCpu) > 25 * kGB);  // two executors timed in turn
  // Read in place: a quarter of them held by taso-opt.
  CHECK(MemoryToOptimize(mapped, Target::kCuda) < 3 * kGB);
  CHECK(MemoryToOptimize(mapped, Target::kOrt) < 11 * kGB);
  CHECK(MemoryToOptimize({}, Target::kCuda) > 0);

  const StoredTensorBytes decoder{.read = 100'000'000, .mapped = 2'800'000'000};
  CHECK_FALSE(TooLittleMemoryToOptimize(decoder, Target::kOrt, std::nullopt));  // unknown: tried
  CHECK_FALSE(TooLittleMemoryToOptimize(decoder, Target::kOrt, MemoryToOptimize(decoder, Target::kOrt)));
  const auto reason = TooLittleMemoryToOptimize(decoder, Target::kOrt, 3'100'000'000);
  REQUIRE(reason);
  CHECK(*reason == "optimizing its 2.9 GB of tensors needs about 4.2 GB of memory, and 3.1 GB are available here");
  CHECK_FALSE(TooLittleMemoryToOptimize(decoder, Target::kCuda, 3'100'000'000));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  CHECK(MemoryToOptimize({.read = kMax}, Target::kCuda) == kMax);
  CHECK(MemoryToOptimize({.read = kMax, .mapped = kMax}, Target::kOrt) == kMax);
  CHECK(TooLittleMemoryToOptimize({.read = 8'000'000}, Target::kCuda, 1'000'000) ==
        "optimizing its 8 MB of tensors needs about 546 MB of memory, and 1 MB are available here");
  CHECK(TooLittleMemoryToOptimize({.read = 8'000'000}, Target::kOrt, 1'000'000) ==
        "optimizing its 8 MB of tensors needs about 554 MB of memory, and 1 MB are available here");
}

TEST_CASE("TASO_AVAILABLE_MEMORY_BYTES stands for the memory available") {
  {
    const ScopedEnv given("TASO_AVAILABLE_MEMORY_BYTES", "123456789");
    CHECK(AvailableMemoryBytes() == 123456789);
  }
  const ScopedEnv not_a_number("TASO_AVAILABLE_MEMORY_BYTES", "plenty");  // the machine's then
  const std::optional<int64_t> machine = AvailableMemoryBytes();
  CHECK(machine.has_value());  // /proc/meminfo
  CHECK(machine != 123456789);
}

TEST_CASE("Tensors sharing a span are copied once, those of training graphs too") {
  const auto dir = TempDir("write_as_read_spans");
  onnx::ModelProto model = ExternalLinearModel(dir);
  // s names w's span too (its first 16 bytes), as a file whose tied weights were written once.
  onnx::TensorProto& s = *model.mutable_graph()->mutable_initializer(2);
  s.clear_float_data();
  SetExternalData(s, "weights/w.bin", 8, 16);
  onnx::TensorProto& again = *model.mutable_graph()->add_initializer();
  again = model.graph().initializer(0);
  again.set_name("w_again");
  onnx::TensorProto& trained = *model.add_training_info()->mutable_initialization()->add_initializer();
  trained = model.graph().initializer(1);
  trained.set_name("b_trained");
  const auto stored = StoredModelBytes(model, dir.string());
  REQUIRE(stored.ok());
  CHECK(stored->total() == static_cast<int64_t>(model.ByteSizeLong()) + 128 + 16 + 16);

  const std::string out = (dir / "copy.onnx").string();
  REQUIRE(WriteAsRead(model, dir.string(), out).ok());
  CHECK(std::filesystem::file_size(ExternalDataPath(out)) == 128 + 16 + 16);
  auto written = ReadModelFile(out);
  REQUIRE(written.ok());
  CHECK(written->graph().initializer(3).external_data(1).value() ==
        written->graph().initializer(0).external_data(1).value());  // w_again's offset is w's
  const onnx::TensorProto& copied = written->training_info(0).initialization().initializer(0);
  REQUIRE(copied.external_data_size() > 0);
  CHECK(copied.external_data(0).value() == "copy.onnx.data");
  for (const char* name : {"weights", "b.bin"})  // nothing new beside the input's files
    CHECK(std::filesystem::exists(dir / name));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  CHECK(entries == 4);  // weights/, b.bin, copy.onnx, copy.onnx.data: no staging folder left
}

TEST_CASE("A model written as read over itself, or refused where it would lose the input's data") {
  const auto dir = TempDir("write_as_read_in_place");
  const onnx::ModelProto model = ExternalLinearModel(dir);
  const std::string input = (dir / "model.onnx").string();
  WriteFile(input, model.SerializeAsString());
  // The output's data file, or the output itself, would be a file the input reads.
  CHECK_THAT(std::string(CheckOutputSparesInputData(model, input, (dir / "b.bin").string()).message()),
             Catch::Contains("holds the input's weights"));
  onnx::ModelProto named_like_output = model;
  SetExternalData(*named_like_output.mutable_graph()->mutable_initializer(1), "out.onnx.data", 0, 16);
  std::filesystem::copy_file(dir / "b.bin", dir / "out.onnx.data");
  CHECK_THAT(std::string(CheckOutputSparesInputData(named_like_output, input, (dir / "out.onnx").string()).message()),
             Catch::Contains("write the output elsewhere"));
  CHECK(CheckOutputSparesInputData(model, input, (dir / "other.onnx").string()).ok());

  // Over itself: the model and its own data file replaced whole.
  REQUIRE(CheckOutputSparesInputData(model, input, input).ok());
  auto before = ImportOnnxFile(input);
  REQUIRE(before.ok());
  REQUIRE(WriteAsRead(model, dir.string(), input).ok());
  auto after = ImportOnnxFile(input);
  REQUIRE(after.ok());
  CHECK(SameWeights(*before, *after));

  // A copy that fails leaves an earlier output as it was.
  const std::string out = (dir / "copy.onnx").string();
  REQUIRE(WriteAsRead(model, dir.string(), out).ok());
  const auto earlier = std::filesystem::file_size(ExternalDataPath(out));
  onnx::ModelProto missing = model;
  SetExternalData(*missing.mutable_graph()->mutable_initializer(1), "absent.bin", 0, 16);
  REQUIRE_FALSE(WriteAsRead(missing, dir.string(), out).ok());
  CHECK(std::filesystem::file_size(ExternalDataPath(out)) == earlier);
  CHECK(ImportOnnxFile(out).ok());
}

// x[1,4] -> If(c, then: MatMul(x, w_then[4,4]), else: x) -> y, with w_then stored as
// external data in "w_then.bin": the If stays opaque and is written as read.
TEST_CASE("A subgraph's weight stored as external data is read into its node, so any copy holds it") {
  const auto dir = TempDir("external_subgraph_weight");
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", {1, 4});
  AddInput(m, "c", {}, onnx::TensorProto::BOOL);
  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  onnx::TensorProto* w = then_branch.add_initializer();
  w->set_name("w_then");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(4);
  SetExternalData(*w, "w_then.bin", 0, 64);
  onnx::NodeProto* mm = then_branch.add_node();
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("w_then");
  mm->add_output("t");
  then_branch.add_output()->set_name("t");
  else_branch.set_name("else");
  onnx::NodeProto* id = else_branch.add_node();
  id->set_op_type("Identity");
  id->add_input("x");
  id->add_output("e");
  else_branch.add_output()->set_name("e");
  onnx::NodeProto* branch = AddNode(m, "If", {"c"}, {"y"}, "branch");
  for (auto [name, g] : {std::pair{"then_branch", &then_branch}, std::pair{"else_branch", &else_branch}}) {
    onnx::AttributeProto* a = branch->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *g;
  }
  AddOutput(m, "y");
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[i] = static_cast<float>(i);
  WriteFile(dir / "w_then.bin", std::string(reinterpret_cast<const char*>(values.data()), 64));
  WriteFile(dir / "model.onnx", m.SerializeAsString());

  auto imported = ImportOnnxFile((dir / "model.onnx").string());
  REQUIRE(imported.ok());
  std::filesystem::create_directories(dir / "elsewhere");
  const std::string out = (dir / "elsewhere" / "out.onnx").string();
  REQUIRE(ExportOnnxFile(*imported, out).ok());
  auto written = ReadModelFile(out);
  REQUIRE(written.ok());
  const onnx::TensorProto& copied = written->graph().node(0).attribute(0).g().initializer(0);
  CHECK(copied.data_location() != onnx::TensorProto::EXTERNAL);
  CHECK(copied.raw_data() == std::string(reinterpret_cast<const char*>(values.data()), 64));
}
