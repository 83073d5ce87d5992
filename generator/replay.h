// Re-running one enumerated graph on given input tensors (any sizes), in the float or
// the uint32 domain, keeping each dimension's concatenation history so split points and
// the symbolic sizes of rules can be read off.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "enumerator.h"

namespace taso::gen {

// A dimension's history: a leaf (born as dimension `dim` of tensor `tensor`) or the
// concatenation of two dimensions.
struct DimNode {
  int left = -1, right = -1;
  int tensor = 0, dim = 0;
};

template <typename S>
struct Replayed {
  // Tensor ids: the inputs, then every operator's outputs. The inputs are the caller's
  // (replays are many; copying them was most of their cost).
  const std::vector<Tensor<S>>* inputs = nullptr;
  // Every operator's outputs, in order: the kernel memo's where one was used (it gives
  // the same outputs to every replay that computes them; copies were most of a replay's
  // cost, and counting references to shared ones a tenth of a float check), else `owned`.
  std::vector<const Tensor<S>*> produced;
  std::vector<std::unique_ptr<const Tensor<S>>> owned;
  const Tensor<S>& tensor(int id) const {
    const int n = static_cast<int>(inputs->size());
    return id < n ? (*inputs)[id] : *produced[id - n];
  }
  int num_tensors() const { return static_cast<int>(inputs->size() + produced.size()); }
  // Per tensor, per dimension (rank 4 at most): a DimNode index; only where an operator
  // splits (only splits read the histories), else both empty.
  std::vector<std::array<int, 4>> dims;
  std::vector<DimNode> nodes;
  std::vector<uint64_t> hashes;              // per tensor, its ContentHash where a memo was used
  std::vector<int> outputs;                  // the graph's outputs: tensors no operator reads
  std::vector<std::array<int64_t, 2>> cuts;  // per operator: split sizes (0 where none)
  std::vector<int> first_output;             // per operator: the id of its first output
};

// One operator whose outputs are replaced by other values, for checking a generalized
// rule in which they are a fresh input: `fill(k, t)` writes output k (its shape is set).
// Their dimensions have no concatenation history.
template <typename S>
struct ReplacedOp {
  int op = -1;
  std::function<void(int, Tensor<S>&)> fill;
};

// Kernel outputs by the contents of their inputs, for one set of input tensors: replaying
// millions of graphs over the same inputs then computes each shared subterm (a
// convolution of X by W1, ...) once, not in every graph that contains it. Used by one
// thread at a time. What Find returns, and the outputs of replays made with the memo,
// stay valid until MakeRoom, which forgets everything once the memo holds more than
// `max_bytes`: its users call it where they hold none of those.
template <typename S>
class KernelMemo {
 public:
  struct Key {
    int variant;
    uint64_t in0, in1, in2;  // content hashes (shape included), 0 past the arity
    int64_t cut0, cut1;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.variant, k.in0, k.in1, k.in2, k.cut0, k.cut1);
    }
  };
  // Held in the table itself (most operators have one output, none more than two that
  // are memoized often): a hit costs one cache miss, not one per vector.
  struct Entry {
    absl::InlinedVector<std::shared_ptr<const Tensor<S>>, 2> outputs;
    absl::InlinedVector<uint64_t, 2> hashes;  // of each output, by the hash its user keys inputs
                                              // with (Replay: ContentHash; the enumeration: TensorHash)
    DimSources sources;
  };
  KernelMemo(const std::vector<Tensor<S>>& inputs, size_t max_bytes);
  bool Serves(const std::vector<Tensor<S>>& inputs) const { return inputs_ == &inputs; }
  uint64_t input_hash(int i) const { return input_hashes_[i]; }
  const Entry* Find(const Key& key) const;
  void Add(const Key& key, Entry entry);
  void MakeRoom();

 private:
  const std::vector<Tensor<S>>* inputs_;
  std::vector<uint64_t> input_hashes_;
  size_t max_bytes_, bytes_ = 0;
  absl::flat_hash_map<Key, Entry> entries_;
};

// A hash of a tensor's shape and contents (bit patterns for floats), for memo keys only
// (fingerprints use TensorHash).
template <typename S>
uint64_t ContentHash(const Tensor<S>& t);

// Fails when a shape rule does not hold for these inputs, which must outlive the result.
// `memo`, where given for these inputs, supplies and keeps kernel outputs.
template <typename S>
absl::StatusOr<Replayed<S>> Replay(const OpSet& set, const GraphCode& code, const std::vector<Tensor<S>>& inputs,
                                   const ReplacedOp<S>* replaced = nullptr, KernelMemo<S>* memo = nullptr);

// The DimNode leaves under a node, left to right.
void Leaves(const std::vector<DimNode>& nodes, int node, std::vector<DimNode>& out);

}  // namespace taso::gen
