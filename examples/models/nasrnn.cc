// NasRNN: the recurrent cell found by neural architecture search, as in TASO's
// evaluation: hidden size 512, unrolled over 5 steps, each step combining the input and
// the state through eight pairs of matrix multiplications.
#include <cmath>

#include "models/builder.h"
#include "models/models.h"
#include "taso/ir/ops/names.h"

namespace taso::models {
namespace {

constexpr int64_t kNasRnnHidden = 512;

ValueId Combine(ModelBuilder& b, ValueId x, ValueId h) {
  const double bound = std::sqrt(3.0 / kNasRnnHidden) / 2;
  ValueId wx = b.Weight("w_x", {b.shape(x)[1], kNasRnnHidden}, bound);
  ValueId wh = b.Weight("w_h", {b.shape(h)[1], kNasRnnHidden}, bound);
  return b.Add(b.Op(op_names::kMatMul, {}, {x, wx}), b.Op(op_names::kMatMul, {}, {h, wh}));
}

ValueId NasCell(ModelBuilder& b, ValueId state, ValueId x) {
  ValueId t[8];
  for (ValueId& v : t) v = Combine(b, x, state);
  auto sig = [&](ValueId v) { return b.Op(op_names::kSigmoid, {}, {v}); };
  auto tanh = [&](ValueId v) { return b.Op(op_names::kTanh, {}, {v}); };
  ValueId m0 = b.Add(b.Relu(t[0]), sig(t[3]));
  ValueId m1 = b.Add(sig(t[1]), tanh(t[2]));
  ValueId m2 = b.Mul(sig(t[4]), tanh(t[5]));
  ValueId m3 = b.Mul(sig(t[6]), b.Relu(t[7]));
  ValueId m4 = b.Mul(sig(m1), tanh(m2));
  ValueId m5 = b.Mul(tanh(m0), tanh(m3));
  ValueId m6 = b.Mul(tanh(m4), tanh(m5));
  return tanh(m6);
}

}  // namespace

absl::StatusOr<OnnxModel> BuildNasRnn(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  const int64_t steps = o.layers ? o.layers : 5;
  std::vector<ValueId> xs;
  for (int64_t i = 0; i < steps; ++i) xs.push_back(b.Input("x" + std::to_string(i), {o.batch, kNasRnnHidden}));
  ValueId state = b.Weight("initial_state", {o.batch, kNasRnnHidden}, 0.5);
  for (ValueId x : xs) state = NasCell(b, state, x);
  return b.Finish({state}, "nasrnn");
}

}  // namespace taso::models
