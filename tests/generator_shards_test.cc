// taso-gen's graphs held by fingerprint shard, in memory or on disk (issue 46): the rules
// found are those of the single sorted table, whatever the shards and the spilling.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "form_store.h"
#include "generator.h"
#include "graph_store.h"
#include "rule_writer.h"
#include "spill.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/temporary_folder.h"
#include "test_util.h"

using namespace taso;

namespace {

// Every graph of a store, run by run, as the runs came.
std::vector<gen::Fingerprinted> AllRuns(gen::GraphStore& store, size_t min_run) {
  std::vector<gen::Fingerprinted> out;
  auto s = store.ForEachRun(min_run, 2, [&](absl::Span<const gen::Fingerprinted> run) {
    REQUIRE(run.size() >= min_run);
    for (const auto& f : run) REQUIRE(f.fingerprint == run.front().fingerprint);
    out.insert(out.end(), run.begin(), run.end());
  });
  REQUIRE(s.ok());
  return out;
}

bool SameGraphs(const std::vector<gen::Fingerprinted>& a, const std::vector<gen::Fingerprinted>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].fingerprint != b[i].fingerprint || std::memcmp(&a[i].graph, &b[i].graph, sizeof(gen::GraphCode)))
      return false;
  return true;
}

gen::GraphCode SomeCode(std::mt19937_64& rng, int max_ops) {
  gen::GraphCode c;
  c.num_ops = static_cast<uint8_t>(rng() % (max_ops + 1));
  if (c.num_ops == 0) c.lone_input = static_cast<uint8_t>(rng() % 7);
  for (int o = 0; o < c.num_ops; ++o) c.ops[o] = {static_cast<uint8_t>(rng()), {uint8_t(rng()), uint8_t(rng()), 0}};
  return c;
}

}  // namespace

TEST_CASE("A graph record decodes to the code and fingerprint it was made of") {
  std::mt19937_64 rng(7);
  for (int k = 0; k <= 4; ++k) {
    std::vector<char> bytes(gen::RecordBytes(k));
    for (int i = 0; i < 100; ++i) {
      const gen::GraphCode c = SomeCode(rng, k);
      const uint64_t fp = rng();
      gen::EncodeRecord(fp, c, k, bytes.data());
      const gen::Fingerprinted f = gen::DecodeRecord(bytes.data(), k);
      CHECK(f.fingerprint == fp);
      CHECK(std::memcmp(&f.graph, &c, sizeof(c)) == 0);
    }
  }
}

TEST_CASE("A graph store gives the sorted runs whatever its shards and what went to disk") {
  std::mt19937_64 rng(11);
  std::vector<std::pair<uint64_t, gen::GraphCode>> graphs;
  for (int i = 0; i < 20000; ++i) {
    // Few distinct fingerprints among some, so that runs of several graphs occur.
    const uint64_t fp = i % 3 ? rng() : (rng() % 500) * 0x9E3779B97F4A7C15ull;
    graphs.push_back({fp, SomeCode(rng, 4)});
  }
  auto fill = [&](int shards, uint64_t memory_bytes) {
    gen::GraphStoreOptions o;
    o.shards = shards;
    o.threads = 2;
    o.max_ops = 4;
    o.memory_bytes = memory_bytes;
    auto store = gen::GraphStore::Create(o);
    REQUIRE(store.ok());
    for (size_t i = 0; i < graphs.size(); ++i)
      (*store)->Add(static_cast<int>(i % 2), graphs[i].first, graphs[i].second);
    REQUIRE((*store)->status().ok());
    CHECK((*store)->graphs() == graphs.size());
    return std::move(*store);
  };
  auto single = fill(1, 1ull << 30);
  auto sharded = fill(64, 4096);  // most of it on disk
  CHECK(single->spilled_bytes() == 0);
  CHECK(sharded->spilled_bytes() > 0);
  for (size_t min_run : {1, 2}) {
    const auto want = AllRuns(*single, min_run);
    CHECK(want.size() > (min_run == 1 ? graphs.size() - 1 : 100));
    CHECK(std::is_sorted(want.begin(), want.end(), [](const auto& a, const auto& b) {
      return a.fingerprint != b.fingerprint ? a.fingerprint < b.fingerprint
                                            : std::memcmp(&a.graph, &b.graph, sizeof(gen::GraphCode)) < 0;
    }));
    CHECK(SameGraphs(AllRuns(*sharded, min_run), want));
  }
}

TEST_CASE("A graph store refuses a bad shard count and stops at its disk budget") {
  gen::GraphStoreOptions o;
  o.shards = 3;
  CHECK_FALSE(gen::GraphStore::Create(o).ok());
  o.shards = 4;
  o.memory_bytes = 1024;
  o.disk_bytes = 4096;
  auto store = gen::GraphStore::Create(o);
  REQUIRE(store.ok());
  gen::GraphCode c;
  for (uint64_t i = 0; i < 10000; ++i) (*store)->Add(0, i * 0x9E3779B97F4A7C15ull, c);
  REQUIRE_FALSE((*store)->status().ok());
  CHECK_THAT(std::string((*store)->status().message()), Catch::Contains("disk budget"));
}

TEST_CASE("Rules from sharded graphs on disk are those of the single table") {
  gen::GenerateOptions options;
  options.max_ops = 3;
  options.ops = {op_names::kMatMul, op_names::kConcat, op_names::kSplit, op_names::kTranspose, op_names::kRelu};
  gen::GenerateReport single_report, sharded_report;
  options.shards = 1;  // one sorted table, all in memory
  options.max_memory_mb = 4096;
  auto single = gen::Generate(options, &single_report);
  options.shards = 256;
  options.max_memory_mb = 1;  // nearly all of it on disk
  options.form_chunk = 1000;  // forms read a few at a time, families found a share at a time
  options.family_share = 300;
  auto sharded = gen::Generate(options, &sharded_report);
  REQUIRE(single.ok());
  REQUIRE(sharded.ok());
  CHECK(single_report.spilled_bytes == 0);
  CHECK(sharded_report.spilled_bytes > 0);
  // The distinct forms too: all in memory for the single table, nearly all on disk here.
  CHECK(single_report.counts.forms_disk_bytes == 0);
  CHECK(sharded_report.counts.forms_disk_bytes > 0);
  CHECK(sharded_report.counts.distinct == single_report.counts.distinct);
  CHECK(single_report.counts.after_float_checks > 3 * options.family_share);
  CHECK(single_report.counts.distinct > 3 * options.form_chunk);
  CHECK(sharded_report.graphs == single_report.graphs);
  CHECK(sharded_report.groups == single_report.groups);
  CHECK(sharded_report.counts.candidates == single_report.counts.candidates);
  CHECK(single->rules.size() > 10);
  CHECK(RuleSetText(*sharded) == RuleSetText(*single));
}

namespace {

std::string FileBytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("A rule set written a batch at a time is the file of the whole set") {
  gen::GenerateOptions options;
  options.max_ops = 2;
  options.ops = {op_names::kMatMul,    op_names::kConcat, op_names::kSplit,
                 op_names::kTranspose, op_names::kRelu,   op_names::kConv2D};
  gen::GenerateReport report;
  auto whole = gen::Generate(options, &report);
  REQUIRE(whole.ok());
  REQUIRE(whole->rules.size() > 20);
  whole->command = "taso-gen -k 2 (test)";
  const auto dir = testing::TempDir("rule_writer");
  REQUIRE(WriteRuleSet(*whole, (dir / "whole.pb").string()).ok());
  for (bool text : {false, true})
    for (size_t batch : {size_t{1}, size_t{7}, whole->rules.size()}) {
      INFO("text " << text << ", batches of " << batch);
      const auto path = dir / (text ? "streamed.txt" : "streamed.pb");
      gen::RuleFileWriter writer(path.string(), text, whole->command);
      RuleSet header = *whole;
      header.rules.clear();
      header.command = "replaced by the writer's";
      REQUIRE(writer.Begin(header).ok());
      for (size_t i = 0; i < whole->rules.size(); i += batch) {
        const size_t end = std::min(whole->rules.size(), i + batch);
        REQUIRE(writer.Add(std::vector<Rule>(whole->rules.begin() + i, whole->rules.begin() + end)).ok());
      }
      REQUIRE(writer.End().ok());
      CHECK(writer.rules() == whole->rules.size());
      CHECK(FileBytes(path) == (text ? RuleSetText(*whole) : FileBytes(dir / "whole.pb")));
      CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
    }
}

TEST_CASE("Form records read back as they were written, from memory or disk") {
  gen::SpillFolder folder("");
  gen::FormStore forms(&folder, 10 * sizeof(gen::PackedCandidate));  // 10 in memory
  std::mt19937_64 rng(5);
  std::vector<gen::PackedCandidate> written;
  for (int i = 0; i < 95; ++i) {
    gen::Candidate c;
    c.a = SomeCode(rng, 4);
    c.b = SomeCode(rng, 4);
    for (int k = 0; k <= i % 3; ++k) {
      c.a_outputs.push_back(static_cast<int>(rng() % 20));
      c.b_outputs.push_back(static_cast<int>(rng() % 20));
    }
    c.a_op_outputs[1] = 2;
    gen::PackedCandidate p;
    REQUIRE(gen::Pack(c, &p));
    const gen::Candidate back = gen::Unpack(p);
    CHECK(back.a_outputs == c.a_outputs);
    CHECK(back.b_outputs == c.b_outputs);
    CHECK(back.a_op_outputs == c.a_op_outputs);
    const auto fresh = forms.Insert(gen::KeyOf(std::to_string(i % 80)), p);
    REQUIRE(fresh.ok());
    CHECK(*fresh == (i < 80));  // the same key again is no new form
    if (i < 80) written.push_back(p);
  }
  CHECK(forms.size() == 80);
  CHECK(forms.disk_bytes() > 0);
  CHECK(forms.Find(gen::KeyOf("17")) == 17);
  CHECK(forms.Find(gen::KeyOf("no such form")) == -1);
  std::vector<gen::PackedCandidate> read(80);
  REQUIRE(forms.Read(0, 80, read.data()).ok());
  for (size_t i = 0; i < 80; ++i) CHECK(std::memcmp(&read[i], &written[i], sizeof(gen::PackedCandidate)) == 0);
  gen::PackedCandidate one;
  REQUIRE(forms.Read(78, 1, &one).ok());
  CHECK(std::memcmp(&one, &written[78], sizeof(one)) == 0);
  // Keys are fixed functions of the string, and tell strings apart.
  CHECK(gen::KeyOf("abc") == gen::KeyOf(std::string("abc")));
  CHECK_FALSE(gen::KeyOf("abc") == gen::KeyOf("abd"));
}

TEST_CASE("Spill folders go when the run is interrupted, and those of runs killed outright at the next run") {
  const auto parent = testing::TempDir("spill_folders");
  // In a child: makes a spill folder with a file in it, says where, and ends by `signal`.
  auto spill_and_end = [&](int signal) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      for (int handled : {SIGINT, SIGTERM, SIGHUP}) ::signal(handled, SIG_DFL);  // as in the foreground
      RemoveTemporaryFoldersOnSignal();                                          // as taso-gen's cli::Init does
      gen::SpillFolder folder(parent.string());
      auto path = folder.Path();
      if (!path.ok()) _exit(2);
      std::ofstream(*path + "/t0_s1.bin") << "graphs";
      const std::string line = *path + "\n";
      if (write(fds[1], line.data(), line.size()) < 0) _exit(2);
      raise(signal);
      _exit(1);  // not reached
    }
    close(fds[1]);
    std::string made;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') made.push_back(c);
    close(fds[0]);
    const int status = testing::WaitForExit(child, 30);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal);
    REQUIRE_FALSE(made.empty());
    return made;
  };
  gen::SpillFolder live(parent.string());  // this process's: kept
  REQUIRE(live.Path().ok());
  CHECK_FALSE(std::filesystem::exists(spill_and_end(SIGTERM)));
  const std::string killed = spill_and_end(SIGKILL);
  REQUIRE(std::filesystem::exists(killed));
  // Its owner file unlocked for over a minute: left by a run that ended.
  std::filesystem::last_write_time(std::filesystem::path(killed) / ".owner",
                                   std::filesystem::file_time_type::clock::now() - std::chrono::minutes(2));
  std::filesystem::last_write_time(std::filesystem::path(*live.Path()) / ".owner",
                                   std::filesystem::file_time_type::clock::now() - std::chrono::minutes(2));
  const std::vector<std::string> lines = gen::RemoveStaleSpillFolders(parent.string());
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "removed " + killed + " (0 MiB), left by a taso-gen run that ended");
  CHECK_FALSE(std::filesystem::exists(killed));
  CHECK(std::filesystem::exists(*live.Path()));
}
