// A linear layer with an unmerged low-rank adapter, as fine-tuned checkpoints (PEFT's
// LoRA) are exported by PyTorch 1.13: y = x W^T + b + s (x A) B, the base layer a
// Gemm(transB=1) with its bias, the adapter two bias-free MatMuls scaled by s.
#pragma once

#include <cstdint>

#include "models/builder.h"

namespace taso::models {

inline constexpr int64_t kLoraRank = 16;
inline constexpr float kLoraScale = 2.0f;  // LoRA alpha / rank

// x [tokens, in] -> [tokens, out], with A [in, kLoraRank] and B [kLoraRank, out].
ValueId LoraLinear(ModelBuilder& b, ValueId x, int64_t out);

}  // namespace taso::models
