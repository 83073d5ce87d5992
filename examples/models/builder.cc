#include "models/builder.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "taso/ir/ops/names.h"

namespace taso::models {

std::string ModelBuilder::Name(const std::string& hint) { return absl::StrCat(hint, "_", counter_++); }

const Shape& ModelBuilder::shape(ValueId v) const {
  static const Shape kEmpty;
  return v == kNoValue ? kEmpty : graph_.value(v).shape;
}

ValueId ModelBuilder::Input(const std::string& name, Shape shape) {
  if (!status_.ok()) return kNoValue;
  auto id = graph_.AddInput(name, DataType::kFloat32, std::move(shape));
  if (!id.ok()) status_ = id.status();
  return id.ok() ? *id : kNoValue;
}

ValueId ModelBuilder::WeightRange(const std::string& hint, Shape shape, double lo, double hi) {
  if (!status_.ok()) return kNoValue;
  std::vector<float> v(NumElements(shape));
  for (float& x : v) x = static_cast<float>(rng_.Uniform(lo, hi));
  auto id = graph_.AddWeight(Name(hint), TensorData::Float(std::move(shape), std::move(v)));
  if (!id.ok()) status_ = id.status();
  return id.ok() ? *id : kNoValue;
}

ValueId ModelBuilder::Weight(const std::string& hint, Shape shape, double bound) {
  return WeightRange(hint, std::move(shape), -bound, bound);
}

ValueId ModelBuilder::Floats(const std::string& hint, Shape shape, std::vector<float> values) {
  if (!status_.ok()) return kNoValue;
  auto id = graph_.AddWeight(Name(hint), TensorData::Float(std::move(shape), std::move(values)));
  if (!id.ok()) status_ = id.status();
  return id.ok() ? *id : kNoValue;
}

ValueId ModelBuilder::Scalar(const std::string& hint, float value) { return Floats(hint, {}, {value}); }

ValueId ModelBuilder::Int64s(const std::string& hint, std::vector<int64_t> values) {
  if (!status_.ok()) return kNoValue;
  const int64_t n = static_cast<int64_t>(values.size());
  auto id = graph_.AddWeight(Name(hint), TensorData::Int64({n}, std::move(values)));
  if (!id.ok()) status_ = id.status();
  return id.ok() ? *id : kNoValue;
}

std::vector<ValueId> ModelBuilder::OpN(const std::string& op, Params params, std::vector<ValueId> inputs,
                                       const std::string& hint) {
  if (!status_.ok()) return {kNoValue};
  auto def = OpRegistry::Global().Get(op);
  if (!def.ok()) {
    status_ = def.status();
    return {kNoValue};
  }
  auto outs = graph_.AddNode(*def, std::move(params), std::move(inputs), Name(hint.empty() ? op : hint));
  if (!outs.ok()) {
    status_ = outs.status();
    return {kNoValue};
  }
  return *outs;
}

ValueId ModelBuilder::Op(const std::string& op, Params params, std::vector<ValueId> inputs, const std::string& hint) {
  return OpN(op, std::move(params), std::move(inputs), hint)[0];
}

ValueId ModelBuilder::Conv(ValueId x, int64_t out_channels, int64_t kh, int64_t kw, int64_t stride,
                           std::vector<int64_t> pads, int64_t group, bool relu, bool bias) {
  if (!status_.ok()) return kNoValue;
  const int64_t in_channels = shape(x)[1];
  const int64_t fan_in = in_channels / group * kh * kw;
  ValueId w = Weight("conv_w", {out_channels, in_channels / group, kh, kw}, std::sqrt(3.0 / fan_in));
  std::vector<ValueId> inputs = {x, w};
  if (bias) inputs.push_back(Weight("conv_b", {out_channels}, 0.05));
  Params p;
  p.Set("strides", std::vector<int64_t>{stride, stride}).Set("pads", pads).Set("group", group);
  if (relu) p.Set("activation", "relu");
  return Op(op_names::kConv2D, p, inputs, "conv");
}

ValueId ModelBuilder::BatchNorm(ValueId x, double epsilon) {
  if (!status_.ok()) return kNoValue;
  const int64_t c = shape(x)[1];
  ValueId scale = WeightRange("bn_scale", {c}, 0.8, 1.2);
  ValueId bias = WeightRange("bn_bias", {c}, -0.1, 0.1);
  ValueId mean = WeightRange("bn_mean", {c}, -0.1, 0.1);
  ValueId var = WeightRange("bn_var", {c}, 0.8, 1.2);
  return Op(op_names::kBatchNormalization, Params().Set("epsilon", epsilon), {x, scale, bias, mean, var}, "bn");
}

ValueId ModelBuilder::MaxPool(ValueId x, int64_t k, int64_t stride, std::vector<int64_t> pads) {
  Params p;
  p.Set("kernel", std::vector<int64_t>{k, k}).Set("strides", std::vector<int64_t>{stride, stride}).Set("pads", pads);
  return Op(op_names::kMaxPool, p, {x}, "maxpool");
}

ValueId ModelBuilder::AvgPool(ValueId x, int64_t k, int64_t stride, std::vector<int64_t> pads, bool count_include_pad) {
  Params p;
  p.Set("kernel", std::vector<int64_t>{k, k}).Set("strides", std::vector<int64_t>{stride, stride}).Set("pads", pads);
  p.Set("count_include_pad", int64_t{count_include_pad ? 1 : 0});
  return Op(op_names::kAveragePool, p, {x}, "avgpool");
}

ValueId ModelBuilder::Concat(std::vector<ValueId> xs, int64_t axis) {
  return Op(op_names::kConcat, Params().Set("axis", axis), std::move(xs), "concat");
}

ValueId ModelBuilder::Linear(ValueId x, int64_t out) {
  if (!status_.ok()) return kNoValue;
  return Linear(x, LinearLayer(shape(x)[1], out));
}

ModelBuilder::LinearWeights ModelBuilder::LinearLayer(int64_t in, int64_t out) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  LinearWeights layer;
  layer.weight = Weight("weight", {out, in}, bound);
  layer.bias = Weight("bias", {out}, bound);
  return layer;
}

ValueId ModelBuilder::Linear(ValueId x, const LinearWeights& layer) {
  return Op(op_names::kGemm, Params().Set("transB", int64_t{1}), {x, layer.weight, layer.bias});
}

ValueId ModelBuilder::Classifier(ValueId x, int64_t classes) {
  ValueId pooled = Op(op_names::kGlobalAveragePool, {}, {x}, "gap");
  ValueId flat = Op(op_names::kFlatten, Params().Set("axis", int64_t{1}), {pooled}, "flatten");
  if (!status_.ok()) return kNoValue;
  const int64_t features = shape(flat)[1];
  ValueId w = Weight("fc_w", {classes, features}, std::sqrt(3.0 / features));
  ValueId b = Weight("fc_b", {classes}, 0.05);
  return Op(op_names::kGemm, Params().Set("transB", int64_t{1}), {flat, w, b}, "fc");
}

std::vector<int64_t> ModelBuilder::SamePads(ValueId x, int64_t k, int64_t stride) const {
  std::vector<int64_t> pads(4);
  for (int i = 0; i < 2; ++i) {
    const int64_t in = shape(x)[2 + i];
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>(0, (out - 1) * stride + k - in);
    pads[i] = total / 2;
    pads[i + 2] = total - total / 2;
  }
  return pads;
}

absl::StatusOr<OnnxModel> ModelBuilder::Finish(std::vector<ValueId> outputs, const std::string& name) {
  if (!status_.ok()) return absl::Status(status_.code(), absl::StrCat("building ", name, ": ", status_.message()));
  for (ValueId v : outputs)
    if (absl::Status s = graph_.AddOutput(v); !s.ok()) return s;
  return NewOnnxModel(std::move(graph_), kBuiltModelOpset, name);
}

}  // namespace taso::models
