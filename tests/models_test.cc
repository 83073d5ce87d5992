// The benchmark models: each is written by taso-models' builder, passes the ONNX checker,
// imports, exports, re-imports unchanged, and computes identical outputs throughout.
#include <catch2/catch.hpp>

#include "models/models.h"
#include "taso/executor.h"
#include "test_util.h"

using namespace taso;

TEST_CASE("Every benchmark model round-trips through ONNX with identical outputs") {
  auto dir = testing::TempDir("models");
  for (const auto& info : models::AllModels()) {
    SECTION(info.name) {
      auto built = info.build({});
      REQUIRE(built.ok());
      const std::string path = (dir / (info.name + ".onnx")).string();
      REQUIRE(ExportOnnxFile(*built, path).ok());  // export runs the ONNX checker

      auto imported = ImportOnnxFile(path);
      REQUIRE(imported.ok());
      for (NodeId n = 0; n < imported->graph.num_nodes(); ++n) REQUIRE_FALSE(imported->graph.node(n).op->is_opaque());
      auto exported = ExportOnnx(*imported);
      REQUIRE(exported.ok());
      auto again = ImportOnnx(*exported);
      REQUIRE(again.ok());
      CHECK(again->graph.DebugString() == imported->graph.DebugString());

      const TensorMap inputs = RandomInputs(built->graph, 11);
      auto original = RunReference(built->graph, inputs);
      auto from_file = RunReference(imported->graph, inputs);
      auto round_tripped = RunReference(again->graph, inputs);
      REQUIRE(original.ok());
      REQUIRE(from_file.ok());
      REQUIRE(round_tripped.ok());
      CHECK(MaxAbsDifference(*original, *from_file) == 0);
      CHECK(MaxAbsDifference(*from_file, *round_tripped) == 0);
      for (const auto& [name, t] : *original)
        for (float v : t.data) REQUIRE(std::isfinite(v));
    }
  }
}

TEST_CASE("Benchmark models are deterministic and have the evaluated sizes") {
  auto a = models::BuildModel("nasrnn"), b = models::BuildModel("nasrnn");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(ExportOnnx(*a)->SerializeAsString() == ExportOnnx(*b)->SerializeAsString());
  CHECK(a->graph.inputs().size() == 5);
  CHECK(a->graph.value(a->graph.inputs()[0]).shape == Shape{1, 512});

  auto bert = models::BuildModel("bert", {.layers = 1});
  REQUIRE(bert.ok());
  CHECK(bert->graph.value(bert->graph.inputs()[0]).shape == Shape{64, 1024});
  auto inception = models::BuildModel("inception_v3");
  REQUIRE(inception.ok());
  CHECK(inception->graph.value(inception->graph.inputs()[0]).shape == Shape{1, 3, 299, 299});
  auto resnext = models::BuildModel("resnext50");
  REQUIRE(resnext.ok());
  int grouped = 0;
  for (NodeId n = 0; n < resnext->graph.num_nodes(); ++n)
    grouped += resnext->graph.node(n).params.Int("group", 1) == 32;
  CHECK(grouped == 16);  // one grouped 3x3 convolution per bottleneck block
  CHECK_FALSE(models::BuildModel("alexnet").ok());
}
