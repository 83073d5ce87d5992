// Candidate rules: pairs of graphs with equal fingerprints, each output of one matched to
// an output of the other by its hash (TASO section 2.3). Not yet checked on floats.
#pragma once

#include <array>
#include <vector>

#include "absl/types/span.h"
#include "enumerator.h"

namespace taso::gen {

// Two graphs whose outputs are probably equal: a.outputs[i] with b.outputs[i].
struct Candidate {
  GraphCode a, b;
  std::vector<int> a_outputs, b_outputs;
  std::array<uint8_t, kMaxOps> a_op_outputs{}, b_op_outputs{};  // outputs per operator
};

// The candidates in groups of graphs sharing a fingerprint (`groups` sorted by
// fingerprint, whole groups only), in a deterministic order.
std::vector<Candidate> PairUp(const Enumerator& e, absl::Span<const Fingerprinted> groups, int threads);

}  // namespace taso::gen
