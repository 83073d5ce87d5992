#include "taso/backends/cpu_executor.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_kernel.h"
#include "taso/ir/status_macros.h"
#include "taso/passes/fold.h"

namespace taso {

struct CpuExecutor::Impl {
  struct Step {
    NodeId node;
    std::unique_ptr<cpu::Prepared> kernel;  // null: the reference kernel
    std::vector<ValueId> copy_in;           // views a reference kernel reads, copied to their storage first
  };
  Graph graph;
  std::vector<Tensor<float>> values;  // storage of the float tensors that are not views, at fixed addresses
  // Where each float tensor's elements lie: a view's in its input, a constant weight's in
  // the graph's own data (read in place, mapped or in memory; no kernel writes its inputs).
  std::vector<float*> data;
  std::vector<Step> steps;

  void Allocate(ValueId v) {
    values[v] = Tensor<float>(graph.value(v).shape);
    data[v] = values[v].data.data();
  }
  // A constant weight is read where the graph holds it, rather than copied; one of no
  // element has no address to read and is allocated.
  void PlaceFloatInput(ValueId v) {
    const Value& value = graph.value(v);
    if (!value.is_constant() || value.data->floats().empty()) {
      Allocate(v);
      if (value.is_weight()) std::copy(value.data->floats().begin(), value.data->floats().end(), data[v]);
      return;
    }
    data[v] = const_cast<float*>(value.data->floats().data());
  }
  // Whether a reference kernel must have the tensor copied into its storage to read it: a
  // view, though not a constant weight, which the reference kernels read in place too.
  bool NeedsCopyIn(ValueId v) const { return data[v] != values[v].data.data() && !graph.value(v).is_constant(); }
};

namespace {

// The oneDNN kernel of a node bound to the executor's tensors, or null when the node
// has none (or oneDNN has no primitive for its case, or a constant input is computed).
absl::StatusOr<std::unique_ptr<cpu::Prepared>> BindKernel(const Graph& graph, const Node& node,
                                                          const std::vector<float*>& data) {
  const cpu::Kernel* kernel = cpu::FindKernel(node.op->name());
  const std::vector<InputInfo> inputs = graph.InputInfos(node);
  // Layouts a layout assignment chose must be what the kernel reads and writes.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present || inputs[i].dtype != DataType::kFloat32) continue;
    const Value& v = graph.value(node.inputs[i]);
    const bool blocked = v.producer != kNoNode && cpu::WritesBlocked(graph.node(v.producer).params, v.shape);
    if (blocked != (kernel && kernel->ReadsBlocked(node.params, inputs, i)))
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' reads '", v.name, "' in another layout"));
  }
  if (!kernel || cpu::HasEmptyTensor(inputs, graph.OutputTypes(node))) return nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) continue;
    // A constant of another type (ReduceMean's axes since opset 18) was read into the
    // node's parameters at import; kernels read floats only and bind no port to it.
    if (inputs[i].dtype != DataType::kFloat32) {
      if (inputs[i].constant) continue;
      return nullptr;
    }
    if (kernel->NeedsConstant(i) && !inputs[i].constant) {
      if (cpu::IsBlocked(node.params))
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node.name, "' runs blocked but input ", i, " is not a constant"));
      return nullptr;
    }
  }
  std::unique_ptr<cpu::Prepared> prepared;
  try {
    auto p = kernel->Prepare(node.params, inputs, graph.OutputTypes(node));
    if (!p.ok()) {
      if (cpu::IsBlocked(node.params))
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node.name, "' has no blocked kernel: ", p.status().message()));
      return nullptr;
    }
    prepared = std::move(*p);
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != kNoValue) prepared->BindInput(i, data[node.inputs[i]]);
    for (size_t i = 0; i < node.outputs.size(); ++i) prepared->BindOutput(i, data[node.outputs[i]]);
    prepared->Setup();
  } catch (const dnnl::error& e) {
    if (cpu::IsBlocked(node.params))
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' has no blocked kernel: ", e.what()));
    return nullptr;
  }
  return prepared;
}

}  // namespace

CpuExecutor::CpuExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  int kernels = 0;
  for (const Impl::Step& s : impl_->steps) kernels += s.kernel != nullptr;
  CountSteps(kernels, static_cast<int>(impl_->steps.size()) - kernels);
}
CpuExecutor::~CpuExecutor() = default;

absl::StatusOr<std::unique_ptr<CpuExecutor>> CpuExecutor::Create(const Graph& graph) {
  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->graph, FoldWeights(graph));
  const Graph& g = impl->graph;
  ASSIGN_OR_RETURN(std::vector<NodeId> order, g.TopologicalOrder());
  impl->values.resize(g.num_values());
  impl->data.assign(g.num_values(), nullptr);
  for (ValueId v = 0; v < g.num_values(); ++v) {
    const Value& value = g.value(v);
    if (value.producer == kNoNode && value.dtype == DataType::kFloat32) impl->PlaceFloatInput(v);
  }
  for (NodeId n : order) {
    const Node& node = g.node(n);
    if (node.op->is_opaque())
      return absl::UnimplementedError(
          absl::StrCat("cannot execute node '", node.name, "': its operator is not in the operator library"));
    if (!cpu::IsBlocked(node.params) && cpu::PointViewOutputs(g, node, impl->data)) continue;
    for (ValueId v : node.outputs)
      if (g.value(v).shape_known) impl->Allocate(v);
    ASSIGN_OR_RETURN(auto kernel, BindKernel(g, node, impl->data));
    Impl::Step step{n, std::move(kernel), {}};
    if (!step.kernel)
      for (ValueId v : node.inputs)
        if (v != kNoValue && impl->data[v] && impl->NeedsCopyIn(v)) {
          step.copy_in.push_back(v);
          impl->values[v] = Tensor<float>(g.value(v).shape);
        }
    impl->steps.push_back(std::move(step));
  }
  for (ValueId v : g.outputs())
    if (g.value(v).producer != kNoNode && cpu::WritesBlocked(g.node(g.value(v).producer).params, g.value(v).shape))
      return absl::InvalidArgumentError(absl::StrCat("graph output '", g.value(v).name, "' is in the blocked layout"));
  return std::unique_ptr<CpuExecutor>(new CpuExecutor(std::move(impl)));
}

absl::Status CpuExecutor::RunStep(size_t i) {
  const Impl::Step& step = impl_->steps[i];
  if (step.kernel) {
    step.kernel->Run();
    return absl::OkStatus();
  }
  std::vector<Tensor<float>>& values = impl_->values;
  for (ValueId v : step.copy_in) std::copy(impl_->data[v], impl_->data[v] + values[v].numel(), values[v].data.begin());
  // The outputs were allocated at their shapes, so they stay where data[] points.
  return RunReferenceNode(impl_->graph, impl_->graph.node(step.node), values);
}

absl::Status CpuExecutor::RunOnce() {
  for (size_t i = 0; i < impl_->steps.size(); ++i) RETURN_IF_ERROR(RunStep(i));
  return absl::OkStatus();
}

std::vector<KernelExecutor::Step> CpuExecutor::Steps() const { return StepsOf(impl_->graph, impl_->steps); }

absl::Status CpuExecutor::RunOnceTimingSteps(std::vector<double>& seconds) {
  seconds.resize(impl_->steps.size());
  for (size_t i = 0; i < impl_->steps.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(RunStep(i));
    seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorMap> CpuExecutor::Run(const TensorMap& inputs) {
  const Graph& g = impl_->graph;
  for (ValueId id : g.inputs()) {
    ASSIGN_OR_RETURN(const Tensor<float>* given, GivenInput(g, id, inputs));
    if (given)
      std::copy(given->data.begin(), given->data.end(), impl_->data[id]);
    else if (g.value(id).dtype == DataType::kFloat32)  // an initializer's default, restored after an override
      std::copy(g.value(id).data->floats().begin(), g.value(id).data->floats().end(), impl_->data[id]);
  }
  RETURN_IF_ERROR(RunOnce());
  TensorMap out;
  for (ValueId v : g.outputs()) {
    Tensor<float> t(g.value(v).shape);
    std::copy(impl_->data[v], impl_->data[v] + t.numel(), t.data.begin());
    out[g.value(v).name] = std::move(t);
  }
  return out;
}

}  // namespace taso
