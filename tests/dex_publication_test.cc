// What may reach the pool, and when (docs/DEX.md): DEX writes owned pages back lazily, so at
// any instant some of its changes live only in a compute node's cache, and whatever did reach
// the pool must still be a tree that a reader of the pool alone can use - another compute node
// following a stale path, the memory-side offload handler, and a process that takes over the
// compute nodes of one that died.
//
//  * EverySplitInTheCacheLeavesAReadablePool: each insert of an ascending run (as in the
//    report: "keys 1-18 read fine, from key 19 on Corruption") is followed by an audit of the
//    pool (tree/pool_audit.h). A leaf that lazy admission turned away is written back at the
//    end of its operation; when it had split in the cache, its image names a right sibling
//    that used to exist only in the cache: a pointer to a block never written (the audit
//    fails at key 19 without the fix).
//  * SplitsUnderSharedParentsLeaveAReadablePool: the same over two partitions, where splits
//    under shared parents and of the root write internal nodes through; their images named
//    children that lived only in the cache.
//  * ACrashedComputeNodeLeavesAReadableIndex: a process writes (inserts, updates, deletes,
//    with splits, merges, cooling and offloading), all acknowledged, and "dies": it is never
//    used again and never writes its dirty pages back. Its leases are released as an
//    operator would (dmindex indexes --release-host), another index object hosts its compute
//    nodes, and tests/dex_crash_check.h checks what it reads (without the fix: Corruption
//    "never read consistent" after 2 s per lookup, or a "no progress" restart loop on a
//    half-finished split); with durability=log (the default) also that every acknowledged
//    write is there (the host replays the dead one's redo logs).
#include <gtest/gtest.h>

#include <random>

#include "designs/dex/dex_admin.h"
#include "designs/dex/partition_store.h"
#include "designs/registry.h"
#include "dex_crash_check.h"
#include "dex_test_env.h"
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


constexpr uint32_t kNodeBytes = 512;

TEST(DexPublication, EverySplitInTheCacheLeavesAReadablePool) {
  auto fabric = testing::DexTestFabric();
  // One compute node (it owns every node), leaves never admitted: each insert writes its leaf
  // back when it ends, while the nodes that splits create in the cache stay there.
  auto index = designs::MakeIndex("dex", *fabric,
                                  testing::DexTestOptions("publish-splits", 1, {{"admission", "0"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto session = std::move((*index)->OpenSession()).value();
  testing::AckedWrites acked;
  for (Key k = 1; k <= 400; ++k) {
    ASSERT_TRUE(session->Insert(k, k * 10).ok()) << "key " << k;
    acked[k].push_back(k * 10);
    testing::PoolContentOf(*fabric, "publish-splits", kNodeBytes);
    ASSERT_FALSE(HasFailure()) << "after inserting key " << k;
  }
}

// Two partitions: splits under shared parents and of the shared root write internal nodes
// through; before the fix those images named children that existed only in the cache.
TEST(DexPublication, SplitsUnderSharedParentsLeaveAReadablePool) {
  auto fabric = testing::DexTestFabric();
  auto index = designs::MakeIndex(
      "dex", *fabric, testing::DexTestOptions("publish-shared", 2, {{"key_space", "100000"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto session = std::move((*index)->OpenSession()).value();
  for (uint64_t i = 1; i <= 3000; ++i) {
    const Key k = 1 + (i * 7919) % 100000;  // both partitions, in no order
    ASSERT_TRUE(session->Insert(k, i).ok()) << "key " << k;
    if (i % 10 != 0) continue;
    testing::PoolContentOf(*fabric, "publish-shared", kNodeBytes);
    ASSERT_FALSE(HasFailure()) << "after " << i << " inserts";
  }
}

struct CrashCase {
  const char* name;
  std::map<std::string, std::string> knobs;
  uint64_t cache_bytes;
};
void PrintTo(const CrashCase& c, std::ostream* os) { *os << c.name; }

class DexCrash : public ::testing::TestWithParam<CrashCase> {};

TEST_P(DexCrash, ACrashedComputeNodeLeavesAReadableIndex) {
  const CrashCase& c = GetParam();
  auto fabric = testing::DexTestFabric();
  const std::string name = std::string("crash-") + c.name;
  auto options = [&](std::map<std::string, std::string> knobs, uint64_t cache) {
    IndexOptions o = testing::DexTestOptions(name, 2, std::move(knobs));
    o.knobs["key_space"] = "20000";
    o.cache_bytes = cache;
    return o;
  };
  testing::AckedWrites acked;
  std::map<Key, Value> durable;
  std::mt19937_64 rng(7);
  {
    // A first process writes the base keys and closes cleanly: all of them reach the pool.
    auto first = designs::MakeIndex("dex", *fabric, options(c.knobs, c.cache_bytes));
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto s = std::move((*first)->OpenSession()).value();
    for (Key k = 1; k <= 20000; k += 4) {
      ASSERT_TRUE(s->Insert(k, k).ok());
      acked[k].push_back(k);
      durable[k] = k;
    }
  }
  // The process that dies: inserts, updates and deletes over both partitions, all acknowledged.
  // It has no background write-back: it stands for a process that is dead from here on.
  auto dying_knobs = c.knobs;
  dying_knobs["writeback_ms"] = "0";
  auto dying = designs::MakeIndex("dex", *fabric, options(dying_knobs, c.cache_bytes));
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  {
    auto s = std::move((*dying)->OpenSession()).value();
    for (Value op = 1; op <= 6000; ++op) {
      const Key k = 1 + rng() % 20000;
      const uint64_t dice = rng() % 10;
      Status st;
      if (dice < 6) {
        st = s->Insert(k, 1'000'000 + op);
        if (st.ok()) acked[k].push_back(1'000'000 + op);
      } else {
        st = s->Delete(k);
        if (st.ok()) acked[k].push_back(std::nullopt);
      }
      ASSERT_TRUE(st.ok() || st.IsNotFound()) << "key " << k << ": " << st.ToString();
      durable.erase(k);
    }
  }
  // It dies here: never used again, its dirty pages never written back (it is destroyed only
  // after the checks). An operator releases its leases; another process hosts its nodes.
  testing::ReleaseLeasesOfTheDead(*fabric, name);
  ASSERT_FALSE(HasFatalFailure());
  {
    auto host = designs::MakeIndex("dex", *fabric, options({}, 1 << 20));  // DEX's defaults
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    testing::CheckWhatTheDeadLeft(*fabric, name, kNodeBytes, **host, acked, durable);
    // durability=log (the default): the host replayed the dead one's logs, nothing
    // acknowledged is lost; durability=none: only what had reached the pool is there.
    if (!c.knobs.contains("durability")) testing::CheckNothingAcknowledgedLost(**host, acked);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Knobs, DexCrash,
    ::testing::Values(CrashCase{"defaults", {}, 1 << 20},
                      CrashCase{"small_cache", {}, 64 * kNodeBytes},
                      CrashCase{"no_admission_no_offload", {{"admission", "0"}, {"offload", "off"}}, 1 << 20},
                      CrashCase{"small_cache_no_offload", {{"offload", "off"}}, 64 * kNodeBytes},
                      CrashCase{"no_log", {{"durability", "none"}}, 1 << 20},
                      CrashCase{"no_log_small_cache", {{"durability", "none"}}, 64 * kNodeBytes}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dmindex
