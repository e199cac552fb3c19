// The shared remote B-link tree through the designs built on it (naive, sherman) and mixed
// knob settings: all operations against a reference map, bulk load, concurrent inserts into
// an empty tree (Sherman issue #26), and lookups that must never miss a stable key while
// writers tear reads (Sherman issue #27).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
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


struct Config {
  std::string name;
  std::string design;
  std::map<std::string, std::string> knobs;
};

std::vector<Config> Configs() {
  return {
      {"naive", "naive", {}},
      {"sherman", "sherman", {}},
      {"sherman_sorted_leaves", "sherman", {{"two_level", "off"}}},
      {"sherman_no_hocl_no_combine", "sherman", {{"hocl", "off"}, {"combine", "off"}}},
      {"naive_with_cache", "naive", {{"cache_mb", "1"}}},
  };
}

// tear: READs/WRITEs torn into 64-byte pieces; delay: some round trips held back, so that
// threads interleave inside each other's lock/read/write sequences even on two cores.
std::unique_ptr<fabric::InProcFabric> MakeFabric(bool tear = false, bool delay = false) {
  fabric::InProcOptions o;
  o.memory_nodes = 2;
  o.pool_bytes = 1ull << 30;
  o.node.chunk_bytes = 4 << 20;
  o.faults.tear = tear;
  o.faults.delay_probability = delay ? 0.05 : 0.0;
  o.faults.delay_max_us = 30;
  return std::move(fabric::InProcFabric::Create(o)).value();
}

class RemoteTreeTest : public ::testing::TestWithParam<Config> {
 protected:
  std::unique_ptr<Index> Open(fabric::Fabric& f, uint32_t node_bytes, uint32_t compute_nodes = 1) {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.name = "t";
    o.node_bytes = node_bytes;
    o.compute_nodes = compute_nodes;
    o.knobs = GetParam().knobs;
    auto index = designs::MakeIndex(GetParam().design, f, o);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return std::move(index).value();
  }
  static std::unique_ptr<Session> Sess(Index& index, uint32_t cn = 0) {
    auto s = index.OpenSession(cn);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return std::move(s).value();
  }
  // The whole tree through an iterator reading `chunk` entries per batch, checked to be
  // strictly ascending.
  static std::vector<KeyValue> ScanAll(Session& s, size_t chunk) {
    Status st;
    std::vector<KeyValue> all = testing::IterateU64(s, chunk, &st);
    EXPECT_TRUE(st.ok()) << st.ToString();
    for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].key, all[i].key);
    return all;
  }
};

TEST_P(RemoteTreeTest, EmptyTreeAnswersNotFound) {
  auto f = MakeFabric();
  auto index = Open(*f, 1024);
  auto s = Sess(*index);
  Value v;
  EXPECT_TRUE(s->Lookup(5, &v).IsNotFound());
  EXPECT_TRUE(s->Update(5, 1).IsNotFound());
  EXPECT_TRUE(s->Delete(5).IsNotFound());
  std::vector<KeyValue> out{{1, 1}};
  EXPECT_TRUE(::dmindex::testing::ScanU64(*s, 1, 10, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(s->Insert(0, 1).IsInvalidArgument());
  EXPECT_TRUE(s->Lookup(~Key{0}, &v).IsInvalidArgument());
  EXPECT_TRUE(index->OpenSession(1).status().IsInvalidArgument());
}

TEST_P(RemoteTreeTest, RandomOperationsMatchAReferenceMap) {
  auto f = MakeFabric();
  auto index = Open(*f, 256);  // 8 entries per leaf: many splits, a tall tree
  auto s = Sess(*index);
  std::map<Key, Value> ref;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 20000; ++i) {
    Key k = 1 + rng() % 3000;
    Value v = rng();
    switch (rng() % 5) {
      case 0: case 1:
        ASSERT_TRUE(s->Insert(k, v).ok());
        ref[k] = v;
        break;
      case 2: {
        Status st = s->Update(k, v);
        ASSERT_EQ(st.ok(), ref.count(k) == 1) << st.ToString();
        if (st.ok()) ref[k] = v;
        break;
      }
      case 3: {
        Status st = s->Delete(k);
        ASSERT_EQ(st.ok(), ref.erase(k) == 1) << st.ToString();
        break;
      }
      default: {
        Value got = 0;
        Status st = s->Lookup(k, &got);
        ASSERT_EQ(st.ok(), ref.count(k) == 1);
        if (st.ok()) { ASSERT_EQ(got, ref[k]); }
      }
    }
    if (i % 5000 == 4999) {
      auto all = ScanAll(*s, 37);
      ASSERT_EQ(all.size(), ref.size());
      size_t j = 0;
      for (const auto& [k2, v2] : ref) {
        ASSERT_EQ(all[j].key, k2);
        ASSERT_EQ(all[j++].value, v2);
      }
    }
  }
  // Scans starting between keys and running off the end.
  std::vector<KeyValue> out;
  ASSERT_TRUE(::dmindex::testing::ScanU64(*s, 1500, 10, &out).ok());
  auto it = ref.lower_bound(1500);
  for (const auto& kv : out) ASSERT_EQ(kv.key, (it++)->first);
}

TEST_P(RemoteTreeTest, BulkLoadBuildsASearchableTree) {
  auto f = MakeFabric();
  auto index = Open(*f, 1024);
  std::vector<KeyValue> data;
  for (Key k = 1; k <= 50000; ++k) data.push_back({k * 3, k});
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*index, data).ok());
  auto s = Sess(*index);
  for (Key k = 1; k <= 50000; k += 7) {
    Value v = 0;
    ASSERT_TRUE(s->Lookup(k * 3, &v).ok()) << k;
    ASSERT_EQ(v, k);
    ASSERT_TRUE(s->Lookup(k * 3 + 1, &v).IsNotFound());
  }
  std::vector<KeyValue> out;
  ASSERT_TRUE(::dmindex::testing::ScanU64(*s, 3 * 1000 + 1, 100, &out).ok());
  ASSERT_EQ(out.size(), 100u);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].key, 3 * (1001 + i));
  EXPECT_EQ(ScanAll(*s, 1000).size(), 50000u);
  // Writes on a bulk-loaded tree, splitting its 80% full leaves.
  for (Key k = 1; k <= 5000; ++k) ASSERT_TRUE(s->Insert(k * 3 + 1, k).ok());
  EXPECT_EQ(ScanAll(*s, 1000).size(), 55000u);
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*index, data).IsInvalidArgument()) << "not empty";
}

TEST_P(RemoteTreeTest, BulkLoadRejectsBadInput) {
  auto f = MakeFabric();
  auto index = Open(*f, 1024);
  std::vector<KeyValue> unsorted = {{5, 1}, {3, 1}};
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*index, unsorted).IsInvalidArgument());
  std::vector<KeyValue> dup = {{5, 1}, {5, 2}};
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*index, dup).IsInvalidArgument());
  std::vector<KeyValue> reserved = {{0, 1}};
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*index, reserved).IsInvalidArgument());
  std::vector<KeyValue> one = {{42, 7}};
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*index, one).ok());
  Value v;
  ASSERT_TRUE(Sess(*index)->Lookup(42, &v).ok());
  EXPECT_EQ(v, 7u);
}

// Compute node 0 caches internal nodes, then compute node 1 splits most of the tree under
// it: node 0's lookups, scans (batched over stale cached leaf runs) and writes must follow
// sibling links and refresh, never miss.
TEST_P(RemoteTreeTest, StaleCacheOfAnotherComputeNodeIsHarmless) {
  auto f = MakeFabric();
  auto index = Open(*f, 256, 2);
  std::vector<KeyValue> data;
  for (Key k = 1; k <= 3000; ++k) data.push_back({10 * k, k});
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*index, data).ok());
  auto a = Sess(*index, 0), b = Sess(*index, 1);
  ASSERT_EQ(ScanAll(*a, 50).size(), 3000u);  // warms node 0's cache
  Value v;
  for (Key k = 1; k <= 3000; ++k) ASSERT_TRUE(a->Lookup(10 * k, &v).ok());
  for (Key k = 1; k <= 3000; ++k)
    for (Key d = 1; d <= 3; ++d) ASSERT_TRUE(b->Insert(10 * k + d, d).ok());
  for (Key k = 1; k <= 3000; ++k) {
    ASSERT_TRUE(a->Lookup(10 * k + 3, &v).ok()) << k;
    ASSERT_EQ(v, 3u);
  }
  std::vector<KeyValue> out;
  for (Key k = 1; k <= 3000; k += 97) {
    ASSERT_TRUE(::dmindex::testing::ScanU64(*a, 10 * k, 100, &out).ok());
    ASSERT_EQ(out.size(), 100u);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].key, 10 * (k + i / 4) + i % 4);
  }
  for (Key k = 1; k <= 3000; k += 7) ASSERT_TRUE(a->Update(10 * k + 1, 99).ok());
  ASSERT_TRUE(b->Lookup(10 * 2955 + 1, &v).ok());
  EXPECT_EQ(v, 99u);
  EXPECT_EQ(ScanAll(*b, 77).size(), 12000u);
}

// Many threads insert into an EMPTY tree with tiny nodes: root creation, leaf splits and
// root growth all race (Sherman issue #26).
TEST_P(RemoteTreeTest, ConcurrentInsertsIntoAnEmptyTree) {
  auto f = MakeFabric(/*tear=*/false, /*delay=*/true);
  auto index = Open(*f, 256, 2);
  constexpr int kThreads = 8, kPerThread = 1500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto s = Sess(*index, t % 2);
      for (int i = 0; i < kPerThread; ++i) {
        Key k = 1 + static_cast<Key>(i) * kThreads + t;
        ASSERT_TRUE(s->Insert(k, k * 10).ok());
      }
    });
  for (auto& th : threads) th.join();
  auto s = Sess(*index, 1);
  for (Key k = 1; k <= kThreads * kPerThread; ++k) {
    Value v = 0;
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, k * 10);
  }
  auto all = ScanAll(*s, 500);
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
}

// Writers churn the even keys (each thread its own) while readers look up bulk-loaded odd
// keys that never change, with every READ and WRITE torn into pieces: a lookup of a stable
// key must never say NotFound or return a wrong value (Sherman issue #27), scans must see
// every stable key in their range, and each writer must read its own writes.
TEST_P(RemoteTreeTest, TornReadsNeverLoseAStableKey) {
  auto f = MakeFabric(/*tear=*/true, /*delay=*/true);
  auto index = Open(*f, 1024, 2);
  constexpr Key kStable = 4000;
  std::vector<KeyValue> data;
  for (Key k = 1; k <= kStable; ++k) data.push_back({2 * k + 1, k});
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*index, data).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> writers_done{0};
  constexpr int kWriters = 3;
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t)
    threads.emplace_back([&, t] {
      auto s = Sess(*index, t % 2);
      std::mt19937_64 rng(t);
      std::map<Key, Value> mine;
      for (int i = 0; i < 1500; ++i) {
        Key k = 2 * (1 + (rng() % 2000) * kWriters + t);  // even, owned by this thread
        Value v = rng();
        if (rng() % 4 == 0) {
          ASSERT_EQ(s->Delete(k).ok(), mine.erase(k) == 1);
        } else {
          ASSERT_TRUE(s->Insert(k, v).ok());
          mine[k] = v;
        }
        Value got = 0;
        Status st = s->Lookup(k, &got);
        ASSERT_EQ(st.ok(), mine.count(k) == 1);
        if (st.ok()) { ASSERT_EQ(got, mine[k]); }
      }
      writers_done++;
    });
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      auto s = Sess(*index, t);
      std::mt19937_64 rng(100 + t);
      std::vector<KeyValue> out;
      // At least some reads of their own: on a loaded machine the writers may be done before
      // a reader is first scheduled.
      for (int n = 0; writers_done.load() < kWriters || n < 300; ++n) {
        Key k = 1 + rng() % kStable;
        Value v = 0;
        ASSERT_TRUE(s->Lookup(2 * k + 1, &v).ok()) << "stable key " << 2 * k + 1 << " lost";
        ASSERT_EQ(v, k);
        ASSERT_TRUE(::dmindex::testing::ScanU64(*s, 2 * k + 1, 60, &out).ok());
        Key expect = k;
        for (const auto& kv : out) {
          if (kv.key % 2 == 0) continue;
          ASSERT_EQ(kv.key, 2 * expect + 1) << "scan skipped a stable key";
          ASSERT_EQ(kv.value, expect++);
        }
      }
    });
  for (auto& th : threads) th.join();
  (void)stop;
  EXPECT_GT(index->Stats().retries, 0u) << "tearing should have forced some re-reads";
}

INSTANTIATE_TEST_SUITE_P(Designs, RemoteTreeTest, ::testing::ValuesIn(Configs()),
                         [](const auto& info) { return info.param.name; });

TEST(RemoteTreeDesigns, UnknownKnobIsInvalidArgument) {
  auto f = MakeFabric();
  for (const char* design : {"naive", "sherman"}) {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.knobs = {{"turbo", "on"}};
    EXPECT_TRUE(designs::MakeIndex(design, *f, o).status().IsInvalidArgument()) << design;
    o.knobs = {{"hocl", "sometimes"}};
    EXPECT_TRUE(designs::MakeIndex(design, *f, o).status().IsInvalidArgument()) << design;
  }
}

}  // namespace
}  // namespace dmindex
