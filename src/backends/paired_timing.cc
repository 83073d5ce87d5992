#include "taso/backends/paired_timing.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

#include "taso/ir/status_macros.h"

namespace taso {

namespace {

// Student's t distribution's 97.5% quantile at `df` degrees of freedom (at least 1): the
// half-width, in standard errors, of a 95% interval of a mean of df + 1 samples. Few
// pairs thus give a wide spread rather than an overconfident one.
double StudentT975(int df) {
  static constexpr std::array<double, 30> kQuantiles = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
      2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  return df <= static_cast<int>(kQuantiles.size()) ? kQuantiles[df - 1] : 1.96;
}

// Whether more pairs would not change what the timing decides: the ratio is known to the
// target spread, or (where `resolved_is_enough`) lies beyond 1.5 times its spread from 1
// (a margin that stays safe though the spread is looked at after every request) with a
// spread still fit to report (three times the target at most).
bool Settled(const PairTiming& t, double target_spread, bool resolved_is_enough) {
  if (t.spread <= target_spread) return true;
  return resolved_is_enough && std::abs(std::log(t.ratio())) >= 1.5 * t.spread && t.spread <= 3 * target_spread;
}

// Rounds for the next request: as many as take about kRunSecondsPerPair per pair at the
// last request's times, at least 3 (for a median) and at most `most`. On large models
// more pairs (whose spread is most of the ratio's) are worth more than more runs in
// each; on tiny ones each run is noisy and many are cheap.
int RoundsFor(const PairMedians& last, int most) {
  constexpr double kRunSecondsPerPair = 0.5;
  double slowest = 0;
  for (size_t p = 0; p < last.a.size(); ++p) slowest = std::max(slowest, last.a[p] + last.b[p]);
  const int fit = slowest > 0 ? static_cast<int>(std::min(kRunSecondsPerPair / slowest, 1e6)) : most;
  return std::clamp(fit, std::min(3, most), most);
}

}  // namespace

PairTiming TimingFromPairs(const PairMedians& medians, int runs) {
  const size_t n = medians.a.size();
  PairTiming t;
  t.pairs = static_cast<int>(n);
  t.runs = runs;
  double log_a = 0, log_b = 0, sum = 0, sum_sq = 0;
  for (size_t p = 0; p < n; ++p) {
    log_a += std::log(medians.a[p]);
    log_b += std::log(medians.b[p]);
    const double r = std::log(medians.a[p] / medians.b[p]);
    sum += r;
    sum_sq += r * r;
  }
  t.a_seconds = std::exp(log_a / n);
  t.b_seconds = std::exp(log_b / n);
  if (n < 2) {
    t.spread = std::numeric_limits<double>::infinity();
    return t;
  }
  const double mean = sum / n;
  const double variance = std::max(0.0, (sum_sq - n * mean * mean) / (n - 1));
  t.spread = StudentT975(static_cast<int>(n) - 1) * std::sqrt(variance / n);
  return t;
}

absl::StatusOr<PairTiming> TimeInPairs(const PairLimits& limits, TimerClock& clock, const TwoPairs& two_pairs) {
  const auto start = std::chrono::steady_clock::now();
  const double spent_before = clock.seconds_spent;
  const auto spent = [&] {
    return spent_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  PairMedians all;
  PairTiming timing;
  int rounds = limits.first_rounds, runs = 0;
  while (all.a.size() < static_cast<size_t>(limits.max_pairs)) {
    const double spent_before_request = spent();
    ASSIGN_OR_RETURN(const PairMedians more, two_pairs(rounds));
    all.a.insert(all.a.end(), more.a.begin(), more.a.end());
    all.b.insert(all.b.end(), more.b.begin(), more.b.end());
    runs += static_cast<int>(more.a.size()) * rounds;
    rounds = RoundsFor(more, limits.max_rounds);
    timing = TimingFromPairs(all, runs);
    clock.last_request_seconds = spent() - spent_before_request;
    clock.seconds_spent = spent();
    if (clock.OutOfTime(limits.seconds)) break;  // another like it would overrun
    if (all.a.size() >= static_cast<size_t>(limits.first_pairs) &&
        Settled(timing, limits.target_spread, limits.stop_when_resolved))
      break;
  }
  clock.seconds_spent = spent();
  return timing;
}

}  // namespace taso
