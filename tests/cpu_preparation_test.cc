// What the cpu runtime does to a graph read from a file before running it: batch norms,
// biases and relus folded into the convolutions, layouts chosen; the same outputs.
#include <catch2/catch.hpp>

#include "models/models.h"
#include "taso/backends/cpu_executor.h"
#include "taso/backends/cpu_preparation.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "test_util.h"

using namespace taso;

TEST_CASE("A CNN read from its file is prepared for the cpu runtime: folded, laid out, the same outputs") {
  auto built = models::BuildModel("resnet50", {.image_size = 32, .layers = 1});
  REQUIRE(built.ok());
  auto proto = ExportOnnx(*built);
  REQUIRE(proto.ok());
  auto read = ImportOnnx(*proto);  // convolutions, batch norms and relus apart, as in the file
  REQUIRE(read.ok());
  CpuCost cost(nullptr);
  auto prepared = PrepareForCpu(read->graph, cost);
  REQUIRE(prepared.ok());
  CHECK(prepared->fused_nodes > 0);
  CHECK(prepared->estimate_seconds > 0);
  auto relus = [](const Graph& g) {
    int count = 0;
    for (NodeId n = 0; n < g.num_nodes(); ++n) count += g.node(n).op->name() == op_names::kRelu;
    return count;
  };
  // The relus after a convolution's batch norm are folded; those after a residual Add stay.
  CHECK(relus(prepared->graph) < relus(read->graph));
  CHECK(relus(prepared->graph) > 0);

  const TensorMap inputs = RandomInputs(read->graph, 4);
  auto expected = RunReference(read->graph, inputs);
  REQUIRE(expected.ok());
  auto executor = CpuExecutor::Create(prepared->graph);
  REQUIRE(executor.ok());
  auto as_read = CpuExecutor::Create(read->graph);
  REQUIRE(as_read.ok());
  CHECK((*executor)->num_reference() <= (*as_read)->num_reference());
  auto got = (*executor)->Run(inputs);
  REQUIRE(got.ok());
  CHECK(RelativeDifference(*expected, *got) < 1e-4);

  // A graph already prepared (or laid out by taso-opt) keeps its layouts.
  auto again = PrepareForCpu(prepared->graph, cost);
  REQUIRE(again.ok());
  CHECK(again->fused_nodes == 0);
  CHECK(again->conversions == 0);
  CHECK(again->graph.num_nodes() == prepared->graph.num_nodes());
}
