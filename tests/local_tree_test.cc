// The `local` design's own tests, beyond the harness every design runs: the tree at its
// smallest node size (deep trees, constant splits) under concurrent writers and scanners,
// bulk-load shapes, and that it never touches the fabric.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "common/sync.h"
#include "designs/local/local_index.h"
#include "designs/local/local_tree.h"
#include "test_fabrics.h"

namespace dmindex::designs::local {
namespace {

// Writers churn odd keys (insert, overwrite, delete) while stable even keys stay put; readers
// look keys up and walk the leaf chain meanwhile, and must always see every even key with its
// value, and odd keys only with values written to them. Races between optimistic readers and
// splits or shifting entries live for nanoseconds, so this targets them with small nodes
// (constant splits) and contention on the same leaves.
TEST(LocalTree, ReadersSeeStableKeysWhileSmallNodesSplit) {
  LocalTree tree(LocalTree::MinNodeBytes());  // 5 entries per leaf
  constexpr Key kKeys = 20'000;
  for (Key k = 2; k <= kKeys; k += 2) ASSERT_TRUE(tree.Upsert(k, k * 10).ok());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> scans{0};
  Latch start(5);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < 3; ++w)
    threads.emplace_back([&, w] {
      start.ArriveAndWait();
      for (int round = 0; round < 3; ++round)
        for (Key k = 1 + 2 * w; k <= kKeys; k += 6) {
          ASSERT_TRUE(tree.Upsert(k, k).ok());
          ASSERT_TRUE(tree.Upsert(k, k + 1).ok());
          if (round < 2) {
            EXPECT_TRUE(tree.Delete(k).ok());
          }
        }
    });
  for (uint32_t r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      std::vector<KeyValue> out;
      start.ArriveAndWait();
      // At least some scans even if the scheduler runs the writers first.
      for (int done = 0; !stop.load() || done < 50; ++done) {
        // A few point reads of stable and churned keys between scans.
        for (Key k = 1 + (done * 7919 + r) % kKeys, n = 0; n < 16; ++n, k = k % kKeys + 1) {
          Value v = 0;
          const Status s = tree.Lookup(k, &v);
          ASSERT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
          const bool found = s.ok();
          if (k % 2 == 0) {
            ASSERT_TRUE(found) << "stable key " << k << " not found";
            ASSERT_EQ(v, k * 10) << "stable key " << k;
          } else if (found) {
            ASSERT_TRUE(v == k || v == k + 1) << "key " << k << " has value " << v;
          }
        }
        const Key start = 1 + (scans.fetch_add(1) * 37 + r) % kKeys;
        ASSERT_TRUE(tree.Scan(KeyRange{start, false, std::nullopt}, 64, &out).ok());
        Key expect_even = start % 2 == 0 ? start : start + 1;
        for (size_t i = 0; i < out.size(); ++i) {
          if (i > 0) {
            ASSERT_LT(out[i - 1].key, out[i].key);
          }
          if (out[i].key % 2 == 1) {
            ASSERT_TRUE(out[i].value == out[i].key || out[i].value == out[i].key + 1);
            continue;
          }
          ASSERT_EQ(out[i].key, expect_even) << "scan from " << start << " lost a stable key";
          ASSERT_EQ(out[i].value, out[i].key * 10);
          expect_even += 2;
        }
      }
    });
  for (uint32_t w = 0; w < 3; ++w) threads[w].join();
  stop = true;
  for (size_t t = 3; t < threads.size(); ++t) threads[t].join();
  EXPECT_GT(scans.load(), 0u);
  std::vector<KeyValue> all;
  ASSERT_TRUE(tree.Scan(KeyRange{kMinKey, false, std::nullopt}, kKeys + 1, &all).ok());
  ASSERT_EQ(all.size(), kKeys);  // every even key, and every odd key once (third round kept it)
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(all[i].key, i + 1);
    ASSERT_EQ(all[i].value, all[i].key % 2 ? all[i].key + 1 : all[i].key * 10);
  }
}

// Writers fill the gaps between stable keys in ascending order, so every few inserts split a
// leaf; readers chase the writers' position and read exactly the leaves being split. A reader
// that trusts a stale parent, misses a root split or accepts a torn leaf loses a stable key.
TEST(LocalTree, ReadersChasingSplitsNeverLoseKeys) {
  LocalTree tree(LocalTree::MinNodeBytes());
  constexpr Key kGroups = 6'000;  // stable key 8g, gap keys 8g+1 .. 8g+7
  for (Key g = 1; g <= kGroups; ++g) ASSERT_TRUE(tree.Upsert(8 * g, g).ok());
  std::atomic<Key> cursor{1};
  std::atomic<bool> stop{false};
  Latch start(4);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < 2; ++w)
    threads.emplace_back([&, w] {
      start.ArriveAndWait();
      for (Key g = 1; g <= kGroups; ++g) {
        for (Key k = 8 * g + 1 + w; k < 8 * g + 8; k += 2) ASSERT_TRUE(tree.Upsert(k, k).ok());
        if (w == 0) cursor.store(g, std::memory_order_relaxed);
      }
    });
  for (uint32_t r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      start.ArriveAndWait();
      std::vector<KeyValue> out;
      for (int done = 0; !stop.load() || done < 50; ++done) {
        const Key g = cursor.load(std::memory_order_relaxed);
        for (Key h = g > 2 ? g - 2 : 1; h <= std::min(g + 2, kGroups); ++h) {
          Value v = 0;
          ASSERT_TRUE(tree.Lookup(8 * h, &v).ok()) << "stable key " << 8 * h << " lost";
          ASSERT_EQ(v, h);
        }
        const Key from = 8 * (g > 1 ? g - 1 : 1);
        ASSERT_TRUE(tree.Scan(KeyRange{from, false, std::nullopt}, 12, &out).ok());
        Key expect = from;
        for (const KeyValue& kv : out) {
          if (kv.key % 8 != 0) continue;
          ASSERT_EQ(kv.key, expect) << "scan from " << from << " lost a stable key";
          expect += 8;
        }
      }
    });
  for (uint32_t w = 0; w < 2; ++w) threads[w].join();
  stop = true;
  for (size_t t = 2; t < threads.size(); ++t) threads[t].join();
  std::vector<KeyValue> all;
  ASSERT_TRUE(tree.Scan(KeyRange{kMinKey, false, std::nullopt}, 8 * kGroups + 8, &all).ok());
  EXPECT_EQ(all.size(), 8 * kGroups);
}

TEST(LocalTree, BulkLoadShapesFromOneKeyToManyLevels) {
  for (double fill : {0.05, 0.5, 1.0})
    for (size_t n : {size_t{1}, size_t{5}, size_t{6}, size_t{31}, size_t{2000}}) {
      LocalTree tree(LocalTree::MinNodeBytes());
      std::vector<KeyValue> pairs;
      for (size_t i = 0; i < n; ++i) pairs.push_back({2 * i + 1, i});
      ASSERT_TRUE(tree.BulkLoad(pairs, fill).ok());
      std::vector<KeyValue> out;
      ASSERT_TRUE(tree.Scan(KeyRange{kMinKey, false, std::nullopt}, n + 1, &out).ok());
      ASSERT_EQ(out, pairs) << "n=" << n << " fill=" << fill;
      for (size_t i = 0; i < n; ++i) {
        Value v;
        ASSERT_TRUE(tree.Lookup(2 * i + 1, &v).ok()) << "n=" << n << " fill=" << fill;
        ASSERT_TRUE(tree.Lookup(2 * i + 2, &v).IsNotFound());
      }
      EXPECT_FALSE(tree.BulkLoad(pairs, fill).ok());  // no longer empty
    }
}

TEST(LocalIndex, IssuesNoVerbsAndReportsItsMemory) {
  auto fabric = testing::MakeTestFabric("inproc");
  IndexOptions options;
  auto index = MakeLocalIndex(*fabric, options);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto session = (*index)->OpenSession(0);
  ASSERT_TRUE(session.ok());
  for (Key k = 1; k <= 10'000; ++k) ASSERT_TRUE((*session)->Insert(k, k).ok());
  EXPECT_EQ(fabric->TotalCounts(), fabric::VerbCounts{});
  const IndexStats stats = (*index)->Stats();
  EXPECT_GE(stats.cache_bytes, 10'000u * 16);  // the whole tree lives on the compute side
  EXPECT_EQ(stats.pool_bytes, 0u);
  options.node_bytes = 64;
  EXPECT_TRUE(MakeLocalIndex(*fabric, options).status().IsInvalidArgument());
  options.node_bytes = 1024;
  options.bulk_fill = 0;
  EXPECT_TRUE(MakeLocalIndex(*fabric, options).status().IsInvalidArgument());
}

}  // namespace
}  // namespace dmindex::designs::local
