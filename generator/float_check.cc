#include "float_check.h"

#include <cmath>
#include <map>

#include "replay.h"
#include "taso/ir/rng.h"

namespace taso::gen {
namespace {

bool Close(const Tensor<float>& a, const Tensor<float>& b) {
  if (a.shape != b.shape) return false;
  float scale = 1;
  for (float v : a.data) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < a.data.size(); ++i)
    if (!(std::fabs(a.data[i] - b.data[i]) <= 1e-4f * scale)) return false;
  return true;
}

// Whether input `i` of a trial is drawn negative. Pattern 0 mixes signs within every
// tensor; the others give each input one sign (activations negative and weights positive,
// the reverse, alternating, all negative), which breaks equalities that hold only with high
// probability on small mixed-sign tensors: max pooling of a convolution is almost never
// negative everywhere, but can be.
bool Negative(int pattern, size_t i, bool activation) {
  switch (pattern) {
    case 1:
      return activation;
    case 2:
      return !activation;
    case 3:
      return i % 2 == 0;
    case 4:
      return i % 2 == 1;
    default:
      return true;
  }
}

void Fill(Tensor<float>& t, Rng& rng, int pattern, bool negative) {
  const double lo = pattern == 0 ? -1 : (negative ? -1 : 0.05);
  const double hi = pattern == 0 ? 1 : (negative ? -0.05 : 1);
  for (float& v : t.data) v = static_cast<float>(rng.Uniform(lo, hi));
}

constexpr size_t kTrialMemoBytes = 8 << 20;  // per trial and thread

}  // namespace

FloatChecker::FloatChecker(const OpSet& set, int threads) : set_(set) {
  std::vector<Shape> base;
  for (const GenInput& in : set.inputs) base.push_back(in.shape);
  auto add = [&](std::vector<Shape> shapes, int pattern) {
    Trial trial{std::move(shapes), pattern, 1234 + 977 * trials_.size(), {}};
    Rng rng(trial.seed);
    for (size_t i = 0; i < trial.shapes.size(); ++i) {
      Tensor<float> x(trial.shapes[i]);
      Fill(x, rng, trial.pattern, Negative(trial.pattern, i, set_.inputs[i].activation));
      trial.inputs.push_back(std::move(x));
    }
    trials_.push_back(std::move(trial));
  };
  // Sizes mapped value by value keep sizes that are equal by coincidence equal (and odd
  // ones odd); the second map catches most rules that held only at the generator's sizes.
  static const std::vector<std::map<int64_t, int64_t>> kValueMaps = {
      {{1, 3}, {3, 5}, {4, 2}, {5, 9}}, {{4, 6}, {5, 7}}, {{1, 2}, {4, 2}, {5, 6}}};
  auto mapped = [&](const std::map<int64_t, int64_t>& m) {
    std::vector<Shape> shapes = base;
    for (Shape& s : shapes)
      for (int64_t& d : s) d = m.count(d) ? m.at(d) : d;
    return shapes;
  };
  // Cheap and telling trials first: most wrong candidates fail one of them.
  add(base, 0);
  add(mapped(kValueMaps[0]), 0);
  add(mapped(kValueMaps[1]), 0);
  for (int p = 1; p <= 5; ++p) add(base, p);
  add(mapped(kValueMaps[0]), 1);
  add(mapped(kValueMaps[0]), 4);
  add(mapped(kValueMaps[1]), 2);
  add(mapped(kValueMaps[2]), 0);
  add(mapped(kValueMaps[2]), 3);
  // Then each class of dimensions changed on its own: batch 1 or 2, channels 3 to 5,
  // images 5 to 8, matrices 3 to 6, kernel sizes by 0 or 2 (they stay odd).
  Rng rng(99);
  for (int trial = 0; trial < 4; ++trial) {
    std::map<std::string, int64_t> change = {{"n", rng.Next() % 2},
                                             {"c", rng.Next() % 3 - 1},
                                             {"h", rng.Next() % 4},
                                             {"w", rng.Next() % 4},
                                             {"m", rng.Next() % 4 - 1}};
    std::vector<Shape> shapes = base;
    for (size_t i = 0; i < shapes.size(); ++i)
      for (size_t d = 0; d < shapes[i].size(); ++d) {
        const std::string& cls = set.inputs[i].dim_classes[d];
        shapes[i][d] += cls == "k" ? 2 * static_cast<int64_t>(rng.Next() % 2) : change[cls];
      }
    add(std::move(shapes), trial % 2 == 0 ? 0 : 1 + trial);
  }
  memos_.resize(std::max(1, threads));
  for (auto& per_trial : memos_)
    for (const Trial& trial : trials_)
      per_trial.push_back(std::make_unique<KernelMemo<float>>(trial.inputs, kTrialMemoBytes));
}

FloatChecker::TrialResult FloatChecker::InTrial(const Check& c, size_t t, int thread) const {
  const Trial& trial = trials_[t];
  KernelMemo<float>& memo = *memos_.at(thread)[t];
  memo.MakeRoom();  // no replay of this trial is held
  // The fresh values are a function of the trial and the output's position, so both
  // sides get the same ones.
  auto fill = [&](int k, Tensor<float>& out) {
    Rng fresh(trial.seed * 31 + static_cast<uint64_t>(k) + 7);
    Fill(out, fresh, trial.pattern, k % 2 == 0);
  };
  ReplacedOp<float> ra{c.fresh_a, fill}, rb{c.fresh_b, fill};
  auto a = Replay<float>(set_, c.a, trial.inputs, c.fresh_a >= 0 ? &ra : nullptr, &memo);
  if (!a.ok()) return TrialResult::kUndefined;
  auto b = Replay<float>(set_, c.b, trial.inputs, c.fresh_b >= 0 ? &rb : nullptr, &memo);
  if (!b.ok()) return TrialResult::kUndefined;
  for (auto [x, y] : c.equal)
    if (!Close(a->tensor(x), b->tensor(y))) return TrialResult::kDiffers;
  return TrialResult::kAgrees;
}

bool FloatChecker::Holds(const Check& c, int thread) const { return HoldsAll(absl::MakeConstSpan(&c, 1), thread)[0]; }

// Both must be defined in the first trial (the generator's sizes); elsewhere a trial
// where either is not says nothing.
std::vector<bool> FloatChecker::HoldsAll(absl::Span<const Check> checks, int thread) const {
  std::vector<bool> holds(checks.size(), true);
  for (size_t t = 0; t < trials_.size(); ++t)
    for (size_t i = 0; i < checks.size(); ++i) {
      if (!holds[i]) continue;
      const TrialResult r = InTrial(checks[i], t, thread);
      holds[i] = r == TrialResult::kAgrees || (r == TrialResult::kUndefined && t > 0);
    }
  return holds;
}

}  // namespace taso::gen
