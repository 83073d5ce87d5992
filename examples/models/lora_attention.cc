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
namespace {

constexpr int64_t kModel = 768;
constexpr int64_t kHeads = 12;

}  // namespace

absl::StatusOr<OnnxModel> BuildLoraAttention(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId x = b.Input("x", {o.batch, kModel});
  ValueId q = LoraLinear(b, x, kModel), k = LoraLinear(b, x, kModel), v = LoraLinear(b, x, kModel);
  ValueId context = MultiHeadAttention(b, q, k, v, kHeads);
  return b.Finish({b.Add(x, LoraLinear(b, context, kModel))}, "lora_attention");
}

}  // namespace taso::models
