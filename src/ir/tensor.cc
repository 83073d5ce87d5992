#include "taso/ir/tensor.h"

#include <cstring>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "taso/ir/mapped_file.h"

namespace taso {

std::string DataTypeName(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kBool:
      return "bool";
    default:
      return absl::StrCat("onnx_type_", static_cast<int>(t));
  }
}

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

std::string ShapeToString(absl::Span<const int64_t> shape) { return absl::StrCat("[", absl::StrJoin(shape, ","), "]"); }

Shape RowMajorStrides(absl::Span<const int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::shared_ptr<const TensorData> TensorData::Float(Shape shape, std::vector<float> values) {
  auto t = std::make_shared<TensorData>();
  t->dtype_ = DataType::kFloat32;
  t->shape_ = std::move(shape);
  t->f32_ = std::move(values);
  return t;
}

std::shared_ptr<const TensorData> TensorData::Int64(Shape shape, std::vector<int64_t> values) {
  auto t = std::make_shared<TensorData>();
  t->dtype_ = DataType::kInt64;
  t->shape_ = std::move(shape);
  t->i64_ = std::move(values);
  return t;
}

std::shared_ptr<const TensorData> TensorData::Raw(DataType dtype, Shape shape, std::string proto) {
  auto t = std::make_shared<TensorData>();
  t->dtype_ = dtype;
  t->shape_ = std::move(shape);
  t->raw_ = std::move(proto);
  return t;
}

std::shared_ptr<const TensorData> TensorData::MappedFloat(Shape shape, std::shared_ptr<const MappedFile> file,
                                                          int64_t offset) {
  auto t = std::make_shared<TensorData>();
  t->dtype_ = DataType::kFloat32;
  t->mapped_floats_ = {reinterpret_cast<const float*>(file->bytes().data() + offset),
                       static_cast<size_t>(NumElements(shape))};
  t->shape_ = std::move(shape);
  t->mapped_ = std::move(file);
  t->mapped_offset_ = offset;
  return t;
}

uint64_t TensorData::ContentHash() const {
  if (!hashed_) {
    uint64_t h = absl::HashOf(static_cast<int>(dtype_), std::vector<int64_t>(shape_.begin(), shape_.end()));
    absl::string_view bytes;
    if (const absl::Span<const float> values = floats(); !values.empty())
      bytes = {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)};
    else if (!i64_.empty())
      bytes = {reinterpret_cast<const char*>(i64_.data()), i64_.size() * sizeof(int64_t)};
    else
      bytes = raw_;
    hash_ = absl::HashOf(h, bytes);
    hashed_ = true;
  }
  return hash_;
}

bool TensorData::SameContent(const TensorData& o) const {
  if (dtype_ != o.dtype_ || shape_ != o.shape_) return false;
  const absl::Span<const float> values = floats(), others = o.floats();
  if (values.size() != others.size() || i64_ != o.i64_ || raw_ != o.raw_) return false;
  if (mapped_ && mapped_ == o.mapped_ && mapped_offset_ == o.mapped_offset_) return true;
  // Bitwise, so that NaN payloads and signed zeros count.
  return values.empty() || std::memcmp(values.data(), others.data(), values.size() * sizeof(float)) == 0;
}

}  // namespace taso
