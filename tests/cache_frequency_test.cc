// The cache's frequency policy (CacheOptions::frequency, DEX's policy=lfu; docs/DEX.md "How
// the pieces fit"): the count-min sketch's estimates and halving, TinyLFU's admission against
// the next eviction victim, and cooling that takes the least frequent sampled path end. One
// thread and seeded random streams: every case is deterministic.
#include <gtest/gtest.h>

#include "cache/frequency_sketch.h"
#include "cache_test_tree.h"

namespace dmindex::cache {
namespace {

using testing::FabricPages;
using testing::TestLayout;
using testing::TestTree;

GlobalAddress Node(uint64_t i) { return GlobalAddress(0, 4096 + i * 1024); }

TEST(CacheFrequency, SketchCountsHalvesAndSaturates) {
  FrequencySketch sketch(/*counters=*/256, /*window=*/1000);
  EXPECT_EQ(sketch.counters_per_row(), 256u);
  for (int i = 0; i < 6; ++i) sketch.Increment(Node(1));
  sketch.Increment(Node(2));
  // Count-min never underestimates; with 4 rows of 256 and three nodes, no collision
  // reaches all four rows of one of them.
  EXPECT_EQ(sketch.Estimate(Node(1)), 6u);
  EXPECT_EQ(sketch.Estimate(Node(2)), 1u);
  EXPECT_EQ(sketch.Estimate(Node(3)), 0u);
  // The 1000th increment ends the window: every counter is halved.
  for (int i = 0; i < 1000 - 7 - 1; ++i) sketch.Increment(Node(100 + i % 5));
  EXPECT_EQ(sketch.halvings(), 0u);
  sketch.Increment(Node(1));
  EXPECT_EQ(sketch.halvings(), 1u);
  EXPECT_EQ(sketch.Estimate(Node(1)), 3u);  // (6 + 1) / 2
  EXPECT_EQ(sketch.Estimate(Node(2)), 0u);  // 1 / 2
  // Counters saturate instead of wrapping.
  FrequencySketch big(256, 1u << 20);
  for (int i = 0; i < 300; ++i) big.Increment(Node(7));
  EXPECT_EQ(big.Estimate(Node(7)), 255u);
}

// Every node's counters in one block: nodes that share a block keep their own counts (the
// four rows collide only when all four quarters' nibbles agree).
TEST(CacheFrequency, NodesSharingABlockKeepTheirOwnCounts) {
  FrequencySketch sketch(/*counters=*/64, /*window=*/1u << 20);  // 4 blocks: most nodes share
  for (uint64_t i = 0; i < 16; ++i)
    for (uint64_t n = 0; n <= i; ++n) sketch.Increment(Node(i));
  uint32_t exact = 0;
  for (uint64_t i = 0; i < 16; ++i) {
    EXPECT_GE(sketch.Estimate(Node(i)), i + 1) << "node " << i << " underestimated";
    exact += sketch.Estimate(Node(i)) == i + 1;
  }
  EXPECT_GE(exact, 12u) << "16 nodes over 4 blocks of 16 counters a row: few estimates inflated";
}

std::unique_ptr<BufferManager> MakeFrequencyCache(size_t frames, double leaf_admission, uint32_t lfu_samples) {
  static const TestLayout layout;
  CacheOptions o;
  o.page_bytes = testing::kPageBytes;
  o.cache_bytes = frames * testing::kPageBytes;
  o.leaf_admission = leaf_admission;
  o.frequency = true;
  o.touch_period = 1;  // count every Touch
  o.lfu_samples = lfu_samples;
  o.seed = 11;
  auto bm = BufferManager::Create(o, layout);
  EXPECT_TRUE(bm.ok()) << bm.status().ToString();
  return std::move(bm).value();
}

// Fills a 16-frame cache with the root, inner nodes 0-2 and leaves 0-11 of a 4 x 4 x 4 tree
// (P_A = 1 admits every leaf), without any eviction.
void Fill(TestTree& tree, BufferManager& bm, CacheWorker& w, FabricPages& pages) {
  uint64_t v = 0;
  for (size_t leaf = 0; leaf < 12; ++leaf) ASSERT_TRUE(tree.Access(bm, w, pages, leaf, 0, false, &v).ok());
  ASSERT_EQ(bm.Stats().frames_used, 16u) << bm.Stats().ToString();
  ASSERT_EQ(bm.Stats().evicted, 0u);
}

BufferFrame* OnlyCooling(BufferManager& bm) {
  BufferFrame* found = nullptr;
  for (size_t i = 0; i < bm.frame_count(); ++i)
    if (bm.frame(i).load_state() == FrameState::kCooling) {
      EXPECT_EQ(found, nullptr) << "more than one cooling frame";
      found = &bm.frame(i);
    }
  return found;
}

// DEX counts a leaf's access in two halves around the leaf's search (BufferManager::BeginTouch):
// the first only locates the counters, the second counts, once; Touch is both at once.
TEST(CacheFrequency, ATouchInTwoHalvesCountsOnceAtItsEnd) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeFrequencyCache(16, 1.0, 1);  // touch_period 1: every touch counts
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  bm->BeginTouch(Node(1), Node(2), w);
  EXPECT_EQ(bm->EstimatedFrequency(Node(1)), 0u) << "counted before its end";
  bm->EndTouch(w);
  EXPECT_EQ(bm->EstimatedFrequency(Node(1)), 1u);
  EXPECT_EQ(bm->EstimatedFrequency(Node(2)), 1u);
  bm->EndTouch(w);  // nothing begun: nothing counted
  EXPECT_EQ(bm->EstimatedFrequency(Node(1)), 1u);
  bm->Touch(Node(1), GlobalAddress{}, w);
  EXPECT_EQ(bm->EstimatedFrequency(Node(1)), 2u);
  EXPECT_EQ(bm->EstimatedFrequency(Node(2)), 1u);
}

TEST(CacheFrequency, AdmitsAMissedLeafOnlyWhenItBeatsTheVictim) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeFrequencyCache(16, 1.0, 1);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  EXPECT_TRUE(bm->WorthAdmitting(tree->levels[0][15], w)) << "a cache still filling admits";
  Fill(*tree, *bm, w, pages);
  // Full, nothing cooling: the next victim is not known yet, so admission does not refuse.
  EXPECT_TRUE(bm->WorthAdmitting(tree->levels[0][15], w));
  size_t cooled = 0;
  for (int tries = 0; cooled == 0 && tries < 1000; ++tries) cooled = *bm->CoolSamples(w, 1);
  ASSERT_EQ(cooled, 1u);
  BufferFrame* victim = OnlyCooling(*bm);
  ASSERT_NE(victim, nullptr);
  const GlobalAddress hot = tree->levels[0][14], warm = tree->levels[0][13], cold = tree->levels[0][15];
  for (int i = 0; i < 2; ++i) bm->Touch(victim->remote(), {}, w);
  for (int i = 0; i < 3; ++i) bm->Touch(hot, {}, w);
  for (int i = 0; i < 2; ++i) bm->Touch(warm, {}, w);
  EXPECT_TRUE(bm->WorthAdmitting(hot, w)) << "3 accesses beat the victim's 2";
  EXPECT_FALSE(bm->WorthAdmitting(warm, w)) << "a tie keeps what is cached";
  EXPECT_FALSE(bm->WorthAdmitting(cold, w));
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

TEST(CacheFrequency, WithoutADrawOnlyTheCallersWordAdmitsALeaf) {
  // P_A strictly between 0 and 1: the frequency policy makes no draw, so a leaf that its
  // caller did not call hot (Resolve never does) is never admitted; inner nodes always are.
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeFrequencyCache(64, 0.9, 8);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  uint64_t v = 0;
  for (size_t leaf = 0; leaf < tree->leaves(); ++leaf) ASSERT_TRUE(tree->Access(*bm, w, pages, leaf, 0, false, &v).ok());
  const CacheStats s = bm->Stats();
  EXPECT_EQ(s.admitted, 1u + 4u) << "the root and the inner nodes";
  EXPECT_EQ(s.bypassed, tree->leaves());
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

TEST(CacheFrequency, CoolingTakesTheLeastFrequentSampledLeaf) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeFrequencyCache(16, 1.0, 64);
  FabricPages pages(*tree->fabric);
  CacheWorker w(*bm, pages);
  Fill(*tree, *bm, w, pages);
  // Every cached leaf but leaf 5 was accessed five times since.
  for (size_t leaf = 0; leaf < 12; ++leaf)
    if (leaf != 5)
      for (int i = 0; i < 5; ++i) bm->Touch(tree->levels[0][leaf], {}, w);
  size_t cooled = 0;
  for (int tries = 0; cooled == 0 && tries < 1000; ++tries) cooled = *bm->CoolSamples(w, 1);
  ASSERT_EQ(cooled, 1u);
  BufferFrame* victim = OnlyCooling(*bm);
  ASSERT_NE(victim, nullptr);
  EXPECT_EQ(victim->remote(), tree->levels[0][5]) << "64 samples of 12 path ends found the cold one";
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

}  // namespace
}  // namespace dmindex::cache
