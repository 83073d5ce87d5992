// LoRA attention: a self-attention block (d 768, 12 heads) whose query, key, value and
// output projections each carry an unmerged rank-16 adapter (models/lora.h), as PEFT
// fine-tunes every attention projection and PyTorch 1.13 exports them, with the residual.
// ModelOptions::batch is the number of tokens. Folding the adapters into the
// projections' weights is the rewrite this model is for.
#include "models/attention.h"
#include "models/builder.h"
#include "models/lora.h"
#include "models/models.h"

namespace taso::models {

absl::StatusOr<OnnxModel> BuildLoraAttention(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId x = b.Input("x", {o.batch, 768});
  ValueId y = SelfAttentionBlock(b, x, 12, [&](ValueId in, int64_t out) { return LoraLinear(b, in, out); });
  return b.Finish({y}, "lora_attention");
}

}  // namespace taso::models
