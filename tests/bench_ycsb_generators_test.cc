// The ycsb-* workloads and -P files generate what YCSB 0.17.0's CoreWorkload generates (its
// Java code read line by line; tests/ycsb_oracle_test.cc compares with YCSB itself), and the
// dex-* workloads what DEX's benchmark generates.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <thread>
#include <unordered_map>

#include "bench/op_stream.h"
#include "bench/property_file.h"
#include "bench/workload_spec.h"
#include "bench/zipfian.h"

namespace dmindex::bench {
namespace {

WorkloadSpec Named(const std::string& name) {
  auto spec = NamedWorkload(name);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

std::shared_ptr<const StreamPlan> Plan(const WorkloadSpec& spec, uint64_t loaded, uint32_t threads = 1,
                                       uint64_t expected_ops = 0) {
  auto plan = StreamPlan::Make(spec, loaded, threads, 7, expected_ops);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

// Request counts per record of `draws` operations of one thread, sorted, hottest first.
std::vector<uint64_t> SortedCounts(std::shared_ptr<const StreamPlan> plan, int draws) {
  OpStream stream(plan, 0);
  std::unordered_map<uint64_t, uint64_t> count;
  for (int i = 0; i < draws; ++i) {
    const Operation op = stream.Next();
    stream.Completed(op);
    if (op.kind != OpKind::kInsert) ++count[op.record];
  }
  std::vector<uint64_t> sorted;
  for (auto [record, c] : count) sorted.push_back(c);
  std::sort(sorted.rbegin(), sorted.rend());
  return sorted;
}

double TopShare(const std::vector<uint64_t>& sorted, size_t k, int draws) {
  uint64_t sum = 0;
  for (size_t i = 0; i < std::min(k, sorted.size()); ++i) sum += sorted[i];
  return static_cast<double>(sum) / draws;
}

// YCSB's hottest key gets 1/zeta(10^10) = 3.8% of the requests, the hottest 1% of keys about
// a third; ranks over the loaded records (DEX's benchmark, and dmindex's ycsb-* before) give
// 1/zeta(n) = 7.4% and 62% at 200 k records. (Shares of the top 1% counted from a sample come
// out a little high: the tail's lucky keys join them.)
TEST(BenchYcsbGenerators, ScrambledZipfianHasYcsbsSkew) {
  constexpr uint64_t kLoaded = 200'000;
  constexpr int kDraws = 1'000'000;
  EXPECT_NEAR(1.0 / Zeta(10'000'000'000, 0.99), 1.0 / 26.46902820178302, 1e-6);  // YCSB's ZETAN
  auto head = [](uint64_t ranks, double zeta) { return Zeta(ranks, 0.99) / zeta; };
  const double zeta_ycsb = Zeta(10'000'000'000, 0.99), zeta_dex = Zeta(kLoaded, 0.99);
  const auto ycsb = SortedCounts(Plan(Named("ycsb-c"), kLoaded), kDraws);
  EXPECT_NEAR(TopShare(ycsb, 1, kDraws), head(1, zeta_ycsb), 0.002);
  EXPECT_NEAR(TopShare(ycsb, kLoaded / 100, kDraws), head(kLoaded / 100, zeta_ycsb), 0.025);
  const auto dex = SortedCounts(Plan(Named("dex-ro"), kLoaded), kDraws);
  EXPECT_NEAR(TopShare(dex, 1, kDraws), head(1, zeta_dex), 0.003);
  EXPECT_NEAR(TopShare(dex, kLoaded / 100, kDraws), head(kLoaded / 100, zeta_dex), 0.025);
  EXPECT_GT(TopShare(dex, 1, kDraws), 1.8 * TopShare(ycsb, 1, kDraws));  // the "twice"
}

TEST(BenchYcsbGenerators, HottestRecordIsTheHashOfRankZero) {
  constexpr uint64_t kLoaded = 1000;
  auto plan = Plan(Named("ycsb-c"), kLoaded);
  OpStream stream(plan, 0);
  std::map<uint64_t, int> count;
  for (int i = 0; i < 200'000; ++i) ++count[stream.Next().record];
  const auto hottest = std::max_element(count.begin(), count.end(),
                                        [](auto& a, auto& b) { return a.second < b.second; });
  // No inserts expected: the key range is exactly the loaded records (itemcount = n + 0 + 1).
  EXPECT_EQ(plan->zipfian_key_items(), kLoaded + 1);
  EXPECT_EQ(hottest->first, FnvHash64(0) % (kLoaded + 1));
}

// Workload E: YCSB's zipfian key range covers the expected inserts (operationcount x
// insertproportion x 2); draws beyond the newest acknowledged record are redrawn.
TEST(BenchYcsbGenerators, ZipfianKeyRangeCoversExpectedInserts) {
  auto plan = Plan(Named("ycsb-e"), 1000, 1, 10'000);
  EXPECT_EQ(plan->zipfian_key_items(), 1000u + 1000 + 1);  // 10000 x 0.05 x 2
  OpStream stream(plan, 0);
  uint64_t newest = 999, beyond_load = 0;
  for (int i = 0; i < 10'000; ++i) {
    const Operation op = stream.Next();
    if (op.kind == OpKind::kInsert) {
      EXPECT_EQ(op.record, newest + 1);
      newest = op.record;
    } else {
      ASSERT_LE(op.record, newest) << "requested a record not inserted yet";
      beyond_load += op.record >= 1000;
    }
    stream.Completed(op);
  }
  EXPECT_GT(beyond_load, 0u) << "inserted records are requested too";
}

// YCSB shares one acknowledged insert counter between its threads: latest favours the newest
// record of all threads, and a record is requested only once it and all before it exist.
TEST(BenchYcsbGenerators, LatestFollowsTheSharedInsertCounter) {
  auto plan = Plan(Named("ycsb-d"), 1000, 2);
  OpStream a(plan, 0), b(plan, 1);
  // Thread a inserts; thread b, which never inserted, then requests a's records.
  uint64_t a_inserted = 0;
  while (a_inserted < 200) {
    const Operation op = a.Next();
    a.Completed(op);
    a_inserted += op.kind == OpKind::kInsert;
  }
  std::map<uint64_t, int> count;
  for (int i = 0; i < 20'000; ++i) {
    const Operation op = b.Next();
    if (op.kind == OpKind::kInsert) continue;  // not completed: stays invisible
    ASSERT_LE(op.record, 1000u + 200 - 1);
    ++count[op.record];
  }
  const auto hottest = std::max_element(count.begin(), count.end(),
                                        [](auto& x, auto& y) { return x.second < y.second; });
  EXPECT_EQ(hottest->first, 1000u + 200 - 1) << "the newest record overall is the hottest";
  EXPECT_EQ(count.count(0), 0u) << "YCSB's latest never draws record 0";
}

TEST(BenchYcsbGenerators, AnInsertIsVisibleOnlyOnceItAndEveryEarlierOneCompleted) {
  InsertCounter c(10);
  EXPECT_EQ(c.Last(), 9u);
  const uint64_t r10 = c.Next(), r11 = c.Next(), r12 = c.Next();
  c.Acknowledge(r12);
  c.Acknowledge(r11);
  EXPECT_EQ(c.Last(), 9u);  // 10 still pending
  c.Acknowledge(r10);
  EXPECT_EQ(c.Last(), 12u);
  EXPECT_EQ(c.issued(10), 3u);
}

// YCSB's uniform and sequential draw over the loaded records (insertstart .. +insertcount),
// never over inserts; sequential is one counter for all threads.
TEST(BenchYcsbGenerators, UniformAndSequentialStayOnTheLoadedRecords) {
  WorkloadSpec spec = YcsbDefaults("u");
  spec.proportion = {0.5, 0, 0.5, 0, 0};
  auto plan = Plan(spec, 100);
  OpStream stream(plan, 0);
  for (int i = 0; i < 20'000; ++i) {
    const Operation op = stream.Next();
    stream.Completed(op);
    if (op.kind == OpKind::kRead) {
      ASSERT_LT(op.record, 100u);
    }
  }
  spec.request = Distribution::kSequential;
  spec.proportion = {1, 0, 0, 0, 0};
  spec.insert_start = 10;
  spec.insert_count = 20;
  auto seq = Plan(spec, 100, 2);
  OpStream t0(seq, 0), t1(seq, 1);
  std::vector<uint64_t> records;
  for (int i = 0; i < 30; ++i) records.push_back((i % 2 ? t1 : t0).Next().record);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(records[i], 10u + i % 20) << i;
}

// insertorder=ordered: YCSB's keys are strings, "user" + the zero-padded number; with the
// default padding of 1 a new record sorts among the loaded ones, not after them.
TEST(BenchYcsbGenerators, OrderedKeysSortAsYcsbsStrings) {
  auto key = [](uint64_t r, uint32_t pad) { return KeyOfRecord(r, InsertOrder::kOrdered, pad); };
  EXPECT_LT(key(10000, 1), key(100000, 1));
  EXPECT_LT(key(100000, 1), key(10001, 1));  // "user100000" < "user10001"
  EXPECT_LT(key(9, 1), key(99, 1));
  EXPECT_LT(key(10, 1), key(9, 1));          // "user10" < "user9"
  EXPECT_LT(key(9, 2), key(10, 2));          // "user09" < "user10"
  EXPECT_LT(key(99999, 6), key(100000, 6));  // padded: numeric order
  EXPECT_EQ(YcsbKeyName(42, InsertOrder::kOrdered, 5), "user00042");
  // Hashed: Utils.hash of the record (FNV-64), padded too.
  EXPECT_EQ(YcsbKeyName(12, InsertOrder::kHashed, 1), "user" + std::to_string(FnvHash64(12)));
  EXPECT_EQ(YcsbKeyName(0, InsertOrder::kHashed, 21), "user006284781860667377211");
  // Beyond 18 digits the u64 keys keep the string order (every name has the same length).
  EXPECT_LT(key(99999, 25), key(100000, 25));
  EXPECT_LT(key(100000, 25), key(100001, 25));
  std::vector<Key> keys;
  for (uint64_t r = 0; r < 200'000; ++r) keys.push_back(key(r, 3));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end()) << "distinct records, distinct keys";
  EXPECT_TRUE(u64::IsValidKey(key(kMaxRecords - 1, 18)));
  EXPECT_TRUE(u64::IsValidKey(key(0, 1)));
}

TEST(BenchYcsbGenerators, InsertStartAndCountRestrictTheRequests) {
  WorkloadSpec spec = Named("ycsb-c");
  spec.insert_start = 300;
  spec.insert_count = 100;
  for (Distribution d : {Distribution::kZipfian, Distribution::kUniform, Distribution::kHotspot}) {
    spec.request = d;
    auto plan = Plan(spec, 1000);
    OpStream stream(plan, 0);
    for (int i = 0; i < 5000; ++i) {
      const uint64_t r = stream.Next().record;
      ASSERT_GE(r, 300u) << DistributionName(d);
      ASSERT_LT(r, 400u + (d == Distribution::kZipfian ? 1 : 0)) << DistributionName(d);
    }
  }
}

// Threads inserting concurrently: the shared counter hands out each record once, and every
// record requested exists.
TEST(BenchYcsbGenerators, ConcurrentThreadsShareTheInsertCounter) {
  auto plan = Plan(Named("ycsb-d"), 500, 4);
  std::vector<std::thread> threads;
  std::atomic<bool> bad{false};
  for (uint32_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      OpStream s(plan, t);
      for (int i = 0; i < 20'000; ++i) {
        const Operation op = s.Next();
        if (op.kind != OpKind::kInsert && op.record > plan->inserts().Last()) bad = true;
        s.Completed(op);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(bad.load());
  const uint64_t issued = plan->inserts().issued(500);
  EXPECT_EQ(plan->inserts().Last(), 500 + issued - 1);
  EXPECT_EQ(plan->ExpectedKeys(issued).size(), 500 + issued);
}

}  // namespace
}  // namespace dmindex::bench
