// ONNX files exported by PyTorch (torchvision models and a TransformerEncoderLayer):
// they import, round-trip with nothing lost, and where every node is in the library the
// reference executor reproduces PyTorch's output, and so does the cpu executor, as
// imported and with convolutions fused, every node that can run blocked blocked.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string_view>

#include "absl/algorithm/container.h"
#include "taso/backends/cpu_executor.h"
#include "taso/backends/layouts.h"
#include "taso/ir/executor.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/passes/inference_fusion.h"
#include "test_util.h"

using namespace taso;

namespace {

const std::filesystem::path& ExportDir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::path(TASO_BINARY_DIR) / "torch-models";
    const std::string cmd = "/usr/bin/python3 " + std::string(TASO_SOURCE_DIR) +
                            "/tests/python/export_torch_models.py " + d.string() + " > " + d.string() + ".log 2>&1";
    std::filesystem::create_directories(d);
    if (std::system(cmd.c_str()) != 0) FAIL("exporting the PyTorch models failed; see " << d.string() << ".log");
    return d;
  }();
  return dir;
}

std::vector<float> ReadFloats(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<float> v(std::filesystem::file_size(p) / sizeof(float));
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

// Nothing of the original model is missing from the exported one.
void CheckNothingLost(const onnx::ModelProto& original, const onnx::ModelProto& exported) {
  const auto& a = original.graph();
  const auto& b = exported.graph();
  REQUIRE(a.input_size() == b.input_size());
  for (int i = 0; i < a.input_size(); ++i) CHECK(a.input(i).SerializeAsString() == b.input(i).SerializeAsString());
  REQUIRE(a.output_size() == b.output_size());
  for (int i = 0; i < a.output_size(); ++i) CHECK(a.output(i).name() == b.output(i).name());
  CHECK(original.opset_import_size() == exported.opset_import_size());
  CHECK(original.producer_name() == exported.producer_name());

  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : b.initializer()) inits[t.name()] = &t;
  REQUIRE(a.initializer_size() == b.initializer_size());
  for (const auto& t : a.initializer()) {
    auto it = inits.find(t.name());
    REQUIRE(it != inits.end());
    auto x = TensorFromProto(t), y = TensorFromProto(*it->second);
    REQUIRE((x.ok() && y.ok()));
    CHECK((*x)->SameContent(**y));
  }
  std::map<std::string, const onnx::NodeProto*> nodes;
  for (const auto& n : b.node()) nodes[n.name()] = &n;
  REQUIRE(a.node_size() == b.node_size());
  for (const auto& n : a.node()) {
    auto it = nodes.find(n.name());
    REQUIRE(it != nodes.end());
    const onnx::NodeProto& m = *it->second;
    CHECK(m.op_type() == n.op_type());
    CHECK(std::vector<std::string>(m.input().begin(), m.input().end()) ==
          std::vector<std::string>(n.input().begin(), n.input().end()));
    CHECK(std::vector<std::string>(m.output().begin(), m.output().end()) ==
          std::vector<std::string>(n.output().begin(), n.output().end()));
  }
}

}  // namespace

TEST_CASE("PyTorch exports import, round-trip and match PyTorch") {
  // The transformer layer computes its slice bounds from Shape at run time: with static
  // shapes they fold to constants (ImportOptions), so every node of every model is in the
  // library.
  for (const char* name : {"resnet50", "resnext50", "inception_v3", "mobilenet_v2", "squeezenet", "densenet121",
                           "efficientnet_b0", "mobilenet_v3_small", "transformer_layer", "transformer_layer_17"}) {
    SECTION(name) {
      const auto base = ExportDir() / name;
      auto original = ReadModelFile(base.string() + ".onnx");
      REQUIRE(original.ok());
      auto imported = ImportOnnx(*original);
      INFO(imported.status().ToString());
      REQUIRE(imported.ok());
      auto exported = ExportOnnx(*imported);
      REQUIRE(exported.ok());
      CheckNothingLost(*original, *exported);
      auto again = ImportOnnx(*exported);
      REQUIRE(again.ok());
      CHECK(again->graph.DebugString() == imported->graph.DebugString());
      // Imported as taso-opt does (shape arithmetic folded), every node is in the library.
      ImportOptions folding;
      folding.fold_shape_arithmetic = true;
      auto folded = ImportOnnx(*original, folding);
      REQUIRE(folded.ok());
      imported = std::move(folded);
      for (NodeId n = 0; n < imported->graph.num_nodes(); ++n) REQUIRE_FALSE(imported->graph.node(n).op->is_opaque());
      const Value& in = imported->graph.value(imported->graph.inputs()[0]);
      TensorMap inputs;
      inputs[in.name] = Tensor<float>(in.shape, ReadFloats(base.string() + ".input.bin"));
      const std::vector<float> theirs = ReadFloats(base.string() + ".output.bin");
      auto matches_pytorch = [&](const absl::StatusOr<TensorMap>& ours) {
        INFO(ours.status().ToString());
        REQUIRE(ours.ok());
        const Tensor<float>& y = ours->begin()->second;
        REQUIRE(y.data.size() == theirs.size());
        float scale = 0;
        for (float v : theirs) scale = std::max(scale, std::fabs(v));
        for (size_t i = 0; i < theirs.size(); ++i) REQUIRE(std::fabs(y.data[i] - theirs[i]) <= 1e-3f * (1 + scale));
      };
      matches_pytorch(RunReference(imported->graph, inputs));

      auto plain = CpuExecutor::Create(imported->graph);
      REQUIRE(plain.ok());
      matches_pytorch((*plain)->Run(inputs));
      auto fused = FuseIntoConvolutions(imported->graph);
      REQUIRE(fused.ok());
      // Every node that can run blocked, blocked: each blocked kernel and conversion the
      // model can have, which no measured choice is sure to pick.
      CpuCost cost(nullptr);
      CpuLayouts layouts(cost);
      const CpuLayouts::Plan plan = layouts.AllBlocked(*fused);
      if (std::string_view(name).substr(0, 11) != "transformer") CHECK(absl::c_count(plan.blocked, true) > 0);
      auto laid_out = layouts.Apply(*fused, plan);
      REQUIRE(laid_out.ok());
      auto executor = CpuExecutor::Create(*laid_out);
      INFO(executor.status().ToString());
      REQUIRE(executor.ok());
      matches_pytorch((*executor)->Run(inputs));
    }
  }
}
