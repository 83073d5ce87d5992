#include "taso/measured_cost.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "backends/cpu_kernel.h"
#include "backends/timing.h"

namespace taso {

absl::StatusOr<std::unique_ptr<CostCache>> CostCache::Open(const std::string& path) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  auto cache = std::unique_ptr<CostCache>(new CostCache());
  if (sqlite3_open(path.c_str(), &cache->db_) != SQLITE_OK)
    return absl::UnavailableError(absl::StrCat("cannot open the cost cache ", path, ": ", sqlite3_errmsg(cache->db_)));
  char* error = nullptr;
  if (sqlite3_exec(cache->db_,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                   "CREATE TABLE IF NOT EXISTS costs (device TEXT, key TEXT, seconds REAL, PRIMARY KEY (device, key));",
                   nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    return absl::UnavailableError(absl::StrCat("cost cache ", path, " is not usable: ", message));
  }
  return cache;
}

CostCache::~CostCache() { sqlite3_close(db_); }

std::optional<double> CostCache::Lookup(const std::string& device, const std::string& key) {
  sqlite3_stmt* s = nullptr;
  std::optional<double> out;
  if (sqlite3_prepare_v2(db_, "SELECT seconds FROM costs WHERE device = ?1 AND key = ?2", -1, &s, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(s, 1, device.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, key.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW) out = sqlite3_column_double(s, 0);
  }
  sqlite3_finalize(s);
  return out;
}

absl::Status CostCache::Store(const std::string& device, const std::string& key, double seconds) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO costs VALUES (?1, ?2, ?3)", -1, &s, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(s, 1, device.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 3, seconds);
    rc = sqlite3_step(s);
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return absl::UnavailableError(absl::StrCat("cost cache write failed: ", sqlite3_errmsg(db_)));
  return absl::OkStatus();
}

std::string DefaultCostCachePath() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return absl::StrCat(x, "/taso/costs.sqlite");
  const char* home = std::getenv("HOME");
  return absl::StrCat(home && *home ? home : ".", "/.cache/taso/costs.sqlite");
}

std::string CostKey(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                    absl::Span<const OutputType> outputs) {
  std::string key = absl::StrCat(op.name(), "{", params.ToString(), "}");
  for (const InputInfo& i : inputs) absl::StrAppend(&key, i.present ? ShapeToString(i.shape) : "-");
  absl::StrAppend(&key, "->");
  for (const OutputType& o : outputs) absl::StrAppend(&key, ShapeToString(o.shape));
  return key;
}

uint64_t CostKeyHash(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                     absl::Span<const OutputType> outputs) {
  uint64_t h = absl::HashOf(op.name(), params.Hash());
  for (const InputInfo& i : inputs) h = i.present ? absl::HashOf(h, i.shape) : absl::HashOf(h, -1);
  for (const OutputType& o : outputs) h = absl::HashOf(h, -2, o.shape);
  return h;
}

std::string CostKey(const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  return CostKey(*node.op, node.params, graph.InputInfos(node), graph.OutputTypes(node));
}

MeasuredCost::MeasuredCost(std::unique_ptr<CostCache> cache, std::string device)
    : cache_(std::move(cache)), device_(std::move(device)) {}

double MeasuredCost::NodeCost(const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  return Cost(*node.op, node.params, graph.InputInfos(node), graph.OutputTypes(node));
}

double MeasuredCost::Cost(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                          absl::Span<const OutputType> outputs, bool* measurable) {
  const uint64_t hash = CostKeyHash(op, params, inputs, outputs);
  auto it = memo_.find(hash);
  if (it == memo_.end()) {
    // One kernel under one key, however the node spells its parameters: the same
    // convolution, imported (explicit pads) and rewritten (a padding mode), was measured
    // twice, minutes apart, at 5.1 and 2.8 ms, and the two graphs' costs disagreed.
    // Spelling them out takes a copy, so it is done only here, on the memo's misses.
    const std::optional<Params> canonical = op.CanonicalParams(params, inputs);
    const Params& spelled = canonical ? *canonical : params;
    const uint64_t spelled_hash = canonical ? CostKeyHash(op, spelled, inputs, outputs) : hash;
    auto found = memo_.find(spelled_hash);
    if (found == memo_.end()) found = memo_.emplace(spelled_hash, Find(op, spelled, spelled_hash, inputs, outputs)).first;
    const Known known = found->second;  // a copy: the next insertion may move the map's entries
    it = memo_.emplace(hash, known).first;
  }
  if (measurable) *measurable = it->second.measured;
  return it->second.seconds;
}

MeasuredCost::Known MeasuredCost::Find(const OpDef& op, const Params& params, uint64_t hash,
                                       absl::Span<const InputInfo> inputs, absl::Span<const OutputType> outputs) {
  if (IsView(op, params, inputs, outputs)) return {0, true};  // the executor runs nothing for it
  const std::string key = CostKey(op, params, inputs, outputs);
  if (cache_ && Reference()) {
    if (std::optional<double> references = cache_->Lookup(device_, key)) {
      ++counts_.cached;
      return {*references * SecondsPerReference(), true};
    }
  }
  if (std::optional<double> m = MeasureWithAlternatives(op, params, {hash, key}, inputs, outputs)) return {*m, true};
  ++counts_.estimated;
  return {fallback_.Estimate(op.Metrics(params, inputs, outputs)), false};
}

bool MeasuredCost::IsKnown(const Keys& keys) {
  return memo_.contains(keys.hash) || (cache_ && Reference() && cache_->Lookup(device_, keys.text).has_value());
}

MeasuredCost::KernelRun* MeasuredCost::Reference() {
  if (!reference_prepared_) {
    reference_prepared_ = true;
    if (const OpDef* matmul = OpRegistry::Global().Find("MatMul")) {
      InputInfo a;
      a.dtype = DataType::kFloat32;
      a.shape = {256, 256};
      const OutputType out{DataType::kFloat32, a.shape};
      reference_ = PrepareRun(*matmul, Params(), std::vector<InputInfo>{a, a}, std::vector<OutputType>{out});
    }
  }
  return reference_ ? &*reference_ : nullptr;
}

double MeasuredCost::SecondsPerReference() {
  if (!seconds_per_reference_) {
    KernelRun* reference = Reference();
    absl::StatusOr<std::vector<double>> median =
        reference ? timing::KernelMediansInTurn({*reference}) : absl::UnavailableError("no reference kernel");
    seconds_per_reference_ = median.ok() && (*median)[0] > 0 ? (*median)[0] : 1.0;
  }
  return *seconds_per_reference_;
}

std::optional<double> MeasuredCost::MeasureWithAlternatives(const OpDef& op, const Params& params, Keys keys,
                                                            absl::Span<const InputInfo> inputs,
                                                            absl::Span<const OutputType> outputs) {
  std::optional<KernelRun> run = PrepareRun(op, params, inputs, outputs);
  if (!run) return std::nullopt;
  std::vector<KernelRun> runs = {*std::move(run)};
  std::vector<Keys> measured = {std::move(keys)};
  for (const Params& other : Alternatives(op, params, inputs, outputs)) {
    Keys other_keys{CostKeyHash(op, other, inputs, outputs), CostKey(op, other, inputs, outputs)};
    if (IsKnown(other_keys)) continue;
    if (std::optional<KernelRun> r = PrepareRun(op, other, inputs, outputs)) {
      runs.push_back(*std::move(r));
      measured.push_back(std::move(other_keys));
    }
  }
  // The reference runs last in each round and does not set how many rounds run.
  const size_t kernels = runs.size();
  KernelRun* reference = Reference();
  if (reference) runs.push_back(*reference);
  absl::StatusOr<std::vector<double>> medians = timing::KernelMediansInTurn(runs, kernels);
  if (!medians.ok()) return std::nullopt;
  const double reference_seconds = reference ? medians->back() : 0;
  if (reference && !(reference_seconds > 0)) return std::nullopt;
  std::optional<double> seconds;
  for (size_t k = 0; k < kernels; ++k) {
    const double references = reference ? (*medians)[k] / reference_seconds : (*medians)[k];
    const double s = reference ? references * SecondsPerReference() : references;
    memo_[measured[k].hash] = {s, true};
    ++counts_.measured;
    if (cache_ && reference) cache_->Store(device_, measured[k].text, references).IgnoreError();
    if (k == 0) seconds = s;
  }
  return seconds;
}

namespace {

std::string CpuDevice() {
  const dnnl_version_t* v = dnnl_version();
  // The kernel version changes whenever what a kernel's run includes changes (v3: plain
  // inputs and outputs, reorders to the primitive's layouts included, 10 runs at least; v5:
  // weights read from memory; v6: only where they dominate; v7: both layouts measured in
  // turn; v8: constant matrices packed; v9: Erf on its own kernel; v10: binaries whose first
  // source broadcasts swap their sources, one value per channel blocks; v11: kept as
  // multiples of the reference kernel's time), so old measurements are not reused.
  return absl::StrCat("cpu kernels v11/oneDNN ", v->major, ".", v->minor, "/isa ",
                      static_cast<int>(dnnl::get_effective_cpu_isa()), "/", std::thread::hardware_concurrency(),
                      " threads");
}

}  // namespace

CpuCost::CpuCost(std::unique_ptr<CostCache> cache) : MeasuredCost(std::move(cache), CpuDevice()) {}

bool CpuCost::IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                     absl::Span<const OutputType> outputs) const {
  const cpu::View* view = cpu::FindView(op.name());
  return view && !cpu::IsBlocked(params) && view->Offsets(params, inputs, outputs);
}

// The other layout, where the kernel takes one.
std::vector<Params> CpuCost::Alternatives(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                          absl::Span<const OutputType> outputs) const {
  const cpu::Kernel* k = cpu::FindKernel(op.name());
  if (!k || !cpu::CanRunBlocked(*k, params, inputs, outputs)) return {};
  return {cpu::WithLayout(params, !cpu::IsBlocked(params))};
}

// A real model's weights far exceed the caches, so each run reads an operator's weights
// from memory, while its activations come warm from the previous operator. The kernel is
// prepared in several copies that each own their weights and share one set of
// activations, and the runs go round them (timing::WeightCopies says how many; one where
// the weights do not dominate). Timing one copy with hot weights made NasRNN's
// matrix-vector products 3.5x cheaper than in a whole run.
std::optional<MeasuredCost::KernelRun> CpuCost::PrepareRun(const OpDef& op, const Params& params,
                                                          absl::Span<const InputInfo> inputs,
                                                          absl::Span<const OutputType> outputs) {
  const cpu::Kernel* k = cpu::FindKernel(op.name());
  if (!k) return std::nullopt;
  std::vector<bool> weight(inputs.size(), false);
  int64_t weight_bytes = 0, activation_bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].present) continue;
    weight[i] = k->ReadsWeight(i, inputs);
    (weight[i] ? weight_bytes : activation_bytes) += NumElements(inputs[i].shape) * int64_t{sizeof(float)};
  }
  for (const OutputType& o : outputs) activation_bytes += NumElements(o.shape) * int64_t{sizeof(float)};
  // A weight computed from weights (two matrices concatenated by a merge) is a constant
  // once the executor folds the weights, and the kernel may prepare it so (a packed
  // matrix): it is measured as one.
  std::vector<InputInfo> as_run(inputs.begin(), inputs.end());
  std::vector<std::shared_ptr<const TensorData>> placeholders;
  for (size_t i = 0; i < as_run.size(); ++i) {
    if (!weight[i] || as_run[i].constant) continue;
    placeholders.push_back(
        TensorData::Float(as_run[i].shape, std::vector<float>(std::max<int64_t>(1, NumElements(as_run[i].shape)), 0.25f)));
    as_run[i].constant = placeholders.back().get();
  }
  struct Copies {
    std::vector<std::unique_ptr<cpu::Prepared>> prepared;
    std::vector<std::vector<float>> shared;  // the activations every copy reads and writes
    size_t next = 0;
  };
  auto copies = std::make_shared<Copies>();
  try {
    for (int c = timing::WeightCopies(weight_bytes, activation_bytes, timing::LastLevelCacheBytes()); c > 0; --c) {
      auto prepared = k->Prepare(params, as_run, outputs);
      if (!prepared.ok()) return std::nullopt;
      copies->prepared.push_back(*std::move(prepared));
    }
  } catch (const dnnl::error&) {
    return std::nullopt;  // oneDNN has no primitive for this case: estimated instead
  }
  auto shared_buffer = [&copies](const Shape& shape) {
    return copies->shared.emplace_back(std::max<int64_t>(1, NumElements(shape)), 0.25f).data();
  };
  if (copies->prepared.size() > 1) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].present || weight[i]) continue;
      float* data = shared_buffer(inputs[i].shape);
      for (auto& c : copies->prepared) c->BindInput(i, data);
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      float* data = shared_buffer(outputs[o].shape);
      for (auto& c : copies->prepared) c->BindOutput(o, data);
    }
  }
  return [copies]() -> absl::StatusOr<double> {
    cpu::Prepared& p = *copies->prepared[copies->next++ % copies->prepared.size()];
    const auto start = std::chrono::steady_clock::now();
    try {
      p.Run();
    } catch (const dnnl::error& e) {
      return absl::InternalError(e.what());
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
}

}  // namespace taso
