#include "taso/ir/memory_limit.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "onnx/onnx_pb.h"

namespace taso {
namespace {

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

// a * b, or kMaxBytes where it would overflow (both at least 0).
int64_t SaturatingMul(int64_t a, int64_t b) { return b != 0 && a > kMaxBytes / b ? kMaxBytes : a * b; }

std::string Gigabytes(int64_t bytes) {
  if (bytes == kMaxBytes) return "more than 9.2e9 GB";
  if (bytes < 100'000'000) return absl::StrCat(bytes, " bytes");
  return absl::StrFormat("%.1f GB", static_cast<double>(bytes) / 1e9);
}

}  // namespace

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > kMaxBytes - b ? kMaxBytes : a + b; }

int64_t ElementBytes(int32_t onnx_elem_type) {
  using T = onnx::TensorProto;
  switch (onnx_elem_type) {
    case T::UINT8:
    case T::INT8:
    case T::BOOL:
      return 1;
    case T::UINT16:
    case T::INT16:
    case T::FLOAT16:
    case T::BFLOAT16:
      return 2;
    case T::INT64:
    case T::DOUBLE:
    case T::UINT64:
    case T::COMPLEX64:
      return 8;
    case T::COMPLEX128:
      return 16;
    default:  // float, int32, uint32, and the types the table does not know
      return 4;
  }
}

void MemoryBudget::Add(absl::string_view name, int32_t onnx_elem_type, absl::Span<const int64_t> shape) {
  int64_t bytes = ElementBytes(onnx_elem_type);
  for (int64_t d : shape) bytes = SaturatingMul(bytes, std::max<int64_t>(d, 0));
  total_ = SaturatingAdd(total_, bytes);
  if (bytes > largest_) {
    largest_ = bytes;
    largest_name_ = std::string(name);
    largest_shape_ = Shape(shape.begin(), shape.end());
  }
}

absl::Status MemoryBudget::Check() const {
  if (total_ <= limit_) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("the model's tensors need ", Gigabytes(total_), " (the largest, '",
                                                   largest_name_, "' ", ShapeToString(largest_shape_), ", ",
                                                   Gigabytes(largest_), "), more than the memory limit of ",
                                                   Gigabytes(limit_), "; raise it with ", kMaxMemoryFlag));
}

absl::Status CheckGraphMemory(const Graph& graph, int64_t limit_bytes) {
  MemoryBudget budget(limit_bytes);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    const Value& value = graph.value(v);
    if (value.shape_known) budget.Add(value.name, static_cast<int32_t>(value.dtype), value.shape);
  }
  return budget.Check();
}

}  // namespace taso
