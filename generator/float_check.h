// Float checks of a candidate rule: both graphs run on the same random inputs in [-1, 1],
// at the generator's sizes and at other sizes, and must agree wherever both are defined.
// Fingerprints only say two graphs are probably equal at one size; rules are
// shape-agnostic, so they must also hold where sizes equal by coincidence are not.
#pragma once

#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/node_hash_map.h"

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
  explicit FloatChecker(const OpSet& set);
  // True if both graphs are defined at the generator's sizes and agree there and in every
  // other trial where both are defined.
  bool Holds(const Check& c) const;

 private:
  struct Trial {
    std::vector<Shape> shapes;  // per generator input
    int pattern;                // 0: mixed signs, else which inputs are negative
    uint64_t seed;
    std::vector<Tensor<float>> inputs;  // drawn once: checks are many, trials few
  };
  using Memos = std::vector<std::unique_ptr<KernelMemo<float>>>;  // per trial
  Memos& MemosOfThisThread() const;

  const OpSet& set_;
  std::vector<Trial> trials_;  // the first at the generator's sizes
  mutable std::mutex mu_;
  mutable absl::node_hash_map<std::thread::id, Memos> memos_;  // one thread uses each; stable
};

}  // namespace taso::gen
