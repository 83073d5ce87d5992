#include "onnx_spellings.h"

#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "onnx_structure.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/status_macros.h"
#include "taso/ir/tensor.h"

namespace taso {

namespace {

constexpr char kAiOnnx[] = "ai.onnx";

// Clears the domain "ai.onnx" of `n` and of the nodes of its subgraphs.
void DefaultDomainAsEmpty(onnx::NodeProto& n) {
  if (n.domain() == kAiOnnx) n.clear_domain();
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g())
      for (auto& inner : *a.mutable_g()->mutable_node()) DefaultDomainAsEmpty(inner);
    for (auto& sub : *a.mutable_graphs())
      for (auto& inner : *sub.mutable_node()) DefaultDomainAsEmpty(inner);
  }
}

// Whether `n` or a node of its subgraphs is of the domain "ai.onnx".
bool UsesAiOnnx(const onnx::NodeProto& n) {
  bool found = n.domain() == kAiOnnx;
  ForEachSubgraph(n, [&](const onnx::GraphProto& sub) {
    for (const auto& inner : sub.node()) found = found || UsesAiOnnx(inner);
  });
  return found;
}

bool ImportsAiOnnx(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  for (const auto& o : imports)
    if (o.domain() == kAiOnnx) return true;
  return false;
}

// "ai.onnx" as "", and a second import of "" at the same version left out (at another
// version both stay, for the structural check to refuse).
void DefaultDomainImportedAsEmpty(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
  std::optional<int64_t> version;
  for (int i = 0; i < imports.size(); ++i) {
    onnx::OperatorSetIdProto& o = *imports.Mutable(i);
    if (o.domain() == kAiOnnx) o.clear_domain();
    if (!o.domain().empty()) continue;
    if (version == o.version()) {
      imports.DeleteSubrange(i--, 1);
      continue;
    }
    if (!version) version = o.version();
  }
}

// Whether values of the ONNX element type `type` are of a fixed size this build knows
// (ElementBytes): not strings, nor the types after bfloat16.
bool FixedSizeType(int32_t type) {
  return type >= onnx::TensorProto::FLOAT && type <= onnx::TensorProto::BFLOAT16 && type != onnx::TensorProto::STRING;
}

// Each value's lowest `bytes_each` bytes (the machine is little-endian, as raw_data is).
template <typename Field>
void AppendEach(const Field& values, size_t bytes_each, std::string& out) {
  for (const auto v : values) {
    char bytes[sizeof(v)];
    std::memcpy(bytes, &v, sizeof(v));
    out.append(bytes, bytes_each);
  }
}

// The values of `t` (stored in the file) as raw_data holds them; nothing where they are
// not `size` bytes.
std::optional<std::string> ValueBytes(const onnx::TensorProto& t, int element_bytes, size_t size) {
  std::string out;
  if (t.has_raw_data()) {
    out = t.raw_data();
  } else {
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
      case onnx::TensorProto::COMPLEX64:
        AppendEach(t.float_data(), sizeof(float), out);
        break;
      case onnx::TensorProto::DOUBLE:
      case onnx::TensorProto::COMPLEX128:
        AppendEach(t.double_data(), sizeof(double), out);
        break;
      case onnx::TensorProto::INT64:
        AppendEach(t.int64_data(), sizeof(int64_t), out);
        break;
      case onnx::TensorProto::UINT32:
      case onnx::TensorProto::UINT64:
        AppendEach(t.uint64_data(), element_bytes, out);
        break;
      default:  // the types of 1 and 2 bytes and INT32, one element per int32
        AppendEach(t.int32_data(), element_bytes, out);
    }
  }
  if (out.size() != size) return std::nullopt;
  return out;
}

// The element offsets `indices` gives, as ONNX states them: shape [NNZ] holds each
// value's linear index, shape [NNZ, rank] its coordinates.
absl::StatusOr<std::vector<int64_t>> LinearIndices(const TensorData& indices, int64_t nnz, const Shape& dense,
                                                   int64_t count, const std::string& name) {
  const Shape& shape = indices.shape();
  const int rank = static_cast<int>(dense.size());
  const bool linear = shape == Shape{nnz};
  if (!linear && shape != Shape{nnz, rank})
    return absl::InvalidArgumentError(absl::StrCat("sparse initializer '", name, "': its indices have shape ",
                                                   ShapeToString(shape), "; expected [", nnz, "] or [", nnz, ",", rank,
                                                   "]"));
  std::vector<int64_t> offsets(nnz);
  for (int64_t i = 0; i < nnz; ++i) {
    int64_t offset = 0;
    bool inside = true;
    if (linear) {
      offset = indices.ints()[i];
      inside = offset >= 0 && offset < count;
    } else {
      for (int d = 0; d < rank && inside; ++d) {
        const int64_t at = indices.ints()[i * rank + d];
        inside = at >= 0 && at < dense[d];
        offset = offset * dense[d] + at;
      }
    }
    if (!inside)
      return absl::InvalidArgumentError(absl::StrCat("sparse initializer '", name, "': index ", i,
                                                     " is outside its dimensions ", ShapeToString(dense)));
    offsets[i] = offset;
  }
  return offsets;
}

// The sparse tensor as a dense TensorProto of the values' name and type.
absl::StatusOr<onnx::TensorProto> Dense(const onnx::SparseTensorProto& sparse, const std::string& dir,
                                        int64_t max_bytes) {
  onnx::TensorProto values = sparse.values();
  const std::string& name = values.name();
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("sparse initializer '", name, "': ", why));
  };
  if (!FixedSizeType(values.data_type())) return refuse("its element type is not one of fixed size");
  const int element_bytes = static_cast<int>(ElementBytes(values.data_type()));
  const Shape dense(sparse.dims().begin(), sparse.dims().end());
  for (int64_t d : dense)
    if (d < 0) return refuse("a dimension is negative");
  const std::optional<int64_t> count = CheckedNumElements(dense);
  if (!count || *count > max_bytes / element_bytes)
    return refuse(absl::StrCat("its dense form ", ShapeToString(dense), " needs more than the ", max_bytes / 1e9,
                               " GB the memory limit leaves it (raise it with --max-memory-gb)"));
  if (values.dims_size() != 1) return refuse("its values are not of shape [NNZ]");
  const int64_t nnz = values.dims(0);
  if (values.data_location() == onnx::TensorProto::EXTERNAL) {
    ASSIGN_OR_RETURN(values, WithExternalDataRead(values, dir));
  }
  if (nnz < 0 || nnz > *count) return refuse("it holds more values than its dimensions");
  const std::optional<std::string> value_bytes = ValueBytes(values, element_bytes, nnz * element_bytes);
  if (!value_bytes) return refuse(absl::StrCat("its values do not hold ", nnz, " elements"));
  if (sparse.indices().data_type() != onnx::TensorProto::INT64) return refuse("its indices are not INT64");
  ASSIGN_OR_RETURN(const TensorDataPtr indices, TensorFromProto(sparse.indices(), dir));
  ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, LinearIndices(*indices, nnz, dense, *count, name));
  std::string bytes(static_cast<size_t>(*count * element_bytes), '\0');
  for (int64_t i = 0; i < nnz; ++i)
    std::memcpy(bytes.data() + offsets[i] * element_bytes, value_bytes->data() + i * element_bytes, element_bytes);
  onnx::TensorProto result;
  result.set_name(name);
  result.set_data_type(values.data_type());
  for (int64_t d : dense) result.add_dims(d);
  result.set_raw_data(std::move(bytes));
  return result;
}

}  // namespace

bool HasUncommonSpellings(const onnx::ModelProto& model) {
  if (model.graph().sparse_initializer_size() > 0 || ImportsAiOnnx(model.opset_import())) return true;
  for (const auto& n : model.graph().node())
    if (UsesAiOnnx(n)) return true;
  for (const auto& f : model.functions()) {
    if (ImportsAiOnnx(f.opset_import())) return true;
    for (const auto& n : f.node())
      if (UsesAiOnnx(n)) return true;
  }
  return false;
}

absl::StatusOr<std::vector<std::string>> CommonSpellings(onnx::ModelProto& model, const std::string& external_data_dir,
                                                         int64_t max_dense_bytes) {
  DefaultDomainImportedAsEmpty(*model.mutable_opset_import());
  for (auto& n : *model.mutable_graph()->mutable_node()) DefaultDomainAsEmpty(n);
  for (auto& f : *model.mutable_functions()) {
    DefaultDomainImportedAsEmpty(*f.mutable_opset_import());
    for (auto& n : *f.mutable_node()) DefaultDomainAsEmpty(n);
  }
  std::vector<std::string> made_dense;
  onnx::GraphProto& g = *model.mutable_graph();
  int64_t bytes_left = max_dense_bytes;  // for all of them together
  for (const onnx::SparseTensorProto& sparse : g.sparse_initializer()) {
    ASSIGN_OR_RETURN(onnx::TensorProto dense, Dense(sparse, external_data_dir, bytes_left));
    bytes_left -= static_cast<int64_t>(dense.raw_data().size());
    made_dense.push_back(dense.name());
    *g.add_initializer() = std::move(dense);
  }
  g.clear_sparse_initializer();
  return made_dense;
}

}  // namespace taso
