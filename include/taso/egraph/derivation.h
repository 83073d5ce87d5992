// Which e-nodes of the input graph each e-node was derived from by rewriting, so that
// saturation can tell when two merges join the same products (whatever order or
// nesting their concatenations take) and apply only the first.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "taso/egraph/egraph.h"

namespace taso::egraph {

class Derivation {
 public:
  // The input-graph e-nodes `n` was derived from, sorted: `n` itself where no rule
  // added it.
  std::vector<ENodeId> SourcesOf(ENodeId n) const;
  // The union of the matched e-nodes' sources, sorted; empty when two of them share a
  // source (a merge of something with a part of itself).
  std::vector<ENodeId> DisjointSources(const std::vector<ENodeId>& matched) const;
  // Records that the e-nodes numbered [first, end) were added by a match of `matched`.
  void Record(const std::vector<ENodeId>& matched, ENodeId first, ENodeId end);

 private:
  // The matched e-nodes' sources together, sorted, a shared one as often as shared.
  std::vector<ENodeId> AllSources(const std::vector<ENodeId>& matched) const;

  absl::flat_hash_map<ENodeId, std::vector<ENodeId>> sources_;  // only e-nodes rules added
};

}  // namespace taso::egraph
