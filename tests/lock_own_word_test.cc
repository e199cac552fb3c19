// Issue 25 (docs/SYNCHRONIZATION.md, "A live writer never keeps its own word"): a writer whose
// write-and-unlock batch, or lock CAS, fails because the memory server went away must not
// return while its lock word may still name its live lease - nobody takes over a lease that
// renews, so the process's own later writes of that node would wait on it for good (the crash
// soak found one over TCP: the batch failed and so did the one READ of the word after it).
// The word is asked again until the server answers (NodeLock's AskOurWord), or, once the
// lease can no longer be shown live, left to a taker with the lease given up.
//
// Deterministic: the server's absence is a script that fails a fixed number of verbs; time
// is the lease layer's test clock, moved only by the tests.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "crash_points.h"
#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "lease/lease.h"
#include "lease/lease_table.h"
#include "tree/lock_table.h"
#include "tree/lock_word.h"
#include "tree/node_lock.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using fabric::VerbCopy;
using fabric::VerbKind;
using fabric::VerbScript;

// The server goes away under the first WRITE of the test's thread (it fails, nothing lands)
// and answers again after the next `away_reads` READs have failed.
class ServerAwayForReads final : public VerbScript {
 public:
  ServerAwayForReads(std::thread::id who, int away_reads) : who_(who), away_reads_(away_reads) {}
  Outcome Run(const VerbCopy& copy) override {
    if (std::this_thread::get_id() != who_) return Outcome::kPass;
    if (!write_failed_) {
      if (copy.verb().kind != VerbKind::kWrite) return Outcome::kPass;
      write_failed_ = true;
      return Outcome::kFail;
    }
    if (copy.verb().kind != VerbKind::kRead || failed_reads_ == away_reads_) return Outcome::kPass;
    ++failed_reads_;
    return Outcome::kFail;
  }
  int failed_reads() const { return failed_reads_; }

 private:
  const std::thread::id who_;
  const int away_reads_;
  bool write_failed_ = false;
  int failed_reads_ = 0;
};

// Counts CASes, changing nothing (the tests post from one thread), and remembers the word
// the last one was posted to: the lock the write took (a lock-table word, or RF-tree's trailer).
class CountCases final : public VerbScript {
 public:
  Outcome Run(const VerbCopy&) override { return Outcome::kPass; }
  AtomicOutcome RunAtomic(const fabric::Verb& v) override {
    ++cases_;
    last_ = v.remote;
    return AtomicOutcome::kPass;
  }
  int cases() const { return cases_; }
  GlobalAddress last() const { return last_; }

 private:
  int cases_ = 0;
  GlobalAddress last_;
};

lease::ClockFn FixedClock(std::atomic<int64_t>* now_ms) {
  return [now_ms] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms->load())); };
}

uint64_t WordAt(fabric::Fabric& fabric, GlobalAddress addr) {
  auto ep = std::move(fabric.Connect()).value();
  uint64_t w = 1;
  EXPECT_TRUE(ep->Read(addr, &w, 8).ok());
  return w;
}

// Whether the lock at `addr` is free: a lock-table word holds 0, a leaf's trailer (RF-tree's
// inline lock) an even version.
bool LockFree(fabric::Fabric& fabric, GlobalAddress addr) {
  const uint64_t w = WordAt(fabric, addr);
  const bool table = addr.offset() >= fabric::kLockTableOffset &&
                     addr.offset() < fabric::kLockTableOffset + fabric::kLockTableBytes;
  return table ? w == 0 : (w & 1) == 0;
}

// A fabric and an index of `design` holding keys 2, 4, ..., 80 and key 41, written twice (the
// second time under `clean`: the lock its writes of that leaf take).
struct LoadedIndex {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> session;
  std::vector<testing::U64Pair> data;
  CountCases clean;
  static constexpr uint64_t kKey = 41;

  explicit LoadedIndex(const std::string& design) {
    fabric::InProcOptions fo;
    fo.pool_bytes = 64ull << 20;
    fo.node.chunk_bytes = 1 << 20;
    fabric = std::move(fabric::InProcFabric::Create(fo)).value();
    index = std::move(designs::MakeIndex(design, *fabric, testing::LockTestOptions(0.5))).value();
    for (uint64_t k = 1; k <= 40; ++k) data.push_back({2 * k, 20 * k});
    EXPECT_TRUE(testing::BulkLoadU64(*index, data).ok());
    session = std::move(index->OpenSession(0)).value();
    EXPECT_TRUE(session->Insert(kKey, 1).ok());
    fabric->SetVerbScript(&clean);
    EXPECT_TRUE(session->Insert(kKey, 2).ok());
    fabric->SetVerbScript(nullptr);
  }
  // `s`'s insert of kKey with `script` installed.
  Status Insert(Session& s, uint64_t value, VerbScript* script) {
    fabric->SetVerbScript(script);
    const Status done = s.Insert(kKey, value);
    fabric->SetVerbScript(nullptr);
    return done;
  }
};

class NodeLockRestart : public ::testing::TestWithParam<std::string> {};

// The batch that writes the leaf and releases its lock fails, and so do the next three READs
// (the server is not back): the writer asks until the word answers, posts the batch again and
// is acknowledged; the word is free, and its own next write of the leaf takes the lock at the
// first CAS, as a write that met no outage.
// RF-tree (lock=inline, its default) holds the leaf's trailer instead of a lock-table word: the
// same read-back and re-post through the same code (NodeLock::WriteAndReleaseTrailer).
TEST_P(NodeLockRestart, AWriterWhoseReadBacksFailUntilTheServerAnswersReleasesItsWord) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock(FixedClock(&now_ms));  // the lease stays live throughout
  LoadedIndex b(GetParam());
  ASSERT_FALSE(b.clean.last().is_null());

  ServerAwayForReads away(std::this_thread::get_id(), 3);
  const Status s = b.Insert(*b.session, 3, &away);
  EXPECT_EQ(away.failed_reads(), 3) << "the server's absence was not met as scripted";
  EXPECT_TRUE(s.ok()) << s.ToString();
  // Checked before the next write, which would wait a minute on a word left held.
  ASSERT_EQ(testing::HeldLocks(*b.fabric), 0u) << "the live writer left its own lock word held";
  ASSERT_TRUE(LockFree(*b.fabric, b.clean.last())) << "the live writer left its leaf's lock held";

  CountCases after;
  const Status next = b.Insert(*b.session, 4, &after);
  ASSERT_TRUE(next.ok()) << next.ToString();
  EXPECT_EQ(after.cases(), b.clean.cases()) << "the writer's next write of the leaf waited for its lock";
  uint64_t got = 0;
  ASSERT_TRUE(b.session->Lookup(LoadedIndex::kKey, &got).ok());
  EXPECT_EQ(got, 4u);
  for (const auto& kv : b.data) {
    ASSERT_TRUE(b.session->Lookup(kv.key, &got).ok()) << kv.key;
    EXPECT_EQ(got, kv.value);
  }
}

INSTANTIATE_TEST_SUITE_P(LockTableDesigns, NodeLockRestart, ::testing::Values("naive", "sherman"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(InlineLeafLocks, NodeLockRestart, ::testing::Values("rftree"),
                         [](const auto& info) { return info.param; });

// One lease and one node lock (combining verbs or not) on a one-node pool, with the test's clock.
struct LockBed {
  std::atomic<int64_t> now_ms{1'000'000};
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<lease::Lease> lease;
  std::unique_ptr<fabric::Endpoint> ep;
  const GlobalAddress node{0, 8ull << 20};
  const GlobalAddress redo_block{0, 12ull << 20};
  tree::LockOwner owner;
  tree::NodeLock lock;
  tree::NodeLock::Held held;
  std::vector<std::byte> image = std::vector<std::byte>(256);
  uint64_t cas_failures = 0;

  explicit LockBed(bool combine) : lock(combine, FixedClock(&now_ms)) {
    fabric::InProcOptions fo;
    fo.pool_bytes = 16ull << 20;
    fabric = std::move(fabric::InProcFabric::Create(fo)).value();
    lease = Claim();
    ep = std::move(fabric->Connect()).value();
    owner = tree::LockOwner{lease.get(), tree::EncodeLockWord(lease->id(), redo_block)};
  }
  std::unique_ptr<lease::Lease> Claim() {
    lease::LeaseOptions lo;
    lo.length = std::chrono::milliseconds(100);
    lo.renew_in_background = false;
    lo.clock = FixedClock(&now_ms);
    return std::move(lease::Lease::Claim(*fabric, lo)).value();
  }
  Status Lock() {
    return lock.LockAndRead(*ep, nullptr, owner, node, image.data(), 256, &held, &cas_failures);
  }
  uint64_t Word() {
    uint64_t w = 1;
    EXPECT_TRUE(ep->Read(tree::LockWordFor(node, tree::LockArea::kProcesses), &w, 8).ok());
    return w;
  }
};

// The lock CAS lands and its reply is lost; the CASes that let go of it fail `away` times more
// (the server is not back), then pass.
class LostLockReplyThenAway final : public VerbScript {
 public:
  LostLockReplyThenAway(GlobalAddress word, int away) : word_(word), away_(away) {}
  Outcome Run(const VerbCopy&) override { return Outcome::kPass; }
  AtomicOutcome RunAtomic(const fabric::Verb& v) override {
    if (v.remote != word_) return AtomicOutcome::kPass;
    if (!lost_) {
      lost_ = true;
      return AtomicOutcome::kLostReply;
    }
    if (failed_ == away_) return AtomicOutcome::kPass;
    ++failed_;
    return AtomicOutcome::kNotLanded;
  }
  int failed() const { return failed_; }

 private:
  const GlobalAddress word_;
  const int away_;
  bool lost_ = false;
  int failed_ = 0;
};

class NodeLockRestartCas : public ::testing::TestWithParam<bool> {};

// A lock CAS whose reply was lost may have landed: it is let go of by a CAS asked until the
// server answers, so the next attempt takes the lock at once.
TEST_P(NodeLockRestartCas, ALockWhoseReplyWasLostIsLetGoOfOnceTheServerAnswers) {
  LockBed b(/*combine=*/GetParam());
  LostLockReplyThenAway away(tree::LockWordFor(b.node, tree::LockArea::kProcesses), 3);
  b.fabric->SetVerbScript(&away);
  const Status s = b.Lock();
  b.fabric->SetVerbScript(nullptr);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_EQ(away.failed(), 3);
  ASSERT_EQ(b.Word(), 0u) << "the lock taken by the CAS whose reply was lost stayed held";
  ASSERT_TRUE(b.Lock().ok());
  EXPECT_EQ(b.cas_failures, 0u);
  EXPECT_TRUE(b.lock.Unlock(*b.ep, &b.held).ok());
  EXPECT_TRUE(b.lease->CheckLive().ok()) << "the lease was given up although the word was released";
}

// Memory node 0 holds the lock word and the lease table and does not come back: the batch
// fails, every READ of the word fails and so does every renewal, while the clock moves 20 ms
// per failed READ. Once the lease can no longer be shown live the writer stops asking: it
// answers Unavailable, its lease is given up for good (it would otherwise renew once node 0
// is back, with the word still naming it), and a taker takes the word over after the wait.
class NodeZeroAway final : public VerbScript {
 public:
  NodeZeroAway(GlobalAddress word, std::atomic<int64_t>* now_ms) : word_(word), now_ms_(now_ms) {}
  Outcome Run(const VerbCopy& copy) override {
    if (copy.verb().kind == VerbKind::kWrite) {
      write_failed_ = true;
      return Outcome::kFail;
    }
    if (!write_failed_ || copy.verb().remote != word_) return Outcome::kPass;
    ++failed_reads_;
    *now_ms_ += 20;
    return Outcome::kFail;
  }
  AtomicOutcome RunAtomic(const fabric::Verb&) override {
    return write_failed_ ? AtomicOutcome::kNotLanded : AtomicOutcome::kPass;
  }
  int failed_reads() const { return failed_reads_; }

 private:
  const GlobalAddress word_;
  std::atomic<int64_t>* const now_ms_;
  bool write_failed_ = false;
  int failed_reads_ = 0;
};

TEST_P(NodeLockRestartCas, ALeaseThatCannotBeShownLiveLeavesTheWordToATaker) {
  LockBed b(/*combine=*/GetParam());
  ASSERT_TRUE(b.Lock().ok());
  NodeZeroAway away(tree::LockWordFor(b.node, tree::LockArea::kProcesses), &b.now_ms);
  b.fabric->SetVerbScript(&away);
  const uint64_t written = 0x5eed;
  std::vector<fabric::Verb> writes{fabric::Verb::Write(b.node, &written, sizeof written)};
  const Status s = b.lock.WriteAndUnlock(*b.ep, &b.held, writes);
  b.fabric->SetVerbScript(nullptr);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_NE(s.message().find("revoked by this process"), std::string::npos) << s.ToString();
  // Asked again while the lease was live (100 ms at 20 ms per READ), then stopped.
  EXPECT_GE(away.failed_reads(), 2);
  EXPECT_LE(away.failed_reads(), 10);
  ASSERT_EQ(b.Word(), b.owner.word) << "the word no longer names the writer: nothing left to take over";
  // Node 0 is back: the lease must stay given up, or it would renew under a word nobody may take.
  const Status live = b.lease->CheckLive();
  EXPECT_FALSE(live.ok()) << "the writer's lease renewed with its word still held";

  auto taker_lease = b.Claim();
  const tree::LockOwner taker{taker_lease.get(),
                              tree::EncodeLockWord(taker_lease->id(), GlobalAddress(0, 13ull << 20))};
  tree::NodeLock taker_lock(/*combine=*/GetParam(), FixedClock(&b.now_ms));
  tree::NodeLock::Held taken;
  bool took = false;
  auto take_over = [&] {
    return taker_lock.TakeOverIfDead(*b.ep, taker, b.node, b.image.data(), 256, b.owner.word, &taken, &took);
  };
  ASSERT_TRUE(take_over().ok());
  EXPECT_FALSE(took) << "taken over before the takeover wait";
  b.now_ms += 1000;
  ASSERT_TRUE(take_over().ok());
  ASSERT_TRUE(took) << "the given-up writer's word was not taken over";
  EXPECT_TRUE(taker_lock.Unlock(*b.ep, &taken).ok());
  EXPECT_EQ(b.Word(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Combine, NodeLockRestartCas, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "combined" : "separate"; });

// RF-tree's inline leaf lock: the trailer's CAS lands and its reply is lost, and the CASes that
// let go of it fail three times more. The write answers Unavailable with the trailer back at
// the version it held, and the next write takes it at the first CAS.
TEST(InlineLockRestart, ATrailerWhoseCasReplyWasLostIsLetGoOfOnceTheServerAnswers) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock(FixedClock(&now_ms));
  LoadedIndex b("rftree");
  const GlobalAddress trailer = b.clean.last();
  ASSERT_FALSE(trailer.is_null());
  const uint64_t version = WordAt(*b.fabric, trailer);
  ASSERT_EQ(version & 1, 0u);

  LostLockReplyThenAway away(trailer, 3);
  const Status s = b.Insert(*b.session, 3, &away);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_EQ(away.failed(), 3) << "the trailer taken by the lost CAS was not let go of";
  ASSERT_EQ(WordAt(*b.fabric, trailer), version) << "the trailer taken by the CAS whose reply was lost stayed held";

  CountCases after;
  ASSERT_TRUE(b.Insert(*b.session, 4, &after).ok());
  EXPECT_EQ(after.cases(), b.clean.cases()) << "the next write waited for the leaf's lock";
  uint64_t got = 0;
  ASSERT_TRUE(b.session->Lookup(LoadedIndex::kKey, &got).ok());
  EXPECT_EQ(got, 4u);
}

// RF-tree's inline leaf lock, when the lease cannot be shown live: memory node 0 (the leaf, its
// trailer and the lease table) goes away under the write's batch and stays away while the
// clock passes the lease. The writer stops asking, gives its lease up and answers Unavailable
// ("revoked by this process"); the trailer still names it, its own next write stops at once,
// and another process's writer takes the trailer over after the takeover wait and writes.
TEST(InlineLockRestart, ALeaseThatCannotBeShownLiveLeavesTheTrailerToATaker) {
  std::atomic<int64_t> now_ms{1'000'000};
  std::atomic<int64_t> step_ms{0};  // how far each clock read moves the clock
  lease::ScopedTestClock clock([&] {
    return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.fetch_add(step_ms.load())));
  });
  LoadedIndex b("rftree");
  const GlobalAddress trailer = b.clean.last();
  ASSERT_FALSE(trailer.is_null());

  NodeZeroAway away(trailer, &now_ms);
  const Status s = b.Insert(*b.session, 3, &away);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  ASSERT_NE(s.message().find("revoked by this process"), std::string::npos) << s.ToString();
  EXPECT_GE(away.failed_reads(), 2);
  EXPECT_LE(away.failed_reads(), 10);
  const uint64_t left = WordAt(*b.fabric, trailer);
  ASSERT_NE(tree::TrailerLockWord(left), 0u) << "the trailer no longer names the writer: " << left;

  // Node 0 is back: the writer's own next write of the leaf meets its given-up trailer and stops.
  const Status again = b.Insert(*b.session, 5, nullptr);
  EXPECT_TRUE(again.IsUnavailable()) << again.ToString();
  EXPECT_NE(again.message().find("revoked"), std::string::npos) << again.ToString();

  // Another process (another opening, another lease) takes the trailer over once the clock
  // has moved past the lease plus a quarter, and writes.
  auto taker = std::move(designs::MakeIndex("rftree", *b.fabric, testing::LockTestOptions(0.5))).value();
  auto session = std::move(taker->OpenSession(0)).value();
  step_ms = 50;  // a takeover wait (125 ms) in three looks at the holder's slot
  const Status took = session->Insert(LoadedIndex::kKey, 6);
  step_ms = 0;
  ASSERT_TRUE(took.ok()) << took.ToString();
  EXPECT_TRUE(LockFree(*b.fabric, trailer));
  uint64_t got = 0;
  ASSERT_TRUE(session->Lookup(LoadedIndex::kKey, &got).ok());
  EXPECT_EQ(got, 6u);
  for (const auto& kv : b.data) {
    ASSERT_TRUE(session->Lookup(kv.key, &got).ok()) << kv.key;
    EXPECT_EQ(got, kv.value);
  }
}

}  // namespace
}  // namespace dmindex
