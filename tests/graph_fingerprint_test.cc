// GraphFingerprint (src/pipeline/graph_fingerprint.h): alike for graphs that compute alike,
// whatever their names and node order; different where an operator, a weight or an
// input's type differs; and the same in every process and build (cost cache keys).
#include <catch2/catch.hpp>

#include "pipeline/graph_fingerprint.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::AddWeight;

// Relu(x w) and Tanh(x), in the order `relu_first` says, names starting with `prefix`.
Graph TwoBranches(bool relu_first, const std::string& prefix, uint64_t weight_seed = 1, int64_t rows = 2,
                  const std::string& activation = "Relu") {
  Graph g;
  const ValueId x = *g.AddInput(prefix + "x", DataType::kFloat32, {rows, 8});
  auto relu = [&] {
    return AddOp(g, activation,
                 {AddOp(g, "MatMul", {x, AddWeight(g, prefix + "w", {8, 4}, weight_seed)}, prefix + "m")},
                 prefix + "r");
  };
  auto tanh = [&] { return AddOp(g, "Tanh", {x}, prefix + "t"); };
  ValueId r, t;
  if (relu_first) {
    r = relu();
    t = tanh();
  } else {
    t = tanh();
    r = relu();
  }
  REQUIRE(g.AddOutput(r).ok());
  REQUIRE(g.AddOutput(t).ok());
  return g;
}

TEST_CASE("A graph's fingerprint does not depend on names or node order, and changes with the computation") {
  const std::string fingerprint = pipeline::GraphFingerprint(TwoBranches(true, ""));
  CHECK(fingerprint.size() == 64);
  CHECK(pipeline::GraphFingerprint(TwoBranches(false, "other_")) == fingerprint);
  CHECK(pipeline::GraphFingerprint(TwoBranches(true, "", 2)) != fingerprint);                // another weight
  CHECK(pipeline::GraphFingerprint(TwoBranches(true, "", 1, 3)) != fingerprint);             // another input shape
  CHECK(pipeline::GraphFingerprint(TwoBranches(true, "", 1, 2, "Sigmoid")) != fingerprint);  // another operator
}

TEST_CASE("A graph's fingerprint is the same in every process") {
  // Keys kept on disk must not change between runs, as absl's salted hashes do: this is
  // the value every run computes for this graph. (Computing it otherwise changes it, and
  // the region times kept under the old keys are then timed again, not misread.)
  CHECK(pipeline::GraphFingerprint(TwoBranches(true, "")) ==
        "3c079eaf02b69a42af72b81dac906008201d5dfcf1f0714be98c91902187b24b");
}

}  // namespace
}  // namespace taso
