// QKV attention: one self-attention block (d 768, 12 heads) whose query, key and value
// projections are three separate linear layers on the same input, as PyTorch 1.13 exports
// nn.Linear on 2-D activations (Gemm, transB=1, with a bias), then scaled dot-product
// attention, the output projection and the residual. ModelOptions::batch is the number of
// tokens. Merging the three projections into one product is the rewrite this model is for.
#include "models/attention.h"
#include "models/builder.h"
#include "models/models.h"

namespace taso::models {

absl::StatusOr<OnnxModel> BuildQkvAttention(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId x = b.Input("x", {o.batch, 768});
  ValueId y = SelfAttentionBlock(b, x, 12, [&](ValueId in, int64_t out) { return b.Linear(in, out); });
  return b.Finish({y}, "qkv_attention");
}

}  // namespace taso::models
