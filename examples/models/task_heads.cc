// Task heads: eight small heads Linear(768, 64) -> ReLU -> Linear(64, 4) on one shared
// feature [1, 768], as multi-task models put them on a shared trunk. Each head is its
// own graph output, as multi-task models return one prediction per task.
#include <cmath>
#include <string>

#include "models/builder.h"
#include "models/models.h"

namespace taso::models {
namespace {

constexpr int64_t kFeature = 768;
constexpr int64_t kHeadHidden = 64;
constexpr int64_t kHeadOut = 4;
constexpr int kHeads = 8;

// nn.Linear on a 2-D input as PyTorch 1.13 exports it: Gemm(x, W, b, transB=1).
ValueId Linear(ModelBuilder& b, ValueId x, int64_t out) {
  const int64_t in = b.shape(x)[1];
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  ValueId w = b.Weight("weight", {out, in}, bound);
  ValueId bias = b.Weight("bias", {out}, bound);
  return b.Op("Gemm", Params().Set("transB", int64_t{1}), {x, w, bias});
}

}  // namespace

absl::StatusOr<OnnxModel> BuildTaskHeads(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId feature = b.Input("feature", {o.batch, kFeature});
  std::vector<ValueId> outputs;
  for (int i = 0; i < kHeads; ++i) {
    outputs.push_back(Linear(b, b.Relu(Linear(b, feature, kHeadHidden)), kHeadOut));
  }
  return b.Finish(outputs, "task_heads");
}

}  // namespace taso::models
