// Copying a graph into a new one node by node (internal to the rewriter and the weight
// folder): graph inputs first, weights when first read (so unread ones disappear), nodes
// as the caller orders them, outputs under their names.
#pragma once

#include "taso/graph.h"

namespace taso {

class GraphCopy {
 public:
  explicit GraphCopy(const Graph& old) : old_(old), remap_(old.num_values(), kNoValue) {}

  absl::Status CopyInputs();
  // Whether every value is made already (or is a weight, made on first use).
  bool Available(const std::vector<ValueId>& values) const;
  // The new value standing for old value `v`, adding a weight on first use.
  absl::StatusOr<ValueId> Use(ValueId v);
  absl::Status CopyNode(NodeId n);
  // Old value `v` is now `now` of the new graph.
  void Replace(ValueId v, ValueId now) { remap_[v] = now; }
  bool Made(ValueId v) const { return remap_[v] != kNoValue; }
  absl::StatusOr<Graph> Finish();

  const Graph& old() const { return old_; }
  Graph& graph() { return new_; }

 private:
  const Graph& old_;
  Graph new_;
  std::vector<ValueId> remap_;
};

}  // namespace taso
