// The pipeline's options: the names of backends and search kinds, and the options' own
// consistency.
#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "taso/ir/memory_limit.h"
#include "taso/pipeline/pipeline.h"

namespace taso {

namespace {

constexpr std::pair<Backend, absl::string_view> kBackendNames[] = {
    {Backend::kCpu, "cpu"}, {Backend::kCuda, "cuda"}, {Backend::kAnalytic, "analytic"}, {Backend::kOrt, "ort"}};
constexpr std::pair<Target, absl::string_view> kTargetNames[] = {
    {Target::kOrt, "ort"}, {Target::kCpu, "cpu"}, {Target::kCuda, "cuda"}};
constexpr std::pair<SearchKind, absl::string_view> kSearchKindNames[] = {
    {SearchKind::kSubstitutions, "substitutions"}, {SearchKind::kLayouts, "layouts"}, {SearchKind::kBoth, "both"}};
constexpr std::pair<SearchEngine, absl::string_view> kSearchEngineNames[] = {
    {SearchEngine::kBacktracking, "backtracking"}, {SearchEngine::kEGraph, "egraph"}};

template <typename E, size_t N>
absl::string_view NameOf(const std::pair<E, absl::string_view> (&names)[N], E e) {
  for (const auto& [value, name] : names)
    if (value == e) return name;
  return "?";
}

template <typename E, size_t N>
std::optional<E> ValueOf(const std::pair<E, absl::string_view> (&names)[N], absl::string_view name) {
  for (const auto& [value, spelled] : names)
    if (spelled == name) return value;
  return std::nullopt;
}

// "2.9 GB", "546 MB" below a gigabyte, "12 KB" below a megabyte.
std::string MemorySize(int64_t bytes) {
  if (bytes >= 1'000'000'000) return absl::StrFormat("%.1f GB", bytes * 1e-9);
  return bytes >= 1'000'000 ? absl::StrFormat("%.0f MB", bytes * 1e-6) : absl::StrFormat("%.0f KB", bytes * 1e-3);
}

}  // namespace

absl::string_view BackendName(Backend backend) { return NameOf(kBackendNames, backend); }
std::optional<Backend> ParseBackend(absl::string_view name) { return ValueOf(kBackendNames, name); }
absl::string_view TargetName(Target target) { return NameOf(kTargetNames, target); }
std::optional<Target> ParseTarget(absl::string_view name) { return ValueOf(kTargetNames, name); }

Backend TargetBackend(Target target) {
  switch (target) {
    case Target::kOrt:
      return Backend::kOrt;
    case Target::kCuda:
      return Backend::kCuda;
    case Target::kCpu:
      break;
  }
  return Backend::kCpu;
}

absl::string_view SearchKindName(SearchKind search) { return NameOf(kSearchKindNames, search); }
std::optional<SearchKind> ParseSearchKind(absl::string_view name) { return ValueOf(kSearchKindNames, name); }

absl::string_view SearchEngineName(SearchEngine engine) { return NameOf(kSearchEngineNames, engine); }
std::optional<SearchEngine> ParseSearchEngine(absl::string_view name) { return ValueOf(kSearchEngineNames, name); }

SearchKind DefaultSearchKind(Backend backend) {
  return backend == Backend::kCpu ? SearchKind::kBoth : SearchKind::kSubstitutions;
}

int64_t MachineMemoryLimit(std::optional<int64_t> available) {
  return std::max(kDefaultMaxMemoryBytes, available.value_or(0));
}

int64_t MemoryToOptimize(const StoredTensorBytes& stored, Target target) {
  constexpr int64_t kOwnBytes = int64_t{512} << 20;
  const int64_t own =
      SaturatingAdd(SaturatingAdd(stored.read, stored.read / 8), SaturatingAdd(stored.mapped / 4, kOwnBytes));
  // The cpu target times two executors at once, each with its own copy of the weights its
  // kernels rearrange (a convolution's, a weight matrix's: most of a model's); the others
  // it reads where the graph holds them.
  const int64_t copies = target == Target::kCuda ? 0 : target == Target::kCpu ? 2 : 1;
  int64_t needed = own;
  for (int64_t i = 0; i < copies; ++i) needed = SaturatingAdd(needed, stored.total());
  return needed;
}

std::optional<std::string> TooLittleMemoryToOptimize(const StoredTensorBytes& stored, Target target,
                                                     std::optional<int64_t> available) {
  const int64_t needed = MemoryToOptimize(stored, target);
  if (!available || *available >= needed) return std::nullopt;
  return absl::StrCat("optimizing its ", MemorySize(stored.total()), " of tensors needs about ", MemorySize(needed),
                      " of memory, and ", MemorySize(*available), " are available here");
}

absl::Status ValidateOptions(const PipelineOptions& options) {
  const SearchOptions& search = options.search_options;
  if (options.search != SearchKind::kSubstitutions && options.backend != Backend::kCpu)
    return absl::InvalidArgumentError("layouts are searched on the cpu backend only");
  if (!(search.alpha >= 1.0)) return absl::InvalidArgumentError("the search's alpha must be at least 1");
  if (search.budget < 0 || !(search.time_limit >= 0))
    return absl::InvalidArgumentError("the search's budget and time limit must not be negative");
  if (options.ort_threads < 0) return absl::InvalidArgumentError("ONNX Runtime's thread count must not be negative");
  if (!(options.verify_speed_seconds > 0))
    return absl::InvalidArgumentError("the speed check's time (--verify-speed-seconds) must be positive");
  if (search.max_queue < 1) return absl::InvalidArgumentError("the search's queue must hold at least one graph");
  if (options.cost_model != nullptr && options.backend != Backend::kAnalytic)
    return absl::InvalidArgumentError("a stand-in cost model replaces the analytic backend's only");
  const egraph::SaturationLimits& limits = options.egraph.limits;
  if (limits.max_iterations < 1 || limits.max_enodes < 1 || limits.max_bytes < 1 || !(limits.time_limit > 0))
    return absl::InvalidArgumentError("the e-graph's iteration, e-node, memory and time limits must be positive");
  if (options.egraph.scheduler.multi_pattern_iterations < 0)
    return absl::InvalidArgumentError("the e-graph's iterations for rules with several outputs must not be negative");
  const egraph::ExtractionLimits& extraction = options.egraph.extraction;
  if (!(extraction.alternative_seconds >= 0 && extraction.seconds >= extraction.alternative_seconds))
    return absl::InvalidArgumentError("the e-graph's extraction time must be at least its second opinions' time");
  if (options.max_memory_bytes <= 0) return absl::InvalidArgumentError("the memory limit must be positive");
  return absl::OkStatus();
}

}  // namespace taso
