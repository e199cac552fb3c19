// DEX: a compute node whose meta page still points to a former root (the tree grew a level
// elsewhere and nobody on this compute node has refreshed the root since) must not split
// that node as if it were the root. The former root is owned by then (the split that grew
// the tree narrowed its fences into one partition); split as a root, the core finds the
// tree grown already and the new half gets no separator, so it is reachable only through
// its left neighbour's sibling link, which DEX's cached traversal does not follow: every
// operation on its keys retried until "dex: no progress ... after 1000000 attempts". Found
// while chasing a failed insert of IndexHarnessTest.ConcurrentInsertsIntoEmptyTree/dex
// under heavy load, whose interleaved inserts into an empty tree can build this state.
#include <gtest/gtest.h>

#include <vector>

#include "designs/registry.h"
#include "dex_test_env.h"
#include "tree/node_layout.h"
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


TEST(DexStaleRoot, SplittingAFormerRootKeepsItsSiblingReachable) {
  auto fabric = testing::DexTestFabric();
  // Two partitions; every key used here is compute node 0's.
  auto index = designs::MakeIndex(
      "dex", *fabric, testing::DexTestOptions("dex-stale-root", 2, {{"key_space", "1000000"}, {"offload", "off"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const uint32_t capacity = tree::NodeLayout<tree::U64KV>::For(512)->leaf_capacity;
  std::vector<Key> inserted;
  // Each operation runs in a fresh session: a fresh worker has no pending root refresh, so
  // compute node 0's meta page keeps pointing where the first operations left it.
  auto insert = [&](Key k) {
    auto s = (*index)->OpenSession(0);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    Status st = (*s)->Insert(k, k + 7);
    ASSERT_TRUE(st.ok()) << "key " << k << ": " << st.ToString();
    inserted.push_back(k);
  };
  // 1. The root leaf covers both partitions (shared); one more key than it holds makes the
  //    core split it and grow a root above it. The meta page still points to the old root,
  //    now the owned leftmost leaf.
  for (Key i = 1; i <= capacity + 1; ++i) {
    insert(i * 1000);
    if (HasFatalFailure()) return;
  }
  // 2. Keys below the first separator reach that leaf through the stale meta page and
  //    overflow it: compute node 0 splits it as its "root".
  for (Key i = 1; i <= capacity; ++i) {
    insert(i);
    if (HasFatalFailure()) return;
  }
  // 3. Every key is found, and a scan returns them all.
  auto s = (*index)->OpenSession(0);
  ASSERT_TRUE(s.ok());
  for (Key k : inserted) {
    Value v = 0;
    Status st = (*s)->Lookup(k, &v);
    ASSERT_TRUE(st.ok()) << "key " << k << ": " << st.ToString();
    EXPECT_EQ(v, k + 7);
  }
  std::vector<KeyValue> all;
  ASSERT_TRUE(::dmindex::testing::ScanU64(*(*s), kMinKey, inserted.size() + 1, &all).ok());
  EXPECT_EQ(all.size(), inserted.size());
}

}  // namespace
}  // namespace dmindex
