// Copying a graph into a new one node by node (internal to the rewriter, the fusions,
// the weight folder and the layout assignment): graph inputs first, weights when first
// read (so unread ones disappear), nodes as the caller orders them, outputs under their
// names. Names for what the copy adds are fresh in both graphs.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "taso/ir/graph.h"

namespace taso {

// How GraphCopy::FreshName numbers a name made from a base.
enum class NameStyle {
  kNumbered,          // base_0, base_1, ...
  kBaseThenNumbered,  // base itself, then base_2, base_3, ...
};

class GraphCopy {
 public:
  explicit GraphCopy(const Graph& old) : old_(old), remap_(old.num_values(), kNoValue) {}

  absl::Status CopyInputs();
  // Whether every value is made already (or is a weight, made on first use).
  bool Available(const std::vector<ValueId>& values) const;
  // The new value standing for old value `v`, adding a weight on first use.
  absl::StatusOr<ValueId> Use(ValueId v);
  absl::Status CopyNode(NodeId n);
  // Adds old node `n` to the new graph reading `inputs`, its outputs named `names`, with
  // `params` for a library operator (an opaque node is copied whole). The old outputs are
  // not mapped to the new ones: the caller does that.
  absl::StatusOr<std::vector<ValueId>> AddNodeLike(NodeId n, Params params, std::vector<ValueId> inputs,
                                                   std::vector<std::string> names);
  // Old value `v` is now `now` of the new graph.
  void Replace(ValueId v, ValueId now) { remap_[v] = now; }
  // Old value `v` is now a weight holding `data`, under v's name, added on first use
  // like the old graph's weights (so a folded result nothing reads is not written).
  void ReplaceByWeight(ValueId v, TensorDataPtr data) { folded_[v] = std::move(data); }
  // Old value `v` is now whatever old value `first` becomes, made on first use of either.
  void ReplaceBySameAs(ValueId v, ValueId first) { same_as_[v] = first; }
  bool Made(ValueId v) const { return remap_[v] != kNoValue; }
  // A name that no value of the old or the new graph has and that was not handed out
  // before (a node's output names are all chosen before the node is added).
  std::string FreshName(absl::string_view base, NameStyle style);
  absl::StatusOr<Graph> Finish();

  const Graph& old() const { return old_; }
  Graph& graph() { return new_; }

 private:
  const Graph& old_;
  Graph new_;
  std::vector<ValueId> remap_;
  absl::flat_hash_map<ValueId, TensorDataPtr> folded_;  // weights to add on first use
  absl::flat_hash_map<ValueId, ValueId> same_as_;       // values standing for another
  absl::flat_hash_set<std::string> handed_out_;
  // Per base, the number the next search for a free numbered name starts from: names
  // below it are taken, so a copy handing out n names of one base stays linear in n.
  absl::flat_hash_map<std::string, int64_t> next_number_;
};

}  // namespace taso
