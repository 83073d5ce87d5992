// Candidate rules: pairs of graphs with equal fingerprints, each output of one matched to
// an output of the other by its hash (TASO section 2.3). Not yet checked on floats.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "enumerator.h"
#include "replay.h"

namespace taso::gen {

// Two graphs whose outputs are probably equal: a.outputs[i] with b.outputs[i].
struct Candidate {
  GraphCode a, b;
  std::vector<int> a_outputs, b_outputs;
  std::array<uint8_t, kMaxOps> a_op_outputs{}, b_op_outputs{};  // outputs per operator
};

// Pairs the graphs of groups sharing a fingerprint, on `threads` threads, each with a
// kernel memo kept from one call to the next (making one per call, each slice of
// groups, cost more in page faults than the pairing).
class Pairer {
 public:
  Pairer(const Enumerator& e, int threads);
  ~Pairer();
  // The candidates in `groups` (sorted by fingerprint, whole groups only), in a
  // deterministic order.
  std::vector<Candidate> PairUp(absl::Span<const Fingerprinted> groups);

 private:
  const Enumerator& e_;
  const int threads_;
  std::vector<std::unique_ptr<KernelMemo<uint32_t>>> memos_;  // per thread
};

}  // namespace taso::gen
