// The self-check around operators outside the library (pipeline/output_checks.h,
// pipeline/cut_run.h): what it compares, that it finds a change on either side of an
// opaque node, and what it refuses.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "pipeline/cut_run.h"
#include "pipeline/output_checks.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/fold.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// x -> Conv (weight `w_fill`) -> Relu -> FancyOp (another domain; reads an int64 table
// too) -> `after_op` -> z.
onnx::ModelProto AroundOpaque(float w_fill = 0.25f, const std::string& after_op = op_names::kRelu,
                              std::vector<int64_t> table = {1, 2}) {
  onnx::ModelProto m = NewModel(13);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  AddInput(m, "x", {1, 4, 8, 8});
  AddFloatInit(m, "w", {4, 4, 3, 3}, w_fill);
  AddInt64Init(m, "table", table);
  onnx::NodeProto* conv = AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  AddNode(m, op_names::kRelu, {"c"}, {"y"}, "relu");
  AddNode(m, "FancyOp", {"y", "table"}, {"f"}, "fancy")->set_domain("com.example");
  auto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("f");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 4, 8, 8})
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  AddNode(m, after_op, {"f"}, {"z"}, "after");
  AddOutput(m, "z");
  return m;
}

// Where the self-check finds the graphs different.
std::string Mismatch(const onnx::ModelProto& before, const onnx::ModelProto& after) {
  absl::StatusOr<SelfCheckCoverage> c = pipeline::SelfCheck(ImportFolded(before).graph, ImportFolded(after).graph, 1);
  REQUIRE(c.ok());
  return c->mismatch;
}

}  // namespace

TEST_CASE("The self-check compares what reaches an opaque node and feeds its outputs", "[self_check]") {
  const Graph g = ImportFolded(AroundOpaque()).graph;
  absl::StatusOr<SelfCheckCoverage> c = pipeline::SelfCheck(g, g, 1);
  REQUIRE(c.ok());
  CHECK(c->random_inputs == 1);
  CHECK(c->outputs == 1);
  CHECK(c->opaque_inputs == 1);  // y
  CHECK(c->by_source == 1);      // the int64 table
  CHECK(c->library_nodes == 3);  // conv, relu, after
  CHECK(c->fed_opaque == std::map<std::string, int>{{"FancyOp", 1}});
  CHECK(c->max_difference == 0);
  CHECK(c->mismatch.empty());

  // The opaque output is fed random values in [-1, 1], the same for a seed.
  absl::StatusOr<TensorMap> fed = pipeline::RandomOpaqueOutputs(g, 1), again = pipeline::RandomOpaqueOutputs(g, 1);
  REQUIRE(fed.ok());
  REQUIRE(again.ok());
  REQUIRE(fed->size() == 1);
  const Tensor<float>& f = fed->at("f");
  CHECK(f.shape == Shape{1, 4, 8, 8});
  CHECK(MaxAbsDifference(*fed, *again) == 0);
  CHECK(*std::max_element(f.data.begin(), f.data.end()) <= 1);
  CHECK(*std::min_element(f.data.begin(), f.data.end()) >= -1);
  CHECK(*std::max_element(f.data.begin(), f.data.end()) > 0.5);
}

TEST_CASE("The self-check finds a change before, after and at an opaque node", "[self_check]") {
  // Before it: the difference shows only in what reaches it.
  CHECK_THAT(Mismatch(AroundOpaque(), AroundOpaque(0.3f)),
             Catch::StartsWith("input 0 of opaque node 'f' differs by ") &&
                 Catch::Contains(" between the original and the optimized graph for inputs in [-1, 1] (tolerated: "));
  // After it: in the output, computed from the values fed.
  CHECK_THAT(Mismatch(AroundOpaque(), AroundOpaque(0.25f, op_names::kSigmoid)),
             Catch::StartsWith("output 'z' differs by "));
  // A non-float input that comes from elsewhere.
  CHECK_THAT(Mismatch(AroundOpaque(), AroundOpaque(0.25f, op_names::kRelu, {1, 3})),
             Catch::StartsWith("input 1 of opaque node 'f' is constant int64 [2] #"));
  // An opaque node the optimized graph lacks.
  onnx::ModelProto without = AroundOpaque();
  without.mutable_graph()->mutable_node(2)->set_output(0, "f2");
  without.mutable_graph()->mutable_value_info(0)->set_name("f2");
  without.mutable_graph()->mutable_node(3)->set_input(0, "f2");
  CHECK(Mismatch(AroundOpaque(), without) == "opaque node 'f' (FancyOp) is missing from the optimized graph");
  onnx::ModelProto extra = AroundOpaque();
  AddNode(extra, "FancyOp", {"z"}, {"g"}, "extra")->set_domain("com.example");
  CHECK(Mismatch(AroundOpaque(), extra) == "the optimized graph has an opaque node 'g' (FancyOp) the original has not");
}

TEST_CASE("The self-check agrees where both graphs make a NaN from the values fed", "[self_check]") {
  // Random values fed to a square root give NaNs, in the same places in both graphs (an
  // Identity before it in one, so that both are run).
  onnx::ModelProto through_identity = AroundOpaque(0.25f, op_names::kSqrt);
  through_identity.mutable_graph()->mutable_node(3)->set_input(0, "f_copy");
  AddNode(through_identity, op_names::kIdentity, {"f"}, {"f_copy"}, "copy");
  absl::StatusOr<SelfCheckCoverage> c = pipeline::SelfCheck(ImportFolded(AroundOpaque(0.25f, op_names::kSqrt)).graph,
                                                            ImportFolded(through_identity).graph, 1);
  REQUIRE(c.ok());
  CHECK(c->library_nodes_run == 2);  // the Identity and the square root
  CHECK(c->max_difference == 0);
  CHECK(c->mismatch.empty());
}

TEST_CASE("The self-check refuses a library node reading what it cannot feed", "[self_check]") {
  // The importer keeps such readers opaque; a graph built by hand can have one.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 3});
  onnx::NodeProto proto;
  proto.set_op_type("FancyOp");
  proto.add_output("f");
  const std::vector<ValueId> fancy = *g.AddOpaqueNode(std::make_shared<onnx::NodeProto>(proto), {x}, {"f"},
                                                      {OutputType{DataType::kFloat32, Shape(), false}});
  const ValueId y = AddOp(g, op_names::kRelu, {fancy[0]}, "y");
  REQUIRE(g.AddOutput(y).ok());
  const absl::Status s = pipeline::CheckSelfCheckCanRun(g);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(s.message()), Catch::Contains("the self-check cannot cover node '") &&
                                           Catch::Contains("it reads 'f' (float32, shape unknown)"));
}

namespace {

// x -> Mul by ~1000 -> big; x -> Mul by `small_fill` -> small: two outputs of very
// different sizes.
onnx::ModelProto LargeAndSmallOutputs(float small_fill) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", {4, 8});
  AddFloatInit(m, "k_big", {4, 8}, 1000.0f);
  AddFloatInit(m, "k_small", {4, 8}, small_fill);
  AddNode(m, op_names::kMul, {"x", "k_big"}, {"big"}, "scale_big");
  AddNode(m, op_names::kMul, {"x", "k_small"}, {"small"}, "scale_small");
  AddOutput(m, "big");
  AddOutput(m, "small");
  return m;
}

}  // namespace

TEST_CASE("An error confined to a small output beside a large one is found", "[self_check]") {
  // small changes by up to 0.02 (|x| <= 1), big not at all: within a thousandth of big's
  // size, far beyond a thousandth of small's.
  const std::string mismatch = Mismatch(LargeAndSmallOutputs(0.5f), LargeAndSmallOutputs(0.52f));
  CHECK_THAT(mismatch, Catch::StartsWith("output 'small' differs by ") && Catch::Contains("tolerated: 0.0"));
  CHECK(Mismatch(LargeAndSmallOutputs(0.5f), LargeAndSmallOutputs(0.5f)).empty());
}

namespace {

// x -> Clip to [-bound, bound] -> y.
onnx::ModelProto ClipModel(float bound) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", {64});
  AddFloatInit(m, "low", {}, -bound);
  AddFloatInit(m, "high", {}, bound);
  AddNode(m, op_names::kClip, {"x", "low", "high"}, {"y"}, "clip");
  AddOutput(m, "y");
  return m;
}

}  // namespace

TEST_CASE("An error that shows only for inputs beyond [-1, 1] is found", "[self_check]") {
  // A Clip at 2 against one at 3: the same wherever |x| <= 2.
  const std::string mismatch = Mismatch(ClipModel(2), ClipModel(3));
  CHECK_THAT(mismatch, Catch::StartsWith("output 'y' differs by ") &&
                           Catch::Contains(" between the original and the optimized graph for inputs in [-10, 10]"));
  CHECK(Mismatch(ClipModel(2), ClipModel(2)).empty());
  // A check at the scales given runs only those.
  const Graph two = ImportFolded(ClipModel(2)).graph, three = ImportFolded(ClipModel(3)).graph;
  absl::StatusOr<SelfCheckCoverage> small = pipeline::SelfCheck(two, three, 1, {1.0}),
                                    large = pipeline::SelfCheck(two, three, 1, {10.0});
  REQUIRE(small.ok());
  REQUIRE(large.ok());
  CHECK(small->input_scales == std::vector<double>{1.0});
  CHECK(small->mismatch.empty());
  CHECK_THAT(large->mismatch, Catch::Contains("for inputs in [-10, 10]"));
}

TEST_CASE("One self-checker checks several graphs against the input it ran once", "[self_check]") {
  const Graph input = ImportFolded(ClipModel(2)).graph, same = ImportFolded(ClipModel(2)).graph,
              other = ImportFolded(ClipModel(3)).graph;
  pipeline::SelfChecker checker(input, 1);
  for (const Graph* after : {&same, &other, &same}) {
    absl::StatusOr<SelfCheckCoverage> by_checker = checker.Check(*after), alone = pipeline::SelfCheck(input, *after, 1);
    REQUIRE(by_checker.ok());
    REQUIRE(alone.ok());
    CHECK(by_checker->mismatch == alone->mismatch);
    CHECK(by_checker->max_difference == alone->max_difference);
    CHECK(by_checker->input_scales == alone->input_scales);
    CHECK(by_checker->mismatch.empty() == (after == &same));
  }
  // Around an opaque node too: its fed outputs are the same for every graph checked.
  const Graph around = ImportFolded(AroundOpaque()).graph;
  pipeline::SelfChecker around_checker(around, 1);
  CHECK(around_checker.Check(ImportFolded(AroundOpaque()).graph)->mismatch.empty());
  CHECK_THAT(around_checker.Check(ImportFolded(AroundOpaque(0.25f, op_names::kSigmoid)).graph)->mismatch,
             Catch::StartsWith("output 'z' differs by "));
  CHECK(around_checker.Check(ImportFolded(AroundOpaque()).graph)->mismatch.empty());
}

namespace {

// x -> Conv -> Relu -> each of `tail` in turn -> z.
onnx::ModelProto Chain(const std::vector<std::string>& tail) {
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", {1, 4, 8, 8});
  AddFloatInit(m, "w", {4, 4, 3, 3}, 0.25f);
  SetIntsAttr(AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  std::string last = "y";
  AddNode(m, op_names::kRelu, {"c"}, {last}, "relu");
  for (size_t i = 0; i < tail.size(); ++i) {
    const std::string out = i + 1 == tail.size() ? "z" : absl::StrCat("t", i);
    AddNode(m, tail[i], {last}, {out}, absl::StrCat("tail", i));
    last = out;
  }
  AddOutput(m, last);
  return m;
}

}  // namespace

TEST_CASE("A graph that computes as the input is checked without running either", "[self_check]") {
  // Imported twice: weights of the same content at other addresses, the same computation.
  const Graph input = ImportFolded(AroundOpaque()).graph;
  absl::StatusOr<SelfCheckCoverage> same = pipeline::SelfCheck(input, ImportFolded(AroundOpaque()).graph, 1);
  REQUIRE(same.ok());
  CHECK(same->mismatch.empty());
  CHECK(same->library_nodes == 3);
  CHECK(same->library_nodes_run == 0);
  CHECK(same->max_difference == 0);
  // What it compares is said as for a graph that runs.
  absl::StatusOr<SelfCheckCoverage> other = pipeline::SelfCheck(input, ImportFolded(AroundOpaque(0.3f)).graph, 1);
  REQUIRE(other.ok());
  CHECK(other->library_nodes_run == 2);  // the Conv and the Relu before the opaque node; after it, alike
  CHECK_THAT(other->mismatch, Catch::StartsWith("input 0 of opaque node 'f' differs by "));
  CHECK(same->outputs == other->outputs);
  CHECK(same->opaque_inputs == other->opaque_inputs);
  CHECK(same->by_source == other->by_source);
  CHECK(same->random_inputs == other->random_inputs);
  CHECK(same->fed_opaque == other->fed_opaque);
  CHECK(same->input_scales == other->input_scales);
}

TEST_CASE("The self-check runs only what the optimized graph computes otherwise", "[self_check]") {
  const Graph input = ImportFolded(Chain({op_names::kSigmoid})).graph;
  // Relu(Relu(y)) is Relu(y): the second Relu and the Sigmoid run, on the input's Relu.
  absl::StatusOr<SelfCheckCoverage> equal =
      pipeline::SelfCheck(input, ImportFolded(Chain({op_names::kRelu, op_names::kSigmoid})).graph, 1);
  REQUIRE(equal.ok());
  CHECK(equal->library_nodes_run == 2);
  CHECK(equal->mismatch.empty());
  CHECK(equal->max_difference == 0);
  // A wrong last node is found, run on what the input's run computed before it.
  absl::StatusOr<SelfCheckCoverage> wrong = pipeline::SelfCheck(input, ImportFolded(Chain({op_names::kTanh})).graph, 1);
  REQUIRE(wrong.ok());
  CHECK(wrong->library_nodes_run == 1);
  CHECK_THAT(wrong->mismatch, Catch::StartsWith("output 'z' differs by "));
}

TEST_CASE("A checker runs the input again for values an earlier check did not keep", "[self_check]") {
  const Graph input = ImportFolded(Chain({op_names::kSigmoid, op_names::kTanh})).graph;
  const Graph at_end = ImportFolded(Chain({op_names::kSigmoid, op_names::kSigmoid})).graph,
              earlier = ImportFolded(Chain({op_names::kTanh, op_names::kTanh})).graph;
  pipeline::SelfChecker checker(input, 1);
  for (const Graph* after : {&at_end, &earlier, &at_end}) {
    absl::StatusOr<SelfCheckCoverage> by_checker = checker.Check(*after), alone = pipeline::SelfCheck(input, *after, 1);
    REQUIRE(by_checker.ok());
    REQUIRE(alone.ok());
    CHECK_THAT(by_checker->mismatch, Catch::StartsWith("output 'z' differs by "));
    CHECK(by_checker->mismatch == alone->mismatch);
    CHECK(by_checker->library_nodes_run == (after == &at_end ? 1 : 2));
  }
}

TEST_CASE("Weights the input computes from weights are the folded model's weights", "[self_check]") {
  // PyTorch reads a shared weight through an Identity, and a transposed one through a
  // Transpose; the model written holds both folded.
  onnx::ModelProto input = NewModel(13);
  AddInput(input, "x", {2, 3});
  AddFloatInit(input, "w", {3, 4}, 0.5f);
  AddFloatInit(input, "v", {4, 3}, 0.25f);
  AddNode(input, op_names::kIdentity, {"w"}, {"w_copy"}, "copy");
  AddNode(input, op_names::kTranspose, {"v"}, {"v_t"}, "transpose");
  AddNode(input, op_names::kMatMul, {"x", "w_copy"}, {"a"}, "first");
  AddNode(input, op_names::kMatMul, {"x", "v_t"}, {"b"}, "second");
  AddNode(input, op_names::kAdd, {"a", "b"}, {"y"}, "sum");
  AddOutput(input, "y");
  const Graph before = ImportFolded(input).graph;
  REQUIRE(before.num_nodes() == 5);
  absl::StatusOr<Graph> folded = FoldWeights(before);
  REQUIRE(folded.ok());
  REQUIRE(folded->num_nodes() == 3);
  absl::StatusOr<SelfCheckCoverage> c = pipeline::SelfCheck(before, *folded, 1);
  REQUIRE(c.ok());
  CHECK(c->mismatch.empty());
  CHECK(c->library_nodes_run == 0);
}
