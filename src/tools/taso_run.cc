// taso-run MODEL.onnx: imports a model, runs it on random inputs with the reference
// executor (or, with --executor cpu, the oneDNN executor; --executor cuda, the cuDNN and
// cuBLAS one) and prints its outputs' shapes and checksums. With --roundtrip it also
// exports, re-imports and runs the round-tripped graph, and fails if anything differs.
// With a kernel executor, --time N prints the median of N timed runs and --check compares
// the outputs with the reference executor's, --profile N prints the time per operator, and
// --against OTHER.onnx times the model and another in turn in one process. A model with
// symbolic input dimensions runs at 1 for each, or at the sizes --input-shape gives.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "cli.h"
#include "taso/backends/backends.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/cpu_cost.h"
#include "taso/backends/cpu_preparation.h"
#include "taso/backends/cuda_cost.h"
#include "taso/backends/kernel_executor.h"
#include "taso/ir/executor.h"
#include "taso/ir/output_agreement.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/onnx_static_copy.h"
#include "taso/rewrite/cost.h"

ABSL_FLAG(uint64_t, seed, 7, "seed of the random inputs");
ABSL_FLAG(bool, roundtrip, false, "also export, re-import and compare");
ABSL_FLAG(bool, backends, false, "list the kernel backends of this build and exit");
ABSL_FLAG(std::string, executor, "reference",
          "reference (the operators' reference kernels), cpu (oneDNN) or cuda (cuDNN, cuBLAS and our CUDA kernels)");
ABSL_FLAG(int, time, 0,
          "with --executor cpu or cuda: time this many runs (after a fifth of a second of warm-up runs) and print the "
          "median");
ABSL_FLAG(int, profile, 0,
          "with --executor cpu or cuda: time this many runs, each operator apart, and print where a run's time "
          "goes beside what taso-opt's cost model for that target prices each operator at");
ABSL_FLAG(bool, as_read, false,
          "with --executor cpu: run the graph as read from the file, without what the cpu runtime does first "
          "(activations and batch norms folded into convolutions, layouts chosen)");
ABSL_FLAG(std::string, against, "",
          "with --executor cpu or cuda and --time N: time this model against another ONNX file with the same "
          "inputs in turn in one process (executors of each in pairs, in both orders) and compare their outputs");
ABSL_FLAG(std::vector<std::string>, input_shape, {},
          "NAME=D0xD1x...: the size of an input with symbolic dimensions to run at (repeatable, or "
          "comma-separated); symbolic dimensions not given take 1");
ABSL_FLAG(bool, check, false,
          "with --executor cpu or cuda: also run the reference executor and fail if the outputs differ");

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

// taso-opt's default cost cache; null where it cannot be opened (costs are measured
// afresh then).
std::unique_ptr<taso::CostCache> DefaultCostCache() {
  auto opened = taso::CostCache::Open(taso::DefaultCostCachePath());
  return opened.ok() ? *std::move(opened) : nullptr;
}

// The cost model taso-opt prices a graph with for the executor `name` (cpu or cuda),
// measuring what the default cost cache does not hold.
absl::StatusOr<std::unique_ptr<taso::CostModel>> CostModelFor(std::string_view name) {
  if (name != "cuda") return std::make_unique<taso::CpuCost>(DefaultCostCache());
  ASSIGN_OR_RETURN(std::unique_ptr<taso::MeasuredCost> cuda, taso::MakeCudaCost(DefaultCostCache()));
  return std::unique_ptr<taso::CostModel>(std::move(cuda));
}

// What the executor's cost model gives each operator of the graph in all, by operator name.
absl::StatusOr<absl::flat_hash_map<std::string, double>> PricedByOperator(const taso::Graph& graph,
                                                                          std::string_view name) {
  ASSIGN_OR_RETURN(std::unique_ptr<taso::CostModel> model, CostModelFor(name));
  absl::flat_hash_map<std::string, double> priced;
  const std::vector<bool> weight_only = taso::FindWeightOnly(graph).nodes;
  for (taso::NodeId n = 0; n < graph.num_nodes(); ++n)
    if (!weight_only[n]) priced[graph.node(n).op->name()] += model->NodeCost(graph, n);
  return priced;
}

// Prints where a run's time goes, operator by operator, beside the cost model's prices.
int PrintProfile(taso::KernelExecutor& executor, const taso::Graph& graph, const char* name, int runs) {
  auto profile = executor.ProfileByOperator(runs);
  if (!profile.ok()) return taso::cli::Fail("taso-run", profile.status());
  auto prices = PricedByOperator(graph, name);
  if (!prices.ok()) return taso::cli::Fail("taso-run", prices.status());
  const absl::flat_hash_map<std::string, double>& priced = *prices;
  double total = 0, total_priced = 0;
  for (const auto& t : *profile) total += t.seconds;
  for (const auto& [op, seconds] : priced) total_priced += seconds;
  std::printf(
      "%s executor: per operator, sum of each node's median over %d runs (%.3f ms in all), and what the\n"
      "  %s cost model prices the same nodes at (%.3f ms in all)\n",
      name, runs, total * 1e3, name, total_priced * 1e3);
  std::printf("  %-22s %6s %9s %10s %6s %10s\n", "operator", "nodes", "reference", "ms", "share", "priced ms");
  for (const auto& t : *profile) {
    auto it = priced.find(t.op);
    std::printf("  %-22s %6d %9d %10.3f %5.1f%% %10.3f\n", t.op.c_str(), t.nodes, t.reference, t.seconds * 1e3,
                total > 0 ? 100 * t.seconds / total : 0.0, it == priced.end() ? 0.0 : it->second * 1e3);
  }
  return 0;
}

// Runs the graph on a kernel executor (`name`: cpu or cuda; `kernels`: what its kernels are).
// `read`: the graph as read from the file, which --check runs on the reference kernels
// (`graph` may be it prepared for the runtime).
int RunOnKernels(const taso::Graph& graph, const taso::Graph& read, const taso::TensorMap& inputs, const char* name,
                 const char* kernels) {
  constexpr const char* kTool = "taso-run";
  auto start = std::chrono::steady_clock::now();
  auto executor = taso::MakeKernelExecutor(name, graph);
  if (!executor.ok()) return taso::cli::Fail(kTool, executor.status());
  auto outputs = (*executor)->Run(inputs);
  if (!outputs.ok()) return taso::cli::Fail(kTool, outputs.status());
  std::printf("%s executor: %d operators on %s kernels, %d on reference kernels; prepared and ran in %.2f s\n", name,
              (*executor)->num_kernels(), kernels, (*executor)->num_reference(), Seconds(start));
  PrintOutputs(*outputs);
  if (const int runs = absl::GetFlag(FLAGS_time); runs > 0) {
    auto median = (*executor)->MedianSeconds(runs);
    if (!median.ok()) return taso::cli::Fail(kTool, median.status());
    std::printf("%s executor: median %.3f ms over %d runs\n", name, *median * 1e3, runs);
  }
  if (const int runs = absl::GetFlag(FLAGS_profile); runs > 0) {
    if (int rc = PrintProfile(**executor, graph, name, runs); rc != 0) return rc;
  }
  if (!absl::GetFlag(FLAGS_check)) return 0;
  auto reference = taso::RunReference(read, inputs);
  if (!reference.ok()) return taso::cli::Fail(kTool, reference.status());
  const taso::OutputAgreement agreement = taso::CompareOutputs(*reference, *outputs);
  std::printf("%s executor against the reference executor: max |difference| of outputs %g (%s)\n", name,
              agreement.max_abs, agreement.Agrees() ? "same" : ("DIFFERENT: " + agreement.Describe()).c_str());
  return agreement.Agrees() ? 0 : 1;
}

// The graph an executor runs: on cpu, prepared as its runtime prepares it (activations and
// batch norms folded, layouts chosen) unless --as_read; on cuda, as read.
absl::StatusOr<taso::Graph> GraphToRun(const taso::Graph& read, std::string_view executor) {
  if (executor != "cpu" || absl::GetFlag(FLAGS_as_read)) return read;
  taso::CpuCost cost(DefaultCostCache());
  ASSIGN_OR_RETURN(taso::CpuPreparation prepared, taso::PrepareForCpu(read, cost));
  std::printf(
      "cpu runtime's preparation: %d nodes folded into convolutions, %d nodes in the blocked layout, "
      "%d layout conversions; priced at %.3f ms\n",
      prepared.fused_nodes, prepared.blocked_nodes, prepared.conversions, prepared.estimate_seconds * 1e3);
  return std::move(prepared.graph);
}

// Times two graphs in turn in this process (--against): executors of each made in pairs,
// in both orders, on the same inputs. Timed in separate processes, two executors of the
// same graph can differ by more than a rewrite gains (cuDNN's algorithms, where memory
// lands). Fails where their outputs differ.
int CompareOnKernels(const taso::Graph& a, const taso::Graph& b, const taso::TensorMap& inputs, const char* name,
                     int runs) {
  constexpr int kPairs = 4;
  auto compared = taso::CompareGraphs(name, a, b, inputs, runs, kPairs);
  if (!compared.ok()) return taso::cli::Fail("taso-run", compared.status());
  std::printf(
      "%s executor, in turn: this model %.3f ms, the other %.3f ms (this / other %.3f); about %d runs each over %d "
      "executor pairs made in both orders\n",
      name, compared->a_seconds * 1e3, compared->b_seconds * 1e3, compared->a_seconds / compared->b_seconds, runs,
      kPairs);
  const taso::OutputAgreement agreement = taso::CompareOutputs(compared->a_outputs, compared->b_outputs);
  std::printf("outputs against the other model's: max |difference| %g (%s)\n", agreement.max_abs,
              agreement.Agrees() ? "same" : ("DIFFERENT: " + agreement.Describe()).c_str());
  return agreement.Agrees() ? 0 : 1;
}

// The model in `path` as the executors run it: a dynamic-axes export's shape arithmetic,
// which import keeps as nodes outside the library so that a file written stays dynamic,
// folded at the sizes built (RunnableAtItsSizes); where something is left that no
// executor runs, the model as imported (the executor then names the node). Not with
// --roundtrip, which checks the file as read.
absl::StatusOr<taso::OnnxModel> ImportToRun(const std::string& path, const taso::ImportOptions& options) {
  ASSIGN_OR_RETURN(taso::OnnxModel model, taso::ImportOnnxFile(path, options));
  if (absl::GetFlag(FLAGS_roundtrip) || taso::FirstOpaqueNode(model.graph).empty()) return model;
  absl::StatusOr<taso::Graph> runnable = taso::RunnableAtItsSizes(model, options);
  if (runnable.ok()) model.graph = *std::move(runnable);
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kTool = "taso-run";
  auto args = taso::cli::Init(
      argc, argv, "taso-run MODEL.onnx [--roundtrip] [--seed N] [--input-shape NAME=D0xD1x...] | --backends");
  if (absl::GetFlag(FLAGS_backends)) {
    for (const auto& b : taso::AvailableBackends())
      std::printf("%-9s %-13s %s\n", b.name.c_str(), b.usable ? "usable" : (b.compiled ? "compiled" : "not built"),
                  b.detail.c_str());
    return 0;
  }
  if (args.size() != 1) return taso::cli::Usage(kTool, "expected one ONNX file");
  auto start = std::chrono::steady_clock::now();
  // A round trip checks the file is written back as read: nothing folded then.
  taso::ImportOptions import_options;
  import_options.fold_shape_arithmetic = !absl::GetFlag(FLAGS_roundtrip);
  const auto input_shapes = taso::cli::ParseInputShapes(absl::GetFlag(FLAGS_input_shape));
  if (!input_shapes.ok()) return taso::cli::Usage(kTool, std::string(input_shapes.status().message()));
  import_options.input_shapes = *input_shapes;
  auto model = ImportToRun(args[0], import_options);
  if (!model.ok()) return taso::cli::Fail(kTool, model.status());
  int opaque = 0;
  for (taso::NodeId n = 0; n < model->graph.num_nodes(); ++n) opaque += model->graph.node(n).op->is_opaque();
  std::printf("%s: %d nodes (%d opaque), %zu weights, opset %d, imported in %.2f s\n", args[0].c_str(),
              model->graph.num_nodes(), opaque, model->graph.weights().size(), model->opset, Seconds(start));
  for (taso::ValueId v : model->graph.inputs())
    if (!model->graph.value(v).is_weight())
      std::printf("  input %s %s\n", model->graph.value(v).name.c_str(),
                  taso::ShapeToString(model->graph.value(v).shape).c_str());

  const taso::TensorMap inputs = taso::RandomInputs(model->graph, absl::GetFlag(FLAGS_seed));
  const std::string executor = absl::GetFlag(FLAGS_executor);
  const std::string against = absl::GetFlag(FLAGS_against);
  if (executor == "cpu" || executor == "cuda") {
    const char* kernels = executor == "cpu" ? "oneDNN" : "GPU";
    auto graph = GraphToRun(model->graph, executor);
    if (!graph.ok()) return taso::cli::Fail(kTool, graph.status());
    if (against.empty()) return RunOnKernels(*graph, model->graph, inputs, executor.c_str(), kernels);
    if (absl::GetFlag(FLAGS_time) <= 0) return taso::cli::Usage(kTool, "--against needs --time N");
    auto other = ImportToRun(against, import_options);
    if (!other.ok()) return taso::cli::Fail(kTool, other.status());
    auto other_graph = GraphToRun(other->graph, executor);
    if (!other_graph.ok()) return taso::cli::Fail(kTool, other_graph.status());
    return CompareOnKernels(*graph, *other_graph, inputs, executor.c_str(), absl::GetFlag(FLAGS_time));
  }
  if (executor != "reference") return taso::cli::Usage(kTool, "--executor is reference, cpu or cuda");
  if (absl::GetFlag(FLAGS_time) > 0 || absl::GetFlag(FLAGS_profile) > 0 || absl::GetFlag(FLAGS_check) ||
      !against.empty())
    return taso::cli::Usage(kTool, "--time, --profile, --check and --against need --executor cpu or cuda");
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
