// ExtractExact: extraction as an integer program solved by Z3's optimizer.
#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "taso/egraph/extract.h"

namespace taso::egraph {

namespace {

// Prices become integer weights in nanoseconds (Z3's soft constraints take integers).
uint64_t Weight(double seconds) { return static_cast<uint64_t>(std::llround(seconds * 1e9)); }

// The most memory Z3 may take for a program: past it the solver stops with an error and
// the incumbent stands. A bound, not a measured need: the programs seen take far less.
constexpr unsigned kSolverMegabytes = 2048;

// Interrupts `context` once `seconds` have passed, unless destroyed first: the time
// limit holds whether or not the optimizer checks its "timeout" parameter often enough.
class InterruptAfter {
 public:
  InterruptAfter(z3::context& context, double seconds)
      : watchdog_([this, &context, seconds] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!finished_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; }))
            context.interrupt();
        }) {}
  ~InterruptAfter() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    finished_.notify_one();
    watchdog_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::thread watchdog_;  // last: started once the members it uses exist
};

class Program {
 public:
  Program(const EGraph& eg, const std::vector<double>& prices, const std::vector<bool>& allowed)
      : eg_(eg), prices_(prices), allowed_(allowed), opt_(ctx_) {}

  void Build(const std::vector<ClassId>& roots, double time_limit) {
    z3::set_param("memory_max_size", static_cast<int>(kSolverMegabytes));
    z3::params params(ctx_);
    params.set("timeout", static_cast<unsigned>(time_limit * 1000));
    opt_.set(params);
    for (ENodeId n = 0; n < eg_.num_node_ids(); ++n)
      if (allowed_[n]) AddENode(n, roots);
    for (ClassId r : roots) needed_.insert(eg_.Find(r));
    // A class none of whose e-nodes is allowed cannot be needed (else the model could
    // need it and choose nothing there).
    for (ClassId c : needed_) {
      const auto chosen = class_choices_.find(c);
      opt_.add(Needed(c) == (chosen == class_choices_.end() ? ctx_.bool_val(false) : z3::mk_or(chosen->second)));
    }
    for (ClassId r : roots) opt_.add(Needed(eg_.Find(r)));
  }

  // The choice in the optimizer's last model, per class id; empty without a model.
  std::vector<ENodeId> Solve(ExactStatus& status, double time_limit) {
    const z3::check_result result = [&] {
      InterruptAfter deadline(ctx_, time_limit);
      return opt_.check();
    }();
    status = result == z3::sat ? ExactStatus::kOptimal : ExactStatus::kTimeLimit;
    if (result == z3::unsat) return {};
    z3::model model = opt_.get_model();
    std::vector<ENodeId> choice(eg_.num_class_ids(), kNoENode);
    for (const auto& [n, x] : chosen_)
      if (model.eval(x, true).is_true() && choice[eg_.ClassOf(n)] == kNoENode) choice[eg_.ClassOf(n)] = n;
    return choice;
  }

 private:
  void AddENode(ENodeId n, const std::vector<ClassId>& roots) {
    const ClassId c = eg_.ClassOf(n);
    const ENode& node = eg_.node(n);
    if (node.is_leaf() && std::find(roots.begin(), roots.end(), c) != roots.end()) return;
    z3::expr x = ctx_.bool_const(absl::StrCat("x", n).c_str());
    chosen_.emplace(n, x);
    class_choices_.try_emplace(c, ctx_).first->second.push_back(x);
    for (ClassId child : node.children) {
      if (child == kNoClass) continue;
      needed_.insert(child);
      opt_.add(z3::implies(x, Needed(child)));
      opt_.add(z3::implies(x, Order(c) > Order(child)));
    }
    if (prices_[n] <= 0) {
      // Computed once from weights, free at run time; but each one folded costs time and
      // memory in taso-opt, and the optimum is otherwise any of them, a chain of
      // transposes included (14 of VGG-11's 411 MB weight took 12 GB): a nanosecond each.
      if (!node.is_leaf() && eg_.eclass(c).weight_only) opt_.add_soft(!x, 1);
      return;
    }
    const ENodeId first = FirstOutput(eg_, n);
    auto [it, added] = operators_.try_emplace(first, ctx_.bool_const(absl::StrCat("op", first).c_str()));
    opt_.add(z3::implies(x, it->second));
    if (added) opt_.add_soft(!it->second, Weight(prices_[n] * node.num_outputs));
  }

  z3::expr Needed(ClassId c) { return ctx_.bool_const(absl::StrCat("u", c).c_str()); }
  z3::expr Order(ClassId c) { return ctx_.int_const(absl::StrCat("t", c).c_str()); }

  const EGraph& eg_;
  const std::vector<double>& prices_;
  const std::vector<bool>& allowed_;
  z3::context ctx_;
  z3::optimize opt_;
  absl::flat_hash_map<ENodeId, z3::expr> chosen_, operators_;
  std::map<ClassId, z3::expr_vector> class_choices_;  // ordered: the program is deterministic
  std::set<ClassId> needed_;                          // the roots and the children of allowed e-nodes
};

}  // namespace

ExactExtraction ExtractExact(const EGraph& egraph, const std::vector<double>& prices, const std::vector<ClassId>& roots,
                             std::vector<bool> allowed, const Extraction& incumbent, int64_t max_enodes,
                             double time_limit) {
  ExactExtraction result;
  for (ClassId c : incumbent.order) allowed[incumbent.choice[c]] = true;
  const double incumbent_cost = DagCost(egraph, prices, roots, incumbent.choice);
  result.cost = incumbent_cost;
  if (std::count(allowed.begin(), allowed.end(), true) > max_enodes) return result;
  std::vector<ClassId> canonical_roots;
  for (ClassId r : roots) canonical_roots.push_back(egraph.Find(r));
  std::vector<ENodeId> choice;
  try {
    Program program(egraph, prices, allowed);
    program.Build(canonical_roots, time_limit);
    choice = program.Solve(result.status, time_limit);
  } catch (const z3::exception&) {
    choice.clear();  // no model (a timeout before any): the incumbent stands
    result.status = ExactStatus::kTimeLimit;
  }
  result.cost = choice.empty() ? incumbent_cost : DagCost(egraph, prices, roots, choice);
  if (choice.empty() || !(result.cost < incumbent_cost || result.status == ExactStatus::kOptimal) ||
      std::isinf(result.cost)) {
    if (result.status != ExactStatus::kOptimal) result.status = ExactStatus::kNoBetter;
    result.cost = incumbent_cost;
    return result;
  }
  result.extraction.choice = std::move(choice);
  result.extraction.order = TopologicalClasses(egraph, roots, result.extraction.choice);
  return result;
}

}  // namespace taso::egraph
