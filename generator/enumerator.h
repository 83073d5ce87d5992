// Enumeration of every operator graph with at most K operators over an OpSet (TASO
// Algorithm 1): depth-first, each DAG once (its canonical operator order), never two
// operators doing the same computation on the same inputs, and of the graphs that differ
// only by which of some alike inputs they read, one (ReadsFirstAlike). Each graph is
// fingerprinted on fixed random integer inputs in the wrapping uint32 domain.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "op_set.h"

namespace taso::gen {

inline constexpr int kMaxOps = 5;

struct GenOp {
  uint8_t variant = 0;
  uint8_t in[3] = {};  // zero where unused: codes are compared as bytes
};

// A graph: its operators in canonical order. Tensor ids: the inputs first, then each
// operator's outputs in order. A graph with no operators stands for one input alone.
struct GraphCode {
  uint8_t num_ops = 0;
  uint8_t lone_input = 0;  // when num_ops == 0
  GenOp ops[kMaxOps];
  // What pairing needs of the outputs, set by the walk so that the graph need not be
  // replayed (SetOutputSummary): bit o where operator o has two outputs (else one), and
  // kOutputSummary where the summary is set; 2 bits per output (in id order): its place
  // among the graph's outputs ordered by hash, then id. Last, so that codes still compare
  // as bytes by their operators first.
  uint8_t two_output_ops = 0;
  uint8_t output_ranks = 0;
};

inline constexpr uint8_t kOutputSummary = 0x80;

// Sets the summary of a graph whose operator o has op_outputs[o] outputs and whose
// outputs (in id order) have these TensorHash values; leaves it unset where there are more
// than four outputs or an operator has more than two.
void SetOutputSummary(GraphCode& code, const int* op_outputs, const uint64_t* output_hashes, int num_outputs);

struct Fingerprinted {
  uint64_t fingerprint;
  GraphCode graph;
};

// Receives every graph enumerated; `thread` is the walking thread's number.
using GraphSink = std::function<void(int thread, uint64_t fingerprint, const GraphCode& code)>;

struct EnumerationLimits {
  int threads = 2;
  uint64_t max_bytes = 12ull << 30;  // memory for the enumerated graphs; past it, stop with an error
  // Called now and then with the share of branches done and the graphs found so far.
  std::function<void(double done, uint64_t graphs)> progress;
  // Asked now and then (with progress) while walking: an error stops the walk and is returned.
  std::function<absl::Status()> check;
  // Of a walk shared by `parts` processes, this one's: the first operators b with
  // b % parts == part (and the lone inputs in part 0).
  int part = 0, parts = 1;
};

class Enumerator {
 public:
  Enumerator(const OpSet& set, int max_ops, uint64_t seed);

  // Every graph with its fingerprint, sorted by fingerprint then code; with
  // `shared_only`, only the graphs whose fingerprint another graph has. `graphs`: how
  // many were enumerated.
  absl::StatusOr<std::vector<Fingerprinted>> Enumerate(const EnumerationLimits& limits, bool shared_only,
                                                       uint64_t* graphs) const;

  // Every graph to `sink`, from limits.threads threads at once, in no fixed order; the
  // graph count is not bounded by limits.max_bytes (the sink keeps what it keeps).
  absl::Status ForEachGraph(const EnumerationLimits& limits, const GraphSink& sink) const {
    return Run(limits, 0, sink);
  }

  const OpSet& op_set() const { return set_; }
  int max_ops() const { return max_ops_; }
  // The integer input tensors fingerprints are computed on.
  const std::vector<Tensor<uint32_t>>& inputs() const { return inputs_; }

  // Whether a graph reading the inputs in `read` (bit i: input i) reads, of each class of
  // alike inputs (EarlierAlike), the first ones: the graphs walked. Any other graph is
  // one of those with alike inputs renamed, and so is any rule it is a side of (both
  // sides compute the same values, so read the same inputs), which the rule finder tells
  // apart only up to renaming anyway.
  bool ReadsFirstAlike(uint32_t read) const {
    for (uint32_t later = read & has_earlier_; later != 0; later &= later - 1)
      if (!(read & earlier_bit_[__builtin_ctz(later)])) return false;
    return true;
  }

 private:
  friend class Walker;
  absl::Status Run(const EnumerationLimits& limits, uint64_t bytes_per_graph, const GraphSink& sink) const;

  OpSet set_;
  int max_ops_;
  std::vector<Tensor<uint32_t>> inputs_;
  uint32_t has_earlier_ = 0;           // the inputs with an earlier alike one (14 inputs at most)
  std::vector<uint32_t> earlier_bit_;  // per input: that one's bit
};

// 64-bit hash of a tensor's shape and contents (TASO's hash_1).
uint64_t TensorHash(const Tensor<uint32_t>& t);
// The symmetric per-output term of a fingerprint (TASO's hash_2 is their sum).
uint64_t OutputTerm(uint64_t tensor_hash);

}  // namespace taso::gen
