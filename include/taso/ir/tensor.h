// Tensors: element types, shapes, layouts, constant data and typed buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace taso {

class MappedFile;

// Element types, numbered as ONNX numbers them (TensorProto.DataType) so values map 1:1.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
};
// Any ONNX element type can be carried by an opaque tensor; these are the ones we compute on.
std::string DataTypeName(DataType t);

using Shape = absl::InlinedVector<int64_t, 6>;

int64_t NumElements(absl::Span<const int64_t> shape);
// The number of elements, or nullopt when a dimension is negative or the count does not
// fit in int64_t.
std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> shape);
std::string ShapeToString(absl::Span<const int64_t> shape);
// Row-major strides of a shape.
Shape RowMajorStrides(absl::Span<const int64_t> shape);

// A dense row-major buffer over a scalar domain S (float, wrapping uint32, symbolic).
template <typename S>
struct Tensor {
  Shape shape;
  std::vector<S> data;

  Tensor() = default;
  explicit Tensor(Shape s) : shape(std::move(s)), data(NumElements(shape)) {}
  Tensor(Shape s, std::vector<S> d) : shape(std::move(s)), data(std::move(d)) {}
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t dim(int i) const { return shape[i]; }
  int rank() const { return static_cast<int>(shape.size()); }
};

// A tensor's shape and values read in place: a kernel's input, whether the values live in
// a Tensor or in a weight's data (in memory or mapped from its file). Valid while they are.
template <typename S>
struct TensorView {
  Shape shape;
  absl::Span<const S> data;

  TensorView() = default;
  TensorView(Shape s, absl::Span<const S> d) : shape(std::move(s)), data(d) {}
  TensorView(const Tensor<S>& t) : shape(t.shape), data(t.data) {}  // NOLINT: a tensor is a view of itself
  TensorView(const Tensor<S>&&) = delete;                           // a temporary's view would dangle
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t dim(int i) const { return shape[i]; }
  int rank() const { return static_cast<int>(shape.size()); }
};

// A tensor holding a copy of the values a view reads.
template <typename S>
Tensor<S> CopyOf(const TensorView<S>& view) {
  return Tensor<S>(view.shape, std::vector<S>(view.data.begin(), view.data.end()));
}

// Constant tensor data (weights, initializers, shape arguments). Immutable once built and
// shared between graphs, so copying a graph never copies weights.
class TensorData {
 public:
  TensorData() = default;
  TensorData(const TensorData&) = default;  // a copy shares mapped data
  TensorData& operator=(const TensorData&) = delete;

  static std::shared_ptr<const TensorData> Float(Shape shape, std::vector<float> values);
  static std::shared_ptr<const TensorData> Int64(Shape shape, std::vector<int64_t> values);
  // Data of another element type, kept as the serialized ONNX TensorProto so it survives.
  static std::shared_ptr<const TensorData> Raw(DataType dtype, Shape shape, std::string onnx_tensor_proto);
  // Float32 data read in place from `file`, NumElements(shape) values at `offset` (a
  // multiple of 4, within the file): a weight stored as external data, held by no memory
  // of ours.
  static std::shared_ptr<const TensorData> MappedFloat(Shape shape, std::shared_ptr<const MappedFile> file,
                                                       int64_t offset);

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return NumElements(shape_); }
  absl::Span<const float> floats() const { return mapped_ ? mapped_floats_ : absl::Span<const float>(f32_); }
  // The float32 data with its shape (no values for other element types): kernels read
  // weights in place through it, mapped or in memory, rather than copy them.
  TensorView<float> float_view() const { return {shape_, floats()}; }
  // Where the data is read in place from (null where it is held in memory), and at what
  // offset of that file.
  const MappedFile* mapped_file() const { return mapped_.get(); }
  int64_t mapped_offset() const { return mapped_offset_; }
  absl::Span<const int64_t> ints() const { return i64_; }
  const std::string& raw_proto() const { return raw_; }
  // Content hash (element type, shape, values); computed once.
  uint64_t ContentHash() const;
  bool SameContent(const TensorData& o) const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  std::vector<float> f32_;  // empty where mapped_ is set
  std::shared_ptr<const MappedFile> mapped_;
  int64_t mapped_offset_ = 0;
  absl::Span<const float> mapped_floats_;
  std::vector<int64_t> i64_;
  std::string raw_;
  mutable uint64_t hash_ = 0;
  mutable bool hashed_ = false;
};
using TensorDataPtr = std::shared_ptr<const TensorData>;

}  // namespace taso
