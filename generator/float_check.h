// Float checks of a candidate rule: both graphs run on the same random inputs in [-1, 1],
// at the generator's sizes and at other sizes, and must agree wherever both are defined.
// Fingerprints only say two graphs are probably equal at one size; rules are
// shape-agnostic, so they must also hold where sizes equal by coincidence are not.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "enumerator.h"
#include "replay.h"

namespace taso::gen {

// Two graphs over the generator's inputs and the tensors of each that must be equal.
struct Check {
  GraphCode a, b;
  std::vector<std::pair<int, int>> equal;  // tensor ids in a and in b
  // Operators (one per side, the same computation) whose outputs are replaced by the same
  // fresh random values: the check of a rule in which they are a fresh input.
  int fresh_a = -1, fresh_b = -1;
};

class FloatChecker {
 public:
  // `threads`: how many threads may check at once (ParallelForThreads' thread numbers).
  explicit FloatChecker(const OpSet& set, int threads = 1);
  // True if both graphs are defined at the generator's sizes and agree there and in every
  // other trial where both are defined. `thread` in [0, threads) names the caller.
  bool Holds(const Check& c, int thread = 0) const;
  // Holds of each check, found a trial at a time over all of them: one trial's kernel memo
  // then serves every check in turn while it is in the cache, where a check at a time
  // goes through every trial's memo, a cache miss at almost every step.
  std::vector<bool> HoldsAll(absl::Span<const Check> checks, int thread = 0) const;

 private:
  struct Trial {
    std::vector<Shape> shapes;  // per generator input
    int pattern;                // 0: mixed signs, else which inputs are negative
    uint64_t seed;
    std::vector<Tensor<float>> inputs;  // drawn once: checks are many, trials few
  };
  enum class TrialResult { kAgrees, kDiffers, kUndefined };  // kUndefined: a side fails to run
  TrialResult InTrial(const Check& c, size_t t, int thread) const;

  const OpSet& set_;
  std::vector<Trial> trials_;  // the first at the generator's sizes
  // Per thread, per trial: kernel outputs already computed on that trial's inputs.
  mutable std::vector<std::vector<std::unique_ptr<KernelMemo<float>>>> memos_;
};

}  // namespace taso::gen
