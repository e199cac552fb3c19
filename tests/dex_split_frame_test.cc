// A DEX split finds a frame for its new sibling in a full cache (dex_split.cc, SplitChild;
// docs/SYNCHRONIZATION.md, "DEX's cached pages"). It once took that frame with the latches of
// the parent and the splitting leaf held: in a cache whose every frame was the parent or one
// of its leaves, no frame could be cooled (a leaf is unswizzled under its parent's latch, which
// the splitter held itself), so each attempt sampled until its budget ran out and restarted
// into the same state - a single writer stalled for as long as a million attempts take, and
// with it every operation waiting for its compute node's gate (a checkpoint closing it waits
// for the writer). Reported by a loop of DexMerge.ScansStayCorrectWhileLeavesMerge under load
// (docs/results/dex-split-frame.md).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "dex_test_env.h"
#include "dex_u64_tree.h"
#include "fabric/inproc/inproc_fabric.h"

namespace dmindex {
namespace {

using Key = uint64_t;
using designs::dex::WriteOp;

constexpr uint32_t kFrames = 64;  // DEX's smallest cache
// Nodes large enough that one root holds the pointers to kFrames - 1 leaves.
constexpr uint32_t kNodeBytes = 2048;
// Restarts of the splitting insert. Two as a rule: reserving the frame cools a leaf below the
// root, which changes the root (the split's upgrade fails: restart), then the split (restart).
// One more each time a reservation's own sample evicted the leaf about to split (the descent
// then loads it into the reserved frame, and the split reserves again): about one round in
// thirty, so more than 16 in a row does not happen; without the fix the count has no bound.
constexpr uint64_t kMaxRestarts = 16;

struct FullCache {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<testing::U64DexTree> tree;
  size_t leaves = 0;
  Key last = 0;  // the largest key
};

// A tree of one root over `leaves` leaves (keys 2, 4, ..., values 7k) in one compute node
// whose cache holds exactly the root and every leaf: all frames hot, none cooling, none free.
FullCache Fill(size_t leaves_wanted) {
  FullCache c;
  c.fabric = testing::DexTestFabric();
  // Every missed leaf admitted; no offloading, no log and no background write-back: the only
  // thread that touches the cache is the test's.
  IndexOptions o = testing::DexTestOptions(
      "dex-split-frame", 1, {{"admission", "1"}, {"offload", "off"}, {"durability", "none"}, {"writeback_ms", "0"}});
  o.node_bytes = kNodeBytes;
  o.cache_bytes = kFrames * o.node_bytes;
  auto tree = testing::U64DexTree::Open(*c.fabric, o);
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  if (!tree.ok()) return c;
  c.tree = std::move(tree).value();
  testing::U64Workers ws(*c.tree, 0);
  // Ascending inserts fill leaves left to right; stop at the split that makes the leaves
  // wanted (the scan counts them after each insert that took a frame).
  cache::BufferManager& bm = *c.tree->compute_node(0).bm;
  uint64_t admitted = bm.Stats().admitted;
  for (Key k = 2;; k += 2) {
    EXPECT_TRUE(testing::U64Write(*c.tree, ws, WriteOp::kUpsert, k, 7 * k).ok());
    c.last = k;
    if (bm.Stats().admitted == admitted) continue;
    admitted = bm.Stats().admitted;
    std::vector<testing::U64Pair> sink;
    size_t leaves = 0;
    for (Key cursor = u64::kMinKey;;) {
      Key next = 0;
      sink.clear();
      EXPECT_TRUE(testing::U64ScanLeaf(*c.tree, ws, {}, cursor, 0, &sink, &next).ok());
      ++leaves;
      if (next == tree::U64BytesKV::kPosInf) break;
      cursor = next;
    }
    c.leaves = leaves;
    if (leaves == leaves_wanted) break;
    if (leaves > leaves_wanted || k > 1'000'000) {
      ADD_FAILURE() << "no tree of " << leaves_wanted << " leaves";
      return c;
    }
  }
  return c;
}

TEST(DexSplitFrame, ASplitFreesAFrameBelowItsOwnParent) {
  FullCache c = Fill(kFrames - 1);
  ASSERT_TRUE(c.tree);
  cache::BufferManager& bm = *c.tree->compute_node(0).bm;
  // Every cached node is the root or a leaf under it; put every leaf in the cache.
  testing::U64Workers ws(*c.tree, 0);
  for (Key k = 2; k <= c.last; k += 2) {
    uint64_t v = 0;
    Status s = testing::U64Lookup(*c.tree, ws, k, &v);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  const cache::CacheStats before = bm.Stats();
  ASSERT_EQ(before.frames, kFrames);
  ASSERT_EQ(before.frames_used, kFrames) << before.ToString();
  ASSERT_EQ(bm.cooling_size(), 0u) << before.ToString();
  ASSERT_EQ(before.evicted, 0u) << "a free frame may be left in a worker's set";
  const uint64_t retries_before = c.tree->Stats().retries;

  // Ascending keys past the last one fill the last leaf until one splits it: the inserts
  // before hit the cache, the split needs a frame (AllocateNew counts it admitted).
  std::atomic<bool> done{false};
  Status insert;
  Key split_key = 0;
  std::thread writer([&] {
    for (Key k = c.last + 2;; k += 2) {
      insert = testing::U64Write(*c.tree, ws, WriteOp::kUpsert, k, 7 * k);
      if (!insert.ok() || bm.Stats().admitted > before.admitted) {
        split_key = k;
        break;
      }
    }
    done = true;
  });
  // Without the behaviour under test the insert never ends: its attempts restart past any
  // bound (kMaxRestarts, which it stays within otherwise); the time bound only keeps a failure
  // of another kind from hanging the test. Then a frame is cooled from here, between two of
  // the writer's attempts (it holds no latch then), which lets the writer through to be joined.
  auto restarts = [&] { return c.tree->Stats().retries - retries_before; };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!done && restarts() <= kMaxRestarts && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool finished = done.load();
  if (!finished) {
    auto helper = c.tree->NewWorker(0);
    ASSERT_TRUE(helper.ok());
    while (!done)
      for (size_t i = 0; i < bm.frame_count() && !done; ++i) {
        bool cooled = false;
        (void)bm.Cool(&bm.frame(i), (*helper)->cw, &cooled);
      }
  }
  writer.join();
  EXPECT_TRUE(finished) << "the split found no frame: " << restarts() << " restarts";
  ASSERT_TRUE(insert.ok()) << insert.ToString();
  EXPECT_LE(restarts(), kMaxRestarts);
  std::cout << "[ split    ] the splitting insert restarted " << restarts() << " times\n";
  const cache::CacheStats after = bm.Stats();
  EXPECT_GE(after.evicted, 1u) << after.ToString();
  for (Key k = 2; k <= split_key; k += 2) {
    uint64_t v = 0;
    Status s = testing::U64Lookup(*c.tree, ws, k, &v);
    ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
    EXPECT_EQ(v, 7 * k);
  }
  EXPECT_TRUE(bm.CheckInvariants().ok()) << bm.CheckInvariants().ToString();
}

}  // namespace
}  // namespace dmindex
