// Scaled dot-product self-attention over heads, as PyTorch 1.13 exports a transformer
// layer on 2-D activations [tokens, d]: each projection reshaped to [tokens, heads, dh]
// and transposed, softmax(q k^T / sqrt(dh)) v per head, the heads joined back.
#pragma once

#include <cstdint>

#include "models/builder.h"

namespace taso::models {

// q, k, v [tokens, d] -> the attended values [tokens, d] (before the output projection).
ValueId MultiHeadAttention(ModelBuilder& b, ValueId q, ValueId k, ValueId v, int64_t heads);

}  // namespace taso::models
