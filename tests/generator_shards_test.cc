// taso-gen's graphs held by fingerprint shard, in memory or on disk (issue 46): the rules
// found are those of the single sorted table, whatever the shards and the spilling.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>

#include "generator.h"
#include "graph_store.h"

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
    for (size_t i = 0; i < graphs.size(); ++i) (*store)->Add(static_cast<int>(i % 2), graphs[i].first, graphs[i].second);
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
  options.ops = {"MatMul", "Concat", "Split", "Transpose", "Relu"};
  gen::GenerateReport single_report, sharded_report;
  options.shards = 1;  // one sorted table, all in memory
  options.max_memory_mb = 4096;
  auto single = gen::Generate(options, &single_report);
  options.shards = 256;
  options.max_memory_mb = 1;  // nearly all of it on disk
  auto sharded = gen::Generate(options, &sharded_report);
  REQUIRE(single.ok());
  REQUIRE(sharded.ok());
  CHECK(single_report.spilled_bytes == 0);
  CHECK(sharded_report.spilled_bytes > 0);
  CHECK(sharded_report.graphs == single_report.graphs);
  CHECK(sharded_report.groups == single_report.groups);
  CHECK(sharded_report.counts.candidates == single_report.counts.candidates);
  CHECK(single->rules.size() > 10);
  CHECK(RuleSetText(*sharded) == RuleSetText(*single));
}
