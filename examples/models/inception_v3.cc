// Inception-v3 as torchvision defines it (without the auxiliary classifier): every
// convolution is Conv + BatchNormalization(eps 0.001) + Relu; average pools count padding.
#include "models/builder.h"
#include "models/models.h"

namespace taso::models {
namespace {

struct Inception {
  ModelBuilder& b;

  ValueId Conv(ValueId x, int64_t out, int64_t kh, int64_t kw, int64_t stride = 1, int64_t ph = 0, int64_t pw = 0) {
    return b.Relu(b.BatchNorm(b.Conv(x, out, kh, kw, stride, {ph, pw, ph, pw}), 0.001));
  }
  ValueId PoolBranch(ValueId x, int64_t out) { return Conv(b.AvgPool(x, 3, 1, {1, 1, 1, 1}, true), out, 1, 1); }

  ValueId A(ValueId x, int64_t pool_features) {
    ValueId b1 = Conv(x, 64, 1, 1);
    ValueId b5 = Conv(Conv(x, 48, 1, 1), 64, 5, 5, 1, 2, 2);
    ValueId b3 = Conv(Conv(Conv(x, 64, 1, 1), 96, 3, 3, 1, 1, 1), 96, 3, 3, 1, 1, 1);
    return b.Concat({b1, b5, b3, PoolBranch(x, pool_features)}, 1);
  }
  ValueId B(ValueId x) {
    ValueId b3 = Conv(x, 384, 3, 3, 2);
    ValueId dbl = Conv(Conv(Conv(x, 64, 1, 1), 96, 3, 3, 1, 1, 1), 96, 3, 3, 2);
    return b.Concat({b3, dbl, b.MaxPool(x, 3, 2, {0, 0, 0, 0})}, 1);
  }
  ValueId C(ValueId x, int64_t c7) {
    ValueId b1 = Conv(x, 192, 1, 1);
    ValueId b7 = Conv(Conv(Conv(x, c7, 1, 1), c7, 1, 7, 1, 0, 3), 192, 7, 1, 1, 3, 0);
    ValueId d = Conv(x, c7, 1, 1);
    d = Conv(d, c7, 7, 1, 1, 3, 0);
    d = Conv(d, c7, 1, 7, 1, 0, 3);
    d = Conv(d, c7, 7, 1, 1, 3, 0);
    d = Conv(d, 192, 1, 7, 1, 0, 3);
    return b.Concat({b1, b7, d, PoolBranch(x, 192)}, 1);
  }
  ValueId D(ValueId x) {
    ValueId b3 = Conv(Conv(x, 192, 1, 1), 320, 3, 3, 2);
    ValueId b7 = Conv(x, 192, 1, 1);
    b7 = Conv(b7, 192, 1, 7, 1, 0, 3);
    b7 = Conv(b7, 192, 7, 1, 1, 3, 0);
    b7 = Conv(b7, 192, 3, 3, 2);
    return b.Concat({b3, b7, b.MaxPool(x, 3, 2, {0, 0, 0, 0})}, 1);
  }
  ValueId E(ValueId x) {
    ValueId b1 = Conv(x, 320, 1, 1);
    ValueId b3 = Conv(x, 384, 1, 1);
    b3 = b.Concat({Conv(b3, 384, 1, 3, 1, 0, 1), Conv(b3, 384, 3, 1, 1, 1, 0)}, 1);
    ValueId d = Conv(Conv(x, 448, 1, 1), 384, 3, 3, 1, 1, 1);
    d = b.Concat({Conv(d, 384, 1, 3, 1, 0, 1), Conv(d, 384, 3, 1, 1, 1, 0)}, 1);
    return b.Concat({b1, b3, d, PoolBranch(x, 192)}, 1);
  }
};

}  // namespace

absl::StatusOr<OnnxModel> BuildInceptionV3(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  Inception net{b};
  const int64_t size = o.image_size ? o.image_size : 299;
  ValueId x = b.Input("input", {o.batch, 3, size, size});
  x = net.Conv(x, 32, 3, 3, 2);
  x = net.Conv(x, 32, 3, 3);
  x = net.Conv(x, 64, 3, 3, 1, 1, 1);
  x = b.MaxPool(x, 3, 2, {0, 0, 0, 0});
  x = net.Conv(x, 80, 1, 1);
  x = net.Conv(x, 192, 3, 3);
  x = b.MaxPool(x, 3, 2, {0, 0, 0, 0});
  x = net.A(x, 32);
  x = net.A(x, 64);
  x = net.A(x, 64);
  x = net.B(x);
  for (int64_t c7 : {128, 160, 160, 192}) x = net.C(x, c7);
  x = net.D(x);
  x = net.E(x);
  x = net.E(x);
  return b.Finish({b.Classifier(x, 1000)}, "inception_v3");
}

}  // namespace taso::models
