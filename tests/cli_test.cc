// The command-line tools: bad input gives one clear line, a non-zero exit and no file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "taso/backends/backends.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rules/rules.h"
#include "test_util.h"

namespace {

taso::testing::CommandResult RunTool(const std::string& args) {
  return taso::testing::RunCommand(std::string(TASO_BINARY_DIR) + "/" + args);
}

}  // namespace

TEST_CASE("taso-models writes a model and rejects bad requests") {
  auto dir = taso::testing::TempDir("cli_models");
  const std::string out = (dir / "nasrnn.onnx").string();
  auto ok = RunTool("taso-models nasrnn -o " + out);
  CHECK(ok.code == 0);
  CHECK(std::filesystem::exists(out));

  auto unknown = RunTool("taso-models alexnet -o " + (dir / "a.onnx").string());
  CHECK(unknown.code != 0);
  CHECK_THAT(unknown.output, Catch::Contains("unknown model 'alexnet'"));
  CHECK_FALSE(std::filesystem::exists(dir / "a.onnx"));

  auto unwritable = RunTool("taso-models nasrnn -o " + (dir / "missing-dir" / "x.onnx").string());
  CHECK(unwritable.code != 0);
  CHECK_THAT(unwritable.output, Catch::Contains("cannot write"));

  auto no_output = RunTool("taso-models nasrnn");
  CHECK(no_output.code != 0);
  CHECK_THAT(no_output.output, Catch::Contains("no output file"));
}

TEST_CASE("taso-run runs a model and reports bad files in one line") {
  auto dir = taso::testing::TempDir("cli_run");
  const std::string model = (dir / "nasrnn.onnx").string();
  REQUIRE(RunTool("taso-models nasrnn -o " + model).code == 0);
  auto ok = RunTool("taso-run --roundtrip " + model);
  CHECK(ok.code == 0);
  CHECK_THAT(ok.output, Catch::Contains("max |difference| of outputs = 0"));

  taso::testing::WriteFile(dir / "junk.onnx", "not a model at all");
  for (const std::string& bad : {(dir / "junk.onnx").string(), (dir / "absent.onnx").string(), dir.string()}) {
    auto r = RunTool("taso-run " + bad);
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Catch::StartsWith("taso-run: error: "));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
}

TEST_CASE("taso-run --profile prints each operator's nodes on the cpu executor and needs a kernel executor") {
  auto dir = taso::testing::TempDir("cli_profile");
  const std::string model = (dir / "nasrnn.onnx").string();
  REQUIRE(RunTool("taso-models nasrnn --layers 2 -o " + model).code == 0);
  auto ok = RunTool("taso-run " + model + " --executor cpu --profile 2");
  CHECK(ok.code == 0);
  // Two steps of 16 products each, less the 8 of the first step that multiply the initial
  // state (a weight) and are folded; each cell has 8 tanh.
  CHECK_THAT(ok.output, Catch::Matches("(.|\\n)*\\n  MatMul +24 +0 (.|\\n)*"));
  CHECK_THAT(ok.output, Catch::Matches("(.|\\n)*\\n  Tanh +16 +0 (.|\\n)*"));
  // Beside the run's time, the cpu cost model's price of the same nodes: some positive ms.
  CHECK_THAT(ok.output, Catch::Matches("(.|\\n)*\\n  MatMul +24 +0 +[0-9.]+ +[0-9.]+% +[0-9.]*[1-9][0-9]*\\n(.|\\n)*"));
  CHECK_THAT(ok.output, Catch::Contains("cpu cost model prices the same nodes at"));

  // A file is prepared as the cpu runtime prepares it unless --as-read asks otherwise.
  CHECK_THAT(ok.output, Catch::Contains("cpu runtime's preparation:"));
  auto as_read = RunTool("taso-run " + model + " --executor cpu --as-read --profile 2");
  CHECK(as_read.code == 0);
  CHECK_THAT(as_read.output, !Catch::Contains("cpu runtime's preparation:"));
  CHECK_THAT(as_read.output, Catch::Matches("(.|\\n)*\\n  MatMul +24 +0 (.|\\n)*"));

  auto refused = RunTool("taso-run " + model + " --profile 2");
  CHECK(refused.code != 0);
  CHECK_THAT(refused.output, Catch::Contains("need --executor cpu or cuda"));
}

TEST_CASE("taso-gen rejects bad requests before doing any work") {
  auto dir = taso::testing::TempDir("cli_gen");
  auto unknown = RunTool("taso-gen -k 2 --ops MatMul,Gelu -o " + (dir / "r.pb").string());
  CHECK(unknown.code != 0);
  CHECK_THAT(unknown.output, Catch::Contains("unknown operator 'Gelu'"));
  CHECK_FALSE(std::filesystem::exists(dir / "r.pb"));
  auto big_k = RunTool("taso-gen -k 7 -o " + (dir / "r.pb").string());
  CHECK(big_k.code != 0);
  CHECK_THAT(big_k.output, Catch::Contains("-k 7 is not supported"));
  auto unwritable = RunTool("taso-gen -k 2 -o " + (dir / "missing" / "r.pb").string());
  CHECK(unwritable.code != 0);
  CHECK_THAT(unwritable.output, Catch::Contains("cannot write"));
  auto ok = RunTool("taso-gen -k 2 --quiet -o " + (dir / "r.pb").string());
  CHECK(ok.code == 0);
  CHECK_THAT(ok.output, Catch::Contains("after common subgraph"));
  CHECK(std::filesystem::exists(dir / "r.pb"));
}

TEST_CASE("taso-verify proves a rule file and refuses bad ones in one line") {
  auto dir = taso::testing::TempDir("cli_verify");
  taso::testing::WriteFile(dir / "junk.pb", "junk");
  auto junk = RunTool("taso-verify " + (dir / "junk.pb").string());
  CHECK(junk.code == 2);
  CHECK_THAT(junk.output, Catch::Contains("is not a taso rules file"));
  auto no_axioms = RunTool("taso-verify --axioms " + (dir / "none").string() + " " + (dir / "junk.pb").string());
  CHECK(no_axioms.code != 0);
  CHECK_THAT(no_axioms.output, Catch::Contains("no axioms directory"));
  auto none = RunTool("taso-verify");
  CHECK(none.code == 2);
}

TEST_CASE("taso-verify --check-axioms fails on an axiom the kernels contradict") {
  auto dir = taso::testing::TempDir("cli_check_axioms");
  std::filesystem::copy_file(std::string(TASO_SOURCE_DIR) + "/axioms/signature.smt2", dir / "signature.smt2");
  taso::testing::WriteFile(dir / "conv.smt2",
                           "(assert (! (forall ((s Int) (p Int) (x T) (y T) (z T))\n"
                           "  (= (conv s p RELU (ewadd x y) z) (ewadd (conv s p RELU x z) (conv s p RELU y z)))) "
                           ":named conv_relu_linear))\n");
  auto r = RunTool("taso-verify --check-axioms --axioms " + dir.string());
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Catch::Contains("conv_relu_linear is FALSE: at s="));
  CHECK_THAT(r.output, Catch::Contains("0 of 1 hold"));
}

namespace {

// The small convolution-and-relu model as a file in `dir`.
std::string ConvReluModel(const std::filesystem::path& dir) {
  const std::string path = (dir / "conv_relu.onnx").string();
  std::string bytes;
  REQUIRE(taso::testing::SmallConvReluModel().SerializeToString(&bytes));
  taso::testing::WriteFile(path, bytes);
  return path;
}

}  // namespace

TEST_CASE("taso-opt writes the optimized model, prints its summary and writes the report") {
  auto dir = taso::testing::TempDir("cli_opt");
  const std::string model = ConvReluModel(dir), out = (dir / "out.onnx").string(), report = (dir / "r.json").string();
  auto r = RunTool("taso-opt " + model + " -o " + out + " --backend analytic --budget 20 --report " + report);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::StartsWith(model + ": 2 nodes -> 2 nodes; "));
  CHECK_THAT(
      r.output,
      Catch::Contains(
          "\nself-check: 1 random inputs (inputs in [-1, 1] and [-10, 10]), 1 compared tensors (1 outputs, 0 opaque "
          "inputs), max |difference| "));
  CHECK_THAT(r.output, Catch::EndsWith("\nwrote " + out + "\n"));
  CHECK(std::filesystem::exists(out));
  std::ifstream f(report);
  const std::string json((std::istreambuf_iterator<char>(f)), {});
  CHECK_THAT(json, Catch::StartsWith("{\n  \"import\": {\"opset_read\": 13, \"opset_written\": 13, \"converted\": "
                                     "false, \"function_calls_inlined\": 0, \"functions_inlined\": [], "
                                     "\"functions_kept\": [], \"weights_as_inputs\": 0, \"shapeless_inputs\": [], "
                                     "\"sparse_made_dense\": [], \"stale_declarations\": []},\n  "
                                     "\"nodes_before\": 2,\n  \"nodes_after\": 2,\n  "
                                     "\"left_alone\": {},\n  \"backend\": \"analytic\",") &&
                       Catch::EndsWith("}\n"));
  // The written model runs and gives what the original gives.
  auto again = RunTool("taso-run " + out);
  CHECK(again.code == 0);
}

// What the import did is in the report as in the summary: here an opset 9 model converted,
// its weight listed as an input too, its input of no declared shape given one, and a
// node left alone.
TEST_CASE("taso-opt's report says what the import did and what was left alone") {
  auto dir = taso::testing::TempDir("cli_opt_import");
  onnx::ModelProto m = taso::testing::SmallConvReluModel();
  m.mutable_opset_import(0)->set_version(9);
  taso::testing::AddInput(m, "w", {4, 4, 3, 3});
  taso::testing::AddNode(m, "Sin", {"y"}, {"s"}, "sin");
  m.mutable_graph()->mutable_output(0)->set_name("s");
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  const std::string model = (dir / "m.onnx").string(), out = (dir / "out.onnx").string();
  const std::string report = (dir / "r.json").string();
  taso::testing::WriteFile(model, m.SerializeAsString());
  auto r = RunTool("taso-opt " + model + " -o " + out + " --backend analytic --budget 20 --input-shape x=1x4x8x8 " +
                   "--report " + report);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("\nimport: opset 9 converted to opset 11 by ONNX's version converter; written "
                                       "at opset 11\n"));
  std::ifstream f(report);
  const std::string json((std::istreambuf_iterator<char>(f)), {});
  CHECK_THAT(r.output, Catch::Contains("\nimport: 1 weight is also listed as a graph input, which a caller may feed"));
  CHECK_THAT(json, Catch::Contains("\"import\": {\"opset_read\": 9, \"opset_written\": 11, \"converted\": true,"));
  CHECK_THAT(r.output, Catch::Contains("\nimport: input 'x' declares no shape in the file; built at the shape "
                                       "--input-shape gives it, and written with that rank"));
  CHECK_THAT(json, Catch::Contains("\"weights_as_inputs\": 1, \"shapeless_inputs\": [\"x\"],"));
  CHECK_THAT(json, Catch::Contains("\"nodes_before\": 3,"));
  CHECK_THAT(json, Catch::Contains("\"left_alone\": {\"not in the operator library\": {\"Sin\": 1}},"));
}

// A weight stored sparse and a stale declared shape: read, and named in the summary and
// the report.
TEST_CASE("taso-opt names the sparse weights it made dense and the stale shapes it read past") {
  auto dir = taso::testing::TempDir("cli_opt_spellings");
  onnx::ModelProto m = taso::testing::SmallConvReluModel();
  onnx::TensorProto dense = m.graph().initializer(0);
  m.mutable_graph()->clear_initializer();
  onnx::SparseTensorProto* sparse = m.mutable_graph()->add_sparse_initializer();
  *sparse->mutable_dims() = dense.dims();
  taso::TensorToProto(*taso::TensorData::Float({1}, {0.5f}), dense.name(), sparse->mutable_values());
  taso::TensorToProto(*taso::TensorData::Int64({1}, {7}), "", sparse->mutable_indices());
  onnx::ValueInfoProto* stale = m.mutable_graph()->add_value_info();  // the convolution's output, at batch 3
  stale->set_name("c");
  stale->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {3, 4, 8, 8})
    stale->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  const std::string model = (dir / "m.onnx").string(), out = (dir / "out.onnx").string();
  const std::string report = (dir / "r.json").string();
  taso::testing::WriteFile(model, m.SerializeAsString());
  auto r = RunTool("taso-opt " + model + " -o " + out + " --backend analytic --budget 20 --report " + report);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("\nimport: sparse initializer '" + dense.name() + "' read as dense"));
  CHECK_THAT(r.output, Catch::Contains("\nimport: 1 shape the file declares contradicts what their inputs give"));
  std::ifstream f(report);
  const std::string json((std::istreambuf_iterator<char>(f)), {});
  CHECK_THAT(json, Catch::Contains("\"sparse_made_dense\": [\"" + dense.name() + "\"]"));
  CHECK_THAT(json, Catch::Contains("\"stale_declarations\": [{\"name\": \"c\", \"declared\": \"[3,4,8,8]\", "
                                   "\"computed\": \"[1,4,8,8]\", \"graph_output\": false}]"));
}

TEST_CASE("taso-opt writes back a model ONNX Runtime's optimizer wrote, its own operators in it") {
  const auto dir = taso::testing::TempDir("cli_runtime_operators");
  const std::string in = (dir / "in.onnx").string(), out = (dir / "out.onnx").string();
  taso::testing::WriteFile(in, taso::testing::RuntimeLayerNormModel().SerializeAsString());
  auto r = RunTool("taso-opt " + in + " -o " + out + " --backend analytic --budget 20");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("\nexport: checked by the ONNX checker and shape inference (opset 15)\n"));
  CHECK(std::filesystem::exists(out));
}

TEST_CASE("taso-opt refuses bad input in one line and writes nothing") {
  auto dir = taso::testing::TempDir("cli_opt_bad");
  const std::string model = ConvReluModel(dir), out = (dir / "out.onnx").string();
  auto refused = [&](const std::string& args, int code, const std::string& message) {
    auto r = RunTool("taso-opt " + args);
    INFO(r.output);
    CHECK(r.code == code);
    CHECK_THAT(r.output, Catch::StartsWith("taso-opt: error: ") && Catch::Contains(message));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  };
  refused(model, 2, "give the output file with -o");
  refused(model + " " + model + " -o " + out, 2, "expected one ONNX model");
  refused(model + " -o " + out + " --backend tpu", 2, "unknown backend 'tpu'");
  refused(model + " -o " + out + " --search everything", 2, "unknown --search 'everything'");
  refused(model + " -o " + out + " --backend analytic --search layouts", 2, "use --backend cpu");
  refused(model + " -o " + out + " --alpha 0.5", 2, "--alpha must be at least 1");
  refused(model + " -o " + out + " --budget -1", 2, "must not be negative");
  refused(model + " -o " + out + " --egraph-nodes 0", 2, "must be positive");
  refused(model + " -o " + out + " --verify-speed-seconds 0", 2, "--verify-speed-seconds) must be positive");
  refused(model + " -o " + out + " --egraph-multi-iterations -1", 2, "--egraph-multi-iterations must not be negative");
  refused(model + " -o " + out + " --input-shape x=1x0", 2, "is not NAME=D0xD1x... with positive whole numbers");
  refused(model + " -o " + out + " --input-shape x", 2, "is not NAME=D0xD1x...");
  refused(model + " -o " + out + " --input-shape nosuch=1x3", 2, "--input-shape names 'nosuch'");
  refused(model + " -o " + out + " --input-shape x=1x4x8", 2, "--input-shape gives 3 dimensions for input 'x'");
  // Given several times, --input-shape takes every value (abseil alone keeps only the last).
  refused(model + " -o " + out + " --input-shape nosuch=1x3 --input-shape x=1x4x8x8", 2,
          "--input-shape names 'nosuch'");
  refused(model + " -o " + out + " --input-shape=x=1x4x8x8 --input_shape x=1x4x8x8", 2, "gives input 'x' twice");
  // Symbolic image sizes the model builds at neither at 1 nor at any power of two: its
  // declared output of 2x3 pins them at 2 and 3.
  onnx::ModelProto pinned = taso::testing::SmallConvReluModel();
  auto* dims = pinned.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(2)->set_dim_param("h");
  dims->mutable_dim(3)->set_dim_param("w");
  auto* declared = pinned.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  declared->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 4, 2, 3}) declared->mutable_shape()->add_dim()->set_dim_value(d);
  std::string pinned_bytes;
  REQUIRE(pinned.SerializeToString(&pinned_bytes));
  taso::testing::WriteFile(dir / "pinned.onnx", pinned_bytes);
  refused((dir / "pinned.onnx").string() + " -o " + out, 2,
          "(with the symbolic dimensions h, w at 1, nor at any power of two up to 1024; give their sizes with "
          "--input-shape)");
  taso::testing::WriteFile(dir / "junk.pb", "junk");
  refused(model + " -o " + out + " --rules " + (dir / "junk.pb").string(), 2, "is not a taso rules file");
  taso::testing::WriteFile(dir / "junk.onnx", "junk");
  refused((dir / "junk.onnx").string() + " -o " + out, 2, "not an ONNX model");
  // A report or a model whose directory is missing: refused before the work.
  refused(model + " -o " + out + " --backend analytic --report " + (dir / "missing" / "r.json").string(), 2,
          "cannot write the report '" + (dir / "missing" / "r.json").string() + "': the directory '" +
              (dir / "missing").string() + "' does not exist");
  refused(model + " -o " + (dir / "missing" / "out.onnx").string(), 2, "cannot write the model");
  refused(model + " -o " + dir.string(), 2, "it is a directory");
  {
    // No temporary folder for the runtime's timers: refused before the work, not after it.
    taso::testing::ScopedEnv missing_temp("TMPDIR", (dir / "missing").string());
    refused(model + " -o " + out, 1, "no temporary folder: TMPDIR is '" + (dir / "missing").string() + "'");
    // Our own executor and costs need none.
    CHECK(RunTool("taso-opt " + model + " -o " + out + " --target cpu --backend analytic --budget 20").code == 0);
    std::filesystem::remove(out);
  }
  // A model that cannot be written or moved into place after the work: written_model_test.
  // A rules file taso-verify has not proved: refused unless allowed.
  const std::string unproved = (dir / "k2.pb").string();
  REQUIRE(RunTool("taso-gen -k 2 -o " + unproved).code == 0);
  refused(model + " -o " + out + " --rules " + unproved, 1, "holds rules not proved");
  auto allowed =
      RunTool("taso-opt " + model + " -o " + out + " --backend analytic --allow-unproved --rules " + unproved);
  CHECK(allowed.code == 0);
  CHECK(std::filesystem::exists(out));
}

TEST_CASE("Rule names are qualified by their database's file stem, and the prefix comes off again") {
  CHECK(taso::QualifiedRuleName("/x/rules/gemm_merges_k4.pb", "r0320") == "gemm_merges_k4:r0320");
  CHECK(taso::QualifiedRuleName("taso_k3.pb", "r0001/2~") == "taso_k3:r0001/2~");
  CHECK(taso::RuleNameInFile("gemm_merges_k4:r0320") == "r0320");
  CHECK(taso::RuleNameInFile("gemm_merges_k4:r0320/1~") == "r0320/1~");
  CHECK(taso::RuleNameInFile("r0320/1~") == "r0320/1~");
  CHECK(taso::RuleNameInFile(taso::QualifiedRuleName("/x/a:b.pb", "r0007")) == "r0007");
}

TEST_CASE("An applied rule's name reads back as its rule, its instance and its direction") {
  taso::Rule rule;
  rule.name = "gemm_merges_k4:r0320";
  const taso::AppliedRuleName plain = taso::ParseAppliedRuleName(rule.name);
  CHECK(plain.rule == rule.name);
  CHECK(plain.concrete == rule.name);
  CHECK_FALSE(plain.reversed);
  const taso::AppliedRuleName reversed = taso::ParseAppliedRuleName(taso::Reversed(rule).name);
  CHECK(reversed.rule == rule.name);
  CHECK(reversed.reversed);
  const taso::AppliedRuleName instance = taso::ParseAppliedRuleName("gemm_merges_k4:r0320/3~");
  CHECK(instance.rule == "gemm_merges_k4:r0320");
  CHECK(instance.concrete == "gemm_merges_k4:r0320/3");
  CHECK(instance.reversed);
}

TEST_CASE("taso-opt ended by a signal leaves none of its files behind") {
  const auto dir = taso::testing::TempDir("cli_opt_signalled");
  const auto temp = dir / "tmp", out_dir = dir / "out";
  std::filesystem::create_directories(temp);
  std::filesystem::create_directories(out_dir);
  const std::string model = (dir / "bert.onnx").string();
  REQUIRE(RunTool("taso-models bert -o " + model).code == 0);
  taso::testing::ScopedEnv tmpdir("TMPDIR", temp.string());
  const std::string binary = std::string(TASO_BINARY_DIR) + "/taso-opt", out = (out_dir / "out.onnx").string();
  auto entries = [](const std::filesystem::path& p) {
    return std::distance(std::filesystem::directory_iterator(p), {});
  };
  auto entries_named = [](const std::filesystem::path& p, const std::string& prefix) {
    return std::count_if(std::filesystem::directory_iterator(p), {}, [&](const std::filesystem::directory_entry& e) {
      return e.path().filename().string().rfind(prefix, 0) == 0;
    });
  };
  // Runs taso-opt on the ort target (the default) and sends it SIGTERM once `watched` has
  // an entry named `prefix`: TMPDIR gets the costs' folder in the search (taso_ort_: not
  // the folder taso-opt makes and removes at once, to see that TMPDIR can be written), the
  // output's folder gets its staging folder once the output is written and checked.
  auto signalled_once_made = [&](const std::filesystem::path& watched, const std::string& prefix) {
    std::vector<char*> argv = {const_cast<char*>(binary.c_str()), const_cast<char*>(model.c_str()),
                               const_cast<char*>("-o"), const_cast<char*>(out.c_str()), nullptr};
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t defaults;  // the signals as a foreground command has them
    posix_spawnattr_init(&defaults);
    sigset_t handled;
    sigemptyset(&handled);
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&handled, signal);
    posix_spawnattr_setsigdefault(&defaults, &handled);
    posix_spawnattr_setflags(&defaults, POSIX_SPAWN_SETSIGDEF);
    pid_t child = 0;
    REQUIRE(posix_spawn(&child, binary.c_str(), &quiet, &defaults, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&quiet);
    posix_spawnattr_destroy(&defaults);
    for (int wait = 0; wait < 12000 && entries_named(watched, prefix) == 0; ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    INFO(watched.string());
    CHECK(entries_named(watched, prefix) > 0);
    kill(child, SIGTERM);
    const int status = taso::testing::WaitForExit(child, 60);
    REQUIRE(status != -1);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);
    CHECK(entries(temp) == 0);
    CHECK(entries(out_dir) == 0);
  };
  signalled_once_made(temp, "taso_ort_");
  signalled_once_made(out_dir, ".taso-opt-");
}

TEST_CASE("taso-opt reads several rule databases and refuses two rules of one name") {
  auto dir = taso::testing::TempDir("cli_opt_rules");
  const std::string model = ConvReluModel(dir), out = (dir / "out.onnx").string();
  const std::string shipped = std::string(TASO_SOURCE_DIR) + "/rules/taso_k3.pb", other = (dir / "other.pb").string();
  std::filesystem::copy_file(shipped, other);
  const std::string run = "taso-opt " + model + " -o " + out + " --backend analytic --target cpu --budget 20 --rules ";
  // The copy's rules are named other:r0000, ...: no name is taken twice.
  auto both = RunTool(run + shipped + "," + other);
  INFO(both.output);
  CHECK(both.code == 0);
  CHECK(std::filesystem::exists(out));
  std::filesystem::remove(out);
  // The same file twice: its rules' qualified names (taso_k3:r0000, ...) are taken twice.
  auto twice = RunTool(run + shipped + "," + shipped);
  INFO(twice.output);
  CHECK(twice.code == 2);
  CHECK(twice.output == "taso-opt: error: two rules named taso_k3:r0000 (in " + shipped + " and " + shipped + ")\n");
  CHECK_FALSE(std::filesystem::exists(out));
  auto none = RunTool(run + ",");
  INFO(none.output);
  CHECK(none.code == 2);
  CHECK_THAT(none.output, Catch::StartsWith("taso-opt: error: --rules names no file"));
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("taso-verify --explain takes a rule name qualified by its file's stem, as taso-opt reports it") {
  auto dir = taso::testing::TempDir("cli_explain");
  const std::string other = (dir / "other.pb").string();
  std::filesystem::copy_file(std::string(TASO_SOURCE_DIR) + "/rules/taso_k3.pb", other);
  auto ok = RunTool("taso-verify " + other + " --explain other:r0023/0~");
  INFO(ok.output);
  CHECK(ok.code == 0);
  CHECK_THAT(ok.output, Catch::StartsWith("rule r0023/0 ") && Catch::Contains("proved by Z3 from "));
  // Another file's rule of that number is not explained in its place.
  auto elsewhere = RunTool("taso-verify " + other + " --explain gemm_merges_k4:r0023/0");
  CHECK(elsewhere.code == 2);
  CHECK_THAT(elsewhere.output, Catch::Contains("is named after another file than " + other));
}

TEST_CASE("taso-run runs a model on the cpu executor, times it and checks it against the reference") {
  auto dir = taso::testing::TempDir("cli_run_cpu");
  const std::string model = (dir / "nasrnn.onnx").string();
  REQUIRE(RunTool("taso-models nasrnn -o " + model).code == 0);
  auto ok = RunTool("taso-run " + model + " --executor cpu --check --time 3");
  INFO(ok.output);
  CHECK(ok.code == 0);
  CHECK_THAT(ok.output, Catch::Contains("median") && Catch::Contains("over 3 runs"));
  CHECK_THAT(ok.output, Catch::Contains("(same)"));
  auto unknown = RunTool("taso-run " + model + " --executor gpu");
  CHECK(unknown.code != 0);
  CHECK_THAT(unknown.output, Catch::Contains("--executor is reference, cpu or cuda"));
}

TEST_CASE("taso-run runs a dynamic-axes file on the cpu executor at 1 or at the sizes given") {
  auto dir = taso::testing::TempDir("cli_run_dynamic");
  const std::string model = (dir / "view.onnx").string();
  taso::testing::WriteFile(model, taso::testing::ComputedViewModel().SerializeAsString());
  auto at_one = RunTool("taso-run " + model + " --executor cpu --check");
  INFO(at_one.output);
  CHECK(at_one.code == 0);
  CHECK_THAT(at_one.output, Catch::Contains("(0 opaque)") && Catch::Contains("input x [1,8,12]") &&
                                Catch::Contains("output y [1,8,3,4]") && Catch::Contains("(same)"));
  auto given = RunTool("taso-run " + model + " --executor cpu --check --input-shape x=3x8x12");
  INFO(given.output);
  CHECK(given.code == 0);
  CHECK_THAT(given.output, Catch::Contains("output y [3,8,3,4]") && Catch::Contains("(same)"));
  auto bad = RunTool("taso-run " + model + " --input-shape x=3xbx12");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--input-shape 'x=3xbx12' is not NAME=D0xD1x..."));
  // --roundtrip checks the file as read: its shape arithmetic stays as written.
  auto roundtrip = RunTool("taso-run --roundtrip " + model);
  CHECK_THAT(roundtrip.output, Catch::Contains("view.onnx: 5 nodes") && !Catch::Contains("(0 opaque)"));
}

TEST_CASE("taso-run --against times two models in turn and fails where their outputs differ") {
  auto dir = taso::testing::TempDir("cli_run_against");
  const std::string model = (dir / "a.onnx").string(), other = (dir / "b.onnx").string();
  REQUIRE(RunTool("taso-models nasrnn --layers 2 -o " + model).code == 0);
  REQUIRE(RunTool("taso-models nasrnn --layers 2 --seed 9 -o " + other).code == 0);  // other weights
  auto same = RunTool("taso-run " + model + " --executor cpu --time 10 --against " + model);
  INFO(same.output);
  CHECK(same.code == 0);
  CHECK_THAT(same.output, Catch::Matches("(.|\\n)*in turn: this model [0-9.]+ ms, the other [0-9.]+ ms(.|\\n)*"));
  CHECK_THAT(same.output, Catch::Contains("max |difference| 0 (same)"));
  auto differ = RunTool("taso-run " + model + " --executor cpu --time 10 --against " + other);
  CHECK(differ.code == 1);
  CHECK_THAT(differ.output, Catch::Contains("DIFFERENT"));
  auto untimed = RunTool("taso-run " + model + " --executor cpu --against " + other);
  CHECK(untimed.code != 0);
  CHECK_THAT(untimed.output, Catch::Contains("--against needs --time N"));
  auto reference = RunTool("taso-run " + model + " --time 10 --against " + other);
  CHECK(reference.code != 0);
  CHECK_THAT(reference.output, Catch::Contains("need --executor cpu or cuda"));
  auto absent = RunTool("taso-run " + model + " --executor cpu --time 10 --against " + (dir / "absent.onnx").string());
  CHECK(absent.code != 0);
  CHECK_THAT(absent.output, Catch::Contains("taso-run: error: "));
}

TEST_CASE("Where the cuda backend cannot run, taso-opt and taso-run say what is missing and write nothing") {
  const taso::BackendInfo cuda = taso::AvailableBackends()[1];
  if (cuda.usable) {
    WARN("a GPU is usable here: the cuda tests run instead (cuda_executor_test.cc)");
    return;
  }
  auto dir = taso::testing::TempDir("cli_no_cuda");
  const std::string model = ConvReluModel(dir), out = (dir / "out.onnx").string();
  // Not built: the toolkit was missing at configure time; built: no GPU (or driver) here.
  const std::string missing = cuda.compiled ? "the cuda backend needs a GPU" : "the cuda backend is not built";
  auto opt = RunTool("taso-opt " + model + " -o " + out + " --backend cuda");
  INFO(opt.output);
  CHECK(opt.code == 1);
  CHECK_THAT(opt.output, Catch::StartsWith("taso-opt: error: " + missing));
  CHECK(std::count(opt.output.begin(), opt.output.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(out));
  auto layouts = RunTool("taso-opt " + model + " -o " + out + " --backend cuda --search both");
  CHECK(layouts.code == 2);
  CHECK_THAT(layouts.output, Catch::Contains("layouts are searched on the cpu backend only"));
  auto run = RunTool("taso-run " + model + " --executor cuda");
  INFO(run.output);
  CHECK(run.code == 1);
  CHECK_THAT(run.output, Catch::Contains("taso-run: error: " + missing));
}

TEST_CASE("taso-opt and taso-verify refuse a file over its size limit, naming the flag that raises it") {
  auto dir = taso::testing::TempDir("cli_limits");
  const std::string model = ConvReluModel(dir), out = (dir / "out.onnx").string();
  const std::string rules = std::string(TASO_SOURCE_DIR) + "/rules/taso_k3.pb";
  auto big_model = RunTool("taso-opt " + model + " -o " + out + " --backend analytic --max-model-bytes 10");
  CHECK(big_model.code == 1);
  CHECK_THAT(big_model.output, Catch::StartsWith("taso-opt: error: model '" + model + "' is ") &&
                                   Catch::EndsWith("over the limit of 10 bytes (raise it with --max-model-bytes)\n"));
  auto big_rules = RunTool("taso-opt " + model + " -o " + out + " --backend analytic --max-rules-bytes 10");
  CHECK(big_rules.code == 1);
  CHECK_THAT(big_rules.output, Catch::Contains("over the limit of 10 bytes (raise it with --max-rules-bytes)"));
  CHECK_FALSE(std::filesystem::exists(out));
  auto bad_limit = RunTool("taso-opt " + model + " -o " + out + " --max-model-bytes 0");
  CHECK(bad_limit.code == 2);
  CHECK_THAT(bad_limit.output, Catch::Contains("--max-model-bytes must lie between 1 and"));
  auto verify = RunTool("taso-verify " + rules + " --max-rules-bytes 10");
  CHECK(verify.code == 1);
  CHECK_THAT(verify.output, Catch::StartsWith("taso-verify: error: rules file '" + rules + "' is ") &&
                                Catch::Contains("(raise it with --max-rules-bytes)"));
}

// Each candidate of the backtracking search copies the graph: on a long graph the queue
// is bounded by memory (SearchOptions::max_queue_bytes) and an expansion by time.
TEST_CASE(
    "taso-opt optimizes a chain of 200,000 nodes or refuses it in one line, within the default stack "
    "and 4 GB",
    "[cli][deep]") {
  auto dir = taso::testing::TempDir("cli_deep_chain");
  onnx::ModelProto m = taso::testing::NewModel(13);
  taso::testing::AddInput(m, "v0", {1, 4});
  constexpr int kNodes = 200000;
  for (int i = 0; i < kNodes; ++i)
    taso::testing::AddNode(m, i % 2 ? taso::op_names::kIdentity : taso::op_names::kRelu, {absl::StrCat("v", i)},
                           {absl::StrCat("v", i + 1)}, absl::StrCat("n", i));
  taso::testing::AddOutput(m, absl::StrCat("v", kNodes));
  std::string bytes;
  REQUIRE(m.SerializeToString(&bytes));
  const std::string model = (dir / "chain.onnx").string(), out = (dir / "out.onnx").string();
  taso::testing::WriteFile(model, bytes);
  // The default 8 MiB stack, whatever the test itself runs with, and 4 GB of address space
  // (before the bound, the search's queue took 4.5 GB in 8 s).
  auto r = taso::testing::RunCommand("ulimit -s 8192 && ulimit -v 4000000 && " + std::string(TASO_BINARY_DIR) +
                                     "/taso-opt " + model + " -o " + out +
                                     " --backend analytic --target cpu --budget 1 --time-limit 5");
  INFO(r.output);
  CHECK((r.code == 0 || (r.code >= 1 && r.code <= 2)));
  if (r.code == 0) {
    CHECK(std::filesystem::exists(out));
  } else {
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("taso-opt refuses malformed models at opsets 6 to 10 in one line, by its error status, not a signal") {
  auto dir = taso::testing::TempDir("cli_opt_malformed");
  const std::string out = (dir / "out.onnx").string();
  // Each model's node: op_type, inputs, outputs; its graph output; the input's shape.
  struct Case {
    std::string op;
    std::vector<std::string> inputs, outputs;
    std::string graph_output;
    std::vector<int64_t> x_shape;
  };
  const std::vector<Case> cases = {
      {taso::op_names::kRelu, {"x"}, {""}, "y", {2147483648, 3}},  // issue 43: SIGSEGV in ONNX's converter
      {taso::op_names::kRelu, {"x"}, {""}, "x", {2, 3}},
      {taso::op_names::kRelu, {"x"}, {"z"}, "y", {2, 3}},
      {taso::op_names::kAdd, {"x", "w"}, {"y"}, "y", {2, 3}},
      {"", {"x"}, {"y"}, "y", {2, 3}},
      {"ConstantFill", {"x"}, {"y"}, "y", {2, 3}},  // the converter loops forever on it
      {taso::op_names::kRelu, {"x"}, {"y"}, "y", {2, 4294967296}},
  };
  for (int opset = 6; opset <= 10; ++opset)
    for (size_t i = 0; i < cases.size(); ++i) {
      auto m = taso::testing::NewModel(opset);
      taso::testing::AddInput(m, "x", cases[i].x_shape);
      taso::testing::AddNode(m, cases[i].op, cases[i].inputs, cases[i].outputs, "n");
      taso::testing::AddOutput(m, cases[i].graph_output);
      const auto model = dir / absl::StrCat("opset", opset, "_case", i, ".onnx");
      taso::testing::WriteFile(model, m.SerializeAsString());
      const std::string command = absl::StrCat(TASO_BINARY_DIR, "/taso-opt ", model.string(), " -o ", out,
                                               " --backend analytic 2>", (dir / "err").string(), " >/dev/null");
      const int status = std::system(command.c_str());
      std::ifstream f(dir / "err");
      const std::string err((std::istreambuf_iterator<char>(f)), {});
      INFO(model.string() << ": " << err);
      REQUIRE(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 2);
      CHECK_THAT(err, Catch::StartsWith("taso-opt: error: "));
      CHECK(std::count(err.begin(), err.end(), '\n') == 1);
      CHECK_FALSE(std::filesystem::exists(out));
    }
}

namespace {

// The default `--help` prints for `flag`, as absl spells it ("40", "\"egraph\"").
std::string FlagDefault(const std::string& help, const std::string& flag) {
  const size_t at = help.find("--" + flag + " (");
  if (at == std::string::npos) return "(no flag --" + flag + ")";
  const size_t from = help.find("default: ", at) + 9;
  return help.substr(from, help.find(';', from) - from);
}

}  // namespace

TEST_CASE("taso-opt's flags default to the library's options") {
  const auto help = RunTool("taso-opt --help");
  const taso::PipelineOptions library;
  CHECK(FlagDefault(help.output, "search_engine") == absl::StrCat("\"", taso::SearchEngineName(library.engine), "\""));
  CHECK(FlagDefault(help.output, "time_limit") == absl::StrCat(library.search_options.time_limit));
  CHECK(FlagDefault(help.output, "budget") == absl::StrCat(library.search_options.budget));
  CHECK(FlagDefault(help.output, "alpha") == absl::StrCat(library.search_options.alpha));
  CHECK(FlagDefault(help.output, "no_verify_speed") == (library.verify_speed ? "false" : "true"));
  CHECK(FlagDefault(help.output, "egraph_time_limit") == absl::StrCat(library.egraph.limits.time_limit));
  CHECK(FlagDefault(help.output, "egraph_nodes") == absl::StrCat(library.egraph.limits.max_enodes));
  CHECK(FlagDefault(help.output, "egraph_extraction_seconds") == absl::StrCat(library.egraph.extraction.seconds));
  CHECK(FlagDefault(help.output, "egraph_multi_iterations") ==
        absl::StrCat(library.egraph.scheduler.multi_pattern_iterations));
}

TEST_CASE("taso-opt writes the input as read where the memory available cannot hold it while optimized") {
  auto dir = taso::testing::TempDir("cli_short_of_memory");
  const std::string model = (dir / "nasrnn.onnx").string(), out = (dir / "out.onnx").string(),
                    report = (dir / "report.json").string();
  REQUIRE(RunTool("taso-models nasrnn --layers 2 -o " + model).code == 0);
  const std::string short_of_memory = "TASO_AVAILABLE_MEMORY_BYTES=1000000 " + std::string(TASO_BINARY_DIR);
  auto r = taso::testing::RunCommand(short_of_memory + "/taso-opt " + model + " -o " + out + " --report " + report);
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("nasrnn.onnx: not optimized: optimizing its "));
  CHECK_THAT(r.output, Catch::Contains(" MB of memory, and 1 MB are available here (--max-memory-gb 1 tries anyway); "
                                       "the input is written as read"));
  const auto input = taso::ReadModelFile(model), written = taso::ReadModelFile(out);
  REQUIRE(input.ok());
  REQUIRE(written.ok());
  CHECK(written->SerializeAsString() == input->SerializeAsString());
  std::ifstream f(report);
  const std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK_THAT(json, Catch::Contains("\"written_as_read\": true"));

  // A limit given is the user's word that the model fits.
  const std::string tried = (dir / "tried.onnx").string();
  auto given = taso::testing::RunCommand(short_of_memory + "/taso-opt " + model + " -o " + tried +
                                         " --max-memory-gb 1 --backend analytic --budget 5");
  CHECK(given.code == 0);
  CHECK_THAT(given.output, !Catch::Contains("not optimized"));
  CHECK_THAT(given.output, Catch::Contains("nodes ->"));
}

TEST_CASE("taso-opt names the input where it fails the checks its written model must pass") {
  auto dir = taso::testing::TempDir("cli_input_fails_checks");
  // An int64 zero point, which QuantizeLinear does not take: ONNX Runtime refuses the file
  // as an invalid model, and the import keeps both nodes opaque.
  onnx::ModelProto m = taso::testing::NewModel(13);
  taso::testing::AddInput(m, "x", {1, 4});
  taso::testing::AddFloatInit(m, "scale", {1}, 0.5f);
  taso::testing::AddInt64Init(m, "zero", {0});
  taso::testing::AddNode(m, "QuantizeLinear", {"x", "scale", "zero"}, {"q"}, "quantize");
  taso::testing::AddNode(m, "DequantizeLinear", {"q", "scale", "zero"}, {"y"}, "dequantize");
  taso::testing::AddOutput(m, "y");
  const std::string model = (dir / "bad_zero_point.onnx").string(), out = (dir / "out.onnx").string();
  taso::testing::WriteFile(model, m.SerializeAsString());
  auto r = RunTool("taso-opt " + model + " -o " + out);
  CHECK(r.code != 0);
  CHECK_THAT(r.output, Catch::StartsWith("taso-opt: error: the input '" + model + "' fails ONNX shape inference: "));
  CHECK_THAT(r.output, Catch::Contains("tensor(int64)"));
  CHECK_FALSE(std::filesystem::exists(out));
}
