// taso-run MODEL.onnx: imports a model, runs it with the reference executor on random
// inputs and prints its outputs' shapes and checksums. With --roundtrip it also exports,
// re-imports and runs the round-tripped graph, and fails if anything differs.
#include <chrono>
#include <cmath>
#include <cstdio>

#include "absl/flags/flag.h"
#include "cli.h"
#include "taso/backends.h"
#include "taso/executor.h"
#include "taso/onnx_io.h"

ABSL_FLAG(uint64_t, seed, 7, "seed of the random inputs");
ABSL_FLAG(bool, roundtrip, false, "also export, re-import and compare");
ABSL_FLAG(bool, backends, false, "list the kernel backends of this build and exit");

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void PrintOutputs(const taso::TensorMap& outputs) {
  for (const auto& [name, t] : outputs) {
    double sum = 0, sum_abs = 0;
    for (float v : t.data) {
      sum += v;
      sum_abs += std::fabs(v);
    }
    std::printf("  output %s %s  sum=%.6g  mean|x|=%.6g\n", name.c_str(), taso::ShapeToString(t.shape).c_str(), sum,
                t.data.empty() ? 0.0 : sum_abs / t.data.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kTool = "taso-run";
  auto args = taso::cli::Init(argc, argv, "taso-run MODEL.onnx [--roundtrip] [--seed N] | --backends");
  if (absl::GetFlag(FLAGS_backends)) {
    for (const auto& b : taso::AvailableBackends())
      std::printf("%-9s %-13s %s\n", b.name.c_str(), b.usable ? "usable" : (b.compiled ? "compiled" : "not built"),
                  b.detail.c_str());
    return 0;
  }
  if (args.size() != 1) return taso::cli::Usage(kTool, "expected one ONNX file");
  auto start = std::chrono::steady_clock::now();
  auto model = taso::ImportOnnxFile(args[0]);
  if (!model.ok()) return taso::cli::Fail(kTool, model.status());
  int opaque = 0;
  for (taso::NodeId n = 0; n < model->graph.num_nodes(); ++n) opaque += model->graph.node(n).op->is_opaque();
  std::printf("%s: %d nodes (%d opaque), %zu weights, opset %d, imported in %.2f s\n", args[0].c_str(),
              model->graph.num_nodes(), opaque, model->graph.weights().size(), model->opset, Seconds(start));

  const taso::TensorMap inputs = taso::RandomInputs(model->graph, absl::GetFlag(FLAGS_seed));
  start = std::chrono::steady_clock::now();
  auto outputs = taso::RunReference(model->graph, inputs);
  if (!outputs.ok()) return taso::cli::Fail(kTool, outputs.status());
  std::printf("reference executor: %.2f s\n", Seconds(start));
  PrintOutputs(*outputs);
  if (!absl::GetFlag(FLAGS_roundtrip)) return 0;

  auto proto = taso::ExportOnnx(*model);
  if (!proto.ok()) return taso::cli::Fail(kTool, proto.status());
  auto again = taso::ImportOnnx(*proto);
  if (!again.ok()) return taso::cli::Fail(kTool, again.status());
  if (again->graph.DebugString() != model->graph.DebugString())
    return taso::cli::Fail(kTool, absl::InternalError("the round-tripped graph differs from the original"));
  auto outputs2 = taso::RunReference(again->graph, inputs);
  if (!outputs2.ok()) return taso::cli::Fail(kTool, outputs2.status());
  const double diff = taso::MaxAbsDifference(*outputs, *outputs2);
  std::printf("round trip (export, re-import, run): graphs identical, max |difference| of outputs = %g\n", diff);
  return diff == 0 ? 0 : 1;
}
