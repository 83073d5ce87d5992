// Which values of two graphs are the same tensor in the self-check's cut runs
// (pipeline/cut_run.h), so that a graph checked against the input need not compute again
// what it computes exactly as the input does.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso::pipeline {

// Numbers the values of the graphs given to it, all with one table. Two values get the
// same number exactly when a cut run fed alike by name makes them the same tensor: run-time
// inputs and opaque nodes' outputs by name and type (cut runs feed them by name), constants
// (weights and Constant nodes' outputs) by content, a library node's output computed from
// constants only by its content too (computed here, as folding computes it: a model
// written folds such nodes into weights), and any other library node's output by its
// operator, parameters, output type and the numbers of its inputs (the reference kernels
// are deterministic). Exact: keys are compared, not only hashed.
class ValueNumbering {
 public:
  // Per value of `graph`, its number (never 0). Fails on a cycle.
  absl::StatusOr<std::vector<uint32_t>> Number(const Graph& graph);

 private:
  struct FedKey {  // a value fed by name
    bool opaque_output;
    std::string name;
    DataType dtype;
    Shape shape;
    uint32_t default_data;  // an initializer that is also an input: its data's number
    bool operator==(const FedKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const FedKey& k) {
      return H::combine(std::move(h), k.opaque_output, k.name, static_cast<int>(k.dtype), k.shape, k.default_data);
    }
  };
  struct ComputedKey {  // a library node's output
    const OpDef* op;
    Params params;
    std::vector<uint32_t> inputs;  // 0 for an absent optional input
    int output;
    DataType dtype;
    Shape shape;
    bool operator==(const ComputedKey& o) const {
      return op == o.op && output == o.output && dtype == o.dtype && shape == o.shape && inputs == o.inputs &&
             params == o.params;
    }
    template <typename H>
    friend H AbslHashValue(H h, const ComputedKey& k) {
      return H::combine(std::move(h), k.op, k.params.Hash(), k.inputs, k.output, static_cast<int>(k.dtype), k.shape);
    }
  };

  uint32_t DataNumber(const TensorDataPtr& data);
  uint32_t FedNumber(const Graph& graph, ValueId v);
  uint32_t ComputedNumber(const Graph& graph, const Node& node, int output, const std::vector<uint32_t>& numbers);
  uint32_t Next() { return next_++; }

  uint32_t next_ = 1;
  // Every data numbered, held so that no other data takes its address.
  absl::flat_hash_map<const TensorData*, std::pair<TensorDataPtr, uint32_t>> data_by_address_;
  // By content hash, the first data numbered with each content (compared whole on a match).
  absl::flat_hash_map<uint64_t, std::vector<std::pair<TensorDataPtr, uint32_t>>> data_by_hash_;
  absl::flat_hash_map<FedKey, uint32_t> fed_;
  absl::flat_hash_map<ComputedKey, uint32_t> computed_;
};

}  // namespace taso::pipeline
