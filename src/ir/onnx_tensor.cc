#include "taso/ir/onnx_tensor.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "taso/ir/mapped_file.h"
#include "taso/ir/status_macros.h"

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
absl::Status BadExternal(const onnx::TensorProto& proto, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "' (external data): ", why));
}

// Where the tensor's data is: file (relative to the model), offset and length (-1: to
// the end of the file).
struct ExternalLocation {
  std::string location;
  int64_t offset = 0, length = -1;
};

absl::StatusOr<ExternalLocation> LocationOf(const onnx::TensorProto& proto) {
  ExternalLocation where;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") where.location = entry.value();
    int64_t* number = entry.key() == "offset" ? &where.offset : entry.key() == "length" ? &where.length : nullptr;
    if (number && (!absl::SimpleAtoi(entry.value(), number) || *number < 0))
      return BadExternal(proto, absl::StrCat(entry.key(), " '", entry.value(), "' is not a whole number"));
  }
  if (where.location.empty()) return BadExternal(proto, "no location given");
  return where;
}

// The data file's path: relative, and inside the model's directory after normalization.
absl::StatusOr<std::filesystem::path> DataFilePath(const onnx::TensorProto& proto, const std::string& location,
                                                   const std::string& dir) {
  const std::filesystem::path relative = std::filesystem::path(location).lexically_normal();
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory())
    return BadExternal(proto, absl::StrCat("location '", location, "' is an absolute path; it must be relative"));
  if (relative.empty() || *relative.begin() == "..")
    return BadExternal(proto, absl::StrCat("location '", location, "' leaves the model's directory"));
  return std::filesystem::path(dir) / relative;
}

// Where a tensor's external bytes lie: a file inside the model's directory, and a span
// of it within its size.
// External bytes are copied and compared through a buffer of this size.
constexpr int64_t kCopyBlockBytes = int64_t{1} << 20;

struct ExternalSpan {
  std::filesystem::path path;
  int64_t offset = 0, length = 0;
};

absl::StatusOr<ExternalSpan> SpanOf(const onnx::TensorProto& proto, const std::string& dir) {
  if (dir.empty()) return BadExternal(proto, "the model was not read from a file, so its data files cannot be found");
  ASSIGN_OR_RETURN(const ExternalLocation where, LocationOf(proto));
  ASSIGN_OR_RETURN(const std::filesystem::path path, DataFilePath(proto, where.location, dir));
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || !std::filesystem::is_regular_file(path, ec))
    return BadExternal(proto, absl::StrCat("cannot read data file '", path.string(), "'"));
  const int64_t file_size = static_cast<int64_t>(size);
  const int64_t length = where.length < 0 ? file_size - where.offset : where.length;
  if (where.offset > file_size || length < 0 || length > file_size - where.offset)
    return BadExternal(proto, absl::StrCat("offset ", where.offset, " and length ", length, " lie beyond the end of '",
                                           path.string(), "' (", file_size, " bytes)"));
  return ExternalSpan{path, where.offset, length};
}

// Whether `span` holds float tensor `proto`'s values where they can be read in place: at
// an offset a float can be read at, and their bytes exactly.
bool InPlaceSpan(const onnx::TensorProto& proto, const ExternalSpan& span) {
  constexpr auto kBytes = static_cast<int64_t>(sizeof(float));
  if (proto.data_type() != onnx::TensorProto::FLOAT || span.offset % static_cast<int64_t>(alignof(float)) != 0)
    return false;
  const std::optional<int64_t> n = CheckedNumElements(Shape(proto.dims().begin(), proto.dims().end()));
  return n && *n > 0 && span.length % kBytes == 0 && span.length / kBytes == *n;
}

// The span's bytes read into `dest` (span.length bytes).
absl::Status ReadSpan(const onnx::TensorProto& proto, const ExternalSpan& span, char* dest) {
  std::ifstream f(span.path, std::ios::binary);
  if (!f.seekg(span.offset) || !f.read(dest, span.length))
    return BadExternal(proto, absl::StrCat("cannot read data file '", span.path.string(), "'"));
  return absl::OkStatus();
}

absl::Status WrongValueCount(const onnx::TensorProto& proto) {
  return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(),
                                                 "' holds the wrong number of values for shape ",
                                                 ShapeToString(Shape(proto.dims().begin(), proto.dims().end()))));
}

absl::Status DataFileWriteFailed(const std::string& location) {
  return absl::InternalError(absl::StrCat("failed writing the data file '", location, "' (disk full?)"));
}

// Zeros written to the data file up to where a tensor of `length` bytes starts: a multiple
// of 4096 for one of 1 MiB or more (a page: ONNX Runtime's own writer aligns so, for
// runtimes that map their weights), else of 16, so that every tensor's values lie where
// their type can be read in place (ReadsInPlace), whatever the sizes before them.
absl::Status PadToAlignment(std::ostream& data, int64_t& offset, int64_t length, const std::string& location) {
  const int64_t alignment = length >= (int64_t{1} << 20) ? 4096 : 16;
  const int64_t padding = (alignment - offset % alignment) % alignment;
  if (padding == 0) return absl::OkStatus();
  if (!data.write(std::string(static_cast<size_t>(padding), '\0').data(), static_cast<std::streamsize>(padding)))
    return DataFileWriteFailed(location);
  offset += padding;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<onnx::TensorProto> WithExternalDataRead(const onnx::TensorProto& proto, const std::string& dir) {
  ASSIGN_OR_RETURN(const ExternalSpan span, SpanOf(proto, dir));
  std::string bytes(static_cast<size_t>(span.length), '\0');
  RETURN_IF_ERROR(ReadSpan(proto, span, bytes.data()));
  onnx::TensorProto copy = proto;
  copy.clear_external_data();
  copy.set_data_location(onnx::TensorProto::DEFAULT);
  copy.set_raw_data(std::move(bytes));
  return copy;
}

absl::StatusOr<int64_t> ExternalDataBytes(const onnx::TensorProto& proto, const std::string& dir) {
  ASSIGN_OR_RETURN(const ExternalSpan span, SpanOf(proto, dir));
  return span.length;
}

absl::StatusOr<bool> ReadsInPlace(const onnx::TensorProto& proto, const std::string& dir) {
  ASSIGN_OR_RETURN(const ExternalSpan span, SpanOf(proto, dir));
  return InPlaceSpan(proto, span);
}

absl::Status CopyExternalData(onnx::TensorProto& proto, const std::string& dir, std::ostream& data, int64_t& offset,
                              const std::string& location) {
  ASSIGN_OR_RETURN(const ExternalSpan span, SpanOf(proto, dir));
  RETURN_IF_ERROR(PadToAlignment(data, offset, span.length, location));
  std::ifstream f(span.path, std::ios::binary);
  if (!f.seekg(span.offset))
    return BadExternal(proto, absl::StrCat("cannot read data file '", span.path.string(), "'"));
  std::vector<char> block(static_cast<size_t>(std::min<int64_t>(kCopyBlockBytes, span.length)));
  for (int64_t done = 0; done < span.length;) {
    const auto n = static_cast<std::streamsize>(std::min<int64_t>(kCopyBlockBytes, span.length - done));
    if (!f.read(block.data(), n))
      return BadExternal(proto, absl::StrCat("cannot read data file '", span.path.string(), "'"));
    if (!data.write(block.data(), n)) return DataFileWriteFailed(location);
    done += n;
  }
  SetExternalData(proto, location, offset, span.length);
  offset += span.length;
  return absl::OkStatus();
}

namespace {

// Whether the tensor's external bytes are `bytes`, read a block at a time: a large model's
// weights are compared without a second copy of them in memory.
bool ExternalBytesEqual(const onnx::TensorProto& proto, const std::string& dir, absl::Span<const char> bytes) {
  const absl::StatusOr<ExternalSpan> span = SpanOf(proto, dir);
  if (!span.ok() || span->length != static_cast<int64_t>(bytes.size())) return false;
  std::ifstream f(span->path, std::ios::binary);
  if (!f.seekg(span->offset)) return false;
  constexpr auto kBlock = static_cast<size_t>(kCopyBlockBytes);
  std::vector<char> block(std::min(kBlock, bytes.size()));
  for (size_t done = 0; done < bytes.size();) {
    const size_t n = std::min(kBlock, bytes.size() - done);
    if (!f.read(block.data(), static_cast<std::streamsize>(n)) ||
        std::memcmp(block.data(), bytes.data() + done, n) != 0)
      return false;
    done += n;
  }
  return true;
}

// Whether `data` is read in place from the very bytes the external tensor names.
bool ReadInPlaceFrom(const TensorData& data, const onnx::TensorProto& proto, const std::string& dir) {
  if (data.mapped_file() == nullptr) return false;
  const absl::StatusOr<ExternalSpan> span = SpanOf(proto, dir);
  return span.ok() && span->offset == data.mapped_offset() &&
         span->length == static_cast<int64_t>(data.floats().size() * sizeof(float)) &&
         data.mapped_file()->IsFile(span->path);
}

}  // namespace

bool HoldsValuesOf(const TensorData& data, const onnx::TensorProto& proto, const std::string& external_data_dir) {
  if (proto.data_type() != onnx::TensorProto::FLOAT || data.dtype() != DataType::kFloat32) return false;
  if (!std::equal(data.shape().begin(), data.shape().end(), proto.dims().begin(), proto.dims().end())) return false;
  const absl::Span<const float> values = data.floats();
  const size_t bytes = values.size() * sizeof(float);
  // Bit patterns, not floats, are compared: a NaN equals itself and -0 differs from 0.
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return ReadInPlaceFrom(data, proto, external_data_dir) ||
           ExternalBytesEqual(proto, external_data_dir, {reinterpret_cast<const char*>(values.data()), bytes});
  if (proto.has_raw_data())
    return proto.raw_data().size() == bytes &&
           (bytes == 0 || std::memcmp(proto.raw_data().data(), values.data(), bytes) == 0);
  return proto.float_data_size() == static_cast<int>(values.size()) &&
         (bytes == 0 || std::memcmp(proto.float_data().data(), values.data(), bytes) == 0);
}

namespace {

// The `n` values of type T stored as external data, read straight into their vector: a
// string of the bytes first, then a copy, zeroed and copied every weight twice more (a
// third of reading a 2.9 GB model went to the kernel clearing their pages).
template <typename T>
absl::StatusOr<std::vector<T>> ReadExternalValues(const onnx::TensorProto& proto, const std::string& dir, int64_t n) {
  ASSIGN_OR_RETURN(const ExternalSpan span, SpanOf(proto, dir));
  if (span.length % static_cast<int64_t>(sizeof(T)) != 0 || span.length / static_cast<int64_t>(sizeof(T)) != n)
    return WrongValueCount(proto);
  std::vector<T> values(static_cast<size_t>(n));
  RETURN_IF_ERROR(ReadSpan(proto, span, reinterpret_cast<char*>(values.data())));
  return values;
}

// The float tensor's external values read in place from their file, mapped, where they
// can be (InPlaceSpan); null where not, or where the file does not hold them, for
// ReadExternalValues to read or refuse.
TensorDataPtr MappedValues(const onnx::TensorProto& proto, const std::string& dir, const Shape& shape) {
  const absl::StatusOr<ExternalSpan> span = SpanOf(proto, dir);
  if (!span.ok() || !InPlaceSpan(proto, *span)) return nullptr;
  const absl::StatusOr<std::shared_ptr<const MappedFile>> file = MappedFile::Open(span->path);
  if (!file.ok() || static_cast<int64_t>((*file)->bytes().size()) < span->offset + span->length) return nullptr;
  return TensorData::MappedFloat(shape, *file, span->offset);
}

}  // namespace

absl::StatusOr<TensorDataPtr> TensorFromProto(const onnx::TensorProto& proto, const std::string& external_data_dir) {
  const bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  const bool direct = proto.data_type() == onnx::TensorProto::FLOAT || proto.data_type() == onnx::TensorProto::INT64;
  if (external && !direct) {
    ASSIGN_OR_RETURN(onnx::TensorProto inline_copy, WithExternalDataRead(proto, external_data_dir));
    return TensorFromProto(inline_copy);
  }
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "' has a negative dimension"));
  const std::optional<int64_t> count = CheckedNumElements(shape);
  if (!count)
    return absl::InvalidArgumentError(absl::StrCat("tensor '", proto.name(), "' of shape ", ShapeToString(shape),
                                                   " has more elements than a 64-bit count holds"));
  const int64_t n = *count;
  auto size_error = [&] { return WrongValueCount(proto); };
  if (external && proto.data_type() == onnx::TensorProto::FLOAT) {
    if (TensorDataPtr mapped = MappedValues(proto, external_data_dir, shape)) return mapped;
    ASSIGN_OR_RETURN(std::vector<float> v, ReadExternalValues<float>(proto, external_data_dir, n));
    return TensorData::Float(std::move(shape), std::move(v));
  }
  if (external) {
    ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadExternalValues<int64_t>(proto, external_data_dir, n));
    return TensorData::Int64(std::move(shape), std::move(v));
  }
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

void SetExternalData(onnx::TensorProto& proto, const std::string& location, int64_t offset, int64_t length) {
  std::string().swap(*proto.mutable_raw_data());  // clear_raw_data alone keeps the buffer
  proto.clear_raw_data();
  proto.clear_external_data();
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&proto](const std::string& key, const std::string& value) {
    auto* entry = proto.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

absl::Status MoveToExternalData(onnx::TensorProto& proto, std::ostream& data, int64_t& offset,
                                const std::string& location) {
  if (!proto.has_raw_data()) return absl::OkStatus();  // typed fields stay inline
  const int64_t length = static_cast<int64_t>(proto.raw_data().size());
  RETURN_IF_ERROR(PadToAlignment(data, offset, length, location));
  if (!data.write(proto.raw_data().data(), static_cast<std::streamsize>(length))) return DataFileWriteFailed(location);
  SetExternalData(proto, location, offset, length);
  offset += length;
  return absl::OkStatus();
}

}  // namespace taso
