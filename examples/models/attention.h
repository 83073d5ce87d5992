// Scaled dot-product self-attention over heads, as PyTorch 1.13 exports a transformer
// layer on 2-D activations [tokens, d]: each projection reshaped to [tokens, heads, dh]
// and transposed, softmax(q k^T / sqrt(dh)) v per head, the heads joined back.
#pragma once

#include <cstdint>
#include <functional>

#include "models/builder.h"

namespace taso::models {

// q, k, v [tokens, d] -> the attended values [tokens, d] (before the output projection).
ValueId MultiHeadAttention(ModelBuilder& b, ValueId q, ValueId k, ValueId v, int64_t heads);

// A linear layer [tokens, in] -> [tokens, out].
using Projection = std::function<ValueId(ValueId x, int64_t out)>;

// x + O(attention(Q(x), K(x), V(x))), each projection made by `project` in that order
// (so that the weights are drawn in that order), d the width of x.
ValueId SelfAttentionBlock(ModelBuilder& b, ValueId x, int64_t heads, const Projection& project);

}  // namespace taso::models
