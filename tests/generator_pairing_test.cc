// taso-gen's pairing (TASO section 2.3): graphs with one fingerprint become candidates
// whose outputs are matched by value. The walk leaves a summary of each graph's outputs in
// its code so that pairing need not replay it; the candidates must be those a replay of
// every graph gives.
#include <catch2/catch.hpp>

#include <cstring>

#include "candidates.h"
#include "enumerator.h"
#include "taso/ir/ops/names.h"

using namespace taso;

namespace {

bool SameCandidates(const std::vector<gen::Candidate>& x, const std::vector<gen::Candidate>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::memcmp(&x[i].a, &y[i].a, sizeof(gen::GraphCode)) || std::memcmp(&x[i].b, &y[i].b, sizeof(gen::GraphCode)))
      return false;
    if (x[i].a_outputs != y[i].a_outputs || x[i].b_outputs != y[i].b_outputs) return false;
    if (x[i].a_op_outputs != y[i].a_op_outputs || x[i].b_op_outputs != y[i].b_op_outputs) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("Pairing from the walk's output summaries gives the candidates replaying every graph gives") {
  // Splits give operators two outputs, and graphs several outputs to match by value.
  auto set = gen::MakeOpSet({op_names::kMatMul, op_names::kConcat, op_names::kSplit, op_names::kRelu});
  REQUIRE(set.ok());
  gen::Enumerator e(*set, 3, 1);
  uint64_t count = 0;
  auto shared = e.Enumerate(gen::EnumerationLimits{}, /*shared_only=*/true, &count);
  REQUIRE(shared.ok());
  size_t summarized = 0, with_two_output_ops = 0, several_outputs = 0;
  std::vector<gen::Fingerprinted> replayed = *shared;
  for (gen::Fingerprinted& f : replayed) {
    const uint8_t summary = f.graph.two_output_ops;
    summarized += (summary & gen::kOutputSummary) != 0;
    with_two_output_ops += (summary & ~gen::kOutputSummary) != 0;
    several_outputs += f.graph.output_ranks != 0;       // a second output ranks above 0
    f.graph.two_output_ops = f.graph.output_ranks = 0;  // no summary: every graph replayed
  }
  // Every graph with operators was summarized, and the summaries are not all alike.
  CHECK(summarized > shared->size() * 9 / 10);
  CHECK(with_two_output_ops > 100);
  CHECK(several_outputs > 100);

  gen::Pairer pairer(e, 2);
  const std::vector<gen::Candidate> from_summaries = pairer.PairUp(*shared);
  const std::vector<gen::Candidate> from_replays = pairer.PairUp(replayed);
  CHECK(from_summaries.size() > 1000);
  CHECK(SameCandidates(from_summaries, from_replays));

  // A summary whose ranks are wrong pairs outputs wrongly: the summaries are what is read.
  std::vector<gen::Fingerprinted> swapped = *shared;
  for (gen::Fingerprinted& f : swapped)
    if (f.graph.output_ranks == 0b0100) f.graph.output_ranks = 0b0001;  // two outputs' places exchanged
  CHECK_FALSE(SameCandidates(pairer.PairUp(swapped), from_replays));
}
