// A BERT encoder: sequence 64, hidden 1024, 16 heads, 8 layers (TASO's BERT depth). Each
// layer is multi-head self-attention and a GELU feed-forward block, each with a residual
// connection and LayerNorm, written with primitive operators as exporters emit them:
// LayerNorm = ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add;
// GELU = x * 0.5 * (1 + Erf(x / sqrt(2))).
#include <cmath>

#include "models/builder.h"
#include "models/models.h"
#include "taso/ir/ops/names.h"

namespace taso::models {
namespace {

constexpr int64_t kSeq = 64, kHidden = 1024, kHeads = 16, kFfn = 4096;

struct Bert {
  ModelBuilder& b;

  ValueId Linear(ValueId x, int64_t out) {
    const int64_t in = b.shape(x).back();
    ValueId w = b.Weight("w", {in, out}, std::sqrt(3.0 / in));
    ValueId bias = b.Weight("b", {out}, 0.02);
    return b.Add(b.Op(op_names::kMatMul, {}, {x, w}), bias);
  }
  ValueId Heads(ValueId x, std::vector<int64_t> perm) {  // [seq, hidden] -> per-head layout
    ValueId r = b.Op(op_names::kReshape, {}, {x, b.Int64s("shape", {kSeq, kHeads, kHidden / kHeads})});
    return b.Op(op_names::kTranspose, Params().Set("perm", perm), {r});
  }
  ValueId LayerNorm(ValueId x) {
    const Params last = Params().Set("axes", std::vector<int64_t>{-1}).Set("keepdims", int64_t{1});
    ValueId mean = b.Op(op_names::kReduceMean, last, {x});
    ValueId d = b.Op(op_names::kSub, {}, {x, mean});
    ValueId var = b.Op(op_names::kReduceMean, last, {b.Op(op_names::kPow, {}, {d, b.Scalar("two", 2.0f)})});
    ValueId stddev = b.Op(op_names::kSqrt, {}, {b.Add(var, b.Scalar("eps", 1e-12f))});
    ValueId n = b.Op(op_names::kDiv, {}, {d, stddev});
    return b.Add(b.Mul(n, b.WeightRange("gamma", {kHidden}, 0.9, 1.1)), b.Weight("beta", {kHidden}, 0.05));
  }
  ValueId Gelu(ValueId x) {
    ValueId e = b.Op(op_names::kErf, {},
                     {b.Op(op_names::kDiv, {}, {x, b.Scalar("sqrt2", static_cast<float>(std::sqrt(2.0)))})});
    ValueId y = b.Mul(x, b.Add(e, b.Scalar("one", 1.0f)));
    return b.Mul(y, b.Scalar("half", 0.5f));
  }
  ValueId Layer(ValueId x) {
    ValueId q = Heads(Linear(x, kHidden), {1, 0, 2});  // [heads, seq, dk]
    ValueId k = Heads(Linear(x, kHidden), {1, 2, 0});  // [heads, dk, seq]
    ValueId v = Heads(Linear(x, kHidden), {1, 0, 2});
    ValueId scores = b.Mul(b.Op(op_names::kMatMul, {}, {q, k}),
                           b.Scalar("scale", static_cast<float>(1.0 / std::sqrt(double(kHidden / kHeads)))));
    ValueId probs = b.Op(op_names::kSoftmax, Params().Set("axis", int64_t{-1}), {scores});
    ValueId ctx = b.Op(op_names::kTranspose, Params().Set("perm", std::vector<int64_t>{1, 0, 2}),
                       {b.Op(op_names::kMatMul, {}, {probs, v})});
    ctx = b.Op(op_names::kReshape, {}, {ctx, b.Int64s("shape", {kSeq, kHidden})});
    ValueId h = LayerNorm(b.Add(x, Linear(ctx, kHidden)));
    return LayerNorm(b.Add(h, Linear(Gelu(Linear(h, kFfn)), kHidden)));
  }
};

}  // namespace

absl::StatusOr<OnnxModel> BuildBert(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  Bert bert{b};
  ValueId x = b.Input("input", {kSeq, kHidden});
  const int64_t layers = o.layers ? o.layers : 8;
  for (int64_t i = 0; i < layers; ++i) x = bert.Layer(x);
  return b.Finish({x}, "bert");
}

}  // namespace taso::models
