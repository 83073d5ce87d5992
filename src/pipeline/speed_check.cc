#include "pipeline/speed_check.h"

#include <algorithm>
#include <utility>

#include "absl/strings/cord.h"
#include "taso/ir/status_macros.h"

namespace taso::pipeline {

namespace {

constexpr char kTimingFailurePayload[] = "taso/timing-failure";

// Times models against each other, counting the comparisons; the timer's failures marked
// as such.
class Comparer {
 public:
  Comparer(RuntimeTimer& timer, const BuildWithRewrites& build) : timer_(timer), build_(build) {}
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const std::vector<bool>& b) {
    ASSIGN_OR_RETURN(const OnnxModel built, build_(b));
    ++comparisons_;
    absl::StatusOr<PairTiming> timing = timer_.Compare(a, built);
    if (!timing.ok()) {
      absl::Status failure = timing.status();
      failure.SetPayload(kTimingFailurePayload, absl::Cord(timer_.name()));
      return failure;
    }
    return timing;
  }
  absl::StatusOr<PairTiming> Compare(const std::vector<bool>& a, const std::vector<bool>& b) {
    ASSIGN_OR_RETURN(const OnnxModel built, build_(a));
    return Compare(built, b);
  }
  int comparisons() const { return comparisons_; }
  bool OutOfTime() const { return timer_.OutOfTime(); }
  const RuntimeTimer& timer() const { return timer_; }

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

// Drops each group (in turn) unless the model with it runs measurably faster than without;
// once the timer's time is spent, the groups not timed yet are dropped untimed (counted
// in `untimed`).
absl::StatusOr<std::vector<bool>> DropGroupsThatDoNotHelp(Comparer& comparer, const std::vector<std::string>& groups,
                                                          int& untimed) {
  std::vector<bool> keep(groups.size(), true);
  for (const std::string& group : GroupsInOrder(groups)) {
    const std::vector<bool> without = Without(keep, groups, group);
    if (comparer.OutOfTime()) {
      keep = without;
      ++untimed;
      continue;
    }
    ASSIGN_OR_RETURN(const PairTiming t, comparer.Compare(without, keep));
    if (!t.SecondFaster()) keep = without;
  }
  return keep;
}

bool Any(const std::vector<bool>& keep) { return std::find(keep.begin(), keep.end(), true) != keep.end(); }

PipelineResult::SpeedCheck Check(const RuntimeTimer& timer, const std::vector<bool>& keep, const PairTiming& timing) {
  PipelineResult::SpeedCheck check;
  check.runtime = timer.name();
  check.timing = timing;
  check.rewrites = static_cast<int>(keep.size());
  check.rewrites_kept = static_cast<int>(std::count(keep.begin(), keep.end(), true));
  check.kept_input = check.rewrites > 0 && check.rewrites_kept == 0;
  return check;
}

// The groups that help, when the model with all of them is not measurably faster than
// the input (`timing`): with one group, none; with several, those DropGroupsThatDoNotHelp
// keeps if they together run measurably faster than the input, else none. Where none
// is kept the input's own graph (`build` of none) is timed for the report as `when_none`
// asks, time allowing.
absl::StatusOr<SpeedChoice> ChooseAfterSlowerWhole(Comparer& comparer, const OnnxModel& input,
                                                   const std::vector<std::string>& groups, PairTiming timing,
                                                   WhenNoneKept when_none) {
  std::vector<bool> keep(groups.size(), false);
  int untimed = 0;
  if (GroupsInOrder(groups).size() > 1) {
    ASSIGN_OR_RETURN(keep, DropGroupsThatDoNotHelp(comparer, groups, untimed));
    if (Any(keep)) {
      ASSIGN_OR_RETURN(timing, comparer.Compare(input, keep));
      if (!timing.SecondFaster()) keep.assign(groups.size(), false);
    }
  }
  const bool input_to_time = !Any(keep) && when_none == WhenNoneKept::kTimeTheInput;
  const bool in_time = !comparer.OutOfTime();
  if (input_to_time && in_time) {
    ASSIGN_OR_RETURN(timing, comparer.Compare(input, keep));
  }
  SpeedChoice choice{keep, Check(comparer.timer(), keep, timing)};
  choice.check.groups_dropped_untimed = untimed;
  choice.check.written_untimed = input_to_time && !in_time;
  return choice;
}

}  // namespace

bool IsTimingFailure(const absl::Status& status) { return status.GetPayload(kTimingFailurePayload).has_value(); }

absl::StatusOr<SpeedChoice> ChooseFasterRewrites(RuntimeTimer& timer, const OnnxModel& input,
                                                 const std::vector<std::string>& groups, const BuildWithRewrites& build,
                                                 WhenNoneKept when_none) {
  Comparer comparer(timer, build);
  const std::vector<bool> all(groups.size(), true);
  ASSIGN_OR_RETURN(const PairTiming timing, comparer.Compare(input, all));
  SpeedChoice choice{all, Check(timer, all, timing)};
  if (!timing.SecondFaster() && !groups.empty()) {
    ASSIGN_OR_RETURN(choice, ChooseAfterSlowerWhole(comparer, input, groups, timing, when_none));
  }
  choice.check.comparisons = comparer.comparisons();
  return choice;
}

}  // namespace taso::pipeline
