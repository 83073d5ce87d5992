#include "onnx_tensor.h"

#include <cstring>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"

namespace taso {

namespace {
template <typename T>
bool FromRaw(const std::string& raw, int64_t n, std::vector<T>& out) {
  if (raw.size() % sizeof(T) != 0 || raw.size() / sizeof(T) != static_cast<size_t>(n)) return false;
  out.resize(n);
  // ONNX raw data is little-endian, as is x86-64; an empty vector's data() may be null.
  if (!raw.empty()) std::memcpy(out.data(), raw.data(), raw.size());
  return true;
}

}  // namespace

absl::StatusOr<TensorDataPtr> TensorFromProto(const onnx::TensorProto& proto) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0)
    return absl::UnimplementedError(
        absl::StrCat("tensor '", proto.name(), "' keeps its data in an external file, which is not supported"));
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "' has a negative dimension"));
  const std::optional<int64_t> count = CheckedNumElements(shape);
  if (!count)
    return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "' of shape ", ShapeToString(shape),
                                                   " has more elements than a 64-bit count holds"));
  const int64_t n = *count;
  auto size_error = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", proto.name(), "' holds the wrong number of values for shape ", ShapeToString(shape)));
  };
  switch (proto.data_type()) {
    case onnx::TensorProto::FLOAT: {
      std::vector<float> v;
      if (proto.has_raw_data()) {
        if (!FromRaw(proto.raw_data(), n, v)) return size_error();
      } else {
        if (proto.float_data_size() != n) return size_error();
        v.assign(proto.float_data().begin(), proto.float_data().end());
      }
      return TensorData::Float(std::move(shape), std::move(v));
    }
    case onnx::TensorProto::INT64: {
      std::vector<int64_t> v;
      if (proto.has_raw_data()) {
        if (!FromRaw(proto.raw_data(), n, v)) return size_error();
      } else {
        if (proto.int64_data_size() != n) return size_error();
        v.assign(proto.int64_data().begin(), proto.int64_data().end());
      }
      return TensorData::Int64(std::move(shape), std::move(v));
    }
    default: {
      onnx::TensorProto copy = proto;
      copy.clear_name();
      return TensorData::Raw(static_cast<DataType>(proto.data_type()), std::move(shape), copy.SerializeAsString());
    }
  }
}

void TensorToProto(const TensorData& data, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  if (!data.raw_proto().empty()) proto->ParseFromString(data.raw_proto());
  proto->set_name(name);
  if (!data.raw_proto().empty()) return;
  proto->set_data_type(static_cast<int32_t>(data.dtype()));
  for (int64_t d : data.shape()) proto->add_dims(d);
  if (data.dtype() == DataType::kFloat32)
    proto->set_raw_data(
        std::string(reinterpret_cast<const char*>(data.floats().data()), data.floats().size() * sizeof(float)));
  else if (data.dtype() == DataType::kInt64)
    proto->set_raw_data(
        std::string(reinterpret_cast<const char*>(data.ints().data()), data.ints().size() * sizeof(int64_t)));
}

}  // namespace taso
