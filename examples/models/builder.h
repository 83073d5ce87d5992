// A small helper for building models in code: names values, draws deterministic random
// weights, and keeps the first error so model code reads as a plain sequence of layers.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/rng.h"
#include "taso/onnx/onnx_io.h"

namespace taso::models {

class ModelBuilder {
 public:
  explicit ModelBuilder(uint64_t seed) : rng_(seed) {}

  ValueId Input(const std::string& name, Shape shape);
  // Uniform in [-bound, bound].
  ValueId Weight(const std::string& hint, Shape shape, double bound);
  // Uniform in [lo, hi).
  ValueId WeightRange(const std::string& hint, Shape shape, double lo, double hi);
  // A constant of the given values, in row-major order.
  ValueId Floats(const std::string& hint, Shape shape, std::vector<float> values);
  ValueId Scalar(const std::string& hint, float value);
  ValueId Int64s(const std::string& hint, std::vector<int64_t> values);
  // A library operator with one output (or the first of several).
  ValueId Op(const std::string& op, Params params, std::vector<ValueId> inputs, const std::string& hint = "");
  std::vector<ValueId> OpN(const std::string& op, Params params, std::vector<ValueId> inputs,
                           const std::string& hint = "");

  // Conv2D with a He-scaled random kernel; pads are [top, left, bottom, right].
  ValueId Conv(ValueId x, int64_t out_channels, int64_t kh, int64_t kw, int64_t stride, std::vector<int64_t> pads,
               int64_t group = 1, bool relu = false, bool bias = false);
  // BatchNormalization with random statistics around the identity.
  ValueId BatchNorm(ValueId x, double epsilon = 1e-5);
  ValueId Relu(ValueId x) { return Op(op_names::kRelu, {}, {x}); }
  ValueId Add(ValueId a, ValueId b) { return Op(op_names::kAdd, {}, {a, b}); }
  ValueId Mul(ValueId a, ValueId b) { return Op(op_names::kMul, {}, {a, b}); }
  ValueId MaxPool(ValueId x, int64_t k, int64_t stride, std::vector<int64_t> pads);
  ValueId AvgPool(ValueId x, int64_t k, int64_t stride, std::vector<int64_t> pads, bool count_include_pad);
  ValueId Concat(std::vector<ValueId> xs, int64_t axis);
  // nn.Linear on a 2-D input as PyTorch 1.13 exports it: Gemm(x, W, b, transB=1), W
  // [out, in] and b drawn in that order, uniform in +-1/sqrt(in) (PyTorch's default).
  ValueId Linear(ValueId x, int64_t out);
  // The weight [out, in] and bias [out] of such a layer, for layers applied more than once
  // (a recurrent cell's, shared by every step), drawn as Linear draws them.
  struct LinearWeights {
    ValueId weight = kNoValue;
    ValueId bias = kNoValue;
  };
  LinearWeights LinearLayer(int64_t in, int64_t out);
  ValueId Linear(ValueId x, const LinearWeights& layer);
  // Global average pool, flatten and a fully connected layer (Gemm).
  ValueId Classifier(ValueId x, int64_t classes);

  const Shape& shape(ValueId v) const;
  // Explicit pads of TensorFlow-style "same" padding for a k x k window (SAME_UPPER).
  std::vector<int64_t> SamePads(ValueId x, int64_t k, int64_t stride) const;

  absl::StatusOr<OnnxModel> Finish(std::vector<ValueId> outputs, const std::string& name);

 private:
  std::string Name(const std::string& hint);
  Graph graph_;
  Rng rng_;
  absl::Status status_;
  int counter_ = 0;
};

}  // namespace taso::models
