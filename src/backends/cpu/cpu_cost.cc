#include "taso/backends/cpu_cost.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_kernel.h"
#include "backends/timing.h"

namespace taso {
namespace {

// The device string the cpu's measurements are kept under. Bump the kernel version
// whenever what a kernel's run includes changes (reorders, weights read from memory,
// packed constants, the reference's scale), so that old measurements are not reused.
std::string CpuDevice() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat("cpu kernels v12/oneDNN ", v->major, ".", v->minor, "/isa ",
                      static_cast<int>(dnnl::get_effective_cpu_isa()), "/", std::thread::hardware_concurrency(),
                      " threads");
}

int64_t FloatBytes(const Shape& shape) { return NumElements(shape) * int64_t{sizeof(float)}; }

// Which inputs a kernel reads as weights, and the bytes of weights and of activations
// (other inputs and the outputs) that one run reads or writes.
struct Footprint {
  std::vector<bool> weight;
  int64_t weight_bytes = 0, activation_bytes = 0;
};

Footprint FootprintOf(const cpu::Kernel& k, absl::Span<const InputInfo> inputs, absl::Span<const OutputType> outputs) {
  Footprint f;
  f.weight.assign(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) continue;
    f.weight[i] = k.ReadsWeight(i, inputs);
    (f.weight[i] ? f.weight_bytes : f.activation_bytes) += FloatBytes(inputs[i].shape);
  }
  for (const OutputType& o : outputs) f.activation_bytes += FloatBytes(o.shape);
  return f;
}

// The inputs as the kernel is prepared for them: a weight computed from weights (two
// matrices concatenated by a merge) is a constant once the executor folds the weights,
// and the kernel may prepare it so (a packed matrix), so it is measured as one, with a
// placeholder value kept in `placeholders`.
std::vector<InputInfo> WeightsAsConstants(absl::Span<const InputInfo> inputs, const std::vector<bool>& weight,
                                          std::vector<TensorDataPtr>& placeholders) {
  std::vector<InputInfo> as_run(inputs.begin(), inputs.end());
  for (size_t i = 0; i < as_run.size(); ++i) {
    if (!weight[i] || as_run[i].constant) continue;
    const int64_t n = std::max<int64_t>(1, NumElements(as_run[i].shape));
    placeholders.push_back(TensorData::Float(as_run[i].shape, std::vector<float>(n, 0.25f)));
    as_run[i].constant = placeholders.back().get();
  }
  return as_run;
}

// Copies of one prepared kernel that each own their weights and share one set of
// activations; the runs go round them.
struct Copies {
  std::vector<std::unique_ptr<cpu::Prepared>> prepared;
  std::vector<std::vector<float>> shared;  // the activations every copy reads and writes
  size_t next = 0;
};

// Prepares `count` copies; false where the kernel cannot be prepared for this case.
bool PrepareCopies(const cpu::Kernel& k, const Params& params, absl::Span<const InputInfo> inputs,
                   absl::Span<const OutputType> outputs, int count, Copies& copies) {
  try {
    for (int c = 0; c < count; ++c) {
      auto prepared = k.Prepare(params, inputs, outputs);
      if (!prepared.ok()) return false;
      copies.prepared.push_back(*std::move(prepared));
    }
  } catch (const dnnl::error&) {
    return false;  // oneDNN has no primitive for this case: estimated instead
  }
  return true;
}

// Points every copy's activations (inputs that are not weights, and outputs) at one
// shared buffer each.
void ShareActivations(Copies& copies, absl::Span<const InputInfo> inputs, const std::vector<bool>& weight,
                      absl::Span<const OutputType> outputs) {
  auto shared_buffer = [&copies](const Shape& shape) {
    return copies.shared.emplace_back(std::max<int64_t>(1, NumElements(shape)), 0.25f).data();
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present || weight[i]) continue;
    float* data = shared_buffer(inputs[i].shape);
    for (auto& c : copies.prepared) c->BindInput(i, data);
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    float* data = shared_buffer(outputs[o].shape);
    for (auto& c : copies.prepared) c->BindOutput(o, data);
  }
}

// One run of the next copy, timed.
absl::StatusOr<double> RunNext(Copies& copies) {
  cpu::Prepared& p = *copies.prepared[copies.next++ % copies.prepared.size()];
  const auto start = std::chrono::steady_clock::now();
  try {
    p.Run();
  } catch (const dnnl::error& e) {
    return absl::InternalError(e.what());
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

CpuCost::CpuCost(std::unique_ptr<CostCache> cache) : MeasuredCost(std::move(cache), CpuDevice()) {}

bool CpuCost::IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                     absl::Span<const OutputType> outputs) const {
  const cpu::View* view = cpu::FindView(op.name());
  return view && !cpu::IsBlocked(params) && view->Offsets(params, inputs, outputs);
}

// The other layout, where the kernel takes one.
std::vector<Params> CpuCost::Alternatives(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                          absl::Span<const OutputType> outputs) const {
  const cpu::Kernel* k = cpu::FindKernel(op.name());
  if (!k || !cpu::CanRunBlocked(*k, params, inputs, outputs)) return {};
  return {cpu::WithLayout(params, !cpu::IsBlocked(params))};
}

// A real model's weights far exceed the caches, so each run reads an operator's weights
// from memory, while its activations come warm from the previous operator. The kernel is
// prepared in several copies that each own their weights and share one set of
// activations, and the runs go round them (timing::WeightCopies says how many; one where
// the weights do not dominate): timing one copy with hot weights would make kernels that
// mostly read weights (matrix-vector products) look much cheaper than in a whole run.
std::optional<MeasuredCost::KernelRun> CpuCost::PrepareRun(const OpDef& op, const Params& params,
                                                           absl::Span<const InputInfo> inputs,
                                                           absl::Span<const OutputType> outputs) {
  const cpu::Kernel* k = cpu::FindKernel(op.name());
  if (!k || cpu::HasEmptyTensor(inputs, outputs)) return std::nullopt;
  const Footprint f = FootprintOf(*k, inputs, outputs);
  std::vector<TensorDataPtr> placeholders;  // needed only while the copies are prepared
  const std::vector<InputInfo> as_run = WeightsAsConstants(inputs, f.weight, placeholders);
  const int count = timing::WeightCopies(f.weight_bytes, f.activation_bytes, timing::LastLevelCacheBytes());
  auto copies = std::make_shared<Copies>();
  if (!PrepareCopies(*k, params, as_run, outputs, count, *copies)) return std::nullopt;
  if (copies->prepared.size() > 1) ShareActivations(*copies, inputs, f.weight, outputs);
  return [copies]() { return RunNext(*copies); };
}

}  // namespace taso
