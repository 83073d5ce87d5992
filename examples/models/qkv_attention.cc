// QKV attention: one self-attention block (d 768, 12 heads) whose query, key and value
// projections are three separate linear layers on the same input, as PyTorch 1.13 exports
// nn.Linear on 2-D activations (Gemm, transB=1, with a bias), then scaled dot-product
// attention, the output projection and the residual. ModelOptions::batch is the number of
// tokens. Merging the three projections into one product is the rewrite this model is for.
#include <cmath>

#include "models/builder.h"
#include "models/models.h"

namespace taso::models {
namespace {

constexpr int64_t kModel = 768;
constexpr int64_t kHeads = 12;

// [tokens, d] -> [heads, tokens, d / heads] permuted by `perm` from [tokens, heads, dh].
ValueId Heads(ModelBuilder& b, ValueId x, std::vector<int64_t> perm) {
  const int64_t tokens = b.shape(x)[0];
  ValueId r = b.Op("Reshape", {}, {x, b.Int64s("shape", {tokens, kHeads, kModel / kHeads})});
  return b.Op("Transpose", Params().Set("perm", std::move(perm)), {r});
}

}  // namespace

absl::StatusOr<OnnxModel> BuildQkvAttention(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId x = b.Input("x", {o.batch, kModel});
  ValueId q = Heads(b, b.Linear(x, kModel), {1, 0, 2});  // [heads, tokens, dh]
  ValueId k = Heads(b, b.Linear(x, kModel), {1, 2, 0});  // [heads, dh, tokens]
  ValueId v = Heads(b, b.Linear(x, kModel), {1, 0, 2});
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(kModel / kHeads)));
  ValueId scores = b.Mul(b.Op("MatMul", {}, {q, k}), b.Scalar("scale", scale));
  ValueId probs = b.Op("Softmax", Params().Set("axis", int64_t{-1}), {scores});
  ValueId context =
      b.Op("Transpose", Params().Set("perm", std::vector<int64_t>{1, 0, 2}), {b.Op("MatMul", {}, {probs, v})});
  context = b.Op("Reshape", {}, {context, b.Int64s("shape", {o.batch, kModel})});
  return b.Finish({b.Add(x, b.Linear(context, kModel))}, "qkv_attention");
}

}  // namespace taso::models
