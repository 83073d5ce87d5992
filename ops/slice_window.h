// The part of its input a Slice reads (ONNX opset 10+), from its constant bounds: shared by
// the operator (ops/slice.cc) and the backends' kernels that read it through strides.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "taso/ir/op_semantics.h"

namespace taso::ops {

// Per dimension of the input: the first index read and the step (negative: backwards);
// `out` is the output's shape.
struct SliceWindow {
  std::vector<int64_t> start, step;
  Shape out;
};

// Slice's inputs (data, starts, ends and optional axes and steps, the bounds int64
// constants) read as ONNX defines them: negative indices count from the end, indices are
// clamped to the dimension. Fails on bounds that are not constants or do not agree.
absl::StatusOr<SliceWindow> ReadSliceWindow(absl::Span<const InputInfo> in);

// How a kernel reads the window out of the row-major input of shape `input`: per output
// dimension the input stride times its step (negative backwards), from element `first`.
struct SliceStrides {
  std::vector<int64_t> strides;
  int64_t first = 0;
};
SliceStrides StridesOf(const SliceWindow& w, const Shape& input);

}  // namespace taso::ops
