// The limit on the memory a model's declared tensors need: a model whose tensors would
// not fit is refused with one line naming the size, the limit and the flag that raises
// it, before anything is allocated for them.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "taso/ir/graph.h"
#include "taso/ir/tensor.h"

namespace taso {

// The default limit: 16 GB (10^9 bytes each).
inline constexpr int64_t kDefaultMaxMemoryBytes = int64_t{16'000'000'000};
// The taso-opt flag that sets the limit, as error messages name it.
inline constexpr absl::string_view kMaxMemoryFlag = "--max-memory-gb";

// a + b, or the largest int64_t where that would overflow (both at least 0): totals of
// sizes read from a file saturate rather than overflow.
int64_t SaturatingAdd(int64_t a, int64_t b);

// Bytes of one element of an ONNX element type (TensorProto.DataType); 4 for a type the
// table does not know.
int64_t ElementBytes(int32_t onnx_elem_type);

// Adds up the bytes of tensors; the total saturates rather than overflows.
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit_bytes) : limit_(limit_bytes) {}

  // Counts one tensor `name` of the given element type and shape (negative dimensions
  // count as zero: they are refused elsewhere).
  void Add(absl::string_view name, int32_t onnx_elem_type, absl::Span<const int64_t> shape);
  // OK while the total is within the limit; else one line naming the total, the largest
  // tensor, the limit and the flag that raises it.
  absl::Status Check() const;

 private:
  int64_t limit_;
  int64_t total_ = 0;
  int64_t largest_ = -1;
  std::string largest_name_;
  Shape largest_shape_;
};

// The memory a graph's tensors of known shape need together (inputs, weights and every
// intermediate, as a run with the reference executor might hold them all), against the
// limit.
absl::Status CheckGraphMemory(const Graph& graph, int64_t limit_bytes);

}  // namespace taso
