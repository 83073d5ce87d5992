#include "taso/backends/measured_cost.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

#include "backends/timing.h"
#include "taso/ir/ops/matmul.h"
#include "taso/ir/status_macros.h"

namespace taso {

MeasuredCost::MeasuredCost(std::unique_ptr<CostCache> cache, std::string device)
    : cache_(std::move(cache)), device_(std::move(device)) {}

double MeasuredCost::NodeCost(const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  return Cost(*node.op, node.params, graph.InputInfos(node), graph.OutputTypes(node));
}

double MeasuredCost::Cost(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                          absl::Span<const OutputType> outputs, bool* measurable) {
  const CostKey key(op, params, inputs, outputs);
  auto it = memo_.find(key);
  if (it == memo_.end()) {
    const Known known = FindCanonical(key);
    it = memo_.try_emplace(key.Owned(), known).first;
  }
  if (measurable) *measurable = it->second.measured;
  return it->second.seconds;
}

// One kernel is kept under one key, however a node spells its parameters (a convolution
// imported with explicit pads and the same one rewritten with a padding mode): otherwise
// the two would be measured apart, at different moments, and two graphs' costs for the
// same kernel could disagree. Spelling them out takes a copy, so it is done only here, on
// the memo's misses.
MeasuredCost::Known MeasuredCost::FindCanonical(const CostKey& key) {
  const std::optional<Params> canonical = key.op().CanonicalParams(key.params(), key.inputs());
  if (!canonical) return Find(key);
  const CostKey spelled(key.op(), *canonical, key.inputs(), key.outputs());
  if (auto found = memo_.find(spelled); found != memo_.end()) return found->second;
  const Known known = Find(spelled);
  memo_.try_emplace(spelled.Owned(), known);
  return known;
}

MeasuredCost::Known MeasuredCost::Find(const CostKey& key) {
  if (IsView(key.op(), key.params(), key.inputs(), key.outputs())) return {0, true};  // the executor runs nothing
  if (std::optional<double> references = FromCacheFile(key)) {
    if (std::optional<double> seconds = InSeconds(*references)) {
      ++counts_.cached;
      return {*seconds, true};
    }
  } else if (std::optional<double> seconds = MeasureWithAlternatives(key)) {
    return {*seconds, true};
  }
  return Estimate(key);
}

MeasuredCost::Known MeasuredCost::Estimate(const CostKey& key) {
  ++counts_.estimated;
  return {fallback_.Estimate(key.op().Metrics(key.params(), key.inputs(), key.outputs())), false};
}

std::optional<double> MeasuredCost::InSeconds(double references) {
  const absl::StatusOr<double> seconds_per_reference = SecondsPerReference();
  if (seconds_per_reference.ok()) return references * *seconds_per_reference;
  if (status_.ok()) status_ = seconds_per_reference.status();
  return std::nullopt;
}

std::optional<double> MeasuredCost::FromCacheFile(const CostKey& key) {
  if (!cache_ || !Reference()) return std::nullopt;
  return cache_->Lookup(device_, key.ToString());
}

bool MeasuredCost::IsKnown(const CostKey& key) { return memo_.contains(key) || FromCacheFile(key).has_value(); }

std::vector<bool> MeasuredCost::MeasureTogether(absl::Span<const NodeOf> nodes,
                                                std::chrono::steady_clock::time_point until) {
  constexpr size_t kKernelsInTurn = 8;
  std::vector<bool> known(nodes.size(), true);
  // An unknown kernel as the node spells it (its constant inputs' values included: a
  // kernel runs with them), its parameters canonical; the nodes it prices.
  struct Pending {
    const OpDef* op;
    Params params;
    std::vector<InputInfo> inputs;
    std::vector<OutputType> outputs;
    double estimate;
    std::vector<size_t> nodes;
  };
  std::vector<Pending> pending;
  absl::flat_hash_map<CostKey, size_t> index;  // by the owned canonical key
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i].graph->node(nodes[i].node);
    Pending p{node.op, node.params, nodes[i].graph->InputInfos(node), nodes[i].graph->OutputTypes(node), 0, {i}};
    if (memo_.contains(CostKey(*p.op, p.params, p.inputs, p.outputs)) || IsView(*p.op, p.params, p.inputs, p.outputs))
      continue;
    if (std::optional<Params> canonical = p.op->CanonicalParams(p.params, p.inputs)) p.params = *std::move(canonical);
    const CostKey key(*p.op, p.params, p.inputs, p.outputs);
    if (IsKnown(key)) continue;
    known[i] = false;
    auto [it, added] = index.try_emplace(key.Owned(), pending.size());
    if (!added) {
      pending[it->second].nodes.push_back(i);
      continue;
    }
    p.estimate = fallback_.Estimate(p.op->Metrics(p.params, p.inputs, p.outputs));
    pending.push_back(std::move(p));
  }
  // Kernels of like size in turn (a small one paces the rounds, and a large one beside it
  // would run many more times than it needs), sorted within windows of a few groups so
  // that those asked for first are measured first where time runs out.
  constexpr size_t kWindow = 4 * kKernelsInTurn;
  for (size_t w = 0; w < pending.size(); w += kWindow)
    std::stable_sort(pending.begin() + w, pending.begin() + std::min(pending.size(), w + kWindow),
                     [](const Pending& a, const Pending& b) { return a.estimate < b.estimate; });
  for (size_t first = 0; first < pending.size() && std::chrono::steady_clock::now() < until; first += kKernelsInTurn) {
    const size_t end = std::min(pending.size(), first + kKernelsInTurn);
    std::vector<KernelRun> runs;
    std::vector<CostKey> keys;
    for (size_t k = first; k < end; ++k)
      AddUnknownRuns(CostKey(*pending[k].op, pending[k].params, pending[k].inputs, pending[k].outputs), runs, keys);
    KeepTimedInTurn(std::move(runs), keys);
    for (size_t k = first; k < end; ++k)
      for (size_t i : pending[k].nodes) known[i] = true;  // measured, or it fails alike when priced
  }
  return known;
}

void MeasuredCost::AddUnknownRuns(const CostKey& key, std::vector<KernelRun>& runs, std::vector<CostKey>& keys) {
  auto listed = [&keys](const CostKey& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  if (!listed(key) && !AddRun(key, runs, keys)) return;
  for (const Params& other : Alternatives(key.op(), key.params(), key.inputs(), key.outputs())) {
    const CostKey other_key(key.op(), other, key.inputs(), key.outputs());
    if (!IsKnown(other_key) && !listed(other_key)) AddRun(other_key, runs, keys);
  }
}

void MeasuredCost::KeepTimedInTurn(std::vector<KernelRun> runs, const std::vector<CostKey>& keys) {
  const std::optional<std::vector<double>> references = TimeInTurn(std::move(runs));
  if (!references) return;
  for (size_t k = 0; k < keys.size(); ++k) Keep(keys[k], (*references)[k]);
}

std::optional<double> MeasuredCost::MeasureWithAlternatives(const CostKey& key) {
  std::vector<KernelRun> runs;
  std::vector<CostKey> keys;
  if (!AddRun(key, runs, keys)) return std::nullopt;
  AddUnknownRuns(key, runs, keys);
  KeepTimedInTurn(std::move(runs), keys);
  const auto kept = memo_.find(key);
  if (kept == memo_.end()) return std::nullopt;
  return kept->second.seconds;
}

bool MeasuredCost::AddRun(const CostKey& key, std::vector<KernelRun>& runs, std::vector<CostKey>& keys) {
  std::optional<KernelRun> run = PrepareRun(key.op(), key.params(), key.inputs(), key.outputs());
  if (!run) return false;
  runs.push_back(*std::move(run));
  keys.push_back(key.Owned());  // the run holds what it needs of the parts
  return true;
}

std::optional<std::vector<double>> MeasuredCost::TimeInTurn(std::vector<KernelRun> runs) {
  // The reference runs last in each round and does not set how many rounds run.
  const size_t kernels = runs.size();
  KernelRun* reference = Reference();
  // Timed (and warmed up) first: a reference in its slow first runs would make every
  // kernel timed against it look several times cheaper.
  if (reference && !SecondsPerReference().ok()) return std::nullopt;
  if (reference) runs.push_back(*reference);
  absl::StatusOr<std::vector<double>> medians = timing::KernelMediansInTurn(runs, kernels);
  if (!medians.ok()) return std::nullopt;
  if (!reference) return *std::move(medians);
  const double reference_seconds = medians->back();
  if (!(reference_seconds > 0)) return std::nullopt;
  medians->pop_back();
  for (double& m : *medians) m /= reference_seconds;
  return *std::move(medians);
}

std::optional<double> MeasuredCost::Keep(const CostKey& key, double references) {
  const bool scaled = Reference() != nullptr;
  const std::optional<double> seconds = scaled ? InSeconds(references) : references;
  if (!seconds) return std::nullopt;
  memo_.insert_or_assign(key.Owned(), Known{*seconds, true});
  ++counts_.measured;
  if (cache_ && scaled) cache_->Store(device_, key.ToString(), references).IgnoreError();
  return seconds;
}

MeasuredCost::KernelRun* MeasuredCost::Reference() {
  if (!reference_prepared_) {
    reference_prepared_ = true;
    InputInfo a;
    a.dtype = DataType::kFloat32;
    a.shape = {ReferenceSide(), ReferenceSide()};
    const OutputType out{DataType::kFloat32, a.shape};
    reference_ = PrepareRun(ops::MatMulOp(), Params(), std::vector<InputInfo>{a, a}, std::vector<OutputType>{out});
  }
  return reference_ ? &*reference_ : nullptr;
}

std::optional<std::vector<double>> MeasuredCost::TimeLikeCosts(std::vector<KernelRun> runs) {
  std::optional<std::vector<double>> times = TimeInTurn(std::move(runs));
  if (!times || !Reference()) return times;  // in seconds already without a reference
  for (double& t : *times) {
    const std::optional<double> seconds = InSeconds(t);
    if (!seconds) return std::nullopt;
    t = *seconds;
  }
  return times;
}

absl::StatusOr<double> MeasuredCost::SecondsPerReference() {
  if (!seconds_per_reference_) seconds_per_reference_ = TimeReference();
  return *seconds_per_reference_;
}

// The first few hundred milliseconds of products in a process can run several times
// slower than the rest (on this project's machines, 256x256 products in ONNX Runtime ran
// 1.0 ms for their first 150 to 250 runs, then 0.19 ms, steady in each phase): a cost
// measured then, or the reference timed then, would be off by as much. So the reference
// runs for half a second, and on until two successive medians agree.
absl::Status MeasuredCost::WarmUp(KernelRun& reference) {
  constexpr double kLeastSeconds = 0.5, kMostSeconds = 3, kBlockSeconds = 0.02, kAgreement = 0.05;
  double spent = 0, previous = 0;
  while (spent < kMostSeconds) {
    std::vector<double> block;
    double in_block = 0;  // wall time: a run may time one of several kernel runs
    while (in_block < kBlockSeconds || block.size() < 3) {
      const auto start = std::chrono::steady_clock::now();
      ASSIGN_OR_RETURN(const double t, reference());
      block.push_back(t);
      in_block += std::max(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const double median = timing::Median(block);
    spent += in_block;
    if (spent >= kLeastSeconds && std::abs(median - previous) <= kAgreement * median) break;
    previous = median;
  }
  return absl::OkStatus();
}

absl::StatusOr<double> MeasuredCost::TimeReference() {
  KernelRun* reference = Reference();
  if (!reference)
    return absl::UnavailableError(
        absl::StrCat("the reference kernel (a ", ReferenceSide(), "x", ReferenceSide(), " MatMul) cannot run"));
  const absl::Status warm = WarmUp(*reference);
  absl::StatusOr<std::vector<double>> median =
      warm.ok() ? timing::KernelMediansInTurn({*reference}) : absl::StatusOr<std::vector<double>>(warm);
  if (!median.ok())
    return absl::Status(median.status().code(),
                        absl::StrCat("timing the reference kernel failed: ", median.status().message()));
  if (!((*median)[0] > 0)) return absl::InternalError("the reference kernel took no measurable time");
  return (*median)[0];
}

}  // namespace taso
