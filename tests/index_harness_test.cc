// The correctness harness: every design Index::Open knows (Index::Designs()) runs these tests
// unchanged (a new design is covered as soon as it is registered).
//
//  * SingleThreadedRandomOpsMatchStdMap - 20k random operations (scans included) against a
//    std::map model, then a full comparison.
//  * BulkLoadThenScanAndLookup - sorted bulk load, full scan, point lookups, then inserts into
//    the full bulk-loaded leaves.
//  * ConcurrentOpsAreLinearizable - 8 threads of mixed operations on 128 hot keys (a new set
//    each round, between the earlier rounds' keys, so leaves keep splitting) on a fabric that
//    tears multi-cache-line verbs and delays some; every operation is recorded and the
//    history checked for linearizability (point operations) and scan correctness.
//  * ConcurrentOpsWithRepartitioningAreLinearizable - the same while partitioned designs (DEX)
//    move their partition boundaries every 2 ms; skipped for designs without partitions.
//  * ConcurrentInsertsIntoEmptyTree - many threads filling an empty tree (the small-tree case
//    that broke Sherman's original code, its GitHub issue #26) while reading and scanning
//    what the others insert; the history is checked, then every key must be found.
//  * InvalidKeysAreRejected, BadOptionsAndBulkInputAreRejected - clear errors on bad input.
//
// Soak mode: DMINDEX_SOAK=<n> multiplies operation counts and concurrent rounds by n, e.g.
//   DMINDEX_SOAK=50 build/tests/index_harness_test --gtest_filter='*Concurrent*'
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <random>
#include <thread>

#include "bench/runner.h"
#include "check/workload.h"
#include "common/sync.h"
#include "harness_config.h"
#include "u64_api.h"

namespace dmindex {
namespace {

// This file's tests speak the u64 key format in integers (u64_api.h).
using Key = uint64_t;
using Value = uint64_t;
using KeyValue = ::dmindex::testing::U64Pair;
using ::dmindex::u64::kMinKey;
using ::dmindex::u64::kMaxKey;
using ::dmindex::u64::IsValidKey;


using testing::SoakFactor;

class IndexHarnessTest : public ::testing::TestWithParam<std::string> {
 protected:
  // A fresh cluster (an in-process fabric with the given faults) and a fresh index of the
  // design under test, opened through the public API.
  std::unique_ptr<Index> Open(const fabric::FaultOptions& faults = {}) {
    std::shared_ptr<fabric::InProcFabric> f = testing::MakeHarnessFabric(faults);
    fabric_ = f.get();
    cluster_ = std::make_shared<Cluster>(std::move(f));
    auto index = Index::Open(Options("harness"), cluster_);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(index).value() : nullptr;
  }
  // The parameter is a design, or a design with knobs ("rftree:refresh_hops=off").
  IndexOptions Options(const std::string& name) const {
    IndexOptions o = testing::HarnessIndexOptions(name);
    auto choice = bench::ParseDesignChoice(GetParam());
    EXPECT_TRUE(choice.ok()) << choice.status().ToString();
    o.design = choice.ok() ? choice->name : GetParam();
    if (choice.ok()) o.knobs = choice->knobs;
    return o;
  }
  static std::unique_ptr<Session> Session0(Index& index) {
    auto s = index.OpenSession(0);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  // Iterates over everything in batches of `page` pairs.
  static std::vector<KeyValue> ScanAll(Session& s, size_t page = 97) {
    Status st;
    std::vector<KeyValue> all = testing::IterateU64(s, page, &st);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return all;
  }
  // Preloads, runs the rounds, checks each; returns the report's one-line summary.
  static std::string RunCheckedWorkload(Index& index, const check::WorkloadOptions& options,
                                        uint64_t* repartitions = nullptr) {
    check::ConcurrentWorkload workload(index, options);
    EXPECT_TRUE(workload.Preload().ok());
    auto report = check::RunCheckedRounds(workload, testing::HarnessRounds());
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    if (!report.ok()) return "";
    EXPECT_EQ(workload.errors(), 0u) << "first error: " << workload.first_error();
    EXPECT_TRUE(report->ok()) << report->ToString();
    EXPECT_GT(report->scans_checked, 0u);
    if (repartitions != nullptr) *repartitions = workload.repartitions();
    return report->ToString(0);
  }
  static std::vector<KeyValue> Pairs(const std::map<Key, Value>& m) {
    std::vector<KeyValue> v;
    for (const auto& [k, val] : m) v.push_back({k, val});
    return v;
  }

  fabric::InProcFabric* fabric_ = nullptr;  // the cluster's, for switching faults
  std::shared_ptr<Cluster> cluster_;
};

TEST_P(IndexHarnessTest, SingleThreadedRandomOpsMatchStdMap) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  auto s = Session0(*index);
  ASSERT_NE(s, nullptr);
  std::map<Key, Value> model;
  std::mt19937_64 rng(7);
  const uint64_t ops = 20'000ull * SoakFactor();
  const Key key_space = 6'000;  // ~3k live keys: a tree of several levels at 512-byte nodes
  std::vector<KeyValue> got;
  for (uint64_t i = 1; i <= ops; ++i) {
    const Key k = 1 + rng() % key_space;
    const Value v = i << 8 | 0x5a;  // unique, so a stale value cannot pass for a fresh one
    const auto present = model.find(k);
    switch (rng() % 10) {
      case 0: case 1: case 2: {
        ASSERT_TRUE(s->Insert(k, v).ok()) << "op " << i;
        model[k] = v;
        break;
      }
      case 3: {
        Status st = s->Update(k, v);
        ASSERT_EQ(st.ok(), present != model.end()) << "op " << i << " Update(" << k << "): " << st.ToString();
        if (present != model.end()) present->second = v;
        break;
      }
      case 4: case 5: {
        Status st = s->Delete(k);
        ASSERT_EQ(st.ok(), present != model.end()) << "op " << i << " Delete(" << k << "): " << st.ToString();
        if (present != model.end()) model.erase(present);
        break;
      }
      case 6: {
        const size_t count = rng() % 150;
        ASSERT_TRUE(::dmindex::testing::ScanU64(*s, k, count, &got).ok()) << "op " << i;
        std::vector<KeyValue> want;
        for (auto it = model.lower_bound(k); it != model.end() && want.size() < count; ++it)
          want.push_back({it->first, it->second});
        ASSERT_EQ(got, want) << "op " << i << " Scan(" << k << ", " << count << ")";
        break;
      }
      default: {
        Value out = 0;
        Status st = s->Lookup(k, &out);
        ASSERT_EQ(st.ok(), present != model.end()) << "op " << i << " Lookup(" << k << "): " << st.ToString();
        if (st.ok()) { ASSERT_EQ(out, present->second) << "op " << i << " Lookup(" << k << ")"; }
        else ASSERT_TRUE(st.IsNotFound()) << st.ToString();
      }
    }
  }
  EXPECT_EQ(ScanAll(*s), Pairs(model));
}

TEST_P(IndexHarnessTest, BulkLoadThenScanAndLookup) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  std::map<Key, Value> model;
  const uint64_t n = 30'000ull * SoakFactor();
  for (uint64_t i = 0; i < n; ++i) model[7 * i + 3] = (7 * i + 3) * 3;
  const std::vector<KeyValue> sorted = Pairs(model);
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*index, sorted).ok());
  auto s = Session0(*index);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ScanAll(*s), sorted);
  for (uint64_t i = 0; i < n; ++i) {
    Value v = 0;
    ASSERT_TRUE(s->Lookup(7 * i + 3, &v).ok()) << "key " << 7 * i + 3;
    ASSERT_EQ(v, (7 * i + 3) * 3);
    ASSERT_TRUE(s->Lookup(7 * i + 4, &v).IsNotFound()) << "key " << 7 * i + 4;
  }
  // A scan starting between keys begins at the next one.
  std::vector<KeyValue> got;
  ASSERT_TRUE(::dmindex::testing::ScanU64(*s, 7 * 100 + 4, 3, &got).ok());
  EXPECT_EQ(got, (std::vector<KeyValue>{sorted[101], sorted[102], sorted[103]}));
  // Inserting between the keys splits the bulk-loaded leaves; nothing may get lost.
  for (uint64_t i = 0; i < n; i += 3) {
    ASSERT_TRUE(s->Insert(7 * i + 5, i).ok());
    model[7 * i + 5] = i;
  }
  EXPECT_EQ(ScanAll(*s), Pairs(model));
  Value v = 0;
  ASSERT_TRUE(s->Lookup(3, &v).ok());
  EXPECT_EQ(v, 9u);
}

TEST_P(IndexHarnessTest, ConcurrentOpsAreLinearizable) {
  auto index = Open(testing::HarnessFaults());
  ASSERT_NE(index, nullptr);
  check::WorkloadOptions options = testing::HarnessWorkload();
  options.ops_per_thread *= SoakFactor() > 1 ? 4 : 1;
  std::cout << "[ harness  ] " << GetParam() << ": " << RunCheckedWorkload(*index, options) << "\n";
}

// Designs with logical partitions (DEX) move them while the threads run: a hosted compute
// node hands half of its hot keys to a neighbour every 2 ms (flushing its dirty pages).
TEST_P(IndexHarnessTest, ConcurrentOpsWithRepartitioningAreLinearizable) {
  auto index = Open(testing::HarnessFaults());
  ASSERT_NE(index, nullptr);
  if (index->partitioning() == nullptr) GTEST_SKIP() << GetParam() << " has no logical partitions";
  check::WorkloadOptions options = testing::HarnessWorkload();
  options.repartition_ms = 2;
  uint64_t repartitions = 0;
  const std::string report = RunCheckedWorkload(*index, options, &repartitions);
  EXPECT_GT(repartitions, 0u);
  std::cout << "[ harness  ] " << GetParam() << " with " << repartitions << " repartitionings: " << report << "\n";
}

TEST_P(IndexHarnessTest, ConcurrentInsertsIntoEmptyTree) {
  // A search-layer cache never refreshed makes every insert past the last leaf it knows
  // walk all leaves appended since: with ascending keys that is quadratic in the inserts (by
  // design: RfTreeVerbs' append row), and how bad depends on whether the one fill came
  // before the root grew (seconds) or after (minutes). Its correctness under a stale cache
  // is ConcurrentOpsAreLinearizable's for this parameter.
  if (GetParam() == "rftree:refresh_hops=off")
    GTEST_SKIP() << "quadratic sibling walks by design with a cache that never refreshes";
  auto index = Open(testing::HarnessFaults());
  ASSERT_NE(index, nullptr);
  constexpr uint32_t kThreads = 8;
  const uint64_t per_thread = 1'500ull * SoakFactor();
  // Interleaved keys: all threads insert into the same few leaves of a tree that starts
  // empty, so splits of the root and of its first children race from the first operation.
  // Between inserts the threads read keys others may just have inserted, and scan, so
  // readers cross every split; the recorded history is checked like the mixed workload's.
  auto key_of = [](uint64_t i, uint32_t t) { return 1 + (i * kThreads + t) * 3; };
  auto value_of = [](Key k) { return k ^ 0xabc; };
  check::HistoryRecorder recorder(kThreads);
  Latch start(kThreads);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto opened = index->OpenSession(t % 2);
      start.ArriveAndWait();
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      check::RecordingSession s(**opened, recorder.log(t));
      std::mt19937_64 rng(t);
      std::vector<KeyValue> out;
      Value v;
      for (uint64_t i = 0; i < per_thread; ++i) {
        Status inserted = s.Insert(key_of(i, t), value_of(key_of(i, t)));
        ASSERT_TRUE(inserted.ok()) << "key " << key_of(i, t) << ": " << inserted.ToString();
        const Key recent = key_of(i - rng() % (i + 1), rng() % kThreads);
        Status st = i % 8 == 7 ? ::dmindex::testing::ScanU64(s, recent, 16, &out) : s.Lookup(recent, &v);
        ASSERT_TRUE(st.ok() || st.IsNotFound()) << st.ToString();
      }
    });
  for (auto& th : threads) th.join();
  check::CheckReport report = check::CheckHistory(recorder.Merge({}));
  EXPECT_TRUE(report.ok()) << report.ToString();
  fabric_->SetFaults({});
  auto s = Session0(*index);
  ASSERT_NE(s, nullptr);
  std::map<Key, Value> model;
  for (uint32_t t = 0; t < kThreads; ++t)
    for (uint64_t i = 0; i < per_thread; ++i) model[key_of(i, t)] = value_of(key_of(i, t));
  size_t missing = 0;
  for (const auto& [k, v] : model) {
    Value got = 0;
    Status st = s->Lookup(k, &got);
    if (!st.ok() || got != v) ++missing;
    EXPECT_TRUE(st.ok() && got == v) << "key " << k << ": " << st.ToString();
    if (missing > 5) break;
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(ScanAll(*s), Pairs(model));
}

TEST_P(IndexHarnessTest, InvalidKeysAreRejected) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  auto s = Session0(*index);
  ASSERT_NE(s, nullptr);
  for (Key bad : {Key{0}, ~Key{0}}) {
    Value v = 0;
    std::vector<KeyValue> out;
    EXPECT_TRUE(s->Lookup(bad, &v).IsInvalidArgument()) << bad;
    EXPECT_TRUE(s->Insert(bad, 1).IsInvalidArgument()) << bad;
    EXPECT_TRUE(s->Update(bad, 1).IsInvalidArgument()) << bad;
    EXPECT_TRUE(s->Delete(bad).IsInvalidArgument()) << bad;
    // A scan may start at a reserved position (nothing is stored there).
    EXPECT_TRUE(::dmindex::testing::ScanU64(*s, bad, 10, &out).ok()) << bad;
  }
  // Keys that are not 8 bytes are no keys of a u64 index.
  std::string v;
  EXPECT_TRUE(s->Lookup("", &v).IsInvalidArgument());
  EXPECT_TRUE(s->Insert("123456789", "12345678").IsInvalidArgument());
  std::vector<dmindex::KeyValue> pairs;
  EXPECT_TRUE(s->Scan("1234", 3, &pairs).IsInvalidArgument());
  // The extreme valid keys work, and the rejected calls left nothing behind.
  ASSERT_TRUE(s->Insert(kMinKey, 11).ok());
  ASSERT_TRUE(s->Insert(kMaxKey, 22).ok());
  std::vector<KeyValue> all;
  ASSERT_TRUE(::dmindex::testing::ScanU64(*s, kMinKey, 10, &all).ok());
  EXPECT_EQ(all, (std::vector<KeyValue>{{kMinKey, 11}, {kMaxKey, 22}}));
  ASSERT_TRUE(::dmindex::testing::ScanU64(*s, kMaxKey, 10, &all).ok());
  EXPECT_EQ(all, (std::vector<KeyValue>{{kMaxKey, 22}}));
  ASSERT_TRUE(::dmindex::testing::ScanU64(*s, kMinKey, 0, &all).ok());
  EXPECT_TRUE(all.empty());
}

TEST_P(IndexHarnessTest, BadOptionsAndBulkInputAreRejected) {
  auto index = Open();
  ASSERT_NE(index, nullptr);
  IndexOptions bad_knob = Options("bad-knob");
  bad_knob.knobs["no-such-knob"] = "on";
  EXPECT_TRUE(Index::Open(bad_knob, cluster_).status().IsInvalidArgument());
  EXPECT_TRUE(index->OpenSession(testing::HarnessIndexOptions("").compute_nodes).status().IsInvalidArgument());
  const std::vector<KeyValue> unsorted = {{5, 1}, {3, 1}};
  const std::vector<KeyValue> duplicate = {{3, 1}, {3, 2}};
  const std::vector<KeyValue> reserved = {{0, 1}, {3, 2}};
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*index, unsorted).IsInvalidArgument());
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*index, duplicate).IsInvalidArgument());
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*index, reserved).IsInvalidArgument());
  // The rejected loads left the index empty and usable; a second load into it is refused.
  const std::vector<KeyValue> good = {{3, 1}, {5, 2}};
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*index, good).ok());
  Status again = ::dmindex::testing::BulkLoadU64(*index, std::vector<KeyValue>{{9, 1}});
  EXPECT_FALSE(again.ok());
  EXPECT_FALSE(again.message().empty());
  auto s = Session0(*index);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ScanAll(*s), good);
}

std::string DesignName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, IndexHarnessTest, ::testing::ValuesIn(Index::Designs()),
                         DesignName);

// Designs whose knobs change how they stay correct, run again with those knobs: RF-tree with
// a search-layer cache filled once and never refreshed (every traversal after a split starts
// left of its key; not for ConcurrentInsertsIntoEmptyTree, see there), and one refreshed
// after every stale read (refreshes race the splits).
INSTANTIATE_TEST_SUITE_P(DesignVariants, IndexHarnessTest,
                         ::testing::Values("rftree:refresh_hops=off", "rftree:refresh_hops=1"),
                         DesignName);

}  // namespace
}  // namespace dmindex
