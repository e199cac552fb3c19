// Issue 25 (docs/LOCK_TAKEOVER.md, "A taker that dies"): a lock taker whose replay of a dead
// holder's redo record stops midway must leave the node recoverable by the next taker.
//
// Holder D dies in the middle of its node write: its record landed whole, the first of the
// node's two pieces landed, the second did not (the node is torn), and the lock word names D.
// Taker A takes the word over and dies after each of its READs and WRITEs in turn (the WRITE
// cut after half its bytes; every later verb of A fails, none of its CASes lands). Taker B
// then takes the lock - from D or from A, whichever the word names - and must find D's new
// image whole: D's record was whole, so every taker finishes it (the dead write was not
// acknowledged, so the old image would be right too, but a whole record is always replayed).
// Before the fix, a word that named A led B to A's own redo block, which held nothing: B read
// the torn node. The lock-table word (combining verbs or not) and RF-tree's inline leaf lock
// (the node's trailer) take the same path. A second test: the replay's first WRITE fails once
// (the memory server went away) and A, alive, finishes it and keeps its lease.
//
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
#include "fabric/inproc/verb_script.h"
#include "lease/lease.h"
#include "tree/lock_table.h"
#include "tree/lock_word.h"
#include "tree/node_lock.h"
#include "tree/redo_log.h"

namespace dmindex {
namespace {

constexpr uint32_t kNodeBytes = 256;
constexpr uint32_t kTrailerOffset = kNodeBytes - 8;
constexpr std::byte kOld{0x11}, kNew{0x22};

struct Kind {
  bool trailer;  // RF-tree's inline lock in the node's last 8 bytes; else a lock-table word
  bool combine;
};

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  if (info.param.trailer) return "trailer";
  return info.param.combine ? "word_combined" : "word_separate";
}

// One memory node with a node whose dead holder D left it torn under a whole record, and two
// takers' leases and redo blocks.
struct Bed {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock{[this] {
    return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.fetch_add(20)));
  }};
  const Kind kind;
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<fabric::Endpoint> ep;
  const GlobalAddress node{0, 8ull << 20};
  std::unique_ptr<lease::Lease> dead_lease, lease_a, lease_b;
  tree::LockOwner a, b;
  uint64_t dead_word = 0;
  std::vector<std::byte> new_image = std::vector<std::byte>(kNodeBytes, kNew);

  explicit Bed(Kind k) : kind(k) {
    fabric::InProcOptions fo;
    fo.pool_bytes = 16ull << 20;
    fabric = std::move(fabric::InProcFabric::Create(fo)).value();
    ep = std::move(fabric->Connect()).value();
    dead_lease = Claim();
    lease_a = Claim();
    lease_b = Claim();
    dead_word = tree::EncodeLockWord(dead_lease->id(), GlobalAddress(0, 12ull << 20));
    a = {lease_a.get(), tree::EncodeLockWord(lease_a->id(), GlobalAddress(0, 13ull << 20))};
    b = {lease_b.get(), tree::EncodeLockWord(lease_b->id(), GlobalAddress(0, 14ull << 20))};
    const std::vector<std::byte> old_image(kNodeBytes, kOld);
    EXPECT_TRUE(ep->Write(node, old_image.data(), kNodeBytes).ok());
    if (k.trailer) new_image.resize(kTrailerOffset);  // the record never covers the trailer
    DieInTheMiddleOfAWrite();
  }
  std::unique_ptr<lease::Lease> Claim() {
    lease::LeaseOptions lo;
    lo.length = std::chrono::milliseconds(100);
    return std::move(lease::Lease::Claim(*fabric, lo)).value();
  }
  GlobalAddress Word() const {
    return kind.trailer ? node + kTrailerOffset : tree::LockWordFor(node, tree::LockArea::kProcesses);
  }
  uint64_t Read(GlobalAddress at) {
    uint64_t w = 0;
    EXPECT_TRUE(ep->Read(at, &w, 8).ok());
    return w;
  }
  // D holds the lock, its record is whole, the node's first piece landed and its second not.
  void DieInTheMiddleOfAWrite() {
    const uint64_t held = kind.trailer ? tree::EncodeTrailerLock(dead_word) : dead_word;
    ASSERT_TRUE(ep->Write(Word(), &held, 8).ok());
    const uint32_t half = static_cast<uint32_t>(new_image.size() / 2);
    std::vector<fabric::Verb> writes{fabric::Verb::Write(node, new_image.data(), half),
                                     fabric::Verb::Write(node + half, new_image.data() + half,
                                                         static_cast<uint32_t>(new_image.size()) - half)};
    uint64_t header[8];
    tree::RedoRecord redo;
    ASSERT_TRUE(tree::BuildRedoRecord(tree::LockWordRedoBlock(dead_word, 0), dead_word, Word(), node,
                                      static_cast<uint32_t>(new_image.size()), writes, header, &redo)
                    .ok());
    ASSERT_TRUE(ep->Post(redo.record, fabric::Ordering::kInOrder).ok());
    ASSERT_TRUE(ep->Post({writes[0]}, fabric::Ordering::kInOrder).ok());
  }

  // One takeover attempt by `who` with `lock` of whatever the word names now; *took as NodeLock's.
  Status TryTakeOver(tree::NodeLock& lock, const tree::LockOwner& who, std::vector<std::byte>* buf,
                     tree::NodeLock::Held* held, bool* took) {
    uint64_t seen = 0;  // what the taker finds in the word: who to take over
    DMX_RETURN_IF_ERROR(ep->Read(Word(), &seen, 8));
    if (kind.trailer)
      return lock.TakeOverTrailerIfDead(*ep, who, node, Word(), buf->data(), kNodeBytes, seen, took);
    return lock.TakeOverIfDead(*ep, who, node, buf->data(), kNodeBytes, seen, held, took);
  }
  // Takes the lock over as `who`, looking again while its holder's lease has not expired.
  Status TakeOverEventually(tree::NodeLock& lock, const tree::LockOwner& who, std::vector<std::byte>* buf,
                            tree::NodeLock::Held* held, bool* took) {
    *took = false;
    for (int look = 0; look < 100 && !*took; ++look) DMX_RETURN_IF_ERROR(TryTakeOver(lock, who, buf, held, took));
    return Status::Ok();
  }
  // The node's bytes the record covers are the new image's.
  bool NodeIsNew(const std::vector<std::byte>& image) const {
    return std::memcmp(image.data(), new_image.data(), new_image.size()) == 0;
  }
};

class TakeoverReplay : public ::testing::TestWithParam<Kind> {};

TEST_P(TakeoverReplay, ATakerThatDiesAfterAnyVerbOfItsReplayLeavesTheNodeToTheNextTaker) {
  uint64_t verbs = 0;
  {
    Bed dry(GetParam());
    tree::NodeLock lock(GetParam().combine);
    tree::NodeLock::Held held;
    std::vector<std::byte> buf(kNodeBytes);
    bool took = false;
    testing::DyingThread count(std::this_thread::get_id(), 0);
    dry.fabric->SetVerbScript(&count);
    ASSERT_TRUE(dry.TakeOverEventually(lock, dry.a, &buf, &held, &took).ok());
    dry.fabric->SetVerbScript(nullptr);
    verbs = count.seen();
    ASSERT_TRUE(took);
    EXPECT_TRUE(dry.NodeIsNew(buf)) << "the record of the dead write was not replayed";
  }
  ASSERT_GT(verbs, 4u);
  uint64_t left_to_b = 0;  // deaths after which the word named A (A's CAS landed)
  for (uint64_t k = 1; k <= verbs; ++k) {
    SCOPED_TRACE("taker A died at verb " + std::to_string(k) + " of " + std::to_string(verbs));
    Bed bed(GetParam());
    {
      tree::NodeLock lock_a(GetParam().combine);
      tree::NodeLock::Held held_a;
      std::vector<std::byte> buf(kNodeBytes);
      bool took = false;
      testing::DyingThread dies(std::this_thread::get_id(), k);
      bed.fabric->SetVerbScript(&dies);
      (void)bed.TakeOverEventually(lock_a, bed.a, &buf, &held_a, &took);
      bed.fabric->SetVerbScript(nullptr);
    }
    const uint64_t word = bed.Read(bed.Word());
    const uint64_t a_held = GetParam().trailer ? tree::EncodeTrailerLock(bed.a.word) : bed.a.word;
    left_to_b += word == a_held;
    // B takes the lock over, from D or from A, and finds the dead write finished.
    tree::NodeLock lock_b(GetParam().combine);
    tree::NodeLock::Held held_b;
    std::vector<std::byte> buf(kNodeBytes);
    bool took = false;
    const Status s = bed.TakeOverEventually(lock_b, bed.b, &buf, &held_b, &took);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(took) << "B never took the lock over (word " << word << ")";
    EXPECT_TRUE(bed.NodeIsNew(buf)) << "B read a torn node after A died in its replay";
    std::vector<std::byte> pool(kNodeBytes);
    ASSERT_TRUE(bed.ep->Read(bed.node, pool.data(), kNodeBytes).ok());
    EXPECT_TRUE(bed.NodeIsNew(pool));
    if (GetParam().trailer) {
      const uint64_t version = 2;
      ASSERT_TRUE(bed.ep->Write(bed.Word(), &version, 8).ok());
    } else {
      ASSERT_TRUE(lock_b.Unlock(*bed.ep, &held_b).ok());
    }
    EXPECT_EQ(bed.Read(bed.Word()), GetParam().trailer ? 2u : 0u);
    EXPECT_TRUE(bed.lease_b->CheckLive().ok());
  }
  EXPECT_GT(left_to_b, 2u) << "no death of A left the word naming A: the replay was never cut";
}

INSTANTIATE_TEST_SUITE_P(Locks, TakeoverReplay,
                         ::testing::Values(Kind{false, true}, Kind{false, false}, Kind{true, true}), KindName);

// The replay's first WRITE into the node fails once, nothing landed (its memory server went
// away and came back): A, alive, posts it again while the word names it and its lease is
// live, and finishes with the lock, the new image and its lease.
class FailFirstNodeWrite final : public fabric::VerbScript {
 public:
  explicit FailFirstNodeWrite(GlobalAddress node) : node_(node) {}
  Outcome Run(const fabric::VerbCopy& copy) override {
    const fabric::Verb& v = copy.verb();
    if (failed_ || v.kind != fabric::VerbKind::kWrite || v.remote.node() != node_.node() ||
        v.remote.offset() < node_.offset() || v.remote.offset() >= node_.offset() + kNodeBytes)
      return Outcome::kPass;
    failed_ = true;
    return Outcome::kFail;
  }
  bool failed() const { return failed_; }

 private:
  const GlobalAddress node_;
  bool failed_ = false;
};

TEST_P(TakeoverReplay, ALiveTakerWhoseReplayFailsOncePostsItAgain) {
  Bed bed(GetParam());
  tree::NodeLock lock(GetParam().combine);
  tree::NodeLock::Held held;
  std::vector<std::byte> buf(kNodeBytes);
  bool took = false;
  FailFirstNodeWrite away(bed.node);
  bed.fabric->SetVerbScript(&away);
  const Status s = bed.TakeOverEventually(lock, bed.a, &buf, &held, &took);
  bed.fabric->SetVerbScript(nullptr);
  ASSERT_TRUE(away.failed()) << "the replay's WRITE was never met";
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(took);
  EXPECT_TRUE(bed.NodeIsNew(buf)) << "released or read over a torn node";
  EXPECT_TRUE(bed.lease_a->CheckLive().ok()) << "a replay that went through the second time gave the lease up";
  const uint64_t a_held = GetParam().trailer ? tree::EncodeTrailerLock(bed.a.word) : bed.a.word;
  EXPECT_EQ(bed.Read(bed.Word()), a_held);
  if (!GetParam().trailer) {
    EXPECT_TRUE(lock.Unlock(*bed.ep, &held).ok());
    EXPECT_EQ(bed.Read(bed.Word()), 0u);
  }
}

}  // namespace
}  // namespace dmindex
