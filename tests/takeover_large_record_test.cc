// Issue 25 (docs/LOCK_TAKEOVER.md, "Other indexes"): lock words are shared by every index of a
// pool, so the waiter that takes a dead holder's word over may belong to an index of smaller
// nodes than the one the holder was writing. The holder's redo record is then larger than the
// taker's own redo block: the taker carries it in a large block of its own (LargeRedoBlocks),
// finishes the dead write, and names its own block again before it writes. Before, the taker
// read such a record as "not whole" and released the word over the torn node.
//
// Holder D dies in the middle of writing a 4 KiB node (its record whole, the first half of
// the node landed); takers A and B lock a 256-byte node hashing onto the same word.
// Deterministic: the lease layer's test clock, moved 20 ms by every read, decides expiry; the
// deaths are verb scripts.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "crash_points.h"
#include "fabric/inproc/inproc_fabric.h"
#include "lease/lease.h"
#include "tree/lock_table.h"
#include "tree/lock_word.h"
#include "tree/node_lock.h"
#include "tree/redo_log.h"

namespace dmindex {
namespace {

constexpr uint32_t kBigNode = 4096, kSmallNode = 256;
constexpr std::byte kOld{0x11}, kNew{0x22};

// Hands out one fixed block (a test's pool has no allocator) and counts the asks.
class FixedLargeBlocks final : public tree::LargeRedoBlocks {
 public:
  explicit FixedLargeBlocks(GlobalAddress at) : at_(at) {}
  Result<GlobalAddress> Get(uint16_t, uint32_t) override {
    ++gets;
    return at_;
  }
  int gets = 0;

 private:
  const GlobalAddress at_;
};

struct Bed {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock{[this] {
    return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.fetch_add(20)));
  }};
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<fabric::Endpoint> ep;
  const GlobalAddress big_node{0, 8ull << 20};
  GlobalAddress small_node;  // another index's node on the same lock word
  std::unique_ptr<lease::Lease> dead_lease, lease_a, lease_b;
  FixedLargeBlocks large_a{GlobalAddress(0, 20ull << 20)}, large_b{GlobalAddress(0, 22ull << 20)};
  tree::LockOwner a, b;
  uint64_t dead_word = 0;
  const std::vector<std::byte> new_image = std::vector<std::byte>(kBigNode, kNew);

  Bed() {
    fabric::InProcOptions fo;
    fo.pool_bytes = 32ull << 20;
    fabric = std::move(fabric::InProcFabric::Create(fo)).value();
    ep = std::move(fabric->Connect()).value();
    const GlobalAddress word = Word();
    for (uint64_t at = 24ull << 20; small_node.is_null() && at + kSmallNode <= (32ull << 20); at += 64)
      if (tree::LockWordFor(GlobalAddress(0, at), tree::LockArea::kProcesses) == word) small_node = GlobalAddress(0, at);
    EXPECT_FALSE(small_node.is_null()) << "no node of the test's pool hashes onto " << word.ToString();
    dead_lease = Claim();
    lease_a = Claim();
    lease_b = Claim();
    dead_word = tree::EncodeLockWord(dead_lease->id(), GlobalAddress(0, 12ull << 20));
    a = {lease_a.get(), tree::EncodeLockWord(lease_a->id(), GlobalAddress(0, 13ull << 20)), &large_a};
    b = {lease_b.get(), tree::EncodeLockWord(lease_b->id(), GlobalAddress(0, 14ull << 20)), &large_b};
    const std::vector<std::byte> old_image(kBigNode, kOld);
    EXPECT_TRUE(ep->Write(big_node, old_image.data(), kBigNode).ok());
    DieInTheMiddleOfAWrite();
  }
  std::unique_ptr<lease::Lease> Claim() {
    lease::LeaseOptions lo;
    lo.length = std::chrono::milliseconds(100);
    return std::move(lease::Lease::Claim(*fabric, lo)).value();
  }
  GlobalAddress Word() const { return tree::LockWordFor(big_node, tree::LockArea::kProcesses); }
  uint64_t Read(GlobalAddress at) {
    uint64_t w = 0;
    EXPECT_TRUE(ep->Read(at, &w, 8).ok());
    return w;
  }
  // D holds the word, its record of the whole 4 KiB image is whole, the first half landed.
  void DieInTheMiddleOfAWrite() {
    ASSERT_TRUE(ep->Write(Word(), &dead_word, 8).ok());
    const uint32_t half = kBigNode / 2;
    std::vector<fabric::Verb> writes{fabric::Verb::Write(big_node, new_image.data(), half),
                                     fabric::Verb::Write(big_node + half, new_image.data() + half, half)};
    uint64_t header[8];
    tree::RedoRecord redo;
    ASSERT_TRUE(tree::BuildRedoRecord(tree::LockWordRedoBlock(dead_word, 0), dead_word, Word(), big_node, kBigNode,
                                      writes, header, &redo)
                    .ok());
    ASSERT_TRUE(ep->Post(redo.record, fabric::Ordering::kInOrder).ok());
    ASSERT_TRUE(ep->Post({writes[0]}, fabric::Ordering::kInOrder).ok());
  }
  // Takes the word over as `who` for the small node, looking again while the holder's lease
  // has not expired.
  Status TakeOverEventually(tree::NodeLock& lock, const tree::LockOwner& who, tree::NodeLock::Held* held,
                            bool* took) {
    std::vector<std::byte> buf(kSmallNode);
    *took = false;
    for (int look = 0; look < 100 && !*took; ++look) {
      uint64_t seen = 0;
      DMX_RETURN_IF_ERROR(ep->Read(Word(), &seen, 8));
      DMX_RETURN_IF_ERROR(lock.TakeOverIfDead(*ep, who, small_node, buf.data(), kSmallNode, seen, held, took));
    }
    return Status::Ok();
  }
  bool BigNodeIsNew() {
    std::vector<std::byte> now(kBigNode);
    EXPECT_TRUE(ep->Read(big_node, now.data(), kBigNode).ok());
    return now == new_image;
  }
};

TEST(TakeoverLargeRecord, ATakerOfSmallerNodesFinishesTheDeadWriteOfALargerNode) {
  Bed bed;
  tree::NodeLock lock(/*combine=*/true);
  tree::NodeLock::Held held;
  bool took = false;
  const Status s = bed.TakeOverEventually(lock, bed.a, &held, &took);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(took);
  EXPECT_TRUE(bed.BigNodeIsNew()) << "the dead write of the larger node was not finished";
  EXPECT_EQ(bed.large_a.gets, 1);
  EXPECT_EQ(bed.Read(bed.Word()), bed.a.word) << "the word must name A's own block before A writes";
  EXPECT_EQ(bed.Read(GlobalAddress(0, 20ull << 20)), 0u) << "the large block's record was not cleared";
  ASSERT_TRUE(lock.Unlock(*bed.ep, &held).ok());
  EXPECT_EQ(bed.Read(bed.Word()), 0u);
  EXPECT_TRUE(bed.lease_a->CheckLive().ok());
}

// An owner with nowhere to carry the record does not take the word (it would release it over
// the torn node); a taker that can, does.
TEST(TakeoverLargeRecord, ATakerWithNowhereToCarryTheRecordLeavesTheWord) {
  Bed bed;
  tree::NodeLock lock(/*combine=*/true);
  tree::NodeLock::Held held;
  bool took = false;
  tree::LockOwner bare = bed.a;
  bare.large_blocks = nullptr;
  ASSERT_TRUE(bed.TakeOverEventually(lock, bare, &held, &took).ok());
  EXPECT_FALSE(took);
  EXPECT_EQ(bed.Read(bed.Word()), bed.dead_word);
  EXPECT_FALSE(bed.BigNodeIsNew());
  ASSERT_TRUE(bed.TakeOverEventually(lock, bed.b, &held, &took).ok());
  ASSERT_TRUE(took);
  EXPECT_TRUE(bed.BigNodeIsNew());
}

// A dies after each verb of its takeover in turn (a WRITE cut after half its bytes, nothing of
// it after); B then takes the word over - from D, or from A's large block or own block,
// whichever the word names - and finds the larger node's dead write finished.
TEST(TakeoverLargeRecord, ATakerThatDiesAfterAnyVerbLeavesTheLargerNodeToTheNextTaker) {
  uint64_t verbs = 0;
  {
    Bed dry;
    tree::NodeLock lock(true);
    tree::NodeLock::Held held;
    bool took = false;
    testing::DyingThread count(std::this_thread::get_id(), 0);
    dry.fabric->SetVerbScript(&count);
    ASSERT_TRUE(dry.TakeOverEventually(lock, dry.a, &held, &took).ok());
    dry.fabric->SetVerbScript(nullptr);
    verbs = count.seen();
    ASSERT_TRUE(took);
  }
  ASSERT_GT(verbs, 4u);
  int named_a = 0;  // deaths after which the word named one of A's blocks
  for (uint64_t k = 1; k <= verbs; ++k) {
    SCOPED_TRACE("taker A died at verb " + std::to_string(k) + " of " + std::to_string(verbs));
    Bed bed;
    {
      tree::NodeLock lock_a(true);
      tree::NodeLock::Held held_a;
      bool took = false;
      testing::DyingThread dies(std::this_thread::get_id(), k);
      bed.fabric->SetVerbScript(&dies);
      (void)bed.TakeOverEventually(lock_a, bed.a, &held_a, &took);
      bed.fabric->SetVerbScript(nullptr);
    }
    const uint64_t word = bed.Read(bed.Word());
    named_a += tree::LockWordHolder(word).slot == bed.lease_a->id().slot;
    tree::NodeLock lock_b(true);
    tree::NodeLock::Held held_b;
    bool took = false;
    const Status s = bed.TakeOverEventually(lock_b, bed.b, &held_b, &took);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(took) << "B never took the word over (it held " << word << ")";
    EXPECT_TRUE(bed.BigNodeIsNew()) << "the larger node is torn after A died in its takeover";
    ASSERT_TRUE(lock_b.Unlock(*bed.ep, &held_b).ok());
    EXPECT_TRUE(bed.lease_b->CheckLive().ok());
  }
  EXPECT_GT(named_a, 2) << "no death of A left the word naming A: the takeover was never cut";
}

}  // namespace
}  // namespace dmindex
