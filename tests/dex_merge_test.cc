// DEX merges after deletes (dex_merge.cc): results match a model with merges happening,
// remote memory and leaf count stay bounded under insert/delete churn (and grow without
// merges), scans stay correct while leaves merge under them, concurrent histories with torn
// and delayed verbs stay linearizable.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <string_view>
#include <string>
#include <thread>

#include "check/workload.h"
#include "dex_u64_tree.h"
#include "designs/registry.h"
#include "dex_test_env.h"
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


using DexTree = testing::U64DexTree;
using WorkerSet = testing::U64Workers;
using designs::dex::WriteOp;

// A failure's description, built with << (appends, not operator+: GCC 12's false -Wrestrict).
class Text {
 public:
  Text& operator<<(std::string_view piece) {
    text_.append(piece);
    return *this;
  }
  Text& operator<<(uint64_t number) { return *this << std::string_view(std::to_string(number)); }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

// Small chunks: pool bytes show node counts finely.
std::unique_ptr<fabric::InProcFabric> MakeFabric(fabric::FaultOptions faults = {}) {
  return testing::DexTestFabric(faults, 64 << 10, 64ull << 20);
}

IndexOptions Options(uint32_t compute_nodes, std::map<std::string, std::string> knobs = {}) {
  return testing::DexTestOptions("dex-merge-test", compute_nodes, std::move(knobs));
}

// Leaves from the first to the last, by the scan's own leaf-by-leaf walk.
size_t CountLeaves(DexTree& tree, WorkerSet& ws) {
  size_t leaves = 0;
  std::vector<KeyValue> sink;
  for (Key cursor = kMinKey;;) {
    Key next = 0;
    sink.clear();
    EXPECT_TRUE(testing::U64ScanLeaf(tree, ws, {}, cursor, 0, &sink, &next).ok());
    ++leaves;
    if (next == tree::U64BytesKV::kPosInf) return leaves;
    cursor = next;
  }
}

// Random operations, deletes as frequent as inserts over phases that shrink and regrow the
// key set, checked against std::map after every operation.
void RandomOpsMatchMap(uint32_t compute_nodes, std::map<std::string, std::string> knobs) {
  auto fabric = MakeFabric();
  auto index = designs::MakeIndex("dex", *fabric, Options(compute_nodes, knobs));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  std::vector<std::unique_ptr<Session>> sessions;
  for (uint32_t c = 0; c < compute_nodes; ++c)
    sessions.push_back(std::move((*index)->OpenSession(c)).value());
  std::map<Key, Value> model;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 30000; ++i) {
    Session& s = *sessions[rng() % sessions.size()];
    const Key k = 1 + rng() % 3000;
    const Value v = rng();
    const bool growing = (i / 6000) % 2 == 0;  // phases: mostly inserts, then mostly deletes
    const int op = static_cast<int>(rng() % 100);
    if (op < (growing ? 60 : 5)) {
      ASSERT_TRUE(s.Insert(k, v).ok()) << "op " << i;
      model[k] = v;
    } else if (op < 70) {
      Status st = s.Delete(k);
      ASSERT_EQ(st.ok(), model.erase(k) == 1) << "op " << i << " delete " << k << ": " << st.ToString();
    } else if (op < 85) {
      Value got = 0;
      Status st = s.Lookup(k, &got);
      ASSERT_EQ(st.ok(), model.count(k) == 1) << "op " << i << " lookup " << k << ": " << st.ToString();
      if (st.ok()) {
        ASSERT_EQ(got, model[k]) << "op " << i;
      }
    } else {
      std::vector<KeyValue> got;
      ASSERT_TRUE(::dmindex::testing::ScanU64(s, k, 30, &got).ok());
      auto it = model.lower_bound(k);
      for (size_t j = 0; j < got.size(); ++j, ++it) {
        ASSERT_NE(it, model.end()) << "op " << i;
        ASSERT_EQ(got[j].key, it->first) << "op " << i << " scan from " << k << " item " << j;
        ASSERT_EQ(got[j].value, it->second);
      }
      if (got.size() < 30) {
        ASSERT_EQ(it, model.end()) << "op " << i << " scan from " << k << " stopped early";
      }
    }
  }
  for (const auto& [k, v] : model) {
    Value got = 0;
    ASSERT_TRUE(sessions[0]->Lookup(k, &got).ok()) << k;
    ASSERT_EQ(got, v);
  }
  const uint64_t merges = (*index)->GetIntProperty("dmindex.dex.merges").value_or(0);
  EXPECT_GT(merges, 30u) << "deletes must have merged nodes";
  std::cout << "[ merge    ] " << compute_nodes << " compute nodes: " << merges << " merges\n";
}

TEST(DexMerge, RandomOpsMatchMapOneComputeNode) { RandomOpsMatchMap(1, {}); }
TEST(DexMerge, RandomOpsMatchMapOneComputeNodeSmallCache) {
  RandomOpsMatchMap(1, {{"cache_mb", "0"}, {"admission", "0.1"}});
}
TEST(DexMerge, RandomOpsMatchMapThreePartitions) { RandomOpsMatchMap(3, {{"key_space", "3000"}}); }
TEST(DexMerge, RandomOpsMatchMapThreePartitionsNoOffload) {
  RandomOpsMatchMap(3, {{"key_space", "3000"}, {"offload", "off"}, {"cache_mb", "0"}});
}

struct ChurnResult {
  size_t leaves_early = 0, leaves_late = 0;
  uint64_t pool_early = 0, pool_late = 0, merges = 0;
  fabric::VerbCounts deletes;  // verbs of the deletes of the rounds after the third
};

// A sliding window of 1000 live keys: every round inserts the next 1000 keys and deletes
// the previous round's.
ChurnResult Churn(std::map<std::string, std::string> knobs) {
  auto fabric = MakeFabric();
  auto tree = DexTree::Open(*fabric, Options(1, std::move(knobs)));
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  WorkerSet ws(**tree, 0);
  ChurnResult r;
  constexpr Key kWindow = 1000;
  for (Key round = 0; round < 30; ++round) {
    for (Key k = round * kWindow + 1; k <= (round + 1) * kWindow; ++k)
      EXPECT_TRUE(testing::U64Write(**tree, ws, WriteOp::kUpsert, k, k).ok());
    const fabric::VerbCounts before = fabric->TotalCounts();
    for (Key k = (round - 1) * kWindow + 1; round > 0 && k <= round * kWindow; ++k)
      EXPECT_TRUE(testing::U64Write(**tree, ws, WriteOp::kDelete, k, 0).ok()) << k;
    if (round > 3) r.deletes += fabric->TotalCounts() - before;
    if (round == 3) {
      r.leaves_early = CountLeaves(**tree, ws);
      r.pool_early = (*tree)->Stats().pool_bytes;
    }
  }
  r.leaves_late = CountLeaves(**tree, ws);
  r.pool_late = (*tree)->Stats().pool_bytes;
  r.merges = (*tree)->compute_node(0).retired.merges.load();
  std::vector<KeyValue> all;
  Key next = 0;
  for (Key cursor = kMinKey; cursor != tree::U64BytesKV::kPosInf; cursor = next)
    EXPECT_TRUE(testing::U64ScanLeaf(**tree, ws, {}, cursor, 1 << 20, &all, &next).ok());
  EXPECT_EQ(all.size(), kWindow);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].key, 29 * kWindow + 1 + i);
  return r;
}

void Print(const std::string& what, const ChurnResult& r) {
  const double n = 26 * 1000.0;  // deletes measured
  std::cout << "[ merge    ] churn " << what << ": leaves " << r.leaves_early << " -> "
            << r.leaves_late << ", pool " << r.pool_early << " -> " << r.pool_late << " bytes, "
            << r.merges << " merges; per delete READ " << r.deletes.reads / n << " WRITE "
            << r.deletes.writes / n << " atomic " << r.deletes.atomics() / n << " RPC "
            << r.deletes.rpcs / n << " RTT " << r.deletes.round_trips / n << " bytes "
            << r.deletes.bytes() / n << "\n";
}

TEST(DexMerge, ChurnStaysBoundedWithMergesAndGrowsWithout) {
  const ChurnResult on = Churn({});
  const ChurnResult off = Churn({{"merge", "off"}});
  Print("merge=on", on);
  Print("merge=off", off);
  // With merges: the leaf count follows the live keys; the pool does not grow.
  EXPECT_LE(on.leaves_late, on.leaves_early + 10);
  EXPECT_EQ(on.pool_late, on.pool_early);
  EXPECT_GT(on.merges, 1000u);
  // Without: every round leaves its emptied leaves behind.
  EXPECT_GT(off.leaves_late, 5 * off.leaves_early);
  EXPECT_GT(off.pool_late, 4 * off.pool_early);
  EXPECT_EQ(off.merges, 0u);
  // The same with a 64-node cache (eviction, lazy admission, offloaded deletes).
  const ChurnResult small_on = Churn({{"cache_mb", "0"}});
  const ChurnResult small_off = Churn({{"cache_mb", "0"}, {"merge", "off"}});
  Print("merge=on, 64-node cache", small_on);
  Print("merge=off, 64-node cache", small_off);
  EXPECT_LE(small_on.leaves_late, small_on.leaves_early + 10);
  EXPECT_LE(small_on.pool_late, small_on.pool_early + (128 << 10));
  EXPECT_GT(small_off.leaves_late, 5 * small_off.leaves_early);
}

// Keys divisible by 8 stay; the others are inserted and deleted by two threads (so leaves
// split and merge all the time) while a third scans: every scan must return exactly the
// permanent keys of its range among the churning ones, in order. The scanner makes a fixed
// number of scans and the churners go on until it is done (at least six rounds each), so
// every scan meets churn however the threads are scheduled. The background write-back runs
// every 2 ms (default 1 s: at most one flush per run), so flushes race the merges' own
// write-backs all along: with the two latched shared, a page written by both at once tore
// for good (14 runs in 40 failed; CacheWriteOrder.APageHasOneWriteBackInFlight scripts it).
TEST(DexMerge, ScansStayCorrectWhileLeavesMerge) {
  fabric::FaultOptions faults;
  faults.tear = true;
  auto fabric = MakeFabric(faults);
  IndexOptions o = Options(2, {{"key_space", "4000"}, {"writeback_ms", "2"}});
  o.cache_bytes = 64 * o.node_bytes;
  auto index = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  constexpr Key kKeys = 4000;
  constexpr int kScans = 300;
  {
    auto s = std::move((*index)->OpenSession(0)).value();
    for (Key k = 8; k <= kKeys; k += 8) ASSERT_TRUE(s->Insert(k, k).ok());
  }
  std::atomic<bool> scanned{false};
  std::atomic<uint64_t> failures{0};
  std::atomic<int> rounds{0};
  std::mutex first_mu;
  std::string first;  // the first failure, named
  auto fail = [&](const Text& what) {
    if (failures.fetch_add(1) > 0) return;
    std::lock_guard<std::mutex> hold(first_mu);
    first = what.str();
  };
  auto churn = [&](uint32_t cn) {
    auto s = std::move((*index)->OpenSession(cn)).value();
    int round = 0;
    for (; round < 6 || !scanned.load(); ++round)
      for (Key k = 1; k <= kKeys; ++k) {
        if (k % 8 == 0) continue;
        Status st = round % 2 == 0 ? s->Insert(k, k) : s->Delete(k);
        if (!st.ok() && !st.IsNotFound())
          fail(Text() << "compute node " << cn << (round % 2 == 0 ? " insert " : " delete ") << k
                      << ": " << st.ToString());
      }
    rounds.fetch_add(round);
  };
  std::thread a(churn, 0), b(churn, 1);
  std::thread scanner([&] {
    auto s = std::move((*index)->OpenSession(1)).value();
    std::mt19937_64 rng(3);
    for (int scan = 0; scan < kScans; ++scan) {
      const Key start = 1 + rng() % kKeys;
      std::vector<KeyValue> got;
      if (Status st = ::dmindex::testing::ScanU64(*s, start, 40, &got); !st.ok()) {
        fail(Text() << "scan from " << start << ": " << st.ToString());
        continue;
      }
      Key expect = (start + 7) / 8 * 8;  // the first permanent key >= start
      auto listing = [&] {
        Text t;
        t << "scan from " << start << " returned";
        for (const KeyValue& kv : got) t << " " << kv.key;
        return t;
      };
      for (size_t i = 0; i + 1 < got.size(); ++i)
        if (got[i].key >= got[i + 1].key) fail(listing() << ": not ascending at " << i);
      for (const KeyValue& kv : got) {
        if (kv.key % 8 != 0) continue;
        if (kv.key != expect) fail(listing() << ": expected permanent key " << expect);
        expect = kv.key + 8;
      }
    }
    scanned.store(true);
  });
  scanner.join();
  a.join();
  b.join();
  const uint64_t merges = (*index)->GetIntProperty("dmindex.dex.merges").value_or(0);
  std::cout << "[ merge    ] " << kScans << " scans beside " << rounds.load() << " churn rounds, "
            << merges << " merges\n";
  EXPECT_EQ(failures.load(), 0u) << "first: " << first;
  EXPECT_GT(merges, 20u);
}

// The harness's linearizability check with a delete-heavy mix (so merges run concurrently
// with everything else), a 64-node cache, torn and delayed verbs.
void ConcurrentLinearizable(uint32_t compute_nodes, std::map<std::string, std::string> knobs) {
  fabric::FaultOptions faults;
  faults.tear = true;
  faults.delay_probability = 0.01;
  auto fabric = MakeFabric(faults);
  IndexOptions o = Options(compute_nodes, knobs);
  o.cache_bytes = 64 * o.node_bytes;
  auto index = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  check::WorkloadOptions w;
  w.compute_nodes = compute_nodes;
  w.threads = 6;
  w.keys = 2048;  // enough leaves that most have an owned parent
  w.key_stride = 1;  // every round on the same keys: leaves drain
  w.ops_per_thread = 1200;
  w.insert_pct = 10;
  w.delete_pct = 60;
  w.update_pct = 5;
  check::ConcurrentWorkload workload(**index, w);
  ASSERT_TRUE(workload.Preload().ok());
  auto report = check::RunCheckedRounds(workload, 3);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(workload.errors(), 0u) << "first error: " << workload.first_error();
  EXPECT_TRUE(report->ok()) << report->ToString();
  const uint64_t merges = (*index)->GetIntProperty("dmindex.dex.merges").value_or(0);
  EXPECT_GT(merges, 0u);
  std::cout << "[ merge    ] " << report->ToString(0) << " merges " << merges << "\n";
}

TEST(DexMerge, ConcurrentOpsOneComputeNodeAreLinearizable) {
  ConcurrentLinearizable(1, {{"admission", "0.5"}});
}
TEST(DexMerge, ConcurrentOpsOverThreePartitionsAreLinearizable) {
  ConcurrentLinearizable(3, {{"key_space", "2048"}});
}

// Three partitions over a small tree: leaves hang below shared parents, so merges take the
// parent's remote lock (§7). Emptying the middle partition merges its leaves.
TEST(DexMerge, LeavesMergeUnderSharedParents) {
  auto fabric = MakeFabric();
  auto tree = DexTree::Open(*fabric, Options(3, {{"boundaries", "1000,2000"}}));
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  WorkerSet ws(**tree, 0);
  for (Key k = 1; k < 3000; k += 3) ASSERT_TRUE(testing::U64Write(**tree, ws, WriteOp::kUpsert, k, k).ok());
  const size_t before = CountLeaves(**tree, ws);
  for (Key k = 1000; k < 2000; ++k)
    if (k % 3 == 1) { ASSERT_TRUE(testing::U64Write(**tree, ws, WriteOp::kDelete, k, 0).ok()) << k; }
  EXPECT_GT((*tree)->compute_node(1).retired.shared_merges.load(), 0u);
  EXPECT_LT(CountLeaves(**tree, ws), before - 10);
  for (Key k = 1; k < 3000; ++k) {
    Value v = 0;
    const bool present = k % 3 == 1 && (k < 1000 || k >= 2000);
    ASSERT_EQ(testing::U64Lookup(**tree, ws, k, &v).ok(), present) << k;
    if (present) {
      ASSERT_EQ(v, k);
    }
  }
  for (Key k = 1000; k < 2000; ++k) ASSERT_TRUE(testing::U64Write(**tree, ws, WriteOp::kUpsert, k, k + 1).ok());
  for (Key k = 1000; k < 2000; ++k) {
    Value v = 0;
    ASSERT_TRUE(testing::U64Lookup(**tree, ws, k, &v).ok()) << k;
    ASSERT_EQ(v, k + 1);
  }
}

// One compute node owns the root: deleting almost everything merges level after level until
// the root has one child, and the tree gets lower. It grows again afterwards.
TEST(DexMerge, RootShrinksWhenOneChildIsLeft) {
  auto fabric = MakeFabric();
  auto tree = DexTree::Open(*fabric, Options(1));
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  WorkerSet ws(**tree, 0);
  constexpr Key kKeys = 20000;  // three levels with 512-byte nodes
  for (Key k = 1; k <= kKeys; ++k) ASSERT_TRUE(testing::U64Write(**tree, ws, WriteOp::kUpsert, k, k).ok());
  for (Key k = 1; k <= kKeys; ++k)
    if (k % 1000 != 0) { ASSERT_TRUE(testing::U64Write(**tree, ws, WriteOp::kDelete, k, 0).ok()) << k; }
  EXPECT_GT((*tree)->compute_node(0).retired.root_shrinks.load(), 0u);
  EXPECT_LE(CountLeaves(**tree, ws), 6u);  // 20 keys, leaves of >= 4 (1/4 of 18) each
  std::vector<KeyValue> all;
  Key next = 0;
  for (Key cursor = kMinKey; cursor != tree::U64BytesKV::kPosInf; cursor = next)
    ASSERT_TRUE(testing::U64ScanLeaf(**tree, ws, {}, cursor, 1 << 20, &all, &next).ok());
  ASSERT_EQ(all.size(), kKeys / 1000);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].key, 1000 * (i + 1));
  for (Key k = 1; k <= kKeys; ++k) ASSERT_TRUE(testing::U64Write(**tree, ws, WriteOp::kUpsert, k, 2 * k).ok());
  for (Key k = 1; k <= kKeys; k += 7) {
    Value v = 0;
    ASSERT_TRUE(testing::U64Lookup(**tree, ws, k, &v).ok()) << k;
    ASSERT_EQ(v, 2 * k);
  }
}

TEST(DexMerge, KnobIsValidated) {
  auto fabric = MakeFabric();
  auto bad = DexTree::Open(*fabric, Options(1, {{"merge", "maybe"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument()) << bad.status().ToString();
}

}  // namespace
}  // namespace dmindex
