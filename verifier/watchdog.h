// Bounds Z3 queries in time. Z3's own timeout is not always checked (while it
// instantiates quantifiers, in non-linear arithmetic), so a watchdog thread interrupts
// any check that runs past its limit; the check then answers unknown.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <z3++.h>

namespace taso::verify {

// A Z3 query's limits: its resource count (Z3's "rlimit", counted from the start of each
// check), which makes the answer the same on a busy machine as on an idle one, and a
// wall-clock guard (milliseconds) for a query that stops counting, which the watchdog
// enforces.
struct QueryBudget {
  unsigned rlimit = 0;
  unsigned timeout_ms = 0;
};

// Sets `budget`'s two limits on solver parameters `p`.
void SetBudget(z3::params& p, const QueryBudget& budget);

// Z3's resource count of `solver`'s context so far (the "rlimit count" of its statistics):
// the work done, which unlike time does not depend on the machine's load. Z3 counts a
// query's "rlimit" budget from the start of each check.
uint64_t ResourceCount(const z3::solver& solver);

class Z3Watchdog {
 public:
  // One slot per thread that runs checks.
  explicit Z3Watchdog(int slots);
  ~Z3Watchdog();
  Z3Watchdog(const Z3Watchdog&) = delete;
  Z3Watchdog& operator=(const Z3Watchdog&) = delete;

  // Checks `solver` (of `ctx`) from the thread owning `slot`.
  z3::check_result Check(int slot, z3::context& ctx, z3::solver& solver, std::chrono::milliseconds limit);

 private:
  using Clock = std::chrono::steady_clock;
  struct Slot {
    std::atomic<z3::context*> ctx{nullptr};
    std::atomic<int64_t> deadline{0};  // clock ticks; 0: idle
  };
  std::vector<Slot> slots_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace taso::verify
