// The cpu backend's kernels (oneDNN), one per library operator that has one, each in its
// own file under ops/cpu/ and registered by operator name. A kernel is prepared for
// given parameters and shapes and then run on its own buffers, which is what measuring
// an operator's time needs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "taso/op.h"

namespace taso::cpu {

// The engine and stream all cpu kernels share.
dnnl::engine& Engine();
dnnl::stream& Stream();

// One prepared operator: primitives and their arguments, with buffers allocated.
class Prepared {
 public:
  virtual ~Prepared() = default;
  virtual void Run() = 0;  // runs once and waits for the result
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Fails when oneDNN has no primitive for these parameters or shapes.
  virtual absl::StatusOr<std::unique_ptr<Prepared>> Prepare(const Params& params, absl::Span<const InputInfo> inputs,
                                                            absl::Span<const OutputType> outputs) const = 0;
};

void RegisterKernel(const std::string& op, std::unique_ptr<Kernel> kernel);
// The kernel for an operator, or null.
const Kernel* FindKernel(absl::string_view op);

// A primitive with its arguments, memory allocated for every argument (filled with
// small values so no denormals slow it down).
class PrimitiveRun : public Prepared {
 public:
  void Add(dnnl::primitive p, std::unordered_map<int, dnnl::memory> args) {
    steps_.push_back({std::move(p), std::move(args)});
  }
  static dnnl::memory Buffer(const dnnl::memory::desc& md);
  // Keeps a buffer that arguments only view (a split's input) alive with the run.
  void Keep(dnnl::memory m) { kept_.push_back(std::move(m)); }
  void Run() override;

 private:
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };
  std::vector<Step> steps_;
  std::vector<dnnl::memory> kept_;
};

dnnl::memory::dims Dims(const Shape& s);
// A plain row-major f32 descriptor of a shape (a scalar as [1]).
dnnl::memory::desc Plain(const Shape& s);

}  // namespace taso::cpu

#define TASO_REGISTER_CPU_KERNEL(op, Class)                                          \
  static const bool TASO_CONCAT_REG(taso_cpu_kernel_, __LINE__) = [] {               \
    ::taso::cpu::RegisterKernel(op, std::make_unique<Class>());                      \
    return true;                                                                     \
  }()
