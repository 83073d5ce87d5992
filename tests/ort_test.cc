// The ort target: the ONNX Runtime worker's protocol and failures, the costs measured in
// ONNX Runtime and their cache key, --target and what taso-opt says where ONNX Runtime
// cannot run. Real ONNX Runtime runs here only on one-operator models and on two small graphs.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pipeline/region_estimate.h"
#include "taso/backends/available_memory.h"
#include "taso/backends/ort_cost.h"
#include "taso/backends/ort_timer.h"
#include "taso/backends/ort_worker.h"
#include "taso/ir/ops/names.h"
#include "taso/pipeline/pipeline.h"
#include "test_util.h"

using namespace taso;

namespace {

std::unique_ptr<OrtWorker> StartWorker() {
  absl::StatusOr<std::unique_ptr<OrtWorker>> worker = OrtWorker::Start();
  INFO(worker.status());
  REQUIRE(worker.ok());
  return *std::move(worker);
}

// A worker script that is not the real one: `body` is its JavaScript.
OrtWorkerOptions FakeWorker(const std::filesystem::path& dir, const std::string& body) {
  testing::WriteFile(dir / "fake.js", body);
  OrtWorkerOptions options;
  options.script = (dir / "fake.js").string();
  options.timeout = absl::Seconds(2);
  return options;
}

std::string SmallModel(const std::filesystem::path& dir) {
  const std::string path = (dir / "small.onnx").string();
  const onnx::ModelProto m = testing::SmallConvReluModel();
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

}  // namespace

TEST_CASE("ONNX Runtime's threads: a count asked for is named, 0 is its default session's", "[ort]") {
  CHECK(OrtThreadsName(3) == "3 threads");
  CHECK(OrtThreadsName(1) == "1 thread");
  CHECK(OrtThreadsName(0) == "its default threads");
  CHECK(OrtThreadsKey(2) == "t2");
  // The default's key names the CPUs it sizes itself by, so machines of one processor
  // but different CPU counts keep their costs apart, and never shares an explicit count's.
  const std::string key = OrtThreadsKey(0);
  CHECK(key.rfind("tdefault", 0) == 0);
  CHECK(key != OrtThreadsKey(1));
  CHECK(key != OrtThreadsKey(2));
  CHECK(PipelineOptions{}.ort_threads == 0);
}

TEST_CASE("The ONNX Runtime worker loads and runs models and reports bad requests", "[ort]") {
  auto dir = testing::TempDir("ort_worker");
  std::unique_ptr<OrtWorker> worker = StartWorker();
  CHECK_FALSE(worker->version().empty());
  absl::StatusOr<int64_t> session = worker->Load(SmallModel(dir), 1);
  REQUIRE(session.ok());
  absl::StatusOr<double> seconds = worker->Run(*session);
  REQUIRE(seconds.ok());
  CHECK(*seconds > 0);
  // A bad model or session is an error, and the worker goes on.
  testing::WriteFile(dir / "junk.onnx", "junk");
  absl::StatusOr<int64_t> bad = worker->Load((dir / "junk.onnx").string(), 1);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()), Catch::StartsWith("ONNX Runtime: "));
  CHECK_FALSE(worker->Run(*session + 100).ok());
  CHECK(worker->Run(*session).ok());
  REQUIRE(worker->Release(*session).ok());
  CHECK_FALSE(worker->Run(*session).ok());
}

// ONNX Runtime's Linux packages record each process and session (a device id under
// ~/.cache, an event database, files in $TMPDIR) and upload them unless
// ORT_DISABLE_TELEMETRY is set: the worker and the command-line runner set it.
TEST_CASE("ONNX Runtime runs users' models without its telemetry", "[ort]") {
  auto dir = testing::TempDir("ort_telemetry");
  const std::string model = SmallModel(dir);
  const std::filesystem::path home = dir / "home";
  std::filesystem::create_directories(home);
  const testing::ScopedEnv own_home("HOME", home.string()), own_tmp("TMPDIR", home.string());
  // ONNX Runtime records nothing on a machine these name as a build server (CI runs so).
  std::vector<std::unique_ptr<testing::ScopedEnv>> unset;
  for (const char* name : {"ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME", "CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI",
                           "CIRCLECI", "TRAVIS", "JENKINS_URL", "CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION",
                           "APPVEYOR", "BITBUCKET_BUILD_NUMBER"})
    unset.push_back(std::make_unique<testing::ScopedEnv>(name, std::nullopt));
  {
    std::unique_ptr<OrtWorker> worker = StartWorker();
    absl::StatusOr<int64_t> session = worker->Load(model, 1);
    REQUIRE(session.ok());
    REQUIRE(worker->Run(*session).ok());
  }
  const auto run = testing::RunCommand("node " TASO_SOURCE_DIR "/tools/ort/ort_run.js " + model);
  CHECK(run.code == 0);
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(home)) left.push_back(entry.path().string());
  CHECK(left == std::vector<std::string>{});
}

// The benchmarks' paired timing (bench/ort_pairs.sh): a model with a symbolic batch is
// timed at the sizes "shapes" gives, and refused without them.
TEST_CASE("The worker times two models in turn, symbolic ones at the sizes given", "[ort]") {
  auto dir = testing::TempDir("ort_compare");
  onnx::ModelProto m = testing::SmallConvReluModel();
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  m.mutable_graph()->mutable_output(0)->clear_type();
  const std::string path = (dir / "batch.onnx").string();
  testing::WriteFile(path, m.SerializeAsString());
  std::unique_ptr<OrtWorker> worker = StartWorker();
  const std::string request = absl::StrCat(R"({"op": "compare", "model": ")", path, R"(", "against": ")", path,
                                           R"(", "threads": 1, "pairs": 2, "rounds": 3)");
  absl::StatusOr<std::string> refused = worker->Request(request + "}");
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("has a symbolic shape"));
  absl::StatusOr<std::string> timed = worker->Request(request + R"(, "shapes": {"x": [2, 4, 8, 8]}})");
  INFO(timed.status());
  REQUIRE(timed.ok());
  CHECK_THAT(*timed, Catch::Matches(R"(.*"a_ms":\[[0-9.e-]+,[0-9.e-]+\],"b_ms":\[[0-9.e-]+,[0-9.e-]+\].*)"));
}

TEST_CASE("A killed worker fails every later request", "[ort]") {
  std::unique_ptr<OrtWorker> worker = StartWorker();
  REQUIRE(kill(worker->pid(), SIGKILL) == 0);
  absl::StatusOr<std::string> reply = worker->Request(R"({"op": "hello"})");
  CHECK(reply.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(reply.status().message()), Catch::Contains("worker exited"));
  CHECK(worker->Request(R"({"op": "hello"})").status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("A worker that answers nonsense or nothing is given up", "[ort]") {
  auto dir = testing::TempDir("ort_fake");
  absl::StatusOr<std::unique_ptr<OrtWorker>> garbled =
      OrtWorker::Start(FakeWorker(dir, "process.stdin.on('data', () => process.stdout.write('not json\\n'));"));
  CHECK(garbled.status().code() == absl::StatusCode::kDataLoss);
  absl::StatusOr<std::unique_ptr<OrtWorker>> silent = OrtWorker::Start(FakeWorker(dir, "setInterval(() => {}, 1000);"));
  CHECK(silent.status().code() == absl::StatusCode::kDeadlineExceeded);
  absl::StatusOr<std::unique_ptr<OrtWorker>> exits = OrtWorker::Start(FakeWorker(dir, "process.exit(3);"));
  CHECK(exits.status().code() == absl::StatusCode::kUnavailable);
  absl::StatusOr<std::unique_ptr<OrtWorker>> no_version =
      OrtWorker::Start(FakeWorker(dir, "process.stdin.on('data', () => process.stdout.write('{}\\n'));"));
  CHECK(no_version.status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("Without Node.js or the worker script, starting ONNX Runtime says what is missing", "[ort]") {
  OrtWorkerOptions no_node;
  no_node.node = "/nonexistent/node";
  absl::StatusOr<std::unique_ptr<OrtWorker>> a = OrtWorker::Start(no_node);
  CHECK(a.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(a.status().message()), Catch::Contains("Node.js"));
  OrtWorkerOptions no_script;
  no_script.script = "/nonexistent/ort_worker.js";
  absl::StatusOr<std::unique_ptr<OrtWorker>> b = OrtWorker::Start(no_script);
  CHECK_THAT(std::string(b.status().message()), Catch::Contains("/nonexistent/ort_worker.js does not exist"));
}

TEST_CASE("The worker's replies are read strictly", "[ort]") {
  CHECK(*JsonNumber(R"({"ms":1.5})", "ms") == 1.5);
  CHECK(*JsonNumber(R"({"a": 2, "b": 3})", "b") == 3);
  CHECK(JsonNumber(R"({"ms":"x"})", "ms").status().code() == absl::StatusCode::kDataLoss);
  CHECK(JsonNumber(R"({"ms":1})", "other").status().code() == absl::StatusCode::kNotFound);
  CHECK(*JsonNumbers(R"({"a_ms":[1,2.5],"b_ms":[]})", "a_ms") == std::vector<double>{1, 2.5});
  CHECK(JsonNumbers(R"({"b_ms":[]})", "b_ms")->empty());
  CHECK_FALSE(JsonNumbers(R"({"a_ms":[1,x]})", "a_ms").ok());
  CHECK(*JsonString(R"({"error":"bad \"thing\""})", "error") == "bad \"thing\"");
  CHECK_FALSE(JsonString(R"({"error":"unterminated})", "error").ok());
  CHECK(JsonQuote("a\"b\\c") == R"("a\"b\\c")");
}

TEST_CASE("Costs measured in ONNX Runtime are kept under the ort device and read back", "[ort]") {
  CHECK_THAT(OrtDevice("1.30.0", 1), Catch::StartsWith("ort-1.30.0-cpu-t1-"));
  CHECK(OrtDevice("1.30.0", 1) != OrtDevice("1.30.0", 2));
  CHECK(OrtDevice("1.30.0", 1) != OrtDevice("1.31.0", 1));
  auto dir = testing::TempDir("ort_cost");
  const std::string cache_path = (dir / "costs.sqlite").string();
  absl::StatusOr<OnnxModel> model = ImportOnnx(testing::SmallConvReluModel());
  REQUIRE(model.ok());
  std::shared_ptr<OrtWorker> worker = StartWorker();
  double first_cost = 0;
  {
    auto cache = CostCache::Open(cache_path);
    REQUIRE(cache.ok());
    OrtCost cost(*std::move(cache), worker, 1);
    first_cost = cost.NodeCost(model->graph, 0);
    CHECK(first_cost > 0);
    CHECK(cost.counts().measured >= 1);
    CHECK(cost.counts().estimated == 0);
    CHECK(cost.TotalCost(model->graph) > first_cost);  // a run's fixed part counts once
  }
  auto cache = CostCache::Open(cache_path);
  REQUIRE(cache.ok());
  OrtCost again(*std::move(cache), worker, 1);
  CHECK(again.NodeCost(model->graph, 0) > 0);
  CHECK(again.counts().measured == 0);
  CHECK(again.counts().cached >= 1);
}

TEST_CASE("A product is timed with its activation fed, whichever side its weight is on", "[ort]") {
  // x W and W^T x^T do the same work. With the weight on the left, x^T stands where a
  // weight usually does; were it an initializer too, ONNX Runtime would fold the product
  // when it loads the model and the run would time nothing.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 512});
  const ValueId w = testing::AddWeight(g, "W", {512, 1024}, 1), wt = testing::AddWeight(g, "Wt", {1024, 512}, 2);
  const ValueId xt = *g.AddInput("xt", DataType::kFloat32, {512, 1});
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kMatMul, {x, w}, "right")).ok());
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kMatMul, {wt, xt}, "left")).ok());
  OrtCost cost(nullptr, StartWorker(), 1);
  const double weight_right = cost.NodeCost(g, 0), weight_left = cost.NodeCost(g, 1);
  INFO("x W: " << weight_right << " s, W^T x^T: " << weight_left << " s");
  CHECK(weight_left > weight_right / 4);
  CHECK(cost.counts().measured == 2);
}

TEST_CASE("A Reshape, which ONNX Runtime runs on its input's buffer, is priced as no copy", "[ort]") {
  // x [1, 32, 4096] -> Relu -> Reshape [1, 32, 4, 1024] -> Relu. Its one-operator model
  // copies the 512 KiB (priced about half the Relu's time); inside a model it takes its
  // input's buffer (four such Reshapes between Relus: 6 us of a 195 us run).
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 32, 4096});
  const ValueId target = *g.AddWeight("target", TensorData::Int64(Shape{4}, {1, 32, 4, 1024}));
  const ValueId relu = testing::AddOp(g, op_names::kRelu, {x}, "relu");
  const ValueId view = testing::AddOp(g, op_names::kReshape, {relu, target}, "view");
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kRelu, {view}, "y")).ok());
  OrtCost cost(nullptr, StartWorker(), 1);
  const double relu_price = cost.NodeCost(g, 0), view_price = cost.NodeCost(g, 1);
  INFO("Relu " << relu_price << " s, Reshape " << view_price << " s");
  CHECK(view_price < relu_price / 10);
  CHECK(cost.counts().measured == 1);  // the Relu; the Reshape is not run
}

TEST_CASE("ONNX Runtime's blocked layout: a graph input is reordered, a bias Add runs plain", "[ort]") {
  // Two like convolutions of 32 channels (whole blocks: both run blocked), one reading a
  // graph input, one the first's output; then an Add of a per-channel constant to the
  // second's output, and the same Add to a graph input.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 32, 28, 28});
  const ValueId fed = *g.AddInput("fed", DataType::kFloat32, {1, 32, 28, 28});
  const ValueId w = testing::AddWeight(g, "W", {32, 32, 3, 3}, 1), b = testing::AddWeight(g, "b", {1, 32, 1, 1}, 2);
  const Params conv = Params()
                          .Set("strides", std::vector<int64_t>{1, 1})
                          .Set("padding", "same")
                          .Set("grouping", "dense")
                          .Set("activation", "none");
  const ValueId first = testing::AddOp(g, op_names::kConv2D, {x, w}, "first", conv);
  const ValueId second = testing::AddOp(g, op_names::kConv2D, {first, w}, "second", conv);
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kAdd, {second, b}, "biased")).ok());
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kAdd, {fed, b}, "fed_biased")).ok());
  OrtCost cost(nullptr, StartWorker(), 1);
  // One kernel measured once: the prices differ only by what the neighbours make them pay.
  const double reading_input = cost.NodeCost(g, 0), in_chain = cost.NodeCost(g, 1);
  const double after_conv = cost.NodeCost(g, 2), alone = cost.NodeCost(g, 3);
  INFO("convolutions " << reading_input << " and " << in_chain << " s, Adds " << after_conv << " and " << alone);
  CHECK(cost.counts().measured == 3);  // the convolution, the Add and a reorder
  CHECK(reading_input > in_chain);     // the graph input's reorder, which a chain has not
  CHECK(after_conv > alone);           // the plain Add pays the convolution's output reorder
}

TEST_CASE("ONNX Runtime times two models against each other", "[ort]") {
  auto dir = testing::TempDir("ort_timer");
  absl::StatusOr<OnnxModel> model = ImportOnnx(testing::SmallConvReluModel());
  REQUIRE(model.ok());
  OrtTimer timer(StartWorker(), 1, {.first_rounds = 3, .max_rounds = 3, .first_pairs = 2, .max_pairs = 2});
  CHECK_THAT(timer.name(), Catch::StartsWith("ONNX Runtime ") && Catch::Contains("1 thread)"));
  absl::StatusOr<PairTiming> t = timer.Compare(*model, *model);
  REQUIRE(t.ok());
  CHECK(t->pairs == 2);
  CHECK(t->runs == 6);
  CHECK(t->a_seconds > 0);
  CHECK(t->b_seconds > 0);
  CHECK(std::isfinite(t->spread));
  // One pair cannot say how far its ratio can be trusted.
  CHECK_FALSE(TimingFromPairs({{1.0}, {2.0}}, 5).Resolved());
}

TEST_CASE("Models with large weights are timed in a worker of their own", "[ort]") {
  absl::StatusOr<OnnxModel> model = ImportOnnx(testing::SmallConvReluModel());
  REQUIRE(model.ok());
  // A shared worker that can no longer answer: only a worker of the comparison's own can
  // time the models.
  std::shared_ptr<OrtWorker> dead = StartWorker();
  kill(dead->pid(), SIGKILL);
  const PairLimits one_request{.first_rounds = 3, .max_rounds = 3, .first_pairs = 2, .max_pairs = 2};
  OrtTimer own_worker(dead, 1, one_request, {.own_worker_bytes = 1});
  absl::StatusOr<PairTiming> t = own_worker.Compare(*model, *model);
  INFO(t.status());
  REQUIRE(t.ok());
  CHECK(t->pairs == 2);
  OrtTimer shared(dead, 1, one_request);  // the weights are far below the default bound
  CHECK_FALSE(shared.Compare(*model, *model).ok());
}

TEST_CASE("Large models are timed from one data file they share", "[ort]") {
  // y = x W + b and y = relu(x W + b), W (8 KiB) the same tensor in both.
  const TensorDataPtr w = TensorData::Float({32, 64}, std::vector<float>(32 * 64, 0.5f));
  const auto model = [&w](bool relu) {
    Graph g;
    const ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 32});
    const ValueId y = testing::AddOp(g, op_names::kMatMul, {x, *g.AddWeight("w", w)}, "p");
    REQUIRE(g.AddOutput(relu ? testing::AddOp(g, op_names::kRelu, {y}, "y") : y).ok());
    return NewOnnxModel(std::move(g));
  };
  const PairLimits one_request{.first_rounds = 3, .max_rounds = 3, .first_pairs = 2, .max_pairs = 2};
  OrtTimer timer(StartWorker(), 1, one_request, {.shared_weights_bytes = 1});
  absl::StatusOr<PairTiming> t = timer.Compare(model(false), model(true));
  INFO(t.status());
  REQUIRE(t.ok());
  CHECK(t->pairs == 2);
  CHECK(t->a_seconds > 0);
  CHECK(t->b_seconds > 0);
}

TEST_CASE("The memory available is read off the machine", "[ort]") {
  const std::optional<int64_t> available = AvailableMemoryBytes();
  REQUIRE(available.has_value());
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t total_kib = 0;
  meminfo >> key >> total_kib >> unit;
  REQUIRE(key == "MemTotal:");
  CHECK(*available > 0);
  CHECK(*available <= total_kib * 1024);
}

TEST_CASE("Sessions of large models are made as the memory available allows", "[ort]") {
  constexpr int64_t kGB = 1'000'000'000;
  CHECK(SessionsThatFit(kGB, 10 * kGB) == SessionsAtOnce::kTwo);
  CHECK(SessionsThatFit(4 * kGB, 6 * kGB) == SessionsAtOnce::kOne);
  CHECK(SessionsThatFit(4 * kGB, 3 * kGB) == SessionsAtOnce::kNone);
  CHECK(SessionsThatFit(4 * kGB, std::nullopt) == SessionsAtOnce::kTwo);
  // Weights in 16-bit floats count at float32's width, as the CPU kernels compute them.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 8});
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kMatMul, {x, testing::AddWeight(g, "w", {8, 4}, 1)}, "y")).ok());
  CHECK(SessionBytes(g) == 8 * 4 * 4);
  const TensorDataPtr half = TensorData::Raw(static_cast<DataType>(onnx::TensorProto::FLOAT16), {3, 5}, "");
  REQUIRE(g.AddWeight("h", half).ok());
  CHECK(SessionBytes(g) == 8 * 4 * 4 + 3 * 5 * 4);

  // A request on a model of 28 GB a session may take minutes where a small one may not.
  CHECK(WorkerForSessions(1'000'000).timeout == OrtWorkerOptions().timeout + absl::Seconds(0.08));
  CHECK(WorkerForSessions(28 * kGB).timeout > absl::Minutes(30));
  absl::StatusOr<OnnxModel> model = ImportOnnx(testing::SmallConvReluModel());
  REQUIRE(model.ok());
  const int64_t one = SessionBytes(model->graph);
  const PairLimits one_request{.first_rounds = 3, .max_rounds = 3, .first_pairs = 2, .max_pairs = 2};
  OrtTimer apart(StartWorker(), 1, one_request, {.available_bytes = (int64_t{256} << 20) + one + one / 2});
  absl::StatusOr<PairTiming> t = apart.Compare(*model, *model);
  INFO(t.status());
  REQUIRE(t.ok());
  CHECK(t->sessions_apart);
  CHECK(t->pairs == 2);
  CHECK(t->a_seconds > 0);
  CHECK(t->b_seconds > 0);
  OrtTimer none(StartWorker(), 1, one_request, {.available_bytes = one});
  absl::StatusOr<PairTiming> refused = none.Compare(*model, *model);
  CHECK(absl::IsResourceExhausted(refused.status()));
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("GB of memory are available"));
}

TEST_CASE("Few session pairs give a wide spread", "[ort]") {
  // Two pairs agreeing to 2% on a 10% gain: twice the standard error would resolve it,
  // Student's t at one degree of freedom does not.
  const PairTiming two = TimingFromPairs({{1.10, 1.12}, {1.0, 1.0}}, 20);
  CHECK(two.ratio() == Approx(1.11).epsilon(0.01));
  CHECK_FALSE(two.Resolved());
  const PairTiming six = TimingFromPairs({{1.10, 1.12, 1.10, 1.12, 1.10, 1.12}, {1, 1, 1, 1, 1, 1}}, 60);
  CHECK(six.SecondFaster());
  CHECK(six.spread < two.spread / 5);
}

TEST_CASE("ONNX Runtime's timer stops at one request once its time is spent", "[ort]") {
  absl::StatusOr<OnnxModel> model = ImportOnnx(testing::SmallConvReluModel());
  REQUIRE(model.ok());
  OrtTimer timer(StartWorker(), 1,
                 {.first_rounds = 3, .max_rounds = 3, .first_pairs = 4, .max_pairs = 8, .seconds = 1e-6});
  CHECK_FALSE(timer.OutOfTime());
  absl::StatusOr<PairTiming> t = timer.Compare(*model, *model);
  REQUIRE(t.ok());
  CHECK(t->pairs == 2);  // fewer than first_pairs
  CHECK(timer.OutOfTime());
  t = timer.Compare(*model, *model);
  REQUIRE(t.ok());
  CHECK(t->pairs == 2);
}

TEST_CASE("Targets are named as the command line spells them", "[ort]") {
  for (Target t : {Target::kOrt, Target::kCpu, Target::kCuda}) CHECK(ParseTarget(TargetName(t)) == t);
  CHECK_FALSE(ParseTarget("tpu").has_value());
  CHECK(TargetBackend(Target::kOrt) == Backend::kOrt);
  CHECK(TargetBackend(Target::kCpu) == Backend::kCpu);
  CHECK(ParseBackend("ort") == Backend::kOrt);
  CHECK(DefaultSearchKind(Backend::kOrt) == SearchKind::kSubstitutions);
}

TEST_CASE("taso-opt says when ONNX Runtime cannot run and which target to use", "[ort]") {
  auto dir = testing::TempDir("ort_cli");
  const std::string model = SmallModel(dir), out = (dir / "out.onnx").string();
  const std::string opt = std::string(TASO_BINARY_DIR) + "/taso-opt " + model + " -o " + out + " --budget 2 ";
  // Asked for explicitly: an error naming what is missing, nothing written.
  testing::CommandResult no_node = testing::RunCommand("PATH=/nonexistent " + opt + "--target ort");
  CHECK(no_node.code != 0);
  CHECK_THAT(no_node.output, Catch::Contains("Node.js") && Catch::Contains("use --target cpu"));
  CHECK_FALSE(std::filesystem::exists(out));
  testing::CommandResult bad = testing::RunCommand(opt + "--target tpu");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.output, Catch::Contains("unknown target 'tpu' (ort, cpu, cuda)"));
  // By default: cpu, saying so.
  testing::CommandResult fallback =
      testing::RunCommand("TASO_ORT_WORKER=/nonexistent/w.js " + opt + "--backend analytic");
  INFO(fallback.output);
  CHECK(fallback.code == 0);
  CHECK_THAT(fallback.output, Catch::Contains("/nonexistent/w.js does not exist") &&
                                  Catch::Contains("optimizing for --target cpu") && Catch::Contains("\ntarget: cpu\n"));
  CHECK(std::filesystem::exists(out));
}

// Relu(Tanh(x)) . w1 + Relu(Tanh(x)) . w2, then Relu; `merged`: one product by w1 + w2. At
// [64, 512] by [512, 512] the merged graph runs well under the other in any runtime.
Graph TwoProducts(bool merged) {
  Graph g;
  const ValueId input = *g.AddInput("x", DataType::kFloat32, {64, 512});
  const ValueId x = testing::AddOp(g, op_names::kRelu, {testing::AddOp(g, op_names::kTanh, {input}, "t")}, "r");
  const ValueId y =
      merged ? testing::AddOp(g, op_names::kMatMul, {x, testing::AddWeight(g, "w12", {512, 512}, 3)}, "y")
             : testing::AddOp(
                   g, op_names::kAdd,
                   {testing::AddOp(g, op_names::kMatMul, {x, testing::AddWeight(g, "w1", {512, 512}, 1)}, "m1"),
                    testing::AddOp(g, op_names::kMatMul, {x, testing::AddWeight(g, "w2", {512, 512}, 2)}, "m2")},
                   "y");
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kRelu, {y}, "out")).ok());
  return g;
}

TEST_CASE("A worker that dies while timing leaves the input written as read", "[ort]") {
  auto dir = testing::TempDir("ort_dies");
  const std::string model = (dir / "two_products.onnx").string(), out = (dir / "out.onnx").string();
  REQUIRE(ExportOnnxFile(NewOnnxModel(TwoProducts(false)), model).ok());
  // The real worker behind a front that exits at the first comparison, as a worker the
  // system ends for its memory does.
  const std::string front = (dir / "dies_on_compare.js").string();
  std::ofstream(front) << "const child = require('child_process').spawn('node', ['" TASO_SOURCE_DIR
                          "/tools/ort/ort_worker.js'], {stdio: ['pipe', 'inherit', 'ignore']});\n"
                          "require('readline').createInterface({input: process.stdin}).on('line', line => {\n"
                          "  if (line.includes('\"compare\"')) { child.kill('SIGKILL'); process.exit(137); }\n"
                          "  child.stdin.write(line + '\\n');\n"
                          "});\n";
  testing::CommandResult run = testing::RunCommand("TASO_ORT_WORKER=" + front + " " + TASO_BINARY_DIR + "/taso-opt " +
                                                   model + " -o " + out + " --budget 2");
  INFO(run.output);
  CHECK(run.code == 0);
  CHECK_THAT(run.output, Catch::Contains("speed check: NOT POSSIBLE: ONNX Runtime") &&
                             Catch::Contains("could not time the models: the ONNX Runtime worker exited") &&
                             Catch::Contains("rewrites applied     none"));
  absl::StatusOr<OnnxModel> written = ImportOnnxFile(out);
  REQUIRE(written.ok());
  CHECK(written->graph.num_nodes() == TwoProducts(false).num_nodes());
}

TEST_CASE("On the ort target, the output is priced with the region that differs timed in ONNX Runtime", "[ort]") {
  std::shared_ptr<OrtWorker> worker = StartWorker();
  OrtTimer region_timer(worker, 1, {.seconds = 3}), share_timer(worker, 1, {.seconds = 2});
  AnalyticCost cost;
  const std::optional<pipeline::RegionPricing> priced =
      pipeline::EstimateByRegions(NewOnnxModel(Graph()), TwoProducts(false), TwoProducts(true), cost,
                                  {region_timer, share_timer, {1, 1}, std::nullopt});  // by operators, replaced
  REQUIRE(priced.has_value());
  const PipelineResult::RegionEstimate& e = priced->estimate;
  CHECK(e.nodes_before == 3);  // the products and their sum
  CHECK(e.nodes_after == 1);
  CHECK(e.timing.pairs >= 2);
  CHECK(e.share.pairs >= 2);
  CHECK_FALSE(e.input_timed);
  // The merge saves a product of the two, by far more than the noise.
  CHECK(priced->costs.after < 0.9 * priced->costs.before);
  CHECK(priced->costs.before == Approx(e.share.a_seconds));
  PipelineResult result;
  result.region_estimate = e;
  result.cost_before = priced->costs.before;
  result.cost_after = priced->costs.after;
  PipelineOptions options;
  options.target = Target::kOrt;
  CHECK_THAT(SummaryText(options, result, "m"),
             Catch::Contains("\n  the output priced as the input (as timed against its region) less the part the 3 "
                             "operators that differ (1 in the output) save"));
  CHECK_THAT(JsonReport(options, result),
             Catch::Contains("\"region_estimate\": {\"nodes_before\": 3") && Catch::Contains("\"share_spread\": "));
}
