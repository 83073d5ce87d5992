// LoRA MLP: a transformer feed-forward block (d 768, hidden 3072, exact GELU) whose two
// linear layers carry unmerged rank-16 adapters, y = x W^T + b + s (x A) B, written as
// PyTorch 1.13 exports them: Gemm(transB=1) for nn.Linear, MatMul for the bias-free
// adapter products. ModelOptions::batch is the number of tokens (2-D activations).
#include <cmath>

#include "models/builder.h"
#include "models/lora.h"
#include "models/models.h"
#include "taso/ir/ops/names.h"

namespace taso::models {
namespace {

constexpr int64_t kLoraModel = 768;
constexpr int64_t kLoraHidden = 3072;

// GELU as torch.nn.functional.gelu exports it: x * 0.5 * (1 + erf(x / sqrt(2))).
ValueId Gelu(ModelBuilder& b, ValueId x) {
  ValueId erf = b.Op(op_names::kErf, {}, {b.Op(op_names::kDiv, {}, {x, b.Scalar("sqrt2", std::sqrt(2.0f))})});
  ValueId one_plus = b.Add(erf, b.Scalar("one", 1.0f));
  return b.Mul(b.Mul(x, one_plus), b.Scalar("half", 0.5f));
}

}  // namespace

absl::StatusOr<OnnxModel> BuildLoraMlp(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId x = b.Input("x", {o.batch, kLoraModel});
  ValueId h = Gelu(b, LoraLinear(b, x, kLoraHidden));
  return b.Finish({LoraLinear(b, h, kLoraModel)}, "lora_mlp");
}

}  // namespace taso::models
