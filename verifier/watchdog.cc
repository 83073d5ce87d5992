#include "watchdog.h"

namespace taso::verify {

void SetBudget(z3::params& p, const QueryBudget& budget) {
  p.set("rlimit", budget.rlimit);
  p.set("timeout", budget.timeout_ms);
}

uint64_t ResourceCount(const z3::solver& solver) {
  const z3::stats stats = solver.statistics();
  for (unsigned i = 0; i < stats.size(); ++i)
    if (stats.key(i) == "rlimit count")
      return stats.is_uint(i) ? stats.uint_value(i) : static_cast<uint64_t>(stats.double_value(i));
  return 0;
}

Z3Watchdog::Z3Watchdog(int slots) : slots_(slots) {
  thread_ = std::thread([this] {
    while (!done_.load()) {
      const int64_t now = Clock::now().time_since_epoch().count();
      for (Slot& s : slots_) {
        const int64_t d = s.deadline.load();
        if (d != 0 && now > d)
          if (z3::context* c = s.ctx.load()) c->interrupt();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
}

Z3Watchdog::~Z3Watchdog() {
  done_ = true;
  thread_.join();
}

z3::check_result Z3Watchdog::Check(int slot, z3::context& ctx, z3::solver& solver, std::chrono::milliseconds limit) {
  Slot& s = slots_[slot];
  s.ctx = &ctx;
  // A little past Z3's own timeout, which ends most checks by itself.
  s.deadline = (Clock::now() + limit + std::chrono::milliseconds(20)).time_since_epoch().count();
  z3::check_result r = z3::unknown;
  try {
    r = solver.check();
  } catch (const z3::exception&) {
    r = z3::unknown;  // interrupted
  }
  s.deadline = 0;
  s.ctx = nullptr;
  return r;
}

}  // namespace taso::verify
