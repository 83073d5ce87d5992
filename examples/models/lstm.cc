// LSTM: an LSTM cell written in primitive operators, as hand-written cells are exported
// (two nn.Linear layers, the input's and the state's, their sum split into four gates),
// unrolled over 5 steps with its weights shared by every step. Input and hidden size 512;
// the first state is a model input, and the model returns the last hidden and cell state.
#include <string>

#include "models/builder.h"
#include "models/models.h"
#include "taso/ir/ops/names.h"

namespace taso::models {
namespace {

constexpr int64_t kLstmHidden = 512;

struct LstmWeights {
  ModelBuilder::LinearWeights input;  // [4 * hidden, input]
  ModelBuilder::LinearWeights state;  // [4 * hidden, hidden]
};

struct LstmState {
  ValueId h;
  ValueId c;
};

// gates = x W_i^T + b_i + h W_h^T + b_h, split into input, forget, cell and output gates.
LstmState LstmStep(ModelBuilder& b, const LstmWeights& w, const LstmState& s, ValueId x) {
  ValueId gates = b.Add(b.Linear(x, w.input), b.Linear(s.h, w.state));
  Params chunks;
  chunks.Set("axis", int64_t{1}).Set("sizes", std::vector<int64_t>(4, kLstmHidden));
  std::vector<ValueId> g = b.OpN(op_names::kSplit, chunks, {gates});
  if (g.size() != 4) return s;  // the builder has kept the error
  auto sig = [&](ValueId v) { return b.Op(op_names::kSigmoid, {}, {v}); };
  auto tanh = [&](ValueId v) { return b.Op(op_names::kTanh, {}, {v}); };
  ValueId c = b.Add(b.Mul(sig(g[1]), s.c), b.Mul(sig(g[0]), tanh(g[2])));
  return {b.Mul(sig(g[3]), tanh(c)), c};
}

}  // namespace

absl::StatusOr<OnnxModel> BuildLstm(const ModelOptions& o) {
  ModelBuilder b(o.seed);
  const int64_t steps = o.layers ? o.layers : 5;
  std::vector<ValueId> xs;
  for (int64_t i = 0; i < steps; ++i) xs.push_back(b.Input("x" + std::to_string(i), {o.batch, kLstmHidden}));
  LstmState state{b.Input("h0", {o.batch, kLstmHidden}), b.Input("c0", {o.batch, kLstmHidden})};
  const LstmWeights weights{b.LinearLayer(kLstmHidden, 4 * kLstmHidden), b.LinearLayer(kLstmHidden, 4 * kLstmHidden)};
  for (ValueId x : xs) state = LstmStep(b, weights, state, x);
  return b.Finish({state.h, state.c}, "lstm");
}

}  // namespace taso::models
