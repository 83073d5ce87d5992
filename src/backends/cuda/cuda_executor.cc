#include "taso/backends/cuda_executor.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_kernel.h"
#include "backends/cuda/cuda_kernel.h"
#include "taso/ir/status_macros.h"
#include "taso/passes/fold.h"

namespace taso {
namespace {

class CudaExecutor : public KernelExecutor {
 public:
  struct Impl;
  explicit CudaExecutor(std::unique_ptr<Impl> impl);
  ~CudaExecutor() override;
  absl::StatusOr<TensorMap> Run(const TensorMap& inputs) override;

 protected:
  absl::Status RunOnce() override;
  std::vector<Step> Steps() const override;
  // Each step's seconds as the stream ran it: an event before each step and one after the
  // last, nothing waited for between them, so a step's time is from the end of the step
  // before: its kernel's time, or the time the GPU waited for the host to queue it. The
  // events cost the host time too: where the host paces the GPU (BERT, NasRNN on an
  // H200), the steps' sum exceeds a run's time (2.9 against 1.8 ms).
  absl::Status RunOnceTimingSteps(std::vector<double>& seconds) override;

 private:
  absl::Status RunStep(size_t i);
  std::unique_ptr<Impl> impl_;
};

struct CudaExecutor::Impl {
  struct Step {
    NodeId node;
    std::unique_ptr<cuda::Prepared> kernel;  // null: the reference kernel on the host
  };
  cuda::Context* ctx = nullptr;
  Graph graph;
  std::vector<cuda::DeviceBuffer> buffers;  // per value that is not a view
  std::vector<float*> data;                 // where each float tensor lies on the device
  std::vector<Tensor<float>> host;          // host copies for reference kernels
  std::vector<Step> steps;
  std::vector<cuda::Event> step_events;  // for RunOnceTimingSteps, made on first use

  absl::Status Allocate(ValueId v) {
    ASSIGN_OR_RETURN(buffers[v], cuda::DeviceBuffer::Allocate(NumElements(graph.value(v).shape) * sizeof(float)));
    data[v] = buffers[v].floats();
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> BindKernel(const Node& node);
  absl::Status RunReference(const Node& node);
};

absl::StatusOr<std::unique_ptr<cuda::Prepared>> CudaExecutor::Impl::BindKernel(const Node& node) {
  const cuda::Kernel* kernel = cuda::FindKernel(node.op->name());
  if (!kernel) return nullptr;
  const std::vector<InputInfo> inputs = graph.InputInfos(node);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) continue;
    // A constant of another type (ReduceMean's axes since opset 18) was read into the
    // node's parameters at import; kernels read floats only.
    if (inputs[i].dtype != DataType::kFloat32 && inputs[i].constant) continue;
    if (inputs[i].dtype != DataType::kFloat32 || !data[node.inputs[i]]) return nullptr;
  }
  auto prepared = kernel->Prepare(*ctx, node.params, inputs, graph.OutputTypes(node));
  if (!prepared.ok()) return nullptr;  // no GPU kernel for this case: the reference kernel runs it
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] != kNoValue) (*prepared)->BindInput(i, data[node.inputs[i]]);
  for (size_t i = 0; i < node.outputs.size(); ++i) (*prepared)->BindOutput(i, data[node.outputs[i]]);
  return std::move(*prepared);
}

absl::Status CudaExecutor::Impl::RunReference(const Node& node) {
  RETURN_IF_ERROR(cuda::Check(cudaStreamSynchronize(ctx->stream), "waiting for the GPU"));
  KernelArgs<float> args;
  for (ValueId v : node.inputs) {
    const bool numeric = v != kNoValue && graph.value(v).dtype == DataType::kFloat32 && data[v];
    if (numeric) {
      if (host[v].shape != graph.value(v).shape) host[v] = Tensor<float>(graph.value(v).shape);
      RETURN_IF_ERROR(
          cuda::Check(cudaMemcpy(host[v].data.data(), data[v], host[v].numel() * sizeof(float), cudaMemcpyDeviceToHost),
                      "copying a tensor to the host"));
    }
    args.in.push_back(numeric ? &host[v] : nullptr);
    args.constant.push_back(graph.ConstantData(v));
  }
  for (ValueId v : node.outputs) {
    host[v] = Tensor<float>(graph.value(v).shape);  // zeros: reference kernels may accumulate
    args.out.push_back(&host[v]);
  }
  absl::Status s = node.op->semantics().RunFloat(node.params, args);
  if (!s.ok())
    return absl::Status(s.code(), absl::StrCat("node '", node.name, "' (", node.op->name(), "): ", s.message()));
  for (ValueId v : node.outputs)
    if (data[v])
      RETURN_IF_ERROR(
          cuda::Check(cudaMemcpy(data[v], host[v].data.data(), host[v].numel() * sizeof(float), cudaMemcpyHostToDevice),
                      "copying a tensor to the GPU"));
  return absl::OkStatus();
}

CudaExecutor::CudaExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  int kernels = 0;
  for (const Impl::Step& s : impl_->steps) kernels += s.kernel != nullptr;
  CountSteps(kernels, static_cast<int>(impl_->steps.size()) - kernels);
}
CudaExecutor::~CudaExecutor() = default;

absl::Status CudaExecutor::RunStep(size_t i) {
  Impl::Step& step = impl_->steps[i];
  const Node& node = impl_->graph.node(step.node);
  if (!step.kernel) return impl_->RunReference(node);
  absl::Status s = step.kernel->Enqueue(*impl_->ctx);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("node '", node.name, "' (", node.op->name(), "): ", s.message()));
}

absl::Status CudaExecutor::RunOnce() {
  for (size_t i = 0; i < impl_->steps.size(); ++i) RETURN_IF_ERROR(RunStep(i));
  return cuda::Check(cudaStreamSynchronize(impl_->ctx->stream), "running the graph");
}

std::vector<KernelExecutor::Step> CudaExecutor::Steps() const { return StepsOf(impl_->graph, impl_->steps); }

absl::Status CudaExecutor::RunOnceTimingSteps(std::vector<double>& seconds) {
  const size_t n = impl_->steps.size();
  std::vector<cuda::Event>& events = impl_->step_events;
  if (events.size() != n + 1) events = std::vector<cuda::Event>(n + 1);
  const cudaStream_t stream = impl_->ctx->stream;
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(cuda::Check(cudaEventRecord(events[i].e, stream), "recording an event"));
    RETURN_IF_ERROR(RunStep(i));
  }
  RETURN_IF_ERROR(cuda::Check(cudaEventRecord(events[n].e, stream), "recording an event"));
  RETURN_IF_ERROR(cuda::Check(cudaEventSynchronize(events[n].e), "running the graph"));
  seconds.resize(n);
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(seconds[i], cuda::SecondsBetween(events[i], events[i + 1]));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorMap> CudaExecutor::Run(const TensorMap& inputs) {
  const Graph& g = impl_->graph;
  for (ValueId id : g.inputs()) {
    ASSIGN_OR_RETURN(const Tensor<float>* given, GivenInput(g, id, inputs));
    if (given)
      RETURN_IF_ERROR(cuda::Check(
          cudaMemcpy(impl_->data[id], given->data.data(), given->data.size() * sizeof(float), cudaMemcpyHostToDevice),
          "copying an input to the GPU"));
  }
  RETURN_IF_ERROR(RunOnce());
  TensorMap out;
  for (ValueId v : g.outputs()) {
    Tensor<float> t(g.value(v).shape);
    RETURN_IF_ERROR(
        cuda::Check(cudaMemcpy(t.data.data(), impl_->data[v], t.numel() * sizeof(float), cudaMemcpyDeviceToHost),
                    "copying an output to the host"));
    out[g.value(v).name] = std::move(t);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelExecutor>> MakeCudaExecutor(const Graph& graph) {
  auto impl = std::make_unique<CudaExecutor::Impl>();
  ASSIGN_OR_RETURN(impl->ctx, cuda::GetContext());
  ASSIGN_OR_RETURN(impl->graph, FoldWeights(graph));
  const Graph& g = impl->graph;
  ASSIGN_OR_RETURN(std::vector<NodeId> order, g.TopologicalOrder());
  impl->buffers.resize(g.num_values());
  impl->data.assign(g.num_values(), nullptr);
  impl->host.resize(g.num_values());
  for (ValueId v = 0; v < g.num_values(); ++v) {
    const Value& value = g.value(v);
    if (value.producer != kNoNode || value.dtype != DataType::kFloat32) continue;
    RETURN_IF_ERROR(impl->Allocate(v));
    if (value.is_weight())
      RETURN_IF_ERROR(cuda::Check(cudaMemcpy(impl->data[v], value.data->floats().data(),
                                             value.data->floats().size() * sizeof(float), cudaMemcpyHostToDevice),
                                  "copying a weight to the GPU"));
  }
  for (NodeId n : order) {
    const Node& node = g.node(n);
    if (node.op->is_opaque())
      return absl::UnimplementedError(
          absl::StrCat("cannot execute node '", node.name, "': its operator is not in the operator library"));
    if (cuda::HasLayout(node.params))
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node.name, "' carries a cpu data layout; the cuda backend runs plain ones"));
    // The cpu backend's views are row-major offsets, the same on the device.
    if (cpu::PointViewOutputs(g, node, impl->data)) continue;
    for (ValueId v : node.outputs)
      if (g.value(v).shape_known && g.value(v).dtype == DataType::kFloat32) RETURN_IF_ERROR(impl->Allocate(v));
    ASSIGN_OR_RETURN(auto kernel, impl->BindKernel(node));
    impl->steps.push_back({n, std::move(kernel)});
  }
  return std::make_unique<CudaExecutor>(std::move(impl));
}

absl::StatusOr<std::string> CudaChoicesDevice() {
  ASSIGN_OR_RETURN(cuda::Context * ctx, cuda::GetContext());
  return ctx->choices_device;
}

}  // namespace taso
