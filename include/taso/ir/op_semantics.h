// What an operator computes: its output types, its reference kernels and the work it does.
// The executor, shape inference, constant folding and the cost models see operators
// through this part of OpDef (OpDef::semantics()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "taso/ir/op_types.h"
#include "taso/ir/params.h"
#include "taso/ir/symbolic.h"
#include "taso/ir/tensor.h"

namespace taso {

// One input of a kernel: a view of its values (TensorView), or none (an absent or
// non-numeric input), read as a pointer to the view is.
template <typename S>
class KernelInput {
 public:
  KernelInput(std::nullptr_t = nullptr) {}  // NOLINT: no input
  KernelInput(const Tensor<S>* t) {         // NOLINT: a tensor's values, or none for null
    if (t) view_.emplace(*t);
  }
  KernelInput(TensorView<S> view) : view_(std::move(view)) {}  // NOLINT: read in place

  const TensorView<S>& operator*() const { return *view_; }
  const TensorView<S>* operator->() const { return &*view_; }
  const TensorView<S>* get() const { return view_ ? &*view_ : nullptr; }
  explicit operator bool() const { return view_.has_value(); }
  bool operator==(std::nullptr_t) const { return !view_; }

 private:
  std::optional<TensorView<S>> view_;
};

// Inputs and outputs of one kernel invocation in scalar domain S.
template <typename S>
struct KernelArgs {
  std::vector<KernelInput<S>> in;           // none for absent or non-numeric inputs
  std::vector<const TensorData*> constant;  // per input: its constant data, or nullptr
  std::vector<Tensor<S>*> out;              // allocated with the inferred shapes
};

// Work done by one operator instance, for the analytic cost model.
struct OpMetrics {
  double flops = 0;
  double bytes = 0;  // bytes read plus bytes written
};

class OpSemantics {
 public:
  virtual ~OpSemantics() = default;

  // Unique name within the library, e.g. "Conv2D".
  virtual absl::string_view name() const = 0;
  // Opaque nodes carry an ONNX node the library does not model.
  virtual bool is_opaque() const { return false; }
  // Whether the outputs depend only on the inputs' shapes (constant tensors shaped like
  // an input): computable ahead of time like a node that reads only weights.
  virtual bool reads_only_shapes() const { return false; }
  // Whether the outputs depend only on that input's shape, not on its values: a node is
  // computable ahead of time when every other input is.
  virtual bool reads_only_shape_of(int input) const { return reads_only_shapes(); }

  // Checks parameters and input types; returns the output types or a clear error.
  virtual absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& params,
                                                             absl::Span<const InputInfo> inputs) const = 0;

  // The output's value when it is known without running anything (Constant), else null.
  virtual TensorDataPtr ConstantOutput(const Params& params) const { return nullptr; }

  // The reference kernel in the float, the wrapping uint32 and the symbolic domain.
  virtual absl::Status RunFloat(const Params& params, KernelArgs<float>& args) const = 0;
  virtual absl::Status RunUint32(const Params& params, KernelArgs<uint32_t>& args) const = 0;
  virtual absl::Status RunSymbolic(const Params& params, KernelArgs<Sym>& args) const;

  // FLOPs and bytes moved (defaults: one FLOP per output element, every tensor once).
  virtual OpMetrics Metrics(const Params& params, absl::Span<const InputInfo> inputs,
                            absl::Span<const OutputType> outputs) const;
};

}  // namespace taso
