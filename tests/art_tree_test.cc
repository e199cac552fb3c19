// The adaptive radix tree (src/art): a map over byte strings checked against std::map (keys
// that are prefixes of each other, long shared prefixes, every node size up and down), its
// exact byte accounting, its counters, the unit walks and subtree detachment of IndeXY, and
// racing writers, readers, scanners and detachers.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "art/subtree.h"
#include "art/tree.h"
#include "common/sync.h"
#include "tiering/key_codec.h"

namespace dmindex::art {
namespace {

using tiering::DecodeU64;
using tiering::EncodeU64;

// Upsert / remove / read through Modify and Lookup, inside an epoch.
struct Client {
  explicit Client(Tree& t) : tree(t), worker(t) {}
  Status Put(std::string_view k, std::string_view v, uint32_t flags = 0) {
    EpochGuard g(worker.epoch());
    return tree.Modify(k, worker, [&](const Leaf*, uint32_t, bool) { return Decision::Put(v, flags); });
  }
  // True if the key was there.
  bool Remove(std::string_view k) {
    EpochGuard g(worker.epoch());
    bool found = false;
    Status s = tree.Modify(k, worker, [&](const Leaf* cur, uint32_t, bool) {
      found = cur != nullptr;
      return cur != nullptr ? Decision::Remove() : Decision::Keep();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return found;
  }
  std::optional<std::string> Get(std::string_view k, bool* mounted = nullptr) {
    EpochGuard g(worker.epoch());
    auto p = tree.Lookup(k, worker);
    EXPECT_TRUE(p.ok());
    if (mounted != nullptr) *mounted = p->mounted;
    if (p->leaf == nullptr) return std::nullopt;
    return std::string(p->leaf->value());
  }
  std::vector<std::pair<std::string, std::string>> ScanFrom(std::string_view from, bool inclusive, size_t max) {
    EpochGuard g(worker.epoch());
    std::vector<std::pair<std::string, std::string>> out;
    Status s = tree.Scan(from, inclusive, worker, [&](const Leaf* l) {
      out.emplace_back(std::string(l->key()), std::string(l->value()));
      return out.size() < max;
    });
    EXPECT_TRUE(s.ok());
    return out;
  }
  Tree& tree;
  Worker worker;
};

// Bytes of every node and leaf reachable from the root (no operation running).
uint64_t ReachableBytes(const Node* n, uint64_t* leaves) {
  uint64_t b = n->bytes();
  if (n->terminal() != 0) {
    b += AsLeaf(n->terminal())->bytes();
    ++*leaves;
  }
  ChildList c;
  n->Children(0, &c);
  for (uint16_t i = 0; i < c.count; ++i) {
    if (IsLeaf(c.refs[i])) {
      b += AsLeaf(c.refs[i])->bytes();
      ++*leaves;
    } else {
      b += ReachableBytes(AsNode(c.refs[i]), leaves);
    }
  }
  return b;
}

std::string RandomKey(std::mt19937_64& rng) {
  // A small alphabet and short lengths: many keys are prefixes of others and share paths;
  // now and then a long key with a long common prefix (path compression over many bytes).
  static const char kAlphabet[] = {'a', 'b', '\0', '\xff', 'c'};
  if (rng() % 50 == 0) return std::string(200 + rng() % 100, 'L') + kAlphabet[rng() % 5];
  std::string k(1 + rng() % 6, 'a');
  for (char& c : k) c = kAlphabet[rng() % 5];
  return k;
}

TEST(ArtTreeTest, RandomOpsMatchStdMapWithPrefixKeys) {
  Tree tree;
  Client c(tree);
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 40000; ++i) {
    const std::string k = RandomKey(rng);
    switch (rng() % 8) {
      case 0: case 1: case 2: {
        std::string v = "v";
        v += std::to_string(i);
        ASSERT_TRUE(c.Put(k, v).ok());
        model[k] = v;
        break;
      }
      case 3: case 4:
        ASSERT_EQ(c.Remove(k), model.erase(k) == 1) << "op " << i;
        break;
      case 5: {
        const bool inclusive = rng() % 2;
        const size_t max = 1 + rng() % 20;
        auto got = c.ScanFrom(k, inclusive, max);
        std::vector<std::pair<std::string, std::string>> want;
        for (auto it = inclusive ? model.lower_bound(k) : model.upper_bound(k); it != model.end() && want.size() < max; ++it)
          want.push_back(*it);
        ASSERT_EQ(got, want) << "op " << i;
        break;
      }
      default: {
        auto got = c.Get(k);
        auto it = model.find(k);
        ASSERT_EQ(got.has_value(), it != model.end()) << "op " << i;
        if (got) {
          ASSERT_EQ(*got, it->second);
        }
      }
    }
  }
  auto all = c.ScanFrom("", true, ~size_t{0});
  EXPECT_EQ(all, (std::vector<std::pair<std::string, std::string>>(model.begin(), model.end())));
  EXPECT_EQ(tree.entries(), model.size());
  // Exact accounting: what is reachable plus what waits in the epochs is all that is counted.
  c.worker.epoch().Reclaim();
  c.worker.epoch().Reclaim();
  c.worker.epoch().Reclaim();
  uint64_t leaves = 0;
  EXPECT_EQ(tree.bytes(), ReachableBytes(tree.root(), &leaves) + tree.retired_bytes());
  EXPECT_EQ(tree.retired_bytes(), 0u);
  EXPECT_EQ(leaves, model.size());
}

TEST(ArtTreeTest, NodesGrowAndShrinkThroughEverySize) {
  Tree tree;
  Client c(tree);
  // 256 children under one node (N4 -> N16 -> N48 -> N256), then back down.
  for (int b = 0; b < 256; ++b) ASSERT_TRUE(c.Put(std::string("p") + static_cast<char>(b) + "x", "v").ok());
  EXPECT_EQ(c.ScanFrom("p", true, 1000).size(), 256u);
  for (int b = 255; b >= 1; --b) {
    ASSERT_TRUE(c.Remove(std::string("p") + static_cast<char>(b) + "x"));
    auto rest = c.ScanFrom("", true, 1000);
    ASSERT_EQ(rest.size(), static_cast<size_t>(b));
  }
  ASSERT_TRUE(c.Remove(std::string("p") + '\0' + "x"));
  EXPECT_TRUE(c.ScanFrom("", true, 10).empty());
  EXPECT_EQ(tree.entries(), 0u);
  c.worker.epoch().Reclaim();
  c.worker.epoch().Reclaim();
  c.worker.epoch().Reclaim();
  // Only the root remains.
  EXPECT_EQ(tree.bytes(), tree.root()->bytes());
  EXPECT_EQ(tree.nodes(), 1u);
}

TEST(ArtTreeTest, BigEndianIntegersScanInNumericOrder) {
  Tree tree;
  Client c(tree);
  std::mt19937_64 rng(3);
  std::set<uint64_t> keys;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t k = i % 2 ? rng() : rng() % 100000;  // dense and sparse regions
    keys.insert(k);
    ASSERT_TRUE(c.Put(EncodeU64(k), EncodeU64(k ^ 1)).ok());
  }
  auto all = c.ScanFrom("", true, ~size_t{0});
  ASSERT_EQ(all.size(), keys.size());
  auto it = keys.begin();
  for (auto& [k, v] : all) {
    ASSERT_EQ(DecodeU64(k), *it);
    ASSERT_EQ(DecodeU64(v), *it ^ 1);
    ++it;
  }
}

TEST(ArtTreeTest, CountersAndBitsFollowTheOperations) {
  TreeOptions o;
  o.track_depth = 1;
  o.sample_shift = 0;  // count every pass exactly
  Tree tree(o);
  Client c(tree);
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(c.Put(EncodeU64(i << 48), "v", leaf_flags::kDirty).ok());
  EXPECT_EQ(tree.root()->inserts(), 1000);
  EXPECT_EQ(tree.root()->accesses(), 1000u);  // every write passed through the root
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(c.Get(EncodeU64(i << 48)).has_value());
  EXPECT_EQ(tree.root()->accesses(), 1010u);
  EXPECT_NE(tree.root()->hot_bits() & node_bits::kDirtyBit, 0);
  std::vector<UnitInfo> children;
  {
    EpochGuard g(c.worker.epoch());
    ASSERT_TRUE(ChildUnits(tree, "", c.worker, &children).ok());
  }
  // Keys i << 48 for i < 1000: first bytes 0..3, each a node of up to 256 keys at hop 1.
  ASSERT_EQ(children.size(), 4u);
  int64_t sum = 0;
  for (const UnitInfo& u : children) {
    ASSERT_NE(u.node, nullptr);
    EXPECT_EQ(u.hop, 1u);
    sum += u.inserts;
  }
  EXPECT_EQ(sum, 1000);
}

TEST(ArtTreeTest, FlagChangeDuringDecideMakesItDecideAgain) {
  Tree tree;
  Client c(tree);
  ASSERT_TRUE(c.Put("k", "v1", leaf_flags::kDirty).ok());
  int calls = 0;
  EpochGuard g(c.worker.epoch());
  Status s = tree.Modify("k", c.worker, [&](const Leaf* cur, uint32_t flags, bool) {
    ++calls;
    if (calls == 1) {
      // A cleaner marks the leaf while we decide: our CAS from the old flags must fail.
      uint32_t f = flags;
      EXPECT_TRUE(const_cast<Leaf*>(cur)->CasFlags(f, f | leaf_flags::kInY));
      return Decision::Put("v2", leaf_flags::kDirty);
    }
    EXPECT_NE(flags & leaf_flags::kInY, 0u);  // the second call sees the cleaner's mark
    return Decision::Put("v2", leaf_flags::kDirty | (flags & leaf_flags::kInY));
  });
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(calls, 2);
  auto p = tree.Lookup("k", c.worker);
  ASSERT_TRUE(p.ok() && p->leaf != nullptr);
  EXPECT_EQ(p->leaf->flags(), leaf_flags::kDirty | leaf_flags::kInY);
}

TEST(ArtTreeTest, DetachUnlinksTheRangeOnlyAfterFrozenSucceeds) {
  Tree tree;
  Client c(tree);
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(c.Put("ab" + std::to_string(i), "v", leaf_flags::kDirty).ok());
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(c.Put("ac" + std::to_string(i), "w").ok());
  const uint64_t entries = tree.entries();
  EpochGuard g(c.worker.epoch());
  // A failing cold store: nothing changes.
  auto failed = Detach(tree, "ab1", c.worker, [](const std::vector<Leaf*>&) { return Status::IoError("disk"); });
  EXPECT_TRUE(failed.status().IsIoError());
  EXPECT_EQ(tree.entries(), entries);
  bool mounted = true;
  EXPECT_TRUE(c.Get("ab15", &mounted).has_value());
  EXPECT_FALSE(mounted);
  // Detaching "ab1" takes ab1, ab10..ab19, ab100..ab199: 111 keys.
  std::set<std::string> frozen;
  auto d = Detach(tree, "ab1", c.worker, [&](const std::vector<Leaf*>& leaves) {
    for (const Leaf* l : leaves) frozen.insert(std::string(l->key()));
    return Status::Ok();
  });
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->leaves, 111u);
  EXPECT_EQ(frozen.size(), 111u);
  for (const std::string& k : frozen) ASSERT_EQ(k.substr(0, 3), "ab1");
  EXPECT_EQ(tree.entries(), entries - 111);
  EXPECT_FALSE(c.Get("ab150", &mounted).has_value());
  EXPECT_TRUE(mounted);  // the parent is now a mount point
  EXPECT_TRUE(c.Get("ab2").has_value());
  EXPECT_TRUE(c.Get("ac3").has_value());
  EXPECT_TRUE(Detach(tree, "ab1", c.worker, [](const std::vector<Leaf*>&) { return Status::Ok(); }).status().IsNotFound());
  // A single leaf.
  auto one = Detach(tree, "ac3", c.worker, [](const std::vector<Leaf*>& l) {
    EXPECT_EQ(l.size(), 11u);  // ac3, ac30..ac39
    return Status::Ok();
  });
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(c.Get("ac3").has_value());
}

TEST(ArtTreeTest, UnitWalkCoversEveryKeyOnceInOrder) {
  Tree tree;
  Client c(tree);
  std::mt19937_64 rng(5);
  std::set<std::string> keys;
  for (int i = 0; i < 5000; ++i) {
    const std::string k = EncodeU64(rng() % (1ull << 30));
    keys.insert(k);
    ASSERT_TRUE(c.Put(k, "v").ok());
  }
  for (uint32_t unit_hop : {1u, 2u, 3u}) {
    EpochGuard g(c.worker.epoch());
    std::vector<std::string> paths;
    size_t covered = 0;
    ASSERT_TRUE(ForEachUnit(tree, unit_hop, "", c.worker, [&](const UnitInfo& u) {
      paths.push_back(u.path);
      for (auto it = keys.lower_bound(u.path); it != keys.end() && it->compare(0, u.path.size(), u.path) == 0; ++it)
        ++covered;
      return true;
    }).ok());
    EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end()));
    EXPECT_EQ(covered, keys.size()) << "unit hop " << unit_hop;
    // Resuming after a unit gives the ones after it.
    const size_t at = paths.size() / 2;
    std::vector<std::string> rest;
    ASSERT_TRUE(ForEachUnit(tree, unit_hop, paths[at], c.worker, [&](const UnitInfo& u) {
      rest.push_back(u.path);
      return true;
    }).ok());
    EXPECT_EQ(rest, std::vector<std::string>(paths.begin() + at + 1, paths.end()));
  }
}

// Writers own interleaved keys (so they share nodes and race on splits, growth and shrinking),
// check their own last write after every operation, and one thread scans for order.
TEST(ArtTreeTest, ConcurrentWritersReadersAndScannersAgree) {
  Tree tree;
  constexpr int kThreads = 4;
  constexpr uint64_t kKeysPerThread = 3000;
  std::atomic<int> failures{0};
  std::atomic<bool> stop{false};
  std::vector<std::map<uint64_t, uint64_t>> models(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Client c(tree);
      std::mt19937_64 rng(t);
      auto& model = models[t];
      for (int op = 0; op < 20000; ++op) {
        const uint64_t k = (rng() % kKeysPerThread) * kThreads + t;
        const std::string key = EncodeU64(k);
        if (rng() % 3 == 0) {
          if (c.Remove(key) != (model.erase(k) == 1)) failures.fetch_add(1);
        } else {
          const uint64_t v = (uint64_t(op) << 8) | t;
          if (!c.Put(key, EncodeU64(v)).ok()) failures.fetch_add(1);
          model[k] = v;
        }
        auto got = c.Get(key);
        auto it = model.find(k);
        if (got.has_value() != (it != model.end()) || (got && DecodeU64(*got) != it->second)) failures.fetch_add(1);
      }
    });
  std::thread scanner([&] {
    Client c(tree);
    do {
      auto all = c.ScanFrom(EncodeU64(1000), true, 500);
      for (size_t i = 1; i < all.size(); ++i)
        if (!(all[i - 1].first < all[i].first)) failures.fetch_add(1);
    } while (!stop.load());
  });
  for (auto& th : threads) th.join();
  stop.store(true);
  scanner.join();
  EXPECT_EQ(failures.load(), 0);
  Client c(tree);
  std::map<std::string, std::string> want;
  for (auto& m : models)
    for (auto& [k, v] : m) want[EncodeU64(k)] = EncodeU64(v);
  auto all = c.ScanFrom("", true, ~size_t{0});
  EXPECT_EQ(all, (std::vector<std::pair<std::string, std::string>>(want.begin(), want.end())));
  EXPECT_EQ(tree.entries(), want.size());
}

// Scanners must return every key that stays in the tree while writers split compressed paths
// above it: a split changes the node below in place (its prefix loses the bytes the new node
// above takes), and a scanner that took the child's version without validating the parent
// again walked it with the old path and skipped its keys (seen in IndeXY's harness).
TEST(ArtTreeTest, ConcurrentScansSeeStableKeysWhilePathsSplit) {
  Tree tree;
  Client setup(tree);
  // Groups of stable keys, each group under a long compressed path of its own, never changed.
  constexpr int kGroups = 400;
  auto group_path = [](int g) {  // appended, not `"G" + ...`: GCC 12's false -Wrestrict
    std::string path(1, 'G');
    path += std::to_string(1000 + g);
    path.append(28, 'p');
    return path;
  };
  std::vector<std::string> stable;
  for (int g = 0; g < kGroups; ++g)
    for (char c : {'A', 'B', 'C'}) {
      stable.push_back(group_path(g) + c);
      ASSERT_TRUE(setup.Put(stable.back(), "s").ok());
    }
  std::atomic<int> failures{0}, scans{0};
  std::atomic<bool> stop{false};
  std::thread scanner([&] {
    Client c(tree);
    while (!stop.load()) {
      std::set<std::string> seen;
      for (auto& [k, v] : c.ScanFrom("", true, ~size_t{0})) seen.insert(k);
      for (const std::string& k : stable)
        if (!seen.count(k)) failures.fetch_add(1);
      scans.fetch_add(1);
    }
  });
  std::thread writer([&] {
    Client c(tree);
    std::mt19937_64 rng(1);
    while (scans.load() == 0) std::this_thread::yield();
    // Keys leaving a group's path inside its compressed prefix split it: the node above takes
    // the leading bytes, the node below is changed in place. Each split is a fresh one.
    for (int g = 0; g < kGroups; ++g) {
      const std::string p = group_path(g);
      for (size_t at = p.size() - 2; at > 5; at -= 1 + rng() % 5) EXPECT_TRUE(c.Put(p.substr(0, at) + 'a', "x").ok());
      if (g % 16 == 0) std::this_thread::yield();
    }
    stop.store(true);
  });
  writer.join();
  scanner.join();
  EXPECT_GT(scans.load(), 1);
  EXPECT_EQ(failures.load(), 0) << "stable keys missed by scans while paths split";
}

// Detaching while writers write: every write either reaches a frozen set (the stand-in for Y)
// before its subtree is unlinked, or stays in X; none is lost (IndeXY's trap R2).
TEST(ArtTreeTest, ConcurrentDetachLosesNoWrite) {
  TreeOptions o;
  o.track_depth = 2;
  Tree tree(o);
  constexpr int kWriters = 3;
  std::atomic<int> failures{0};
  std::atomic<bool> stop{false};
  runtime::Mutex y_mu;
  std::map<std::string, std::string> y;  // what detaches froze, newest last
  std::vector<std::map<uint64_t, uint64_t>> models(kWriters);
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t)
    threads.emplace_back([&, t] {
      Client c(tree);
      std::mt19937_64 rng(100 + t);
      for (int op = 0; op < 15000; ++op) {
        const uint64_t k = ((rng() % 2000) * kWriters + t) << 20;  // spread over 2 key bytes
        const uint64_t v = (uint64_t(op) << 8) | t;
        if (!c.Put(EncodeU64(k), EncodeU64(v)).ok()) failures.fetch_add(1);
        models[t][k] = v;
      }
    });
  std::thread detacher([&] {
    Client c(tree);
    std::mt19937_64 rng(7);
    uint64_t detached = 0;
    do {
      // A prefix of 5 bytes: a node or leaf at hop 1 or 2.
      const std::string prefix = EncodeU64((rng() % 6000) << 20).substr(0, 5);
      EpochGuard g(c.worker.epoch());
      auto d = Detach(tree, prefix, c.worker, [&](const std::vector<Leaf*>& leaves) {
        std::lock_guard lock(y_mu);
        for (const Leaf* l : leaves) y[std::string(l->key())] = std::string(l->value());
        return Status::Ok();
      });
      if (d.ok()) detached += d->leaves;
      else if (!d.status().IsNotFound()) failures.fetch_add(1);
    } while (!stop.load() || detached == 0);
  });
  for (auto& th : threads) th.join();
  stop.store(true);
  detacher.join();
  EXPECT_EQ(failures.load(), 0);
  // X wins over Y (X holds whatever was written after a detach).
  Client c(tree);
  std::map<std::string, std::string> merged = y;
  for (auto& [k, v] : c.ScanFrom("", true, ~size_t{0})) merged[k] = v;
  for (int t = 0; t < kWriters; ++t)
    for (auto& [k, v] : models[t]) {
      auto it = merged.find(EncodeU64(k));
      ASSERT_NE(it, merged.end()) << "key " << k << " lost";
      ASSERT_EQ(DecodeU64(it->second), v) << "key " << k;
    }
}

}  // namespace
}  // namespace dmindex::art
