// The DEX design beyond the shared harness: partitioned operation across compute nodes,
// cache behaviour (hits after warm-up, verbs per operation), offloading, repartitioning.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <random>

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


std::unique_ptr<fabric::InProcFabric> MakeFabric(fabric::FaultOptions faults = {}) {
  return testing::DexTestFabric(faults);
}

IndexOptions Options(uint32_t compute_nodes, std::map<std::string, std::string> knobs = {}) {
  return testing::DexTestOptions("dex-test", compute_nodes, std::move(knobs));
}

void RandomOpsMatchMap(uint32_t compute_nodes, std::map<std::string, std::string> knobs) {
  auto fabric = MakeFabric();
  auto index = designs::MakeIndex("dex", *fabric, Options(compute_nodes, knobs));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  std::vector<std::unique_ptr<Session>> sessions;
  for (uint32_t c = 0; c < compute_nodes; ++c) sessions.push_back(std::move((*index)->OpenSession(c)).value());
  std::map<Key, Value> model;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    Session& s = *sessions[rng() % sessions.size()];
    const Key k = 1 + rng() % 6000;
    const Value v = rng();
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      Status st = s.Insert(k, v);
      ASSERT_TRUE(st.ok()) << "op " << i << " insert " << k << ": " << st.ToString();
      model[k] = v;
    } else if (op < 7) {
      Value got = 0;
      Status st = s.Lookup(k, &got);
      ASSERT_EQ(st.ok(), model.count(k) == 1) << "op " << i << " lookup " << k << ": " << st.ToString();
      if (st.ok()) { ASSERT_EQ(got, model[k]) << "op " << i; }
    } else if (op < 8) {
      Status st = s.Update(k, v);
      ASSERT_EQ(st.ok(), model.count(k) == 1) << "op " << i << " update " << k << ": " << st.ToString();
      if (st.ok()) model[k] = v;
    } else if (op < 9) {
      Status st = s.Delete(k);
      ASSERT_EQ(st.ok(), model.erase(k) == 1) << "op " << i << " delete " << k << ": " << st.ToString();
    } else {
      std::vector<KeyValue> got;
      ASSERT_TRUE(::dmindex::testing::ScanU64(s, k, 20, &got).ok());
      auto it = model.lower_bound(k);
      for (size_t j = 0; j < got.size(); ++j, ++it) {
        ASSERT_NE(it, model.end()) << "op " << i;
        if (got[j].key != it->first) {
          Value lv = 0;
          Status ls = s.Lookup(it->first, &lv);
          std::vector<KeyValue> again;
          Status ss = ::dmindex::testing::ScanU64(s, it->first, 3, &again);
          ADD_FAILURE() << "lookup of missed key " << it->first << ": " << ls.ToString() << "; scan from it: " << ss.ToString() << " first " << (again.empty() ? 0 : again[0].key);
        }
        ASSERT_EQ(got[j].key, it->first) << "op " << i << " scan from " << k << " item " << j;
        ASSERT_EQ(got[j].value, it->second);
      }
      if (got.size() < 20) { ASSERT_TRUE(it == model.end()) << "op " << i << " scan from " << k << " ended early after " << got.size() << " at model key " << it->first; }
    }
  }
  std::vector<KeyValue> all;
  ASSERT_TRUE(::dmindex::testing::ScanU64(*sessions[0], kMinKey, 1 << 20, &all).ok());
  ASSERT_EQ(all.size(), model.size());
}

TEST(Dex, RandomOpsMatchMapOneComputeNode) { RandomOpsMatchMap(1, {}); }
TEST(Dex, RandomOpsMatchMapThreePartitions) { RandomOpsMatchMap(3, {{"key_space", "6000"}}); }
TEST(Dex, RandomOpsMatchMapThreePartitionsNoOffload) { RandomOpsMatchMap(3, {{"key_space", "6000"}, {"offload", "off"}}); }
TEST(Dex, RandomOpsMatchMapWithoutPartitioning) { RandomOpsMatchMap(2, {{"partition", "off"}}); }

// The harness's concurrent linearizability check, but with the hot keys spread over three
// partitions (so shared nodes at the boundaries, routing from any session and both lock
// regimes are exercised), a cache of 64 nodes (eviction, write-back, offloading), torn and
// delayed verbs.
// `counted`: a property that must have counted something (the mechanism was exercised).
void ConcurrentLinearizable(std::map<std::string, std::string> knobs, bool preload,
                            const char* counted = nullptr, uint32_t keys = 256) {
  fabric::FaultOptions faults;
  faults.tear = true;
  faults.delay_probability = 0.01;
  auto fabric = MakeFabric(faults);
  IndexOptions o = Options(3, knobs);
  o.cache_bytes = 64 * o.node_bytes;
  auto index = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  check::WorkloadOptions w;
  w.compute_nodes = 3;
  w.keys = keys;
  w.ops_per_thread = 1000;
  check::ConcurrentWorkload workload(**index, w);
  if (preload) { ASSERT_TRUE(workload.Preload().ok()); }
  auto report = check::RunCheckedRounds(workload, 3);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(workload.errors(), 0u) << "first error: " << workload.first_error();
  EXPECT_TRUE(report->ok()) << report->ToString();
  const IndexStats st = (*index)->Stats();
  EXPECT_GT(st.cache_misses, 0u);
  std::cout << "[ dex      ] " << report->ToString(0) << " cache hits " << st.cache_hits
            << " misses " << st.cache_misses << "\n";
  if (counted != nullptr) {
    const auto n = (*index)->GetIntProperty(counted);
    ASSERT_TRUE(n.has_value()) << counted;
    EXPECT_GT(*n, 0u) << counted;
    std::cout << "[ dex      ] " << counted << " " << *n << "\n";
  }
}

TEST(Dex, ConcurrentOpsOverThreePartitionsAreLinearizable) {
  ConcurrentLinearizable({{"key_space", "4096"}}, false);
}
TEST(Dex, ConcurrentOpsAfterBulkLoadAreLinearizable) {
  ConcurrentLinearizable({{"key_space", "4096"}, {"admission", "1"}}, true);
}
TEST(Dex, ConcurrentOpsWithoutPartitioningAreLinearizable) {
  ConcurrentLinearizable({{"partition", "off"}}, true);
}
// Offloading forced: inserts split leaves on the memory servers while other threads of the
// same compute node traverse, offload and split around them.
TEST(Dex, ConcurrentOffloadedSplitsAreLinearizable) {
  ConcurrentLinearizable({{"key_space", "4096"}, {"offload_level", "2"}, {"cost_factor", "1e12"},
                          {"explore", "0"}, {"durability", "none"}},
                         true, "dmindex.dex.offload-splits", /*keys=*/4096);
}

std::vector<KeyValue> Records(Key n) {
  std::vector<KeyValue> v;
  for (Key k = 1; k <= n; ++k) v.push_back({k * 3, k});
  return v;
}

// A cache far smaller than the tree and one compute node (every node owned): misses at low
// levels are offloaded to the memory servers; results must match, and the RPCs must show up.
// A scan READs the leaves its cached level-1 node lists in one batch (dex_scan.cc): with the
// internal nodes cached and no leaf cached (the index reopened: an empty cache; batch READs
// admit nothing), a 100-entry scan over ~7 leaves takes one round trip of READs per level-1
// node it spans - at most two here (512-byte nodes: 14 children of ~14 entries per level-1
// node), where leaf by leaf it took one per leaf.
TEST(Dex, AScanReadsTheLeavesOfItsLevel1NodeInOneBatch) {
  auto fabric = MakeFabric();
  std::map<Key, Value> model;
  {
    auto index = designs::MakeIndex("dex", *fabric, Options(1));
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    auto s = std::move((*index)->OpenSession()).value();
    for (Key k = 1; k <= 4000; ++k) {
      ASSERT_TRUE(s->Insert(k * 3, k).ok());
      model[k * 3] = k;
    }
  }  // closed: its dirty pages written back
  IndexOptions again = Options(1);
  again.create_if_missing = false;
  auto index = designs::MakeIndex("dex", *fabric, again);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto s = std::move((*index)->OpenSession()).value();
  const auto scan = [&](Key from) {
    std::vector<KeyValue> got;
    ASSERT_TRUE(::dmindex::testing::ScanU64(*s, from, 100, &got).ok());
    ASSERT_EQ(got.size(), 100u);
    auto it = model.lower_bound(from);
    for (const KeyValue& kv : got) {
      ASSERT_EQ(kv.key, it->first);
      ASSERT_EQ(kv.value, it->second);
      ++it;
    }
  };
  uint64_t batches = 0;
  for (Key from : {3000, 6001, 9000, 9600, 11000}) {
    scan(from);  // caches the path (the root and the level-1 nodes)
    // Only READ batches are the scan's: the lease's renewals in the background are single
    // CASes and WRITEs, each its own round trip.
    const fabric::VerbCounts before = fabric->TotalCounts();
    scan(from);
    const fabric::VerbCounts d = fabric->TotalCounts() - before;
    const uint64_t read_round_trips = d.round_trips - d.writes - d.atomics();
    EXPECT_GE(read_round_trips, 1u) << "from " << from;
    EXPECT_LE(read_round_trips, 2u) << "from " << from << ": " << d.reads << " READs";
    EXPECT_GE(d.reads, 7u) << "from " << from;  // every leaf of the 100 entries
    batches += read_round_trips;
  }
  EXPECT_LT(batches, 10u) << "every scan spanned two level-1 nodes";
}

TEST(Dex, OffloadedOperationsAreCorrectAndCounted) {
  auto fabric = MakeFabric();
  IndexOptions o = Options(1, {{"offload_level", "2"}, {"cost_factor", "1e12"}, {"durability", "none"}});
  o.cache_bytes = 0;  // the minimum: 64 nodes
  auto tree = testing::U64DexTree::Open(*fabric, o);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  auto w = (*tree)->NewWorker(0);
  ASSERT_TRUE(w.ok());
  // Enough leaves to fill several 1 MB chunks, which the allocator takes from the two
  // memory nodes in turn: without co-location, subtrees would straddle memory nodes.
  const Key n = 100000;
  const auto records = Records(n);
  ASSERT_TRUE(testing::U64BulkLoad(**tree, **w, records).ok());
  testing::U64Workers ws(**tree, 0);
  std::map<Key, Value> model;
  for (const auto& r : records) model[r.key] = r.value;
  std::mt19937_64 rng(11);
  const fabric::VerbCounts before = fabric->TotalCounts();
  for (int i = 0; i < 4000; ++i) {
    const Key k = 3 * (1 + rng() % n) + (rng() % 4 == 0 ? 1 : 0);  // a quarter absent
    if (i % 2 == 0) {
      Value v = 0;
      Status s = testing::U64Lookup(**tree, ws, k, &v);
      ASSERT_EQ(s.ok(), model.count(k) == 1) << k << ": " << s.ToString();
      if (s.ok()) { ASSERT_EQ(v, model[k]); }
    } else {
      Status s = testing::U64Write(**tree, ws, designs::dex::WriteOp::kUpdate, k, i);
      ASSERT_EQ(s.ok(), model.count(k) == 1) << k << ": " << s.ToString();
      if (s.ok()) model[k] = i;
    }
  }
  const auto& policy = (*tree)->compute_node(0).offload;
  EXPECT_GT(policy.offloads.load(), 100u);
  // Bulk load put every level-2 subtree on one memory server: no offload met a foreign pointer.
  EXPECT_EQ(policy.fallbacks.load(), 0u);
  EXPECT_GT((fabric->TotalCounts() - before).rpcs, 100u);
  // Everything, offloaded or cached, reads back.
  for (const auto& [k, v] : model) {
    Value got = 0;
    ASSERT_TRUE(testing::U64Lookup(**tree, ws, k, &got).ok()) << k;
    ASSERT_EQ(got, v) << k;
  }
}

// An offloaded insert into a full leaf splits it on the memory server (offload_handler.cc):
// counted, nothing lost, and the tree stays a tree (every key found by lookup and by scan, in
// order) whether the handler linked the new leaf itself or the compute node did.
TEST(Dex, OffloadedInsertsSplitOnTheMemoryServer) {
  auto fabric = MakeFabric();
  IndexOptions o = Options(1, {{"offload_level", "2"}, {"cost_factor", "1e12"}, {"explore", "0"}, {"durability", "none"}});
  o.cache_bytes = 0;  // the minimum: 64 nodes, so most leaves are misses
  auto tree = testing::U64DexTree::Open(*fabric, o);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  auto w = (*tree)->NewWorker(0);
  ASSERT_TRUE(w.ok());
  const Key n = 60000;
  const auto records = Records(n);  // keys 3, 6, 9, ...: full leaves
  ASSERT_TRUE(testing::U64BulkLoad(**tree, **w, records).ok());
  testing::U64Workers ws(**tree, 0);
  std::map<Key, Value> model;
  for (const auto& r : records) model[r.key] = r.value;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const Key k = 3 * (1 + rng() % n) + 1 + rng() % 2;  // between loaded keys
    ASSERT_TRUE(testing::U64Write(**tree, ws, designs::dex::WriteOp::kUpsert, k, i + 1).ok()) << k;
    model[k] = i + 1;
  }
  const auto& policy = (*tree)->compute_node(0).offload;
  EXPECT_GT(policy.splits.load(), 100u) << policy.offloads.load() << " offloads, "
                                        << policy.fallbacks.load() << " fallbacks";
  for (const auto& [k, v] : model) {
    Value got = 0;
    ASSERT_TRUE(testing::U64Lookup(**tree, ws, k, &got).ok()) << k;
    ASSERT_EQ(got, v) << k;
  }
  // A scan from the start visits every key once, in order.
  std::vector<KeyValue> all;
  Key cursor = 1;
  for (;;) {
    std::vector<KeyValue> page;
    Key next = 0;
    ASSERT_TRUE(testing::U64ScanLeaf(**tree, ws, {}, cursor, 1u << 20, &page, &next).ok());
    all.insert(all.end(), page.begin(), page.end());
    if (next == tree::U64BytesKV::kPosInf) break;
    cursor = next;
  }
  ASSERT_EQ(all.size(), model.size());
  auto it = model.begin();
  for (const KeyValue& kv : all) {
    ASSERT_EQ(kv.key, it->first);
    ASSERT_EQ(kv.value, it->second);
    ++it;
  }
}

// Moving a boundary flushes the losing compute nodes' dirty pages and drops their caches;
// nothing written before is lost and both sides keep working.
TEST(Dex, RepartitioningKeepsEveryUpdate) {
  auto fabric = MakeFabric();
  auto tree = testing::U64DexTree::Open(*fabric, Options(2, {{"admission", "1"}}));
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  auto w = (*tree)->NewWorker(0);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(testing::U64BulkLoad(**tree, **w, Records(10000)).ok());
  const Key b0 = (*tree)->partition_map().boundaries().at(0);
  EXPECT_GT(b0, 3u * 2000) << "bulk load balances the partitions";
  testing::U64Workers ws(**tree, 1);
  for (Key k = 1; k <= 10000; ++k)
    ASSERT_TRUE(testing::U64Write(**tree, ws, designs::dex::WriteOp::kUpdate, 3 * k, k + 7).ok());
  EXPECT_GT(fabric->TotalCounts().writes, 0u);
  auto seconds = (*tree)->Repartition({3 * 2500});
  ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
  EXPECT_EQ((*tree)->partition_map().Owner(3 * 2600), 1u);
  for (Key k = 1; k <= 10000; ++k) {
    Value v = 0;
    ASSERT_TRUE(testing::U64Lookup(**tree, ws, 3 * k, &v).ok()) << 3 * k;
    ASSERT_EQ(v, k + 7) << 3 * k;
    ASSERT_TRUE(testing::U64Write(**tree, ws, designs::dex::WriteOp::kUpsert, 3 * k + 1, k).ok());
  }
  for (Key k = 1; k <= 10000; k += 97) {
    Value v = 0;
    ASSERT_TRUE(testing::U64Lookup(**tree, ws, 3 * k + 1, &v).ok()) << 3 * k + 1;
    ASSERT_EQ(v, k);
  }
  EXPECT_TRUE((*tree)->Repartition({5, 4}).status().IsInvalidArgument());
}

// The public routing call names the serving compute node and its half-open partition, and
// follows a repartitioning made through the public API; designs without partitions (and DEX
// with partitioning off) have no Partitioning.
TEST(Dex, RouteKeyFollowsRepartitioning) {
  auto fabric = MakeFabric();
  auto index = designs::MakeIndex("dex", *fabric, Options(3, {{"boundaries", "1000,2000"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  Partitioning* parts = (*index)->partitioning();
  ASSERT_NE(parts, nullptr);
  EXPECT_EQ(parts->partitions(), 3u);
  ::dmindex::testing::U64Route r = ::dmindex::testing::RouteU64(*parts, 1500);
  EXPECT_EQ(r.compute_node, 1u);
  EXPECT_EQ(r.begin, 1000u);  // half-open: [1000, 2000)
  EXPECT_EQ(r.end, std::optional<Key>(2000));
  EXPECT_TRUE(r.hosted);
  EXPECT_TRUE(r.Contains(1999));
  EXPECT_FALSE(r.Contains(2000));
  EXPECT_EQ(::dmindex::testing::RouteU64(*parts, kMinKey).begin, kMinKey);
  EXPECT_EQ(::dmindex::testing::RouteU64(*parts, kMaxKey).compute_node, 2u);
  EXPECT_FALSE(::dmindex::testing::RouteU64(*parts, kMaxKey).end.has_value()) << "the last partition has no end";
  auto s = std::move((*index)->OpenSession(0)).value();
  for (Key k = 1; k < 3000; ++k) ASSERT_TRUE(s->Insert(k, k).ok());
  ASSERT_TRUE(::dmindex::testing::RepartitionU64(*parts, {1000, 1200}).ok());
  EXPECT_EQ(::dmindex::testing::RouteU64(*parts, 1500).compute_node, 2u);
  EXPECT_EQ(::dmindex::testing::RouteU64(*parts, 1500).begin, 1200u);
  Value v = 0;
  for (Key k = 1; k < 3000; ++k) {
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, k);
  }
  EXPECT_TRUE(::dmindex::testing::RepartitionU64(*parts, {1}).status().IsInvalidArgument());

  IndexOptions so = Options(1);
  so.name = "sherman-beside";
  auto sherman = designs::MakeIndex("sherman", *fabric, so);
  ASSERT_TRUE(sherman.ok()) << sherman.status().ToString();
  EXPECT_EQ((*sherman)->partitioning(), nullptr) << "every compute node serves every key";
  IndexOptions off = Options(3, {{"partition", "off"}});
  off.name = "dex-unpartitioned";
  auto flat = designs::MakeIndex("dex", *fabric, off);
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ((*flat)->partitioning(), nullptr);
}

}  // namespace
}  // namespace dmindex
