// The `local` design's own tests, beyond the harness every design runs: the u64-format tree at
// its smallest node size (deep trees, constant splits) under concurrent writers and scanners,
// values of every size in the u64 format (8 bytes raw, others boxed), bulk-load shapes of both
// formats, and the index: no fabric use, exact memory in Stats. The bytes format's own tests:
// local_bytes_tree_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "common/sync.h"
#include "designs/local/local_index.h"
#include "designs/local/local_tree.h"
#include "harness_keys.h"
#include "test_fabrics.h"

namespace dmindex::designs::local {
namespace {

using Tree = LocalTree<U64Keys>;
using Worker = Tree::Worker;

std::string K(uint64_t k) { return U64Key(k).str(); }
uint64_t N(Slice s) { return U64Key::Decode(s); }

Status Put(Tree& t, Worker& w, uint64_t k, uint64_t v) { return t.Upsert(w, K(k), K(v)); }
// The value of k as an integer (8-byte values only), or the lookup's status.
Status Get(Tree& t, Worker& w, uint64_t k, uint64_t* v) {
  std::string s;
  Status st = t.Lookup(w, K(k), &s);
  if (st.ok()) {
    EXPECT_EQ(s.size(), 8u) << "key " << k;
    *v = s.size() == 8 ? N(s) : ~uint64_t{0};
  }
  return st;
}
Status ScanFrom(Tree& t, Worker& w, uint64_t start, size_t count, std::vector<KeyValue>* out) {
  return t.Scan(w, KeyRange{K(start), false, std::nullopt}, count, out);
}

// Writers churn odd keys (insert, overwrite, delete) while stable even keys stay put; readers
// look keys up and walk the leaf chain meanwhile, and must always see every even key with its
// value, and odd keys only with values written to them. Races between optimistic readers and
// splits or shifting entries live for nanoseconds, so this targets them with small nodes
// (constant splits) and contention on the same leaves.
TEST(LocalTree, ReadersSeeStableKeysWhileSmallNodesSplit) {
  Tree tree(Tree::MinNodeBytes());  // 4 entries per leaf
  constexpr uint64_t kKeys = 20'000;
  {
    Worker w(tree);
    for (uint64_t k = 2; k <= kKeys; k += 2) ASSERT_TRUE(Put(tree, w, k, k * 10).ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> scans{0};
  Latch start(5);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      Worker w(tree);
      start.ArriveAndWait();
      for (int round = 0; round < 3; ++round)
        for (uint64_t k = 1 + 2 * t; k <= kKeys; k += 6) {
          ASSERT_TRUE(Put(tree, w, k, k).ok());
          ASSERT_TRUE(Put(tree, w, k, k + 1).ok());
          if (round < 2) {
            EXPECT_TRUE(tree.Delete(w, K(k)).ok());
          }
        }
    });
  for (uint32_t r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      Worker w(tree);
      std::vector<KeyValue> out;
      start.ArriveAndWait();
      // At least some scans even if the scheduler runs the writers first.
      for (int done = 0; !stop.load() || done < 50; ++done) {
        // A few point reads of stable and churned keys between scans.
        for (uint64_t k = 1 + (done * 7919 + r) % kKeys, n = 0; n < 16; ++n, k = k % kKeys + 1) {
          uint64_t v = 0;
          const Status s = Get(tree, w, k, &v);
          ASSERT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
          if (k % 2 == 0) {
            ASSERT_TRUE(s.ok()) << "stable key " << k << " not found";
            ASSERT_EQ(v, k * 10) << "stable key " << k;
          } else if (s.ok()) {
            ASSERT_TRUE(v == k || v == k + 1) << "key " << k << " has value " << v;
          }
        }
        const uint64_t from = 1 + (scans.fetch_add(1) * 37 + r) % kKeys;
        ASSERT_TRUE(ScanFrom(tree, w, from, 64, &out).ok());
        uint64_t expect_even = from % 2 == 0 ? from : from + 1;
        for (size_t i = 0; i < out.size(); ++i) {
          const uint64_t k = N(out[i].key), v = N(out[i].value);
          if (i > 0) {
            ASSERT_LT(out[i - 1].key, out[i].key);
          }
          if (k % 2 == 1) {
            ASSERT_TRUE(v == k || v == k + 1);
            continue;
          }
          ASSERT_EQ(k, expect_even) << "scan from " << from << " lost a stable key";
          ASSERT_EQ(v, k * 10);
          expect_even += 2;
        }
      }
    });
  for (uint32_t t = 0; t < 3; ++t) threads[t].join();
  stop = true;
  for (size_t t = 3; t < threads.size(); ++t) threads[t].join();
  EXPECT_GT(scans.load(), 0u);
  Worker w(tree);
  std::vector<KeyValue> all;
  ASSERT_TRUE(ScanFrom(tree, w, kMinU64Key, kKeys + 1, &all).ok());
  ASSERT_EQ(all.size(), kKeys);  // every even key, and every odd key once (third round kept it)
  for (size_t i = 0; i < all.size(); ++i) {
    const uint64_t k = N(all[i].key);
    ASSERT_EQ(k, i + 1);
    ASSERT_EQ(N(all[i].value), k % 2 ? k + 1 : k * 10);
  }
}

// Writers fill the gaps between stable keys in ascending order, so every few inserts split a
// leaf; readers chase the writers' position and read exactly the leaves being split. A reader
// that trusts a stale parent, misses a root split or accepts a torn leaf loses a stable key.
TEST(LocalTree, ReadersChasingSplitsNeverLoseKeys) {
  Tree tree(Tree::MinNodeBytes());
  constexpr uint64_t kGroups = 6'000;  // stable key 8g, gap keys 8g+1 .. 8g+7
  {
    Worker w(tree);
    for (uint64_t g = 1; g <= kGroups; ++g) ASSERT_TRUE(Put(tree, w, 8 * g, g).ok());
  }
  std::atomic<uint64_t> cursor{1};
  std::atomic<bool> stop{false};
  Latch start(4);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      Worker w(tree);
      start.ArriveAndWait();
      for (uint64_t g = 1; g <= kGroups; ++g) {
        for (uint64_t k = 8 * g + 1 + t; k < 8 * g + 8; k += 2) ASSERT_TRUE(Put(tree, w, k, k).ok());
        if (t == 0) cursor.store(g, std::memory_order_relaxed);
      }
    });
  for (uint32_t r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      Worker w(tree);
      start.ArriveAndWait();
      std::vector<KeyValue> out;
      for (int done = 0; !stop.load() || done < 50; ++done) {
        const uint64_t g = cursor.load(std::memory_order_relaxed);
        for (uint64_t h = g > 2 ? g - 2 : 1; h <= std::min(g + 2, kGroups); ++h) {
          uint64_t v = 0;
          ASSERT_TRUE(Get(tree, w, 8 * h, &v).ok()) << "stable key " << 8 * h << " lost";
          ASSERT_EQ(v, h);
        }
        const uint64_t from = 8 * (g > 1 ? g - 1 : 1);
        ASSERT_TRUE(ScanFrom(tree, w, from, 12, &out).ok());
        uint64_t expect = from;
        for (const KeyValue& kv : out) {
          if (N(kv.key) % 8 != 0) continue;
          ASSERT_EQ(N(kv.key), expect) << "scan from " << from << " lost a stable key";
          expect += 8;
        }
      }
    });
  for (uint32_t t = 0; t < 2; ++t) threads[t].join();
  stop = true;
  for (size_t t = 2; t < threads.size(); ++t) threads[t].join();
  Worker w(tree);
  std::vector<KeyValue> all;
  ASSERT_TRUE(ScanFrom(tree, w, kMinU64Key, 8 * kGroups + 8, &all).ok());
  EXPECT_EQ(all.size(), 8 * kGroups);
}

// A value of n bytes naming (key, version), so a stale or torn one is recognised.
std::string ValueOf(uint64_t key, uint64_t version, size_t n) { return testing::NamedValue(key, version, n); }

// The u64 format takes values of any size: 8 bytes sit raw in the leaf; any other size is
// boxed (inline up to 7 bytes, a blob beyond) and marked in the leaf's bitmap, which must
// follow the entries through shifts, splits and deletes, and flip back when an 8-byte value
// replaces a boxed one.
TEST(LocalTree, U64FormatTakesValuesOfEverySize) {
  Tree tree(Tree::MinNodeBytes());
  Worker w(tree);
  std::map<uint64_t, std::string> model;
  std::mt19937_64 rng(5);
  const size_t sizes[] = {8, 8, 8, 0, 1, 7, 9, 16, 300, 8, 100'000};
  std::vector<KeyValue> got;
  for (uint64_t op = 1; op <= 6'000; ++op) {
    const uint64_t k = 1 + rng() % 700;
    const size_t size = sizes[rng() % std::size(sizes)];
    const uint32_t dice = rng() % 10;
    if (dice < 5) {
      ASSERT_TRUE(tree.Upsert(w, K(k), ValueOf(k, op, size)).ok());
      model[k] = ValueOf(k, op, size);
    } else if (dice < 6) {
      const Status s = tree.Update(w, K(k), ValueOf(k, op, size));
      ASSERT_EQ(s.ok(), model.count(k) > 0) << s.ToString();
      if (s.ok()) model[k] = ValueOf(k, op, size);
    } else if (dice < 8) {
      const Status s = tree.Delete(w, K(k));
      ASSERT_EQ(s.ok(), model.erase(k) > 0) << s.ToString();
    } else if (dice < 9) {
      std::string v;
      const Status s = tree.Lookup(w, K(k), &v);
      ASSERT_EQ(s.ok(), model.count(k) > 0) << s.ToString();
      if (s.ok()) {
        ASSERT_EQ(v, model[k]) << "key " << k << " op " << op;
      }
    } else {
      ASSERT_TRUE(ScanFrom(tree, w, k, 20, &got).ok());
      auto it = model.lower_bound(k);
      for (const KeyValue& kv : got) {
        ASSERT_NE(it, model.end());
        ASSERT_EQ(N(kv.key), it->first);
        ASSERT_EQ(kv.value, it->second) << "key " << it->first;
        ++it;
      }
      ASSERT_TRUE(got.size() == 20 || it == model.end());
    }
  }
  ASSERT_TRUE(ScanFrom(tree, w, kMinU64Key, 10'000, &got).ok());
  ASSERT_EQ(got.size(), model.size());
  // Accounting: after the retired blobs are freed, what the tree holds is what it reaches.
  for (int i = 0; i < 4; ++i) w.epoch().Reclaim();
  EXPECT_EQ(tree.retired_bytes(), 0u);
  EXPECT_EQ(tree.bytes(), tree.ReachableBytes());
}

// Readers of keys whose values flip between 8 raw bytes and boxed blobs: a reader that
// followed a raw integer as a pointer (a torn boxed bit) or a blob freed under it would crash
// or read garbage; it reads the lazy epoch path (u64 lookups enter an epoch only for blobs).
TEST(LocalTree, RacingReadersOfValuesFlippingBetweenRawAndBoxed) {
  Tree tree(Tree::MinNodeBytes());
  constexpr uint64_t kKeys = 64;
  {
    Worker w(tree);
    for (uint64_t k = 1; k <= kKeys; ++k) ASSERT_TRUE(tree.Upsert(w, K(k), ValueOf(k, 0, 8)).ok());
  }
  const size_t sizes[] = {8, 3, 40, 8, 1000};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      Worker w(tree);
      for (uint64_t i = 1; i <= 4'000; ++i) {
        const uint64_t k = 1 + (i * 7 + t) % kKeys;
        ASSERT_TRUE(tree.Upsert(w, K(k), ValueOf(k, 0, sizes[i % std::size(sizes)])).ok());
      }
    });
  for (uint32_t r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      Worker w(tree);
      std::string v;
      std::vector<KeyValue> out;
      for (uint64_t i = 0; !stop.load() || i < 200; ++i) {
        const uint64_t k = 1 + (i * 13 + r) % kKeys;
        ASSERT_TRUE(tree.Lookup(w, K(k), &v).ok());
        ASSERT_EQ(v, ValueOf(k, 0, v.size())) << "key " << k;
        if (i % 16 == 0) {
          ASSERT_TRUE(ScanFrom(tree, w, k, 8, &out).ok());
          for (const KeyValue& kv : out) ASSERT_EQ(kv.value, ValueOf(N(kv.key), 0, kv.value.size()));
        }
      }
    });
  threads[0].join();
  threads[1].join();
  stop = true;
  threads[2].join();
  threads[3].join();
  Worker w(tree);
  for (int i = 0; i < 4; ++i) w.epoch().Reclaim();
  EXPECT_EQ(tree.bytes(), tree.ReachableBytes());
}

template <class F>
void CheckBulkLoadShapes(const std::function<std::string(size_t)>& key_of) {
  for (double fill : {0.05, 0.5, 1.0})
    for (size_t n : {size_t{1}, size_t{5}, size_t{6}, size_t{31}, size_t{2000}}) {
      LocalTree<F> tree(LocalTree<F>::MinNodeBytes());
      typename LocalTree<F>::Worker w(tree);
      std::vector<KeyValue> pairs;
      for (size_t i = 0; i < n; ++i) pairs.push_back({key_of(2 * i + 1), ValueOf(i, 1, i % 12)});
      ASSERT_TRUE(tree.BulkLoad(pairs, fill).ok());
      std::vector<KeyValue> out;
      ASSERT_TRUE(tree.Scan(w, KeyRange{key_of(0), false, std::nullopt}, n + 1, &out).ok());
      ASSERT_EQ(out, pairs) << "n=" << n << " fill=" << fill;
      for (size_t i = 0; i < n; ++i) {
        std::string v;
        ASSERT_TRUE(tree.Lookup(w, key_of(2 * i + 1), &v).ok()) << "n=" << n << " fill=" << fill;
        ASSERT_EQ(v, pairs[i].value);
        ASSERT_TRUE(tree.Lookup(w, key_of(2 * i + 2), &v).IsNotFound());
      }
      EXPECT_FALSE(tree.BulkLoad(pairs, fill).ok());  // no longer empty
      EXPECT_EQ(tree.bytes(), tree.ReachableBytes());
    }
}

TEST(LocalTree, BulkLoadShapesFromOneKeyToManyLevels) {
  CheckBulkLoadShapes<U64Keys>([](size_t i) { return K(i + 1); });
  // Byte keys sharing a 30-byte prefix: bulk-loaded separators are cut to a few bytes.
  CheckBulkLoadShapes<ByteKeys>([](size_t i) {
    std::string k = std::string(30, 'p') + std::to_string(1'000'000 + i);
    return i % 3 == 0 ? k + std::string(1, '\0') : k;
  });
}

TEST(LocalIndex, IssuesNoVerbsAndReportsItsMemoryExactly) {
  auto fabric = testing::MakeTestFabric("inproc");
  for (KeyFormat format : {KeyFormat::kU64, KeyFormat::kBytes}) {
    IndexOptions options;
    options.key_format = format;
    options.node_bytes = 1024;  // MakeLocalIndex directly: no registry to size the nodes
    auto index = MakeLocalIndex(*fabric, options);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    {
      auto session = (*index)->OpenSession(0);
      ASSERT_TRUE(session.ok());
      for (uint64_t k = 1; k <= 10'000; ++k) ASSERT_TRUE((*session)->Insert(K(k), ValueOf(k, 0, k % 20)).ok());
      EXPECT_EQ(fabric->TotalCounts(), fabric::VerbCounts{});
      const IndexStats stats = (*index)->Stats();
      EXPECT_GE(stats.cache_bytes, 10'000u * 16);  // the whole tree lives on the compute side
      EXPECT_EQ(stats.pool_bytes, 0u);
      // Nodes of 1 KiB plus the blobs of the values of 8..19 bytes (none for u64's 8-byte ones).
      const uint64_t nodes = *(*index)->GetIntProperty("dmindex.local.nodes");
      uint64_t blobs = 0;
      for (uint64_t k = 1; k <= 10'000; ++k)
        if (k % 20 > 7 && !(format == KeyFormat::kU64 && k % 20 == 8)) blobs += Blob::BytesFor(k % 20);
      EXPECT_EQ(stats.cache_bytes, nodes * options.node_bytes + blobs);
    }
    options.node_bytes = 64;
    EXPECT_TRUE(MakeLocalIndex(*fabric, options).status().IsInvalidArgument());
    options.node_bytes = 1024;
    options.bulk_fill = 0;
    EXPECT_TRUE(MakeLocalIndex(*fabric, options).status().IsInvalidArgument());
  }
}

}  // namespace
}  // namespace dmindex::designs::local
