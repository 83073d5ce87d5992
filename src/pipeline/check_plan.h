// What the self-check runs of a graph checked against the input graph, given which of
// their values are the same tensor (pipeline/value_numbering.h): a rewritten model
// computes most of what the input computes exactly as the input does, and a model written
// as read all of it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "taso/ir/graph.h"

namespace taso::pipeline {

// `after`'s part of a check against `before`.
struct CheckPlan {
  // Check points where both graphs have the same number: copied from the input's run.
  absl::flat_hash_set<std::string> alike_keys;
  // The library nodes of `after` that compute the other check points (RunPart::nodes).
  std::vector<bool> after_nodes;
  // What those nodes read that `before` computes alike, taken from its run: (value of
  // `after`, value of `before`).
  std::vector<std::pair<ValueId, ValueId>> borrowed;
  // Every check point of each graph is one of the other's, alike: nothing need run.
  bool all_alike = false;
};

// Borrowed values held for each input scale are bounded: past this many bytes, `after`
// computes everything it compares itself.
inline constexpr int64_t kMaxBorrowedBytes = int64_t{1} << 30;

// `before_numbers` and `after_numbers`: from one ValueNumbering.
CheckPlan PlanCheck(const Graph& before, const std::vector<uint32_t>& before_numbers, const Graph& after,
                    const std::vector<uint32_t>& after_numbers);

// The library nodes of `graph` that compute `values`, not going past values in `given`
// (nor graph inputs, weights and opaque nodes' outputs, which a cut run is fed).
std::vector<bool> NodesComputing(const Graph& graph, const std::vector<ValueId>& values,
                                 const absl::flat_hash_set<ValueId>& given);

}  // namespace taso::pipeline
