// The optimizer as a library call (taso/pipeline/pipeline.h): what OptimizeModel returns, what it
// refuses, and why the search stops.
#include <catch2/catch.hpp>

#include <set>

#include "absl/strings/str_cat.h"
#include "pipeline/change_summary.h"
#include "rule_lookup.h"
#include "taso/backends/backends.h"
#include "taso/ir/ops/names.h"
#include "taso/pipeline/pipeline.h"
#include "test_util.h"

using namespace taso;

namespace {

// The shipped, proved rule database.

PipelineOptions AnalyticOptions(int64_t budget) {
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.search = DefaultSearchKind(Backend::kAnalytic);
  options.engine = SearchEngine::kBacktracking;
  options.verify_speed = false;
  options.search_options.budget = budget;
  return options;
}

// Conv -> Relu -> an operator of another domain (opaque to the library) -> Relu.
onnx::ModelProto OpaqueModel() {
  onnx::ModelProto m = testing::SmallConvReluModel();
  m.mutable_graph()->mutable_output()->Clear();
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  testing::AddNode(m, "FancyOp", {"y"}, {"f"}, "fancy")->set_domain("com.example");
  auto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("f");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 4, 8, 8})
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  testing::AddNode(m, op_names::kRelu, {"f"}, {"z"}, "relu2");
  testing::AddOutput(m, "z");
  return m;
}

// x (float16 or int64) -> Add (a weight of the type) -> Relu -> Mul -> y: nothing the
// library computes on.
onnx::ModelProto NotFloatModel(int elem_type) {
  onnx::ModelProto m = testing::NewModel(14);
  testing::AddInput(m, "x", {2, 3}, elem_type);
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(elem_type);
  for (int64_t d : {2, 3}) w->add_dims(d);
  w->set_raw_data(std::string(2 * 3 * (elem_type == onnx::TensorProto::INT64 ? 8 : 2), '\0'));
  testing::AddNode(m, op_names::kAdd, {"x", "w"}, {"a"}, "add");
  testing::AddNode(m, op_names::kRelu, {"a"}, {"r"}, "relu");
  testing::AddNode(m, op_names::kMul, {"r", "r"}, {"y"}, "mul");
  testing::AddOutput(m, "y");
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return m;
}

// Each node's ONNX operator where it is opaque, else its library operator.
double JsonNumber(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ");
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + key.size() + 4));
}

}  // namespace

TEST_CASE("OptimizeModel writes a convolution and its relu as read where no rewrite pays, and checks it",
          "[pipeline]") {
  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  const PipelineOptions options = AnalyticOptions(20);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK(r->nodes_before == 2);
  // No rule rewrites one convolution: the search's clean-up (the relu fused into the
  // convolution, cheaper by the estimate) is no rewrite, and the input is written as read.
  CHECK(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) == std::multiset<std::string>{op_names::kConv2D, op_names::kRelu});
  absl::StatusOr<onnx::ModelProto> written = ExportOnnx(r->model);
  REQUIRE(written.ok());
  CHECK(r->nodes_after == written->graph().node_size());
  CHECK(r->nodes_after == 2);
  CHECK(r->cost_after == Approx(r->cost_before));
  CHECK(r->rule_instances > 0);
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->max_difference < 1e-4);
  CHECK(r->self_check->outputs == 1);
  CHECK(r->self_check->library_nodes == 2);
  CHECK_FALSE(r->layouts.has_value());
  CHECK_FALSE(r->cost_sources.has_value());  // nothing measured on the analytic backend
  CHECK_FALSE(r->measured.has_value());
  // The optimized graph computes what the input does.
  const TensorMap inputs = RandomInputs(model.graph, 5);
  absl::StatusOr<TensorMap> before = RunReference(model.graph, inputs), after = RunReference(r->model.graph, inputs);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK(MaxAbsDifference(*before, *after) < 1e-4);

  const std::string summary = SummaryText(options, *r, "m.onnx");
  CHECK_THAT(summary, Catch::StartsWith("m.onnx: 2 nodes -> 2 nodes; "));
  CHECK_THAT(summary, Catch::Contains("\nestimated cost (analytic): "));
  CHECK_THAT(summary, Catch::Contains("\nsearch (substitutions): "));
  CHECK_THAT(
      summary,
      Catch::Contains(
          "\nself-check: 1 random inputs (inputs in [-1, 1] and [-10, 10]), 1 compared tensors (1 outputs, 0 opaque "
          "inputs), max |difference| "));
  const std::string json = JsonReport(options, *r);
  CHECK(JsonNumber(json, "cost_after_ms") == Approx(JsonNumber(json, "cost_before_ms")));
  CHECK_THAT(json, Catch::Contains("\"backend\": \"analytic\",\n  \"search\": \"substitutions\""));
  CHECK_THAT(json, Catch::Contains("\"self_check\": {\"max_abs_difference\": "));
  CHECK_THAT(json, Catch::Contains("\"measured\": null"));
  CHECK_THAT(json, Catch::Contains("\"rules_applied\": {"));
}

TEST_CASE("OptimizeModel measures kernel costs on the cpu once and takes them from the cache after", "[pipeline]") {
  const auto dir = testing::TempDir("pipeline_cache");
  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  PipelineOptions options;  // the cpu backend, substitutions and layouts
  options.engine = SearchEngine::kBacktracking;
  options.verify_speed = false;
  options.cost_cache = (dir / "costs.sqlite").string();
  options.search_options.budget = 5;
  absl::StatusOr<PipelineResult> first = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(first.ok());
  REQUIRE(first->cost_sources.has_value());
  CHECK(first->cost_sources->counts.measured > 0);
  CHECK(first->cost_sources->counts.cached == 0);
  CHECK(first->layouts.has_value());
  CHECK_THAT(SummaryText(options, *first, "m"), Catch::Contains("\nlayouts: ") && Catch::Contains("\ncosts (cpu "));

  absl::StatusOr<PipelineResult> second = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(second.ok());
  REQUIRE(second->cost_sources.has_value());
  CHECK(second->cost_sources->counts.measured == 0);
  CHECK(second->cost_sources->counts.cached > 0);
}

TEST_CASE("OptimizeModel with measure runs times both graphs on the cpu executor", "[pipeline]") {
  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  PipelineOptions options = AnalyticOptions(5);
  options.measure_runs = 3;
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  REQUIRE(r->measured.has_value());
  CHECK(r->measured->executor == Backend::kCpu);
  CHECK(r->measured->runs == 3);
  CHECK(r->measured->before_seconds > 0);
  CHECK(r->measured->after_seconds > 0);
  CHECK_THAT(SummaryText(options, *r, "m"),
             Catch::Contains("\nmeasured (cpu executor, medians of 3 runs in turn over 4 executor pairs): "));
  CHECK_THAT(JsonReport(options, *r),
             Catch::Contains("\"measured\": {\"executor\": \"cpu\", \"runs\": 3, \"before_ms\": "));
}

TEST_CASE("OptimizeModel optimizes around an operator outside the library and checks around it", "[pipeline]") {
  const OnnxModel model = testing::ImportFolded(OpaqueModel());
  PipelineOptions options = AnalyticOptions(20);
  // The graph around the opaque node is optimized, the node kept as it was, and the
  // check compares what reaches it and the output, the node's output fed random values.
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK(testing::OperatorNames(r->model.graph) ==
        std::multiset<std::string>{op_names::kConv2D, "FancyOp", op_names::kRelu, op_names::kRelu});
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->random_inputs == 1);
  CHECK(r->self_check->outputs == 1);
  CHECK(r->self_check->opaque_inputs == 1);
  CHECK(r->self_check->fed_opaque == std::map<std::string, int>{{"FancyOp", 1}});
  CHECK_THAT(SummaryText(options, *r, "m"),
             Catch::Contains("\nself-check: 1 random inputs (inputs in [-1, 1] and [-10, 10]), 2 compared tensors (1 "
                             "outputs, 1 opaque inputs), "
                             "max |difference| ") &&
                 Catch::Contains("; 1 opaque nodes (FancyOp x1) fed random values; 0 of the optimized graph's 3 "
                                 "library nodes run, the others computing exactly what nodes of the input do\n"));
  // No rewrite pays here: the input as read is written, and checked without a run.
  CHECK(r->self_check->library_nodes_run == 0);
  CHECK_THAT(JsonReport(options, *r), Catch::Contains("\"fed_opaque\": {\"FancyOp\": 1}"));

  // The closing table says what was left alone and why.
  CHECK_THAT(SummaryText(options, *r, "m"),
             Catch::Contains("\nwhat changed in m:\n  nodes                4 -> 4\n") &&
                 Catch::Contains("\n  left alone           not in the operator library: FancyOp x1\n") &&
                 Catch::Contains("\n  self-check           passed: 2 tensors compared (1 around 1 opaque nodes)"));

  // The executors that measure cannot run the opaque node: refused before the search.
  PipelineOptions measured = options;
  measured.measure_runs = 2;
  absl::StatusOr<PipelineResult> refused = OptimizeModel(model, testing::ShippedRules().rules, measured);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(refused.status().message()),
             Catch::StartsWith("--measure runs both graphs on the backend's executor, which cannot run node 'fancy' "
                               "(FancyOp), outside the operator library; time the written model against the input"));

  // Without the check, the output says plainly that nothing was checked.
  options.self_check = false;
  r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->self_check.has_value());
  CHECK_THAT(JsonReport(options, *r), Catch::Contains("\"self_check\": null"));
  CHECK_THAT(SummaryText(options, *r, "m"), Catch::Contains("\nself-check: skipped (--skip_self_check): NOTHING WAS "
                                                            "CHECKED\n"));
}

TEST_CASE("OptimizeModel returns a model of no float32 computation as it is and says so", "[pipeline]") {
  for (int type : {onnx::TensorProto::FLOAT16, onnx::TensorProto::INT64}) {
    const OnnxModel model = testing::ImportFolded(NotFloatModel(type));
    const PipelineOptions options = AnalyticOptions(20);
    absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
    REQUIRE(r.ok());
    CHECK(r->nothing_to_optimize);
    CHECK(testing::OperatorNames(r->model.graph) ==
          std::multiset<std::string>{op_names::kAdd, op_names::kMul, op_names::kRelu});
    CHECK(r->model.graph.StructuralHash() == model.graph.StructuralHash());
    CHECK(r->search.rules_applied.empty());
    const std::string summary = SummaryText(options, *r, "m");
    CHECK_THAT(summary, Catch::StartsWith("m: 3 nodes -> 3 nodes; nothing could be optimized"));
    const std::string type_name = type == onnx::TensorProto::FLOAT16 ? "float16" : "int64";
    CHECK_THAT(summary,
               Catch::Contains("\n  left alone           computes on " + type_name + ": Add x1, Mul x1, Relu x1\n"));
    CHECK_THAT(summary, Catch::Contains("nothing to check: the model is written as read, its constants as "
                                        "initializers"));
  }
  // Its constant nodes become initializers; one nothing reads (shape arithmetic the
  // import folded leaves such) is not written at all.
  onnx::ModelProto with_constant = NotFloatModel(onnx::TensorProto::INT64);
  onnx::NodeProto* constant = testing::AddNode(with_constant, op_names::kConstant, {}, {"unread"}, "constant");
  onnx::AttributeProto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_int64_data(7);
  const OnnxModel model = testing::ImportFolded(with_constant);
  REQUIRE(model.graph.num_nodes() == 4);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, AnalyticOptions(20));
  REQUIRE(r.ok());
  CHECK(r->nothing_to_optimize);
  CHECK(testing::OperatorNames(r->model.graph) ==
        std::multiset<std::string>{op_names::kAdd, op_names::kMul, op_names::kRelu});
  CHECK(r->nodes_before == 4);
  CHECK(r->nodes_after == 3);
  CHECK(r->model.graph.FindValue("unread") == kNoValue);
}

TEST_CASE("OptimizeModel optimizes the float32 part of a float16 model and checks it", "[pipeline]") {
  // x (float16) -> Cast -> Conv -> Relu -> Cast -> y (float16).
  onnx::ModelProto m = testing::SmallConvReluModel();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
  m.mutable_graph()->mutable_node(0)->set_input(0, "x32");
  m.mutable_graph()->mutable_node(1)->set_output(0, "y32");
  testing::SetIntAttr(testing::AddNode(m, "Cast", {"x"}, {"x32"}, "to_float"), "to", onnx::TensorProto::FLOAT);
  testing::SetIntAttr(testing::AddNode(m, "Cast", {"y32"}, {"y"}, "to_half"), "to", onnx::TensorProto::FLOAT16);
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT16);
  const OnnxModel model = testing::ImportFolded(m);
  const PipelineOptions options = AnalyticOptions(20);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->nothing_to_optimize);
  CHECK(testing::OperatorNames(r->model.graph) ==
        std::multiset<std::string>{"Cast", "Cast", op_names::kConv2D, op_names::kRelu});
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->random_inputs == 0);  // the float16 input reaches only the Cast
  CHECK(r->self_check->opaque_inputs == 1);  // y32, what the convolution computes
  CHECK(r->self_check->fed_opaque == std::map<std::string, int>{{"Cast", 1}});
  CHECK_THAT(SummaryText(options, *r, "m"), Catch::Contains("not in the operator library: Cast x2"));
}

TEST_CASE("OptimizeModel says a node holding subgraphs is left alone, its subgraphs not searched", "[pipeline]") {
  // x -> Relu -> r; y = If(c) of two branches that give r.
  onnx::ModelProto m = testing::NewModel(13);
  testing::AddInput(m, "x", {2, 3});
  testing::AddInput(m, "c", {}, onnx::TensorProto::BOOL);
  testing::AddNode(m, op_names::kRelu, {"x"}, {"r"}, "relu");
  onnx::NodeProto* branch = testing::AddNode(m, "If", {"c"}, {"y"}, "if");
  for (const char* name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* a = branch->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(name);
    a->mutable_g()->add_output()->set_name("r");
  }
  testing::AddOutput(m, "y");
  const PipelineOptions options = AnalyticOptions(20);
  absl::StatusOr<PipelineResult> r = OptimizeModel(testing::ImportFolded(m), testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK(r->left_alone ==
        std::map<std::string, std::map<std::string, int>>{{"holds subgraphs, which are not searched", {{"If", 1}}}});
  CHECK_THAT(SummaryText(options, *r, "m"),
             Catch::Contains("\n  left alone           holds subgraphs, which are not searched: If x1\n"));
}

TEST_CASE("OptimizeModel drops the search's rewrites where the self-check finds them wrong", "[pipeline]") {
  // A wrong rule, relu(A) -> A: cheaper, so the search applies it.
  Rule wrong;
  wrong.name = "drops_relu";
  wrong.inputs = {{"A", {2, 8}, false}};
  RuleOp relu;
  relu.op = testing::Op(op_names::kRelu);
  relu.inputs = {0};
  wrong.source = {{relu}, {1}};
  wrong.target = {{}, {0}};
  onnx::ModelProto m = testing::NewModel(13);  // x -> Relu -> Sigmoid -> y
  testing::AddInput(m, "x", {2, 8});
  testing::AddNode(m, op_names::kRelu, {"x"}, {"r"}, "relu");
  testing::AddNode(m, op_names::kSigmoid, {"r"}, {"y"}, "sigmoid");
  testing::AddOutput(m, "y");
  const PipelineOptions options = AnalyticOptions(20);
  absl::StatusOr<PipelineResult> r = OptimizeModel(testing::ImportFolded(m), {wrong}, options);
  REQUIRE(r.ok());
  CHECK(r->rejected_rules == std::map<std::string, int>{{"drops_relu", 1}});
  CHECK_THAT(r->rejection, Catch::StartsWith("output 'y' differs by "));
  CHECK(r->search.rules_applied.empty());
  // The graph without the rewrite was checked and kept.
  CHECK(testing::OperatorNames(r->model.graph) == std::multiset<std::string>{op_names::kRelu, op_names::kSigmoid});
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->mismatch.empty());
  const std::string summary = SummaryText(options, *r, "m");
  CHECK_THAT(summary, Catch::Contains("\nself-check: REJECTED the search's rewrites (drops_relu x1): output 'y' "
                                      "differs by "));
  CHECK_THAT(summary, Catch::Contains("\n  rewrites rejected    drops_relu x1 by the self-check: output 'y' "));
  CHECK_THAT(JsonReport(options, *r), Catch::Contains("\"rules_rejected_by_self_check\": {\"drops_relu\": 1}"));
}

TEST_CASE("The closing table names the rules applied, with their forms", "[pipeline]") {
  const Rule& rule = testing::ShippedRules().rules.front();
  const std::map<std::string, std::string> forms = pipeline::RuleForms(
      testing::ShippedRules().rules,
      {{rule.name, 2}, {rule.name + "/1", 1}, {rule.name + "~", 1}, {rule.name + "/1~", 1}, {"no such rule", 1}});
  REQUIRE(forms.size() == 4);
  const std::string form = forms.at(rule.name);
  CHECK_THAT(form, Catch::Contains(" -> "));
  CHECK(forms.at(rule.name + "/1") == form);
  // Read the other way: the two sides swap.
  const size_t arrow = form.find(" -> ");
  const std::string reversed = form.substr(arrow + 4) + " -> " + form.substr(0, arrow);
  CHECK(forms.at(rule.name + "~") == reversed);
  CHECK(forms.at(rule.name + "/1~") == reversed);

  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  const PipelineOptions options = AnalyticOptions(20);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  r->search.rules_applied = {{rule.name, 2}};
  r->rule_forms = {{rule.name, form}};
  const std::string summary = SummaryText(options, *r, "m");
  CHECK_THAT(summary, Catch::Contains(absl::StrCat("\n  rewrites applied     ", rule.name, " x2: ", form, "\n")));
  CHECK_THAT(summary, Catch::Contains("\n  estimated (analytic) "));
  CHECK_THAT(summary, Catch::Contains("\n  left alone           nothing: every node is in the operator library\n"));
}

TEST_CASE("A search result dropped for its small gain is named as dropped, not as the model written", "[pipeline]") {
  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  const PipelineOptions options = AnalyticOptions(20);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  r->dropped_search_gain = 0.003;
  r->search.initial_cost = 1e-3;
  r->search.best_cost = 0.97e-3;  // of the e-graph's other extraction, written instead
  r->search.rules_applied = {{"r0512", 2}};
  CHECK_THAT(SummaryText(options, *r, "m"),
             Catch::Contains("\nsubstitutions: the search's own graph dropped (another written), the search's gain "
                             "(0.30%) is below 0.5%\n"));
  r->search.rules_applied.clear();  // the input written
  CHECK_THAT(SummaryText(options, *r, "m"),
             Catch::Contains("\nsubstitutions: none kept, the search's gain (0.30%) is below 0.5%\n") &&
                 Catch::Contains("\n  rewrites applied     none kept: the gain found is within noise\n"));
}

TEST_CASE("OptimizeModel refuses inconsistent options and unusable backends before any work", "[pipeline]") {
  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  auto refusal = [&](const PipelineOptions& options) {
    absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
    REQUIRE_FALSE(r.ok());
    return r.status();
  };
  PipelineOptions layouts = AnalyticOptions(5);
  layouts.search = SearchKind::kLayouts;
  CHECK(refusal(layouts).code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(refusal(layouts).message()), Catch::Contains("cpu backend only"));
  PipelineOptions alpha = AnalyticOptions(5);
  alpha.search_options.alpha = 0.5;
  CHECK(refusal(alpha).code() == absl::StatusCode::kInvalidArgument);
  PipelineOptions budget = AnalyticOptions(-1);
  CHECK(refusal(budget).code() == absl::StatusCode::kInvalidArgument);
  PipelineOptions queue = AnalyticOptions(5);
  queue.search_options.max_queue = 0;
  CHECK(refusal(queue).code() == absl::StatusCode::kInvalidArgument);
  PipelineOptions no_time = AnalyticOptions(5);
  no_time.verify_speed_seconds = -1;
  CHECK(refusal(no_time).code() == absl::StatusCode::kInvalidArgument);
  PipelineOptions short_extraction = AnalyticOptions(5);
  short_extraction.egraph.extraction.seconds = short_extraction.egraph.extraction.alternative_seconds / 2;
  CHECK_THAT(std::string(refusal(short_extraction).message()), Catch::Contains("extraction time"));

  // A cost cache whose directory is a file cannot be opened.
  const auto dir = testing::TempDir("pipeline_refusals");
  testing::WriteFile(dir / "file", "");
  PipelineOptions cache;
  cache.cost_cache = (dir / "file" / "costs.sqlite").string();
  CHECK_FALSE(OptimizeModel(model, testing::ShippedRules().rules, cache).ok());

  const BackendInfo cuda = AvailableBackends()[1];
  if (!cuda.usable) {
    PipelineOptions on_cuda = AnalyticOptions(5);
    on_cuda.backend = Backend::kCuda;
    on_cuda.cost_cache = "none";
    const std::string missing = cuda.compiled ? "the cuda backend needs a GPU" : "the cuda backend is not built";
    CHECK_THAT(std::string(refusal(on_cuda).message()), Catch::StartsWith(missing));
  }
}

TEST_CASE("Backends and search kinds are named as the command line spells them", "[pipeline]") {
  for (Backend b : {Backend::kCpu, Backend::kCuda, Backend::kAnalytic}) CHECK(ParseBackend(BackendName(b)) == b);
  for (SearchKind s : {SearchKind::kSubstitutions, SearchKind::kLayouts, SearchKind::kBoth})
    CHECK(ParseSearchKind(SearchKindName(s)) == s);
  CHECK(BackendName(Backend::kAnalytic) == "analytic");
  CHECK(SearchKindName(SearchKind::kBoth) == "both");
  CHECK_FALSE(ParseBackend("tpu").has_value());
  CHECK_FALSE(ParseSearchKind("everything").has_value());
  CHECK(DefaultSearchKind(Backend::kCpu) == SearchKind::kBoth);
  CHECK(DefaultSearchKind(Backend::kCuda) == SearchKind::kSubstitutions);
}

TEST_CASE("The default limit on a model's tensors is the memory available where that is more", "[pipeline]") {
  CHECK(MachineMemoryLimit(std::nullopt) == kDefaultMaxMemoryBytes);
  CHECK(MachineMemoryLimit(int64_t{8'000'000'000}) == kDefaultMaxMemoryBytes);  // never less than before
  CHECK(MachineMemoryLimit(int64_t{60'000'000'000}) == int64_t{60'000'000'000});
}

TEST_CASE("The search says why it stopped", "[pipeline]") {
  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  const std::vector<RuleMatcher> matchers = PrepareRules(testing::ShippedRules().rules);
  AnalyticCost cost;
  SearchOptions options;
  options.budget = 0;
  SearchResult budget = Optimize(model.graph, matchers, cost, options);
  CHECK(budget.stats.stop_reason == StopReason::kBudget);
  CHECK(budget.stats.expansions == 0);

  // A time limit already past stops it before the first expansion.
  options.budget = 10;
  options.time_limit = -1;
  SearchResult time = Optimize(model.graph, matchers, cost, options);
  CHECK(time.stats.stop_reason == StopReason::kTimeLimit);
  CHECK(time.stats.expansions == 0);

  // No rule, no match: the input is expanded and nothing is left.
  options.time_limit = 60;
  SearchResult empty = Optimize(model.graph, {}, cost, options);
  CHECK(empty.stats.stop_reason == StopReason::kQueueEmpty);
  CHECK(empty.stats.expansions == 1);
}

TEST_CASE("The pipeline reports why the search stopped", "[pipeline]") {
  const OnnxModel model = testing::ImportFolded(testing::SmallConvReluModel());
  const PipelineOptions budget = AnalyticOptions(0);
  absl::StatusOr<PipelineResult> stopped = OptimizeModel(model, testing::ShippedRules().rules, budget);
  REQUIRE(stopped.ok());
  CHECK_THAT(JsonReport(budget, *stopped),
             Catch::Contains("\"stopped_by_limit\": true,\n  \"stop_reason\": \"budget\","));
  CHECK_THAT(SummaryText(budget, *stopped, "m"), Catch::Contains(" (stopped by --budget)\n"));

  const PipelineOptions options = AnalyticOptions(10);
  absl::StatusOr<PipelineResult> finished = OptimizeModel(model, {}, options);
  REQUIRE(finished.ok());
  CHECK_THAT(JsonReport(options, *finished),
             Catch::Contains("\"stopped_by_limit\": false,\n  \"stop_reason\": \"queue_empty\","));
  CHECK_THAT(SummaryText(options, *finished, "m"), !Catch::Contains("stopped by"));
  CHECK(finished->rule_instances == 0);
  CHECK_FALSE(finished->dropped_search_gain);
}

TEST_CASE("Rule instances the matcher cannot use are counted and reported", "[pipeline]") {
  int directed = 0;
  for (const Rule& rule : testing::ShippedRules().rules) directed += 2 * static_cast<int>(Instances(rule).size());
  int unusable = -1;
  const std::vector<RuleMatcher> matchers = PrepareRules(testing::ShippedRules().rules, &unusable);
  CHECK(static_cast<int>(matchers.size()) + unusable == directed);
  REQUIRE(unusable > 0);  // the shipped database has rules whose reverse passes an input through

  const PipelineOptions options = AnalyticOptions(2);
  absl::StatusOr<PipelineResult> r =
      OptimizeModel(testing::ImportFolded(testing::SmallConvReluModel()), testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK(r->rule_instances == static_cast<int>(matchers.size()));
  CHECK(r->rule_instances_unusable == unusable);
  CHECK_THAT(SummaryText(options, *r, "m.onnx"),
             Catch::Contains(absl::StrCat("\nrules: ", unusable, " directed instances left out")));
  const std::string json = JsonReport(options, *r);
  CHECK(JsonNumber(json, "rule_instances_unusable") == unusable);
  CHECK(JsonNumber(json, "rule_instances") == r->rule_instances);
}
