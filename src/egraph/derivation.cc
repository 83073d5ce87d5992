#include "taso/egraph/derivation.h"

#include <algorithm>

namespace taso::egraph {

std::vector<ENodeId> Derivation::SourcesOf(ENodeId n) const {
  auto it = sources_.find(n);
  return it == sources_.end() ? std::vector<ENodeId>{n} : it->second;
}

std::vector<ENodeId> Derivation::AllSources(const std::vector<ENodeId>& matched) const {
  std::vector<ENodeId> all;
  for (ENodeId n : matched) {
    const std::vector<ENodeId> sources = SourcesOf(n);
    all.insert(all.end(), sources.begin(), sources.end());
  }
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<ENodeId> Derivation::DisjointSources(const std::vector<ENodeId>& matched) const {
  std::vector<ENodeId> all = AllSources(matched);
  if (std::adjacent_find(all.begin(), all.end()) != all.end()) return {};
  return all;
}

void Derivation::Record(const std::vector<ENodeId>& matched, ENodeId first, ENodeId end) {
  if (first >= end) return;
  std::vector<ENodeId> all = AllSources(matched);
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (ENodeId n = first; n < end; ++n) sources_[n] = all;
}

}  // namespace taso::egraph
