#include "pipeline/speed_check.h"

#include <algorithm>
#include <utility>

#include "taso/status_macros.h"

namespace taso::pipeline {

namespace {

// Times models against each other, counting the comparisons.
class Comparer {
 public:
  Comparer(RuntimeTimer& timer, const BuildWithRewrites& build) : timer_(timer), build_(build) {}
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const std::vector<bool>& b) {
    ASSIGN_OR_RETURN(const OnnxModel built, build_(b));
    ++comparisons_;
    return timer_.Compare(a, built);
  }
  absl::StatusOr<PairTiming> Compare(const std::vector<bool>& a, const std::vector<bool>& b) {
    ASSIGN_OR_RETURN(const OnnxModel built, build_(a));
    return Compare(built, b);
  }
  int comparisons() const { return comparisons_; }

 private:
  RuntimeTimer& timer_;
  const BuildWithRewrites& build_;
  int comparisons_ = 0;
};

// The group names in the order their first rewrite was applied.
std::vector<std::string> GroupsInOrder(const std::vector<std::string>& groups) {
  std::vector<std::string> order;
  for (const std::string& g : groups)
    if (std::find(order.begin(), order.end(), g) == order.end()) order.push_back(g);
  return order;
}

std::vector<bool> Without(std::vector<bool> keep, const std::vector<std::string>& groups, const std::string& group) {
  for (size_t i = 0; i < keep.size(); ++i)
    if (groups[i] == group) keep[i] = false;
  return keep;
}

// Drops each group (in turn) unless the model with it runs measurably faster than without.
absl::StatusOr<std::vector<bool>> DropGroupsThatDoNotHelp(Comparer& comparer, const std::vector<std::string>& groups) {
  std::vector<bool> keep(groups.size(), true);
  for (const std::string& group : GroupsInOrder(groups)) {
    const std::vector<bool> without = Without(keep, groups, group);
    ASSIGN_OR_RETURN(const PairTiming t, comparer.Compare(without, keep));
    if (!t.SecondFaster()) keep = without;
  }
  return keep;
}

PipelineResult::SpeedCheck Check(const RuntimeTimer& timer, const std::vector<bool>& keep, const PairTiming& timing) {
  PipelineResult::SpeedCheck check;
  check.runtime = timer.name();
  check.timing = timing;
  check.rewrites = static_cast<int>(keep.size());
  check.rewrites_kept = static_cast<int>(std::count(keep.begin(), keep.end(), true));
  check.kept_input = check.rewrites > 0 && check.rewrites_kept == 0;
  return check;
}

}  // namespace

absl::StatusOr<SpeedChoice> ChooseFasterRewrites(RuntimeTimer& timer, const OnnxModel& input,
                                                 const std::vector<std::string>& groups,
                                                 const BuildWithRewrites& build) {
  Comparer comparer(timer, build);
  SpeedChoice choice{std::vector<bool>(groups.size(), true), {}};
  ASSIGN_OR_RETURN(PairTiming timing, comparer.Compare(input, choice.keep));
  if (!timing.SecondFaster() && !groups.empty()) {
    ASSIGN_OR_RETURN(choice.keep, DropGroupsThatDoNotHelp(comparer, groups));
    const bool any = std::find(choice.keep.begin(), choice.keep.end(), true) != choice.keep.end();
    if (any) {
      ASSIGN_OR_RETURN(timing, comparer.Compare(input, choice.keep));
    }
    if (!any || !timing.SecondFaster()) {
      choice.keep.assign(groups.size(), false);
      ASSIGN_OR_RETURN(timing, comparer.Compare(input, choice.keep));
    }
  }
  choice.check = Check(timer, choice.keep, timing);
  choice.check.comparisons = comparer.comparisons();
  return choice;
}

}  // namespace taso::pipeline
