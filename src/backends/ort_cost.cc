#include "taso/backends/ort_cost.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "backends/cpu/cpu_kernel.h"
#include "taso/ir/ops/add.h"
#include "taso/ir/ops/concat.h"
#include "taso/ir/ops/conv2d.h"
#include "taso/ir/ops/matmul.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_io.h"

namespace taso {

namespace {

// Bump when what a measurement includes changes, so that old ones are not reused.
constexpr absl::string_view kMeasurementVersion = "v3";

std::string ProcessorName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (absl::StartsWith(line, "model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  return "unknown cpu";
}

// A session of the worker, released when the last run that uses it goes.
class Session {
 public:
  Session(std::shared_ptr<OrtWorker> worker, int64_t id) : worker_(std::move(worker)), id_(id) {}
  ~Session() { worker_->Release(id_).IgnoreError(); }
  // The median of runs back to back for a while: inside a model an operator runs right
  // after another, ONNX Runtime's threads awake and its data in cache; one run per
  // request from here pays a wake-up of tens of microseconds that differs from request
  // to request and dwarfs a small operator (a 32x32 Softmax timed 75 to 145 us one run a
  // request, 5 us back to back).
  absl::StatusOr<double> Run() { return worker_->Run(id_, absl::Microseconds(300)); }

 private:
  std::shared_ptr<OrtWorker> worker_;
  int64_t id_;
};

// Whether ONNX Runtime sees input `i` as an initializer, as in a real model: a constant,
// or what the operator normally reads as a weight (a convolution's kernel). Not where
// the operator would then read constants only: ONNX Runtime folds such a node when it
// loads the model, and its runs time nothing (a product of a weight on the left and the
// activation on the right, x^T's place being the usual weight's, timed 0.02 ms for 0.47).
std::vector<bool> Initializers(const OpDef& op, absl::Span<const InputInfo> inputs) {
  const cpu::Kernel* kernel = cpu::FindKernel(op.name());
  std::vector<bool> initializer(inputs.size(), false);
  bool some_fed = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) continue;
    initializer[i] =
        inputs[i].constant || (kernel && inputs[i].dtype == DataType::kFloat32 && kernel->ReadsWeight(i, inputs));
    some_fed = some_fed || !initializer[i];
  }
  if (!some_fed)
    for (size_t i = 0; i < inputs.size(); ++i) initializer[i] = initializer[i] && inputs[i].constant;
  return initializer;
}

absl::StatusOr<ValueId> AddOperand(Graph& graph, absl::Span<const InputInfo> inputs, size_t i, bool initializer) {
  const InputInfo& in = inputs[i];
  const std::string name = absl::StrCat("in", i);
  if (in.constant) return graph.AddWeight(name, std::make_shared<const TensorData>(*in.constant));
  if (initializer) {
    const int64_t n = std::max<int64_t>(1, NumElements(in.shape));
    return graph.AddWeight(name, TensorData::Float(in.shape, std::vector<float>(n, 0.25f)));
  }
  return graph.AddInput(name, in.dtype, in.shape);
}

// The operator alone as a graph: its inputs fed or initializers, its outputs the graph's.
absl::StatusOr<Graph> OneOperatorGraph(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs) {
  Graph graph;
  const std::vector<bool> initializer = Initializers(op, inputs);
  std::vector<ValueId> operands;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) {
      operands.push_back(kNoValue);
      continue;
    }
    absl::StatusOr<ValueId> v = AddOperand(graph, inputs, i, initializer[i]);
    if (!v.ok()) return v.status();
    operands.push_back(*v);
  }
  absl::StatusOr<std::vector<ValueId>> outs = graph.AddNode(&op, params, std::move(operands), "op");
  if (!outs.ok()) return outs.status();
  for (ValueId v : *outs)
    if (absl::Status s = graph.AddOutput(v); !s.ok()) return s;
  return graph;
}

// Whether ONNX Runtime runs the node in its blocked layout (NCHWc) when next to a
// convolution: where oneDNN can run it blocked (the same operators, and the same
// condition on the channels), except grouped convolutions whose groups are not whole
// blocks, and other operators reading a constant (an Add of a per-channel bias), whose
// inputs are not all blocked tensors: ONNX Runtime leaves those plain.
bool RunsBlocked(const Graph& graph, const Node& node) {
  if (node.op->is_opaque()) return false;
  const cpu::Kernel* kernel = cpu::FindKernel(node.op->name());
  const std::vector<InputInfo> inputs = graph.InputInfos(node);
  if (ops::IsConv2D(*node.op)) {
    if (!ops::GroupsHoldWholeBlocks(node.params, inputs, cpu::BlockSize())) return false;
  } else if (std::any_of(inputs.begin(), inputs.end(), [](const InputInfo& in) { return in.constant != nullptr; })) {
    return false;
  }
  return kernel && cpu::CanRunBlocked(*kernel, node.params, inputs, graph.OutputTypes(node));
}

// Whether the operator reads weights (a blocked one: a convolution, where a chain
// starts), by the inputs' roles rather than by where they come from, so that a node of
// a rule's target, whose inputs are all plain, is priced as it will be in the graph.
bool ReadsWeights(const Graph& graph, const Node& node) {
  const cpu::Kernel* kernel = cpu::FindKernel(node.op->name());
  const std::vector<InputInfo> inputs = graph.InputInfos(node);
  for (size_t i = 0; kernel && i < inputs.size(); ++i)
    if (inputs[i].present && kernel->ReadsWeight(i, inputs)) return true;
  return false;
}

// The smallest model: `length` 1x1 matrix products in a chain.
absl::StatusOr<Graph> TinyChain(int length) {
  Graph graph;
  InputInfo one;
  one.shape = {1, 1};
  ASSIGN_OR_RETURN(ValueId v, graph.AddInput("x", DataType::kFloat32, one.shape));
  ASSIGN_OR_RETURN(const ValueId w, graph.AddWeight("w", TensorData::Float(one.shape, {1.0f})));
  for (int i = 0; i < length; ++i) {
    ASSIGN_OR_RETURN(const std::vector<ValueId> out, graph.AddNode(&ops::MatMulOp(), Params(), {v, w}));
    v = out[0];
  }
  RETURN_IF_ERROR(graph.AddOutput(v));
  return graph;
}

// `inputs` fed 1x1 matrices concatenated: each more input costs the run its passing in.
absl::StatusOr<Graph> TinyConcat(int inputs) {
  Graph graph;
  std::vector<ValueId> pieces;
  for (int i = 0; i < inputs; ++i) {
    ASSIGN_OR_RETURN(const ValueId v, graph.AddInput(absl::StrCat("x", i), DataType::kFloat32, {1, 1}));
    pieces.push_back(v);
  }
  ASSIGN_OR_RETURN(const std::vector<ValueId> out, graph.AddNode(&ops::ConcatOperator(), ops::ConcatParams(1), pieces));
  RETURN_IF_ERROR(graph.AddOutput(out[0]));
  return graph;
}

// One fed 1x1 matrix times `outputs` weights (distinct, so that none is merged with
// another), each product an output of the model: against TinyChain(outputs), what each
// more output costs the run (allocated and passed out, where inside a model it would be
// an intermediate).
absl::StatusOr<Graph> TinyFan(int outputs) {
  Graph graph;
  ASSIGN_OR_RETURN(const ValueId x, graph.AddInput("x", DataType::kFloat32, {1, 1}));
  for (int i = 0; i < outputs; ++i) {
    ASSIGN_OR_RETURN(const ValueId w,
                     graph.AddWeight(absl::StrCat("w", i), TensorData::Float({1, 1}, {1.0f + static_cast<float>(i)})));
    ASSIGN_OR_RETURN(const std::vector<ValueId> out, graph.AddNode(&ops::MatMulOp(), Params(), {x, w}));
    RETURN_IF_ERROR(graph.AddOutput(out[0]));
  }
  return graph;
}

// How many of the operator's inputs its one-operator model feeds (the others are
// initializers).
int FedInputs(const OpDef& op, absl::Span<const InputInfo> inputs) {
  const std::vector<bool> initializer = Initializers(op, inputs);
  int fed = 0;
  for (size_t i = 0; i < inputs.size(); ++i) fed += inputs[i].present && !initializer[i];
  return fed;
}

}  // namespace

std::string OrtDevice(const std::string& version, int threads) {
  return absl::StrCat("ort-", version, "-cpu-", OrtThreadsKey(threads), "-", kMeasurementVersion, "-", ProcessorName());
}

OrtCost::OrtCost(std::unique_ptr<CostCache> cache, std::shared_ptr<OrtWorker> worker, int threads)
    : MeasuredCost(std::move(cache), OrtDevice(worker->version(), threads)),
      worker_(std::move(worker)),
      threads_(threads) {
  // Without a folder, operators are priced by the fallback estimate.
  if (absl::StatusOr<TemporaryFolder> made = TemporaryFolder::MakeInTemp("taso_ort_"); made.ok())
    model_dir_ = *std::move(made);
}

OrtCost::~OrtCost() = default;

bool OrtCost::IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                     absl::Span<const OutputType> outputs) const {
  if (op.is_opaque()) return false;
  const OpMetrics metrics = op.semantics().Metrics(params, inputs, outputs);
  return metrics.flops == 0 && metrics.bytes == 0;
}

double OrtCost::NodeCost(const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  bool measured = false;
  const std::vector<InputInfo> inputs = graph.InputInfos(node);
  const double seconds = Cost(*node.op, node.params, inputs, graph.OutputTypes(node), &measured);
  if (!measured) return seconds;
  const FixedCosts& fixed = Fixed();
  double cost = WithoutOverhead(seconds, fixed.run + fixed.per_input * std::max(0, FedInputs(*node.op, inputs) - 1) +
                                             fixed.per_output * std::max<double>(0, node.outputs.size() - 1.0));
  const bool blocked = RunsBlocked(graph, node);
  const bool chain_start = blocked && ReadsWeights(graph, node) && !node.outputs.empty();
  if (chain_start) {
    // Its one-operator model reorders its input into blocks and its output back: inside a
    // chain the output stays blocked, and so does the input where a blocked operator makes
    // it. A fed input (a graph input, or a value no operator of `graph` makes) is plain, and
    // its reorder stays in the time.
    const NodeId producer = graph.value(node.inputs[0]).producer;
    double inside_chain = Reorder(graph.value(node.outputs[0]).shape);
    if (producer != kNoNode && RunsBlocked(graph, graph.node(producer)))
      inside_chain += Reorder(graph.value(node.inputs[0]).shape);
    cost = std::max(cost / 2, cost - inside_chain);
  }
  for (size_t i = chain_start ? 1 : 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v == kNoValue || graph.value(v).producer == kNoNode) continue;
    if (RunsBlocked(graph, graph.node(graph.value(v).producer)) != blocked) cost += Reorder(graph.value(v).shape);
  }
  return cost;
}

double OrtCost::Reorder(const Shape& shape) {
  InputInfo tensor, one;
  tensor.shape = shape;
  one.shape = {1};
  bool measured = false;
  const double seconds = Cost(ops::AddOp(), Params(), std::vector<InputInfo>{tensor, one},
                              std::vector<OutputType>{{DataType::kFloat32, shape}}, &measured);
  return measured ? WithoutOverhead(seconds, Fixed().run) : seconds;
}

// A measured run less its fixed part; where noise makes the run look cheaper than that,
// a small share of the run, so that no operator prices as free.
double OrtCost::WithoutOverhead(double run_seconds, double fixed_seconds) {
  constexpr double kLeastShareOfRun = 0.05;
  return std::max(kLeastShareOfRun * run_seconds, run_seconds - fixed_seconds);
}

double OrtCost::TotalCost(const Graph& graph) { return CostModel::TotalCost(graph) + Fixed().run; }

std::optional<MeasuredCost::KernelRun> OrtCost::PrepareRun(const OpDef& op, const Params& params,
                                                           absl::Span<const InputInfo> inputs,
                                                           absl::Span<const OutputType>) {
  if (op.is_opaque()) return std::nullopt;
  return PrepareGraphRun(OneOperatorGraph(op, params, inputs));
}

std::optional<MeasuredCost::KernelRun> OrtCost::PrepareGraphRun(absl::StatusOr<Graph> graph) {
  if (!graph.ok() || model_dir_.empty()) return std::nullopt;
  const std::string path = absl::StrCat(model_dir_.path(), "/op", models_written_++, ".onnx");
  if (!ExportOnnxFile(NewOnnxModel(*std::move(graph)), path).ok()) return std::nullopt;
  absl::StatusOr<int64_t> id = worker_->Load(path, threads_);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);  // the session holds the model
  if (!id.ok()) return std::nullopt;
  auto session = std::make_shared<Session>(worker_, *id);
  return KernelRun([session] { return session->Run(); });
}

// A run of a model with one operator costs the operator plus a fixed part (the call into
// ONNX Runtime); one with two costs two operators plus the same part: twice the first
// less the second is the fixed part. Each more input fed, or output passed out, adds its
// own part (TinyConcat, TinyFan). Timed as the costs are (against the reference), so that
// subtracting them from a cost scaled at another moment's speed subtracts as much.
const OrtCost::FixedCosts& OrtCost::Fixed() {
  if (fixed_) return *fixed_;
  fixed_ = FixedCosts{};  // also where the smallest models cannot run
  constexpr int kMany = 16;
  std::vector<KernelRun> runs;
  for (absl::StatusOr<Graph> graph :
       {TinyChain(1), TinyChain(2), TinyChain(kMany), TinyFan(kMany), TinyConcat(2), TinyConcat(kMany)}) {
    std::optional<KernelRun> run = PrepareGraphRun(std::move(graph));
    if (!run) return *fixed_;
    runs.push_back(*std::move(run));
  }
  const std::optional<std::vector<double>> t = TimeLikeCosts(std::move(runs));
  if (!t) return *fixed_;
  fixed_->run = std::max(0.0, 2 * (*t)[0] - (*t)[1]);
  fixed_->per_output = std::max(0.0, ((*t)[3] - (*t)[2]) / (kMany - 1));
  fixed_->per_input = std::max(0.0, ((*t)[5] - (*t)[4]) / (kMany - 2));
  return *fixed_;
}

}  // namespace taso
