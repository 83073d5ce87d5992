// Per-head attention: a causal self-attention block (d 768, 12 heads of 64) written one
// head at a time, as minimal GPT implementations do (a list of heads, each with its own
// query, key and value nn.Linear(768, 64)), exported by PyTorch 1.13: 36 small products
// of one input, a causal mask added to each head's scores, the heads concatenated, the
// output projection and the residual. ModelOptions::batch is the number of tokens.
// Merging the 36 projections into one product is the rewrite this model is for.
#include <cmath>
#include <vector>

#include "models/builder.h"
#include "models/models.h"
#include "taso/ir/ops/names.h"

namespace taso::models {
namespace {

constexpr int64_t kHeadsModel = 768;
constexpr int64_t kHeadCount = 12;
constexpr int64_t kHeadSize = kHeadsModel / kHeadCount;

// One head: softmax(q k^T / sqrt(dh) + mask) v, [tokens, dh].
ValueId Head(ModelBuilder& b, ValueId x, ValueId mask) {
  ValueId k = b.Linear(x, kHeadSize), q = b.Linear(x, kHeadSize), v = b.Linear(x, kHeadSize);
  ValueId k_t = b.Op(op_names::kTranspose, Params().Set("perm", std::vector<int64_t>{1, 0}), {k});
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(kHeadSize)));
  ValueId scores = b.Add(b.Mul(b.Op(op_names::kMatMul, {}, {q, k_t}), b.Scalar("scale", scale)), mask);
  return b.Op(op_names::kMatMul, {}, {b.Op(op_names::kSoftmax, Params().Set("axis", int64_t{-1}), {scores}), v});
}

}  // namespace

absl::StatusOr<OnnxModel> BuildHeadAttention(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId x = b.Input("x", {o.batch, kHeadsModel});
  // 0 on and below the diagonal, -10000 above (as transformers' extended attention
  // masks are written): a token attends to itself and those before it.
  std::vector<float> masked(o.batch * o.batch, 0.0f);
  for (int64_t i = 0; i < o.batch; ++i)
    for (int64_t j = i + 1; j < o.batch; ++j) masked[i * o.batch + j] = -10000.0f;
  ValueId mask = b.Floats("causal_mask", {o.batch, o.batch}, std::move(masked));
  std::vector<ValueId> heads;
  for (int64_t h = 0; h < kHeadCount; ++h) heads.push_back(Head(b, x, mask));
  ValueId context = b.Concat(heads, 1);
  return b.Finish({b.Add(x, b.Linear(context, kHeadsModel))}, "head_attention");
}

}  // namespace taso::models
