#include "taso/onnx/onnx_input_shapes.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "taso/ir/status_macros.h"

namespace taso {

namespace {

// The graph inputs that are not also initializers (those are weights).
std::vector<const onnx::ValueInfoProto*> RunTimeInputs(const onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> weights;
  for (const auto& init : graph.initializer()) weights.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : graph.input())
    if (!weights.contains(in.name())) inputs.push_back(&in);
  return inputs;
}

absl::Status CheckGivenNames(const std::vector<const onnx::ValueInfoProto*>& inputs,
                             const absl::flat_hash_map<std::string, Shape>& given) {
  absl::flat_hash_set<std::string> names;
  for (const auto* in : inputs) names.insert(in->name());
  for (const auto& [name, shape] : given)
    if (!names.contains(name)) {
      std::vector<std::string> listed;
      for (const auto* in : inputs) listed.push_back(in->name());
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape names '", name,
                       "', which is not an input of the model (inputs: ", absl::StrJoin(listed, ", "), ")"));
    }
  return absl::OkStatus();
}

// An input declared with no shape, not even its rank, at the shape given for it: each
// dimension unnamed and symbolic, so that the symbolic check keeps the ones that vary.
absl::Status BindShapeless(const onnx::ValueInfoProto& in, const Shape* given, BoundInputs& bound) {
  if (!given)
    return absl::InvalidArgumentError(
        absl::StrCat("input '", in.name(),
                     "' has no tensor shape (not even its rank): give one with --input-shape, or declare its shape in "
                     "the file, with a name for each dimension that varies"));
  for (int axis = 0; axis < static_cast<int>(given->size()); ++axis)
    bound.dims.push_back(SymbolicDim{"", in.name(), axis, (*given)[axis], true});
  bound.shapes[in.name()] = *given;
  bound.shapeless.push_back(in.name());
  return absl::OkStatus();
}

// One input's shape: its static dimensions, the given sizes, 1 for the other symbolic ones.
absl::Status BindInput(const onnx::ValueInfoProto& in, const Shape* given, BoundInputs& bound) {
  if (!in.type().has_tensor_type())
    return absl::InvalidArgumentError(absl::StrCat("input '", in.name(), "' is not a tensor"));
  if (!in.type().tensor_type().has_shape()) return BindShapeless(in, given, bound);
  const auto& dims = in.type().tensor_type().shape().dim();
  if (given && static_cast<int>(given->size()) != dims.size())
    return absl::InvalidArgumentError(absl::StrCat("--input-shape gives ", given->size(), " dimensions for input '",
                                                   in.name(), "', which has ", dims.size()));
  Shape shape;
  for (int axis = 0; axis < dims.size(); ++axis) {
    const int64_t size = given ? (*given)[axis] : 1;
    if (dims[axis].has_dim_value()) {
      if (given && size != dims[axis].dim_value())
        return absl::InvalidArgumentError(absl::StrCat("--input-shape gives ", size, " for dimension ", axis,
                                                       " of input '", in.name(), "', which is fixed at ",
                                                       dims[axis].dim_value()));
      shape.push_back(dims[axis].dim_value());
      continue;
    }
    bound.dims.push_back(SymbolicDim{dims[axis].dim_param(), in.name(), axis, size, given != nullptr});
    shape.push_back(size);
  }
  bound.shapes[in.name()] = std::move(shape);
  return absl::OkStatus();
}

// A dim_param names one size wherever it appears.
absl::Status CheckOneSizePerParam(const std::vector<SymbolicDim>& dims) {
  absl::flat_hash_map<std::string, const SymbolicDim*> first;
  for (const SymbolicDim& d : dims) {
    auto [it, added] = first.emplace(d.Key(), &d);
    if (!added && it->second->value != d.value)
      return absl::InvalidArgumentError(absl::StrCat("dimension '", d.param, "' is ", it->second->value, " in input '",
                                                     it->second->input, "' but ", d.value, " in input '", d.input,
                                                     "': give one size for it"));
  }
  return absl::OkStatus();
}

// The keys of the symbolic dimensions no size was given for, each once, in order.
std::vector<std::string> KeysNotGiven(const BoundInputs& bound) {
  std::vector<std::string> keys;
  for (const SymbolicDim& d : bound.dims)
    if (!d.given && std::find(keys.begin(), keys.end(), d.Key()) == keys.end()) keys.push_back(d.Key());
  return keys;
}

// `bound` with the dimensions of the keys in `sizes` at those sizes; `why` says why one
// is not at 1.
BoundInputs WithSizes(BoundInputs bound, const absl::flat_hash_map<std::string, int64_t>& sizes,
                      const std::string& why) {
  for (SymbolicDim& d : bound.dims) {
    const auto it = sizes.find(d.Key());
    if (it == sizes.end()) continue;
    d.value = it->second;
    d.why_not_one = it->second == 1 ? "" : why;
    bound.shapes[d.input][d.axis] = it->second;
  }
  return bound;
}

// `built`, the model at `sizes`, with each of `keys` put back to 1 in turn where it still
// builds so.
OnnxModel EachBackToOne(const BoundInputs& bound, const std::vector<std::string>& keys,
                        absl::flat_hash_map<std::string, int64_t> sizes, const std::string& why,
                        const BuildAtSizes& build, OnnxModel built) {
  if (keys.size() == 1) return built;  // it does not build at 1
  for (const std::string& key : keys) {
    const int64_t grown = std::exchange(sizes[key], 1);
    absl::StatusOr<OnnxModel> at_one = build(WithSizes(bound, sizes, why));
    if (at_one.ok())
      built = *std::move(at_one);
    else
      sizes[key] = grown;
  }
  return built;
}

}  // namespace

absl::StatusOr<OnnxModel> BuiltAtGrownSizes(const BoundInputs& bound, const absl::Status& at_one,
                                            const BuildAtSizes& build) {
  const std::vector<std::string> keys = KeysNotGiven(bound);
  if (keys.empty() || !absl::IsInvalidArgument(at_one)) return at_one;
  const std::string why(at_one.message());
  absl::flat_hash_map<std::string, int64_t> sizes;
  for (int64_t size = 2; size <= kMaxGrownSize; size *= 2) {
    for (const std::string& key : keys) sizes[key] = size;
    absl::StatusOr<OnnxModel> grown = build(WithSizes(bound, sizes, why));
    if (grown.ok()) return EachBackToOne(bound, keys, sizes, why, build, *std::move(grown));
    if (!absl::IsInvalidArgument(grown.status())) break;
  }
  return absl::InvalidArgumentError(absl::StrCat(at_one.message(), " (with the symbolic dimensions ",
                                                 absl::StrJoin(keys, ", "), " at 1, nor at any power of two up to ",
                                                 kMaxGrownSize, "; give their sizes with --input-shape)"));
}

std::string SymbolicDim::Key() const { return param.empty() ? absl::StrCat(input, "[", axis, "]") : param; }

absl::StatusOr<BoundInputs> BindInputShapes(const onnx::GraphProto& graph,
                                            const absl::flat_hash_map<std::string, Shape>& given) {
  const std::vector<const onnx::ValueInfoProto*> inputs = RunTimeInputs(graph);
  RETURN_IF_ERROR(CheckGivenNames(inputs, given));
  BoundInputs bound;
  for (const auto* in : inputs) {
    auto it = given.find(in->name());
    RETURN_IF_ERROR(BindInput(*in, it == given.end() ? nullptr : &it->second, bound));
  }
  RETURN_IF_ERROR(CheckOneSizePerParam(bound.dims));
  return bound;
}

void SetInputShapes(const absl::flat_hash_map<std::string, Shape>& shapes, onnx::ModelProto& model) {
  for (auto& in : *model.mutable_graph()->mutable_input()) {
    auto it = shapes.find(in.name());
    if (it == shapes.end()) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
  }
}

}  // namespace taso
