// The candidates' canonical forms, held compactly (issue 46): at K=4 over every operator
// there are over ten million. A form is known by a 128-bit hash of its canonical string
// (two strings that differ have the same key with probability 2^-128 per pair), and
// stands for the first candidate that had it, packed into a fixed-size record; the
// records stay in memory up to a budget and go to disk past it.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "candidates.h"
#include "spill.h"

namespace taso::gen {

struct FormKey {
  uint64_t lo = 0, hi = 0;
  bool operator==(const FormKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const FormKey& k) {
    return H::combine(std::move(h), k.lo);  // already uniform
  }
};

// MurmurHash3 (x64, 128 bits) of a canonical string, with a fixed seed: the same key in
// every run.
FormKey KeyOf(std::string_view canonical);

// A candidate as a fixed-size record.
inline constexpr int kMaxPackedOutputs = 2 * kMaxOps;
struct PackedCandidate {
  GraphCode a, b;
  uint8_t outputs = 0;  // on each side
  uint8_t a_outputs[kMaxPackedOutputs] = {}, b_outputs[kMaxPackedOutputs] = {};
  uint8_t a_op_outputs[kMaxOps] = {}, b_op_outputs[kMaxOps] = {};
};

// False where the candidate has more outputs than a record holds.
bool Pack(const Candidate& c, PackedCandidate* out);
Candidate Unpack(const PackedCandidate& p);

// Forms numbered in the order they were first seen.
class FormStore {
 public:
  FormStore(SpillFolder* folder, uint64_t memory_bytes) : candidates_(folder, "forms.bin", memory_bytes) {}

  // The form's number, or -1.
  int64_t Find(const FormKey& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? int64_t{-1} : static_cast<int64_t>(it->second);
  }
  // Adds the form if its key is new (with `c` standing for it); true if it was.
  absl::StatusOr<bool> Insert(const FormKey& key, const PackedCandidate& c);
  size_t size() const { return candidates_.size(); }
  uint64_t disk_bytes() const { return candidates_.disk_bytes(); }

  // Forms [lo, lo + n) into out[0..n); several threads may read at once.
  absl::Status Read(size_t lo, size_t n, PackedCandidate* out) const { return candidates_.Read(lo, n, out); }

 private:
  absl::flat_hash_map<FormKey, uint32_t> index_;
  RecordFile<PackedCandidate> candidates_;
};

}  // namespace taso::gen
