// ResNet-50 and ResNeXt-50 (32x4d), as torchvision defines them: bottleneck blocks
// [3, 4, 6, 3], stride on the 3x3 convolution, Conv + BatchNormalization + Relu. And
// RegNetX-200MF (Radosavovic et al. 2020), whose X blocks are such bottlenecks without
// the widening (bottleneck ratio 1) and with groups of 8 channels.
#include "models/builder.h"
#include "models/models.h"

namespace taso::models {
namespace {

ValueId ConvBn(ModelBuilder& b, ValueId x, int64_t out, int64_t k, int64_t stride, int64_t group, bool relu) {
  const int64_t p = k / 2;
  ValueId y = b.BatchNorm(b.Conv(x, out, k, k, stride, {p, p, p, p}, group));
  return relu ? b.Relu(y) : y;
}

ValueId Bottleneck(ModelBuilder& b, ValueId x, int64_t width, int64_t out, int64_t stride, int64_t groups) {
  ValueId y = ConvBn(b, x, width, 1, 1, 1, true);
  y = ConvBn(b, y, width, 3, stride, groups, true);
  y = ConvBn(b, y, out, 1, 1, 1, false);
  ValueId shortcut = x;
  if (stride != 1 || b.shape(x)[1] != out) shortcut = ConvBn(b, x, out, 1, stride, 1, false);
  return b.Relu(b.Add(y, shortcut));
}

absl::StatusOr<OnnxModel> BuildResNetFamily(const ModelOptions& o, int64_t groups, int64_t width_per_group,
                                            const std::string& name) {
  ModelBuilder b(o.seed);
  const int64_t size = o.image_size ? o.image_size : 224;
  ValueId x = b.Input("input", {o.batch, 3, size, size});
  x = b.Relu(b.BatchNorm(b.Conv(x, 64, 7, 7, 2, {3, 3, 3, 3})));
  x = b.MaxPool(x, 3, 2, {1, 1, 1, 1});
  const int64_t blocks[4] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = 64 << stage;
    const int64_t width = planes * width_per_group / 64 * groups;
    for (int64_t i = 0; i < blocks[stage]; ++i)
      x = Bottleneck(b, x, width, planes * 4, (i == 0 && stage > 0) ? 2 : 1, groups);
  }
  return b.Finish({b.Classifier(x, 1000)}, name);
}

}  // namespace

absl::StatusOr<OnnxModel> BuildRegNetX200(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  const int64_t size = o.image_size ? o.image_size : 224;
  ValueId x = b.Input("input", {o.batch, 3, size, size});
  x = ConvBn(b, x, 32, 3, 2, 1, true);  // the stem
  constexpr int64_t kGroupWidth = 8;
  const int64_t widths[4] = {24, 56, 152, 368}, depths[4] = {1, 1, 4, 7};
  for (int stage = 0; stage < 4; ++stage)
    for (int64_t i = 0; i < depths[stage]; ++i)
      x = Bottleneck(b, x, widths[stage], widths[stage], i == 0 ? 2 : 1, widths[stage] / kGroupWidth);
  return b.Finish({b.Classifier(x, 1000)}, "regnetx_200mf");
}

absl::StatusOr<OnnxModel> BuildResNet50(const ModelOptions& o) { return BuildResNetFamily(o, 1, 64, "resnet50"); }
absl::StatusOr<OnnxModel> BuildResNeXt50(const ModelOptions& o) { return BuildResNetFamily(o, 32, 4, "resnext50"); }

}  // namespace taso::models
