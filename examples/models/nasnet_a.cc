// NasNet-A with the normal and reduction cells of TASO's evaluation: three stages of five
// normal cells, each followed by a reduction cell, over 224x224 images. Separable
// convolutions are a depth-wise (grouped) convolution followed by a 1x1 convolution; the
// 3x3 average pools count padding.
#include "models/builder.h"
#include "models/models.h"

namespace taso::models {
namespace {

struct NasNet {
  ModelBuilder& b;

  ValueId Squeeze(ValueId x, int64_t out) { return b.Conv(x, out, 1, 1, 1, {0, 0, 0, 0}, 1, true); }
  // Brings `x` to the channels and size of `cur`.
  ValueId Fit(ValueId cur, ValueId x) {
    if (b.shape(x)[2] == b.shape(cur)[2]) return Squeeze(x, b.shape(cur)[1]);
    return b.Conv(x, b.shape(cur)[1], 3, 3, 2, b.SamePads(x, 3, 2), 1, true);
  }
  ValueId Separable(ValueId x, int64_t out, int64_t k, int64_t stride) {
    ValueId depthwise = b.Conv(x, out, k, k, stride, b.SamePads(x, k, stride), out);
    return b.Conv(depthwise, out, 1, 1, 1, {0, 0, 0, 0});
  }
  ValueId Avg(ValueId x, int64_t stride) { return b.AvgPool(x, 3, stride, b.SamePads(x, 3, stride), true); }
  ValueId Max(ValueId x, int64_t stride) { return b.MaxPool(x, 3, stride, b.SamePads(x, 3, stride)); }

  ValueId Normal(ValueId prev, ValueId cur, int64_t out) {
    cur = Squeeze(cur, out);
    prev = Fit(cur, prev);
    ValueId t[10] = {Separable(cur, out, 3, 1),
                     cur,
                     Separable(prev, out, 3, 1),
                     Separable(cur, out, 3, 1),
                     Avg(cur, 1),
                     prev,
                     Avg(prev, 1),
                     Avg(prev, 1),
                     Separable(prev, out, 3, 1),
                     Separable(prev, out, 3, 1)};
    std::vector<ValueId> outputs;
    for (int i = 0; i < 5; ++i) outputs.push_back(b.Add(t[2 * i], t[2 * i + 1]));
    return b.Concat(outputs, 1);
  }

  ValueId Reduction(ValueId prev, ValueId cur, int64_t out) {
    cur = Squeeze(cur, out);
    prev = Fit(cur, prev);
    std::vector<ValueId> o;
    o.push_back(b.Add(Separable(prev, out, 7, 2), Separable(cur, out, 5, 2)));
    o.push_back(b.Add(Max(cur, 2), Separable(prev, out, 7, 2)));
    o.push_back(b.Add(Avg(cur, 2), Separable(prev, out, 5, 2)));
    o.push_back(b.Add(Max(cur, 2), Separable(o[0], out, 3, 1)));
    o.push_back(b.Add(Avg(o[0], 1), o[1]));
    return b.Concat(o, 1);
  }
};

}  // namespace

absl::StatusOr<OnnxModel> BuildNasNetA(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  NasNet net{b};
  const int64_t size = o.image_size ? o.image_size : 224;
  ValueId x = b.Input("input", {o.batch, 3, size, size});
  x = b.Conv(x, 64, 7, 7, 2, b.SamePads(x, 7, 2), 1, true);
  x = net.Max(x, 2);
  int64_t channels = 128;
  const int64_t cells = o.layers ? o.layers : 5;
  for (int stage = 0; stage < 3; ++stage) {
    ValueId prev = x, cur = x;
    for (int64_t j = 0; j < cells; ++j) {
      ValueId next = net.Normal(prev, cur, channels);
      prev = cur;
      cur = next;
    }
    channels *= 2;
    x = net.Reduction(prev, cur, channels);
  }
  return b.Finish({b.Classifier(x, 1000)}, "nasnet_a");
}

}  // namespace taso::models
