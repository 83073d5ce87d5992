// A model written as read where there is too little memory to optimize it: its external
// tensors copied into one data file beside the copy, nothing else changed, and the memory
// that decides it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
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
  CHECK(*stored == static_cast<int64_t>(model.ByteSizeLong()) + 128 + 16);

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
  CHECK(MemoryToOptimize(8 * kGB) > 9 * kGB);
  CHECK(MemoryToOptimize(0) > 0);
  CHECK_FALSE(TooLittleMemoryToOptimize(2 * kGB, std::nullopt));  // unknown: tried
  CHECK_FALSE(TooLittleMemoryToOptimize(2 * kGB, MemoryToOptimize(2 * kGB)));
  const auto reason = TooLittleMemoryToOptimize(2'900'000'000, 3'100'000'000);
  REQUIRE(reason);
  CHECK(*reason == "optimizing its 2.9 GB of tensors needs about 3.8 GB of memory, and 3.1 GB are available here");
  CHECK(TooLittleMemoryToOptimize(8'000'000, 1'000'000) ==
        "optimizing its 8 MB of tensors needs about 546 MB of memory, and 1 MB are available here");
}

TEST_CASE("TASO_AVAILABLE_MEMORY_BYTES stands for the memory available") {
  REQUIRE(setenv("TASO_AVAILABLE_MEMORY_BYTES", "123456789", 1) == 0);
  CHECK(AvailableMemoryBytes() == 123456789);
  REQUIRE(setenv("TASO_AVAILABLE_MEMORY_BYTES", "plenty", 1) == 0);  // not a number: the machine's
  const std::optional<int64_t> machine = AvailableMemoryBytes();
  REQUIRE(unsetenv("TASO_AVAILABLE_MEMORY_BYTES") == 0);
  CHECK(machine.has_value());  // /proc/meminfo
  CHECK(machine != 123456789);
}
