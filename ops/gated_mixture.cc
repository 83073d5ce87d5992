#include "taso/ir/ops/gated_mixture.h"

#include "absl/strings/str_cat.h"
#include "op_util.h"
#include "taso/ir/ops/add.h"
#include "taso/ir/ops/concat.h"
#include "taso/ir/ops/gemm.h"
#include "taso/ir/ops/matmul.h"
#include "taso/ir/ops/reshape.h"

namespace taso::ops {
namespace {

const OpDef& Op(absl::string_view name) { return *OpRegistry::Global().Find(name); }

bool IsFloatOfRank(const Graph& g, ValueId v, size_t rank) {
  const Value& value = g.value(v);
  return value.dtype == DataType::kFloat32 && value.shape_known && value.shape.size() == rank;
}

bool IsFloatOfRankFrom2(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  return value.dtype == DataType::kFloat32 && value.shape_known && value.shape.size() >= 2;
}

// `shape` with its last dimension `last`.
Shape WithLast(Shape shape, int64_t last) {
  shape.back() = last;
  return shape;
}

bool IsConstant(const Graph& g, ValueId v) { return v == kNoValue || g.ConstantData(v) != nullptr; }

// The column a Slice node takes of its input (rank 2 or more) along the last axis, one
// wide with step 1: its start made non-negative; nullopt for any other slice.
std::optional<int64_t> SlicedColumn(const Graph& g, const Node& slice) {
  if (slice.op != &Op("Slice") || slice.inputs.size() < 3 || !IsFloatOfRankFrom2(g, slice.inputs[0]))
    return std::nullopt;
  const std::vector<InputInfo> in = g.InputInfos(slice);
  const Shape& data = in[0].shape;
  const int64_t rank = static_cast<int64_t>(data.size());
  if (g.value(slice.outputs[0]).shape != WithLast(data, 1)) return std::nullopt;
  const absl::StatusOr<std::vector<int64_t>> starts = ConstantInts(in[1], "starts");
  if (!starts.ok() || starts->size() != 1) return std::nullopt;
  if (in.size() > 3 && in[3].present) {
    const absl::StatusOr<std::vector<int64_t>> axes = ConstantInts(in[3], "axes");
    if (!axes.ok() || axes->size() != 1 || ((*axes)[0] != rank - 1 && (*axes)[0] != -1)) return std::nullopt;
  } else {
    return std::nullopt;  // the first axis, not the last
  }
  if (in.size() > 4 && in[4].present) {
    const absl::StatusOr<std::vector<int64_t>> steps = ConstantInts(in[4], "steps");
    if (!steps.ok() || *steps != std::vector<int64_t>{1}) return std::nullopt;
  }
  const int64_t start = (*starts)[0] < 0 ? (*starts)[0] + data.back() : (*starts)[0];
  if (start < 0 || start >= data.back()) return std::nullopt;
  return start;
}

absl::StatusOr<ValueId> AddOne(Graph& g, const OpDef& op, Params params, std::vector<ValueId> inputs,
                               std::string output_name) {
  ASSIGN_OR_RETURN(const std::vector<ValueId> out,
                   g.AddNode(&op, std::move(params), std::move(inputs), "", {std::move(output_name)}));
  return out[0];
}

absl::StatusOr<ValueId> AddConcat(Graph& g, const std::vector<ValueId>& parts, int64_t axis, std::string name) {
  return AddOne(g, ConcatOperator(), ConcatParams(axis), parts, std::move(name));
}

// x viewed with the shape `target` (0 keeps x's dimension there).
absl::StatusOr<ValueId> AddReshape(Graph& g, ValueId x, std::vector<int64_t> target,
                                   absl::FunctionRef<std::string(absl::string_view)> fresh) {
  const std::string base = g.value(x).name;
  const int64_t rank = static_cast<int64_t>(target.size());
  ASSIGN_OR_RETURN(const ValueId shape,
                   g.AddWeight(fresh(absl::StrCat(base, "_shape")), TensorData::Int64(Shape{rank}, std::move(target))));
  return AddOne(g, ReshapeOp(), Params(), {x, shape}, fresh(absl::StrCat(base, "_view")));
}

// The weights of `layers` joined along their output features (axis 0 of W^T, 1 of W), or
// along their input features.
absl::StatusOr<ValueId> AddJoinedWeights(Graph& g, const std::vector<LayerWeights>& layers, const LinearLayer& like,
                                         bool along_outputs, absl::FunctionRef<std::string(absl::string_view)> fresh) {
  std::vector<ValueId> weights;
  for (const LayerWeights& layer : layers) weights.push_back(layer.weights);
  const bool transposed = like.gemm && like.params.Int("transB", 0) != 0;
  const int64_t axis = along_outputs == transposed ? 0 : 1;
  return AddConcat(g, weights, axis, fresh(absl::StrCat(g.value(weights[0]).name, "_joined")));
}

// The biases of `layers` (float constants of one shape [N]) as the rows of one new weight
// [n, N]: its values are written out, as the weight folding does not fold shapes.
absl::StatusOr<ValueId> AddStackedBiases(Graph& g, const std::vector<LayerWeights>& layers,
                                         absl::FunctionRef<std::string(absl::string_view)> fresh) {
  std::vector<float> rows;
  for (const LayerWeights& layer : layers) {
    const TensorData* bias = g.ConstantData(layer.bias);
    if (bias == nullptr || bias->dtype() != DataType::kFloat32) return Bad("a stacked bias is no float constant");
    rows.insert(rows.end(), bias->floats().begin(), bias->floats().end());
  }
  const int64_t n = static_cast<int64_t>(layers.size()), width = static_cast<int64_t>(rows.size()) / n;
  return g.AddWeight(fresh(absl::StrCat(g.value(layers[0].bias).name, "_stacked")),
                     TensorData::Float(Shape{n, width}, std::move(rows)));
}

// x W + b in the form of `like`: a Gemm with its parameters (b its C), or MatMul and,
// where there is a b, Add. Named `output_name`.
absl::StatusOr<ValueId> AddProduct(Graph& g, ValueId x, ValueId w, ValueId b, const LinearLayer& like,
                                   const std::string& output_name,
                                   absl::FunctionRef<std::string(absl::string_view)> fresh) {
  if (like.gemm) {
    std::vector<ValueId> inputs{x, w};
    if (b != kNoValue) inputs.push_back(b);
    return AddOne(g, GemmOp(), like.params, std::move(inputs), output_name);
  }
  if (b == kNoValue) return AddOne(g, MatMulOp(), Params(), {x, w}, output_name);
  ASSIGN_OR_RETURN(const ValueId product,
                   AddOne(g, MatMulOp(), Params(), {x, w}, fresh(absl::StrCat(output_name, "_product"))));
  return AddOne(g, AddOp(), Params(), {product, b}, output_name);
}

}  // namespace

std::optional<std::pair<ValueId, ValueId>> SameShapeSum(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (node.op != &AddOp() || node.inputs.size() != 2) return std::nullopt;
  const ValueId a = node.inputs[0], b = node.inputs[1];
  const Value &va = g.value(a), &vb = g.value(b);
  if (va.dtype != DataType::kFloat32 || !va.shape_known || !vb.shape_known || va.shape != vb.shape) return std::nullopt;
  return std::make_pair(a, b);
}

std::optional<LinearLayer> MatchLinearLayer(const Graph& g, const UseIndex& uses, NodeId n) {
  const Node& node = g.node(n);
  LinearLayer layer;
  if (node.op == &GemmOp() && node.inputs.size() >= 2 && GemmIsProductWithBias(node.params, g.InputInfos(node))) {
    layer = LinearLayer{n,
                        n,
                        node.inputs[0],
                        node.inputs[1],
                        node.inputs.size() > 2 ? node.inputs[2] : kNoValue,
                        node.params,
                        /*gemm=*/true};
    if (!IsFloatOfRank(g, layer.x, 2)) return std::nullopt;
  } else if (const std::optional<ProductWithBias> p = MatchProductWithBias(g, uses, n)) {
    layer = LinearLayer{n, p->product, p->x, p->weights, p->bias, Params(), /*gemm=*/false};
  } else if (node.op == &MatMulOp() && node.inputs.size() == 2) {
    layer = LinearLayer{n, n, node.inputs[0], node.inputs[1], kNoValue, Params(), /*gemm=*/false};
  } else {
    return std::nullopt;
  }
  if (!IsFloatOfRankFrom2(g, layer.x) || !IsFloatOfRank(g, layer.weights, 2) ||
      g.ConstantData(layer.weights) == nullptr || !IsConstant(g, layer.bias))
    return std::nullopt;
  return layer;
}

bool LayersAlike(const Graph& g, const LinearLayer& a, const LinearLayer& b) {
  if (a.gemm != b.gemm || !(a.params == b.params) || g.value(a.weights).shape != g.value(b.weights).shape) return false;
  if ((a.bias == kNoValue) != (b.bias == kNoValue)) return false;
  return a.bias == kNoValue || g.value(a.bias).shape == g.value(b.bias).shape;
}

std::optional<GatedTerm> MatchGatedTerm(const Graph& g, const UseIndex& uses, NodeId mul) {
  const Node& node = g.node(mul);
  if (node.op != &Op("Mul") || node.inputs.size() != 2) return std::nullopt;
  for (int side : {0, 1}) {
    const ValueId scale = node.inputs[side], product = node.inputs[1 - side];
    const NodeId slice = g.value(scale).producer, layer_node = g.value(product).producer;
    if (slice == kNoNode || layer_node == kNoNode || uses.SoleReader(product) != mul) continue;
    const std::optional<int64_t> column = SlicedColumn(g, g.node(slice));
    const std::optional<LinearLayer> layer = MatchLinearLayer(g, uses, layer_node);
    if (!column || !layer) continue;
    const Shape& out = g.value(product).shape;
    if (g.value(scale).shape != WithLast(out, 1) || g.value(node.outputs[0]).shape != out) continue;
    return GatedTerm{mul, slice, g.node(slice).inputs[0], *column, *layer};
  }
  return std::nullopt;
}

bool IsElementwiseActivation(const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  for (absl::string_view name : {"Relu", "Gelu", "Sigmoid", "Tanh"})
    if (node.op == OpRegistry::Global().Find(name)) return true;
  return false;
}

absl::StatusOr<ValueId> AddSideBySide(Graph& g, ValueId x, const std::vector<LayerWeights>& layers,
                                      const LinearLayer& like,
                                      absl::FunctionRef<std::string(absl::string_view)> fresh) {
  ASSIGN_OR_RETURN(const ValueId weights, AddJoinedWeights(g, layers, like, /*along_outputs=*/true, fresh));
  ValueId bias = kNoValue;
  if (layers[0].bias != kNoValue) {
    std::vector<ValueId> biases;
    for (const LayerWeights& layer : layers) biases.push_back(layer.bias);
    ASSIGN_OR_RETURN(bias, AddConcat(g, biases, 0, fresh(absl::StrCat(g.value(biases[0]).name, "_joined"))));
  }
  return AddProduct(g, x, weights, bias, like, fresh(absl::StrCat(g.value(x).name, "_side_by_side")), fresh);
}

absl::StatusOr<ValueId> AddGatedStack(Graph& g, ValueId hidden, ValueId gate, const std::vector<LayerWeights>& layers,
                                      const LinearLayer& like, const std::string& output_name,
                                      absl::FunctionRef<std::string(absl::string_view)> fresh) {
  const Shape& shape = g.value(hidden).shape;
  const int64_t n = static_cast<int64_t>(layers.size()), width = shape.back() / n;
  const std::vector<int64_t> leading(shape.size() - 1, 0);  // Reshape's 0: the dimension kept
  auto view = [&](ValueId v, std::vector<int64_t> last) {
    std::vector<int64_t> target = leading;
    target.insert(target.end(), last.begin(), last.end());
    return AddReshape(g, v, std::move(target), fresh);
  };
  ASSIGN_OR_RETURN(const ValueId grouped, view(hidden, {n, width}));
  ASSIGN_OR_RETURN(const ValueId gate_column, view(gate, {n, 1}));
  ASSIGN_OR_RETURN(const ValueId scaled,
                   AddOne(g, Op("Mul"), Params(), {grouped, gate_column}, fresh(absl::StrCat(output_name, "_gated"))));
  ASSIGN_OR_RETURN(const ValueId rows, view(scaled, {n * width}));
  ASSIGN_OR_RETURN(const ValueId weights, AddJoinedWeights(g, layers, like, /*along_outputs=*/false, fresh));
  ValueId gated_bias = kNoValue;
  if (layers[0].bias != kNoValue) {
    ASSIGN_OR_RETURN(const ValueId biases, AddStackedBiases(g, layers, fresh));
    const LinearLayer unbiased{.gemm = like.gemm};
    ASSIGN_OR_RETURN(gated_bias, AddProduct(g, gate, biases, kNoValue, unbiased,
                                            fresh(absl::StrCat(output_name, "_gated_bias")), fresh));
  }
  return AddProduct(g, rows, weights, gated_bias, like, output_name, fresh);
}

}  // namespace taso::ops
