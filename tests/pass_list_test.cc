#include <catch2/catch.hpp>

#include "taso/passes/fold.h"
#include "taso/passes/pass_list.h"
#include "test_util.h"

using namespace taso;

namespace {

absl::StatusOr<Graph> Refuse(const Graph&) { return absl::FailedPreconditionError("refused"); }

}  // namespace

TEST_CASE("A pass list runs its passes in order, records each, and stops at the first failure") {
  const Graph g = testing::ConcatenatedWeightLayer();
  constexpr GraphPass kFoldTwice[] = {{"fold", FoldWeights}, {"fold again", FoldWeights}};
  std::vector<PassRecord> records;
  absl::StatusOr<Graph> folded = RunPasses(kFoldTwice, g, &records);
  REQUIRE(folded.ok());
  CHECK(folded->num_nodes() == 1);
  REQUIRE(records.size() == 2);
  CHECK(records[0].name == "fold");
  CHECK(records[0].nodes_before == 2);
  CHECK(records[0].nodes_after == 1);
  CHECK(records[1].nodes_before == 1);  // the second pass reads the first one's graph
  CHECK(records[1].nodes_after == 1);

  constexpr GraphPass kRefuseThenFold[] = {{"refuse", Refuse}, {"fold", FoldWeights}};
  records.clear();
  absl::StatusOr<Graph> refused = RunPasses(kRefuseThenFold, g, &records);
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(records.empty());  // nothing ran after the failure, nor was the failed pass recorded

  absl::StatusOr<Graph> none = RunPasses({}, g);
  REQUIRE(none.ok());
  CHECK(none->num_nodes() == g.num_nodes());
}
