// Task heads: eight small heads Linear(768, 64) -> ReLU -> Linear(64, 4) on one shared
// feature [1, 768], as multi-task models put them on a shared trunk. Each head is its
// own graph output, as multi-task models return one prediction per task.
#include <string>

#include "models/builder.h"
#include "models/models.h"

namespace taso::models {
namespace {

constexpr int64_t kFeature = 768;
constexpr int64_t kHeadHidden = 64;
constexpr int64_t kHeadOut = 4;
constexpr int kHeads = 8;

}  // namespace

absl::StatusOr<OnnxModel> BuildTaskHeads(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  ValueId feature = b.Input("feature", {o.batch, kFeature});
  std::vector<ValueId> outputs;
  for (int i = 0; i < kHeads; ++i) {
    outputs.push_back(b.Linear(b.Relu(b.Linear(feature, kHeadHidden)), kHeadOut));
  }
  return b.Finish(outputs, "task_heads");
}

}  // namespace taso::models
