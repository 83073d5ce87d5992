#include "pipeline/speed_at_sizes.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pipeline/stage_output.h"
#include "pipeline/symbolic_dims.h"
#include "taso/ir/status_macros.h"

namespace taso::pipeline {

namespace {

constexpr int64_t kMaxGrowth = 256;
constexpr int64_t kLeastGrowth = 4;
constexpr double kBudgetSeconds = 0.020;

// The kept, not given dimensions to grow (by SymbolicDim::Key): those on no input's first
// axis where there are any, else those on one.
std::vector<const PipelineResult::SymbolicDimension*> DimensionsToGrow(const OnnxModel& imported,
                                                                       const PipelineResult& result) {
  std::vector<const PipelineResult::SymbolicDimension*> batch, others;
  for (const PipelineResult::SymbolicDimension& d : result.symbolic_dims) {
    if (!d.kept || d.given || !d.sum_of.empty()) continue;
    bool first_axis = false;
    for (const SymbolicDim& s : imported.symbolic_dims) first_axis |= s.Key() == d.name && s.axis == 0;
    (first_axis ? batch : others).push_back(&d);
  }
  return others.empty() ? batch : others;
}

// The size the dimension named `name` was searched at.
int64_t BuiltAt(const PipelineResult& result, const std::string& name) {
  for (const PipelineResult::SymbolicDimension& d : result.symbolic_dims)
    if (d.name == name) return d.built_at;
  return 1;
}

// The largest power of two up to kMaxGrowth whose input estimate stays within the budget.
int64_t Growth(double input_seconds, size_t dimensions) {
  int64_t factor = 1;
  while (factor * 2 <= kMaxGrowth &&
         input_seconds * std::pow(static_cast<double>(factor * 2), static_cast<double>(dimensions)) <= kBudgetSeconds)
    factor *= 2;
  return factor;
}

// Measurably slower: a verdict that would undo a gain measured at the sizes searched, so
// the caller times again before taking it (ONNX Runtime's sessions of one model differ by
// up to 5%, and a resolved ratio of 0.957 was seen where 10-pair runs gave 1.006).
bool Slower(const PairTiming& t) { return t.ratio() < 1 && t.Resolved(); }

// The check where the runtime failed on the models at the larger sizes.
PipelineResult::LargerSizesCheck NotRun(const absl::Status& failure, PipelineResult::LargerSizesCheck check) {
  check.not_timed = absl::StrCat("the runtime did not run them there: ", failure.message());
  check.first_ratio.reset();
  return check;
}

}  // namespace

bool SpeedCheckKeptRewrites(const PipelineResult& result) {
  const auto& check = result.speed_check;
  return check && !check->kept_input && !check->written_untimed && !result.estimated_slower;
}

absl::StatusOr<std::optional<PipelineResult::LargerSizesCheck>> TimeAtLargerSizes(const OnnxModel& imported,
                                                                                  const OnnxModel& written,
                                                                                  const PipelineResult& result,
                                                                                  RuntimeTimer& timer,
                                                                                  const PipelineOptions& options) {
  const std::vector<const PipelineResult::SymbolicDimension*> grown = DimensionsToGrow(imported, result);
  if (grown.empty()) return std::nullopt;
  PipelineResult::LargerSizesCheck check;
  const int64_t factor = Growth(result.cost_before, grown.size());
  absl::flat_hash_map<std::string, int64_t> sizes;
  std::vector<std::string> named;
  for (const auto* d : grown) {
    sizes[d->name] = d->built_at * std::max(factor, kLeastGrowth);
    named.push_back(absl::StrCat(d->name, "=", sizes[d->name]));
  }
  // A dimension kept as a sum grows with its terms: the model builds only so.
  for (const PipelineResult::SymbolicDimension& d : result.symbolic_dims) {
    if (!d.kept || d.sum_of.empty()) continue;
    int64_t sum = d.sum_plus;
    for (const std::string& term : d.sum_of) {
      const auto grown_term = sizes.find(term);
      sum += grown_term != sizes.end() ? grown_term->second : BuiltAt(result, term);
    }
    sizes[d.name] = sum;
    named.push_back(absl::StrCat(d.name, "=", sum));
  }
  check.sizes = absl::StrJoin(named, ", ");
  Announce(options, "speed check", absl::StrCat("at larger sizes (", check.sizes, "), in ", timer.name()));
  if (factor < kLeastGrowth) {
    check.not_timed = absl::StrFormat("the input's estimate at %s is over %.0f ms", check.sizes, kBudgetSeconds * 1e3);
    return check;
  }
  absl::StatusOr<BothAtSizes> both = BuildBothAt(imported, written, sizes);
  if (!both.ok()) {
    check.not_timed = absl::StrCat("the models do not build there: ", both.status().message());
    return check;
  }
  // A model that builds there may still not run there (a position table too short, the
  // memory): the check then says so, and the model the speed check chose is written.
  absl::StatusOr<PairTiming> first = timer.Compare(both->input, both->optimized);
  if (!first.ok()) return NotRun(first.status(), check);
  check.timing = *first;
  if (!Slower(check.timing)) return check;
  check.first_ratio = check.timing.ratio();
  absl::StatusOr<PairTiming> second = timer.Compare(both->input, both->optimized);
  if (!second.ok()) return NotRun(second.status(), check);
  check.timing = *second;
  check.slower = Slower(check.timing);
  return check;
}

}  // namespace taso::pipeline
