// The cpu backend's kernels (oneDNN), one per library operator that has one, each in its
// own file under src/backends/cpu/kernels/ and registered by operator name. A kernel is prepared for
// given parameters and shapes and then run on its own buffers, which is what measuring
// an operator's time needs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "taso/ir/graph.h"
#include "taso/ir/op.h"

namespace taso::cpu {

dnnl::memory::dims Dims(const Shape& s);
// A plain row-major f32 descriptor of a shape (a scalar as [1]).
dnnl::memory::desc Plain(const Shape& s);

// The engine and stream all cpu kernels share.
dnnl::engine& Engine();
dnnl::stream& Stream();

// One prepared operator: primitives and their arguments, with buffers allocated. Its
// ports are the operator's inputs and outputs as plain row-major float memory; a graph
// executor points them at its own tensors (BindInput, BindOutput), a cost measurement
// runs on the buffers allocated here.
class Prepared {
 public:
  virtual ~Prepared() = default;
  virtual void Run() = 0;  // runs once and waits for the result
  // Runs once after binding and before the first Run: rearranges weights into the layout
  // the kernel reads (not part of a run's time, as weights are constants).
  virtual void Setup() {}

  // Every memory of a port shares one data handle (a view at an offset is one of them).
  void BindInput(size_t i, void* data) { Bind(inputs_, i, data); }
  void BindOutput(size_t i, void* data) { Bind(outputs_, i, data); }
  void AddInputPort(size_t i, dnnl::memory m) { Port(inputs_, i).push_back(std::move(m)); }
  void AddOutputPort(size_t i, dnnl::memory m) { Port(outputs_, i).push_back(std::move(m)); }

 private:
  using Ports = std::vector<std::vector<dnnl::memory>>;
  static std::vector<dnnl::memory>& Port(Ports& ports, size_t i) {
    if (ports.size() <= i) ports.resize(i + 1);
    return ports[i];
  }
  static void Bind(Ports& ports, size_t i, void* data) {
    if (i < ports.size())
      for (dnnl::memory& m : ports[i]) m.set_data_handle(data);
  }
  Ports inputs_, outputs_;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Fails when oneDNN has no primitive for these parameters or shapes.
  virtual absl::StatusOr<std::unique_ptr<Prepared>> Prepare(const Params& params, absl::Span<const InputInfo> inputs,
                                                            absl::Span<const OutputType> outputs) const = 0;
  // Whether this input is read as a constant (prepared once at Setup, not at each run):
  // an executor binds it to a weight or runs the operator another way.
  virtual bool NeedsConstant(size_t) const { return false; }
  // Whether input i is normally a model weight, which a run of a real model reads from
  // memory (its weights far exceed the caches) while activations come warm from the
  // previous operator. The cost measurement keeps such inputs out of the cache.
  virtual bool ReadsWeight(size_t i, absl::Span<const InputInfo>) const { return NeedsConstant(i); }
  // The inputs that take the node's layout (parameter "layout", see Blocked) with its
  // outputs; empty when the kernel runs only plain row-major data.
  virtual std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const { return {}; }
  // Whether input i is read in the blocked layout (by default: a layout input of a
  // blocked node).
  virtual bool ReadsBlocked(const Params& params, absl::Span<const InputInfo> inputs, size_t i) const;
};

// The blocked layout of 4-D activations: oneDNN's nChw16c (nChw8c without AVX-512), in
// which its direct convolutions run. A node with parameter layout=blocked reads its
// layout inputs and writes its outputs so; a LayoutConvert node converts.
int64_t BlockSize();
bool Blockable(const Shape& shape);  // rank 4, channels a multiple of the block
bool IsBlocked(const Params& params);
// The parameters with the layout set to blocked or plain.
Params WithLayout(Params params, bool blocked);
// Whether the kernel can run these parameters blocked: it takes the layout, and its
// layout inputs and outputs block.
bool CanRunBlocked(const Kernel& kernel, const Params& params, absl::Span<const InputInfo> inputs,
                   absl::Span<const OutputType> outputs);
// The descriptor of a tensor in the node's layout.
dnnl::memory::desc Layout(const Shape& shape, const Params& params);
// Whether a node's outputs are blocked: a blocked node's blockable outputs.
inline bool WritesBlocked(const Params& params, const Shape& output) { return IsBlocked(params) && Blockable(output); }

// Registration (from static initializers) and lookup; see kernel_registry.h for how a
// duplicate or a name of no operator is caught.
void RegisterKernel(const std::string& op, std::unique_ptr<Kernel> kernel);
// Fails when a kernel's or a view's name was registered twice or names no operator.
absl::Status ValidateKernels();
// The kernel for an operator, or null.
const Kernel* FindKernel(absl::string_view op);
// Whether a node has a tensor without elements: oneDNN cannot take one (it divides by the
// sizes), so such a node runs its reference kernel and is not measured.
bool HasEmptyTensor(absl::Span<const InputInfo> inputs, absl::Span<const OutputType> outputs);

// An operator whose outputs are pieces of its input's memory as it lies (a reshape, a
// split of a row-major tensor into contiguous pieces): the executor points the outputs
// into the input and runs nothing, and it costs nothing.
class View {
 public:
  virtual ~View() = default;
  // Each output's offset into the input, in elements; nullopt when not a view here.
  virtual std::optional<std::vector<int64_t>> Offsets(const Params& params, absl::Span<const InputInfo> inputs,
                                                      absl::Span<const OutputType> outputs) const = 0;
};
void RegisterView(const std::string& op, std::unique_ptr<View> view);
const View* FindView(absl::string_view op);
// Points a view node's outputs into its input in `data` (where each value's elements lie,
// on the host or on a GPU alike: views are row-major offsets); false when the node is no
// view here (or its input has no storage).
bool PointViewOutputs(const Graph& graph, const Node& node, std::vector<float*>& data);

// A primitive with its arguments, memory allocated for every argument (filled with
// small values so no denormals slow it down).
class PrimitiveRun : public Prepared {
 public:
  // Appends a primitive, then the reorders of outputs it writes in another layout.
  void Add(dnnl::primitive p, std::unordered_map<int, dnnl::memory> args);
  static dnnl::memory Buffer(const dnnl::memory::desc& md);

  // Input port `i` of `shape`, read by the next primitive as `wanted`: the plain port
  // itself, or a buffer it is reordered into first (at every run, or once at Setup for a
  // constant such as a convolution's weights).
  dnnl::memory Input(size_t i, const Shape& shape, const dnnl::memory::desc& wanted, bool constant = false) {
    return Input(i, Plain(shape), wanted, constant);
  }
  // The same with the port in the layout `port`.
  dnnl::memory Input(size_t i, const dnnl::memory::desc& port, const dnnl::memory::desc& wanted, bool constant = false);
  // Output port `i` of `shape`, written by the next primitive as `produced`: the plain
  // port itself, or a buffer reordered into the port after that primitive.
  dnnl::memory Output(size_t i, const Shape& shape, const dnnl::memory::desc& produced) {
    return Output(i, Plain(shape), produced);
  }
  dnnl::memory Output(size_t i, const dnnl::memory::desc& port, const dnnl::memory::desc& produced);
  void Setup() override;
  void Run() override;
  // oneDNN's name for each primitive a run executes ("jit:uni", "ref:any", ...), to tell
  // its fast kernels from its reference loops.
  std::vector<std::string> Implementations() const;

 private:
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };
  static Step Reorder(const dnnl::memory& from, const dnnl::memory& to);
  std::vector<Step> setup_, steps_, pending_outputs_;
};

}  // namespace taso::cpu

#define TASO_REGISTER_CPU_VIEW(op, Class)                               \
  static const bool TASO_CONCAT_REG(taso_cpu_view_, __COUNTER__) = [] { \
    ::taso::cpu::RegisterView(op, std::make_unique<Class>());           \
    return true;                                                        \
  }()

#define TASO_REGISTER_CPU_KERNEL(op, Class)                               \
  static const bool TASO_CONCAT_REG(taso_cpu_kernel_, __COUNTER__) = [] { \
    ::taso::cpu::RegisterKernel(op, std::make_unique<Class>());           \
    return true;                                                          \
  }()
