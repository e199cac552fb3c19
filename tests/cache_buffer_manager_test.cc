// The compute-side cache on a synthetic remote tree: hits after warm-up, one READ per
// concurrent miss, path-aware cooling order, lazy admission ratio, and a concurrent stress
// run with a cache much smaller than the tree, torn verbs injected, that must lose no update.
#include <gtest/gtest.h>

#include <random>

#include "cache_test_tree.h"
#include "common/retry_status.h"
#include "common/sync.h"

namespace dmindex::cache {
namespace {

using testing::FabricPages;
using testing::TestLayout;
using testing::TestTree;

std::unique_ptr<BufferManager> MakeCache(size_t frames, double leaf_admission, uint64_t seed = 7) {
  static const TestLayout layout;
  CacheOptions o;
  o.page_bytes = testing::kPageBytes;
  o.cache_bytes = frames * testing::kPageBytes;
  o.leaf_admission = leaf_admission;
  o.seed = seed;
  auto bm = BufferManager::Create(o, layout);
  EXPECT_TRUE(bm.ok()) << bm.status().ToString();
  return std::move(bm).value();
}

TEST(BufferManager, RejectsBadOptions) {
  TestLayout layout;
  CacheOptions o;
  o.page_bytes = testing::kPageBytes;
  o.cache_bytes = 4 * testing::kPageBytes;
  EXPECT_TRUE(BufferManager::Create(o, layout).status().IsInvalidArgument());
  o.cache_bytes = 1 << 20;
  o.leaf_admission = 1.5;
  EXPECT_TRUE(BufferManager::Create(o, layout).status().IsInvalidArgument());
}

TEST(BufferManager, WarmCacheServesEveryAccessWithoutReads) {
  auto tree = TestTree::Build(4, 3);  // 21 nodes
  auto bm = MakeCache(64, 1.0);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  uint64_t v = 0;
  const fabric::VerbCounts before = tree->fabric->TotalCounts();
  for (size_t leaf = 0; leaf < tree->leaves(); ++leaf)
    ASSERT_TRUE(tree->Access(*bm, w, pages, leaf, 0, false, &v).ok());
  EXPECT_EQ(bm->Stats().misses, tree->nodes());
  const uint64_t reads = tree->fabric->TotalCounts().reads;
  EXPECT_EQ(reads - before.reads, tree->nodes());
  for (size_t leaf = 0; leaf < tree->leaves(); ++leaf)
    ASSERT_TRUE(tree->Access(*bm, w, pages, leaf, 0, true, &v).ok());
  EXPECT_EQ(tree->fabric->TotalCounts().reads, reads) << "a warm cache must not read";
  EXPECT_EQ(tree->fabric->TotalCounts().writes, before.writes) << "dirty pages stay cached";
  EXPECT_GE(bm->Stats().hits, tree->leaves() * tree->height());
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

TEST(BufferManager, ConcurrentMissesOnOneNodeIssueOneRead) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64, 1.0);
  constexpr int kThreads = 8;
  Barrier start(kThreads);
  std::vector<std::unique_ptr<FabricPages>> pages;
  for (int t = 0; t < kThreads; ++t) {
    pages.push_back(std::make_unique<FabricPages>(*tree->fabric));
    pages.back()->set_delay_ms(30);  // every READ is slow: the misses overlap
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      CacheWorker w(*bm, *pages[t]);
      start.ArriveAndWait();
      uint64_t v = 0;
      EXPECT_TRUE(tree->Access(*bm, w, *pages[t], 5, 1, true, &v).ok());
    });
  for (auto& th : threads) th.join();
  for (GlobalAddress node : {tree->root(), tree->levels[1][1], tree->levels[0][5]}) {
    int loads = 0;
    for (auto& p : pages) loads += p->loads(node);
    EXPECT_EQ(loads, 1) << "node " << node << " was read " << loads << " times";
  }
  EXPECT_EQ(bm->Stats().misses, 3u);
  FabricPages reader(*tree->fabric);
  CacheWorker w(*bm, reader);
  uint64_t v = 0;
  ASSERT_TRUE(tree->Access(*bm, w, reader, 5, 1, false, &v).ok());
  EXPECT_EQ(v, uint64_t{kThreads});
}

TEST(BufferManager, PathAwareCoolingCoolsTheEndOfThePathFirst) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64, 1.0);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  uint64_t v = 0;
  ASSERT_TRUE(tree->Access(*bm, w, pages, 6, 0, true, &v).ok());  // root -> inner 1 -> leaf 6
  auto state = [&](GlobalAddress a) { return bm->Lookup(a)->load_state(); };
  const GlobalAddress path[] = {tree->levels[0][6], tree->levels[1][1], tree->root()};
  // Whichever frame is sampled, cooling is delegated down the path: leaf, inner, root.
  for (int cooled = 0; cooled < 3; ++cooled) {
    size_t n = 0;
    for (int tries = 0; n == 0 && tries < 100000; ++tries) n = *bm->CoolSamples(w, 1);
    ASSERT_EQ(n, 1u);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(state(path[i]), i <= cooled ? FrameState::kCooling : FrameState::kHot)
          << "after " << cooled + 1 << " coolings, node " << i << " of the path";
    ASSERT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
  }
  // The dirty leaf was written back when it cooled.
  uint64_t remote = 0;
  ASSERT_TRUE(pages.ep().Read(tree->levels[0][6] + testing::kSlotsOffset, &remote, 8).ok());
  EXPECT_EQ(remote, 1u);
  // Second chance: touching the cooling path swizzles it back without a READ.
  const uint64_t reads = tree->fabric->TotalCounts().reads;
  ASSERT_TRUE(tree->Access(*bm, w, pages, 6, 0, false, &v).ok());
  EXPECT_EQ(v, 1u);
  EXPECT_EQ(tree->fabric->TotalCounts().reads, reads);
  for (GlobalAddress a : path) EXPECT_EQ(state(a), FrameState::kHot);
  EXPECT_EQ(bm->cooling_size(), 0u);
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

// Admitted share of leaf misses, with a cache large enough to never evict.
double LeafAdmissionShare(double p_a, uint64_t* leaf_misses) {
  auto tree = TestTree::Build(24, 3);  // 1 + 24 inner + 576 leaves
  auto bm = MakeCache(1024, p_a, 99);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  std::mt19937_64 rng(5);
  uint64_t v = 0;
  for (int i = 0; i < 8000; ++i)
    EXPECT_TRUE(tree->Access(*bm, w, pages, rng() % tree->leaves(), 0, false, &v).ok());
  const CacheStats s = bm->Stats();
  const uint64_t inner = 1 + 24;
  EXPECT_EQ(s.evicted, 0u);
  EXPECT_EQ(s.admitted + s.bypassed, s.misses);
  *leaf_misses = s.misses - inner;  // inner nodes: always admitted, missed once
  return double(s.admitted - inner) / double(*leaf_misses);
}

TEST(BufferManager, LazyAdmissionAdmitsAboutPAOfMissedLeaves) {
  uint64_t misses = 0;
  const double share = LeafAdmissionShare(0.1, &misses);
  EXPECT_GT(misses, 3000u);
  EXPECT_NEAR(share, 0.1, 0.02) << "over " << misses << " leaf misses";
  EXPECT_DOUBLE_EQ(LeafAdmissionShare(1.0, &misses), 1.0);
  EXPECT_DOUBLE_EQ(LeafAdmissionShare(0.0, &misses), 0.0);
}

// Eight threads, a cache of 24 frames for a tree of 43 nodes, skewed access, half the
// operations increments, READs and WRITEs torn: every increment must reach remote memory,
// every read must be monotonic, and the cache structure must be intact afterwards.
TEST(BufferManager, ConcurrentStressUnderEvictionLosesNoUpdate) {
  fabric::FaultOptions faults;
  faults.tear = true;
  auto tree = TestTree::Build(6, 3, faults);
  auto bm = MakeCache(24, 0.5);
  constexpr int kThreads = 8, kOps = 2000, kCounters = 4;
  std::vector<std::atomic<uint64_t>> expected(tree->leaves() * kCounters);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      FabricPages pages(*tree->fabric);
      CacheWorker w(*bm, pages);
      std::mt19937_64 rng(t + 1);
      std::vector<uint64_t> last_seen(expected.size(), 0);
      for (int i = 0; i < kOps; ++i) {
        // Skewed: the smaller of two uniform picks favours low leaves.
        const size_t leaf = std::min(rng() % tree->leaves(), rng() % tree->leaves());
        const size_t c = rng() % kCounters, k = leaf * kCounters + c;
        const bool inc = rng() % 2 == 0;
        uint64_t v = 0;
        Status s = tree->Access(*bm, w, pages, leaf, c, inc, &v);
        if (!s.ok()) {
          ADD_FAILURE() << s.ToString();
          failures++;
          return;
        }
        if (inc) expected[k].fetch_add(1);
        if (v < last_seen[k]) failures++;  // a counter went backwards
        last_seen[k] = v;
      }
    });
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  const CacheStats s = bm->Stats();
  EXPECT_GT(s.evicted, 0u) << s.ToString();
  EXPECT_GT(s.write_backs, 0u) << s.ToString();
  EXPECT_GT(s.bypassed, 0u) << s.ToString();
  ASSERT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  ASSERT_TRUE(bm->FlushDirty(w).ok());
  for (size_t leaf = 0; leaf < tree->leaves(); ++leaf)
    for (int c = 0; c < kCounters; ++c) {
      uint64_t remote = 0;
      ASSERT_TRUE(pages.ep().Read(tree->levels[0][leaf] + testing::kSlotsOffset + 8 * c, &remote, 8).ok());
      EXPECT_EQ(remote, expected[leaf * kCounters + c].load()) << "leaf " << leaf << " counter " << c;
    }
}

// Caches the whole tree and returns the frame of `addr`.
BufferFrame* WarmAll(TestTree& tree, BufferManager& bm, CacheWorker& w, FabricPages& pages) {
  uint64_t v = 0;
  for (size_t leaf = 0; leaf < tree.leaves(); ++leaf)
    EXPECT_TRUE(tree.Access(bm, w, pages, leaf, 0, false, &v).ok());
  return bm.Lookup(tree.root());
}

TEST(BufferManager, FlushWritesUnswizzledImages) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64, 1.0);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  BufferFrame* root = WarmAll(*tree, *bm, w, pages);
  ASSERT_NE(root, nullptr);
  ASSERT_TRUE(Swip::Load(testing::Entry(root->page, 0)).swizzled());
  { ExclusiveGuard x(root); x.MarkDirty(); }
  const uint64_t writes = tree->fabric->TotalCounts().writes;
  auto flushed = bm->FlushDirty(w);
  ASSERT_TRUE(flushed.ok());
  EXPECT_EQ(*flushed, 1u);
  EXPECT_EQ(tree->fabric->TotalCounts().writes, writes + 1);
  std::vector<std::byte> remote(testing::kPageBytes);
  ASSERT_TRUE(pages.ep().Read(tree->root(), remote.data(), testing::kPageBytes).ok());
  for (size_t c = 0; c < tree->fanout; ++c)
    EXPECT_EQ(*testing::Entry(remote.data(), c), tree->levels[1][c].raw()) << "slot " << c;
  EXPECT_FALSE(root->dirty.load());
  EXPECT_EQ(*bm->FlushDirty(w), 0u);
}

TEST(BufferManager, RefreshKeepsChildrenStillReferencedAndOrphansTheRest) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64, 1.0);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  WarmAll(*tree, *bm, w, pages);
  BufferFrame* inner = bm->Lookup(tree->levels[1][0]);
  BufferFrame* kept = bm->Lookup(tree->levels[0][0]);
  BufferFrame* dropped = bm->Lookup(tree->levels[0][3]);
  // A fresh image in which another compute node moved leaf 3 away (a split elsewhere).
  std::vector<std::byte> fresh(testing::kPageBytes);
  ASSERT_TRUE(pages.ep().Read(tree->levels[1][0], fresh.data(), testing::kPageBytes).ok());
  testing::SetCount(fresh.data(), 3);
  {
    ExclusiveGuard x(inner);
    bm->Refresh(x, fresh.data());
  }
  EXPECT_EQ(Swip::Load(testing::Entry(inner->page, 0)), Swip::Local(kept));
  EXPECT_EQ(kept->parent.load(), inner);
  EXPECT_EQ(dropped->parent.load(), nullptr);
  EXPECT_EQ(dropped->load_state(), FrameState::kHot);  // still cached, an orphan
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
  // Remote memory got newer: the orphan is dropped, the kept leaf invalidated too.
  ASSERT_TRUE(bm->Invalidate(tree->levels[0][3], w).ok());
  ASSERT_TRUE(bm->Invalidate(tree->levels[0][0], w).ok());
  EXPECT_EQ(bm->Lookup(tree->levels[0][3]), nullptr);
  EXPECT_EQ(bm->Lookup(tree->levels[0][0]), nullptr);
  EXPECT_FALSE(Swip::Load(testing::Entry(inner->page, 0)).swizzled());
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
  // The next access reads it again.
  const uint64_t reads = tree->fabric->TotalCounts().reads;
  uint64_t v = 0;
  ASSERT_TRUE(tree->Access(*bm, w, pages, 0, 0, false, &v).ok());
  EXPECT_EQ(tree->fabric->TotalCounts().reads, reads + 1);
}

// What a split does: a new sibling takes the upper half of an inner node's children and is
// hooked into the root. Swizzled children must follow their new parent.
TEST(BufferManager, SplitSiblingAdoptsMovedChildren) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64, 1.0);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  BufferFrame* root = WarmAll(*tree, *bm, w, pages);
  BufferFrame* inner = bm->Lookup(tree->levels[1][2]);
  alloc::NodeAllocator allocator(2);
  GlobalAddress sibling_addr = std::move(allocator.Allocate(pages.ep(), testing::kPageBytes)).value();
  {
    ExclusiveGuard rx(root), ix(inner);
    auto sibling = bm->AllocateNew(sibling_addr, w);
    ASSERT_TRUE(sibling.ok()) << sibling.status().ToString();
    testing::SetHeader(sibling->page(), sibling_addr, false, 2);
    for (size_t c = 0; c < 2; ++c)
      testing::StoreWord(sibling->page(), testing::kSlotsOffset + 8 * c,
                         testing::LoadWord(ix.page(), testing::kSlotsOffset + 8 * (2 + c)));
    testing::SetCount(ix.page(), 2);
    bm->Adopt(*sibling);
    testing::SetCount(rx.page(), 5);
    bm->Attach(rx, testing::Entry(rx.page(), 4), *sibling);
  }
  BufferFrame* moved = bm->Lookup(tree->levels[0][2 * 4 + 3]);
  EXPECT_EQ(moved->parent.load(), bm->Lookup(sibling_addr));
  EXPECT_EQ(bm->Lookup(sibling_addr)->parent.load(), root);
  EXPECT_TRUE(bm->Lookup(sibling_addr)->dirty.load());
  ASSERT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
  // Cooling everything writes the new sibling back, with remote child pointers.
  for (int i = 0; i < 200000 && bm->cooling_size() < 6; ++i) ASSERT_TRUE(bm->CoolSamples(w, 1).ok());
  ASSERT_TRUE(bm->FlushDirty(w).ok());
  std::vector<std::byte> remote(testing::kPageBytes);
  ASSERT_TRUE(pages.ep().Read(sibling_addr, remote.data(), testing::kPageBytes).ok());
  EXPECT_EQ(*testing::Entry(remote.data(), 1), tree->levels[0][2 * 4 + 3].raw());
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

TEST(BufferManager, ClaimedNodeMakesOthersRestartUntilReleased) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64, 1.0);
  FabricPages pages(*tree->fabric), other_pages(*tree->fabric);
  CacheWorker owner(*bm, pages), other(*bm, other_pages);
  uint64_t v = 0;
  ASSERT_TRUE(tree->Access(*bm, owner, pages, 0, 0, false, &v).ok());  // cache the root
  ASSERT_TRUE(bm->ClaimTransient(tree->levels[1][3], owner).ok());
  EXPECT_TRUE(IsRetry(bm->ClaimTransient(tree->levels[1][3], other)));
  OptimisticGuard root(bm->Lookup(tree->root()));
  auto step = bm->Probe(root, testing::Entry(root.frame()->page, 3), other);
  EXPECT_EQ(step.kind, BufferManager::Step::kRetry);
  ASSERT_TRUE(owner.EndOperation().ok());
  ASSERT_TRUE(tree->Access(*bm, other, other_pages, 15, 0, false, &v).ok());
  EXPECT_EQ(other_pages.loads(tree->levels[1][3]), 1);
}

}  // namespace
}  // namespace dmindex::cache
