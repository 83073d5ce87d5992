#include "models/lora.h"

#include <cmath>
#include "taso/ir/ops/names.h"

namespace taso::models {

ValueId LoraLinear(ModelBuilder& b, ValueId x, int64_t out) {
  const int64_t in = b.shape(x)[1];
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  ValueId base = b.Linear(x, out);
  ValueId a = b.Weight("lora_A", {in, kLoraRank}, bound);
  ValueId up = b.Weight("lora_B", {kLoraRank, out}, 0.02);
  ValueId delta = b.Op(op_names::kMatMul, {}, {b.Op(op_names::kMatMul, {}, {x, a}), up});
  return b.Add(base, b.Mul(delta, b.Scalar("scaling", kLoraScale)));
}

}  // namespace taso::models
