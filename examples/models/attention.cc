#include "models/attention.h"

#include <cmath>
#include <vector>
#include "taso/ir/ops/names.h"

namespace taso::models {
namespace {

// [tokens, d] -> [heads, tokens, d / heads] permuted by `perm` from [tokens, heads, dh].
ValueId SplitHeads(ModelBuilder& b, ValueId x, int64_t heads, std::vector<int64_t> perm) {
  const int64_t tokens = b.shape(x)[0], model = b.shape(x)[1];
  ValueId r = b.Op(op_names::kReshape, {}, {x, b.Int64s("shape", {tokens, heads, model / heads})});
  return b.Op(op_names::kTranspose, Params().Set("perm", std::move(perm)), {r});
}

}  // namespace

ValueId MultiHeadAttention(ModelBuilder& b, ValueId q, ValueId k, ValueId v, int64_t heads) {
  const int64_t tokens = b.shape(q)[0], model = b.shape(q)[1];
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(model / heads)));
  ValueId scores =
      b.Mul(b.Op(op_names::kMatMul, {}, {SplitHeads(b, q, heads, {1, 0, 2}), SplitHeads(b, k, heads, {1, 2, 0})}),
            b.Scalar("scale", scale));
  ValueId probs = b.Op(op_names::kSoftmax, Params().Set("axis", int64_t{-1}), {scores});
  ValueId context = b.Op(op_names::kTranspose, Params().Set("perm", std::vector<int64_t>{1, 0, 2}),
                         {b.Op(op_names::kMatMul, {}, {probs, SplitHeads(b, v, heads, {1, 0, 2})})});
  return b.Op(op_names::kReshape, {}, {context, b.Int64s("shape", {tokens, model})});
}

ValueId SelfAttentionBlock(ModelBuilder& b, ValueId x, int64_t heads, const Projection& project) {
  const int64_t model = b.shape(x)[1];
  ValueId q = project(x, model);
  ValueId k = project(x, model);
  ValueId v = project(x, model);
  return b.Add(x, project(MultiHeadAttention(b, q, k, v, heads), model));
}

}  // namespace taso::models
