// Issue 25 (docs/SYNCHRONIZATION.md, "Leases": "A write posted again"): a writer's
// write-and-unlock batch fails because memory node 0 went away, and the writer looks whether
// its lock word still names it (NodeLock::PostAgainWhileOurs) to post the same verbs again.
// That READ rides through the outage (the UCX fabric waits for a restarting server with a persistent
// pool), so it returns long after the writer's last renewal: the lease may have run out and
// been revoked meanwhile by a process that saw its slot stand still since before the outage.
// The word still names the writer only because the taker has not CASed it yet. Posting again
// on the strength of that READ alone lets the old holder's write land under the taker's lock:
// the taker's acknowledged insert into the same leaf was overwritten (or, the other way
// round, the holder's unlock releases the taker's lock and the taker overwrites the holder's
// acknowledged insert, as the crash soak's trial 400015 showed). The re-post is a new write
// under the lock: it must pass CheckLive first, which fails for good once the lease is revoked.
//
// Deterministic: the verbs of the writer's thread go through a script (fail the first WRITE,
// hold the READ that follows as the outage, hold any later WRITE), the lease layer's clock is
// the test's, the revocation is an observer's CAS made while the READ is held. A second test
// holds the same kind of READ after a lock CAS whose reply was lost: letting go of our word must
// not release a lock a taker CASed in between.
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
#include "tree/lock_word.h"
#include "tree/node_lock.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using fabric::VerbCopy;
using fabric::VerbScript;

// On one thread: the first WRITE fails with nothing copied (the server went away); the READ
// after it is held before it copies (the outage) until ResumeRead; a WRITE after that READ is
// held until ResumeWrite (the window in which the taker works) - it reaches the script only if
// the writer posts again.
class OutageScript final : public VerbScript {
 public:
  explicit OutageScript(std::thread::id who) : who_(who) {}

  Outcome Run(const VerbCopy& copy) override {
    if (std::this_thread::get_id() != who_) return Outcome::kPass;
    const bool write = copy.verb().kind == fabric::VerbKind::kWrite;
    std::unique_lock<runtime::Mutex> lock(mu_);
    if (stage_ == Stage::kBeforeWrite) {
      if (!write) return Outcome::kPass;
      stage_ = Stage::kWriteFailed;
      return Outcome::kFail;
    }
    if (stage_ == Stage::kWriteFailed && !write) {
      stage_ = Stage::kReadHeld;
      cv_.NotifyAll();
      cv_.Wait(lock, [&] { return stage_ == Stage::kReadResumed; });
      return Outcome::kPass;
    }
    if (stage_ == Stage::kReadResumed && write) {
      stage_ = Stage::kRepostHeld;
      cv_.NotifyAll();
      cv_.Wait(lock, [&] { return stage_ == Stage::kRepostResumed; });
    }
    return Outcome::kPass;
  }

  void WaitReadHeld() { WaitFor(Stage::kReadHeld); }
  void ResumeRead() { Set(Stage::kReadResumed); }
  // True once the writer posts again (its WRITE is then held), false once `done` is set.
  bool WaitRepostOr(const std::atomic<bool>& done) {
    std::unique_lock<runtime::Mutex> lock(mu_);
    cv_.Wait(lock, [&] { return stage_ == Stage::kRepostHeld || done.load(); });
    return stage_ == Stage::kRepostHeld;
  }
  void ResumeWrite() { Set(Stage::kRepostResumed); }
  void Poke() { cv_.NotifyAll(); }

 private:
  enum class Stage { kBeforeWrite, kWriteFailed, kReadHeld, kReadResumed, kRepostHeld, kRepostResumed };
  void WaitFor(Stage s) {
    std::unique_lock<runtime::Mutex> lock(mu_);
    cv_.Wait(lock, [&] { return stage_ == s; });
  }
  void Set(Stage s) {
    {
      std::lock_guard<runtime::Mutex> g(mu_);
      stage_ = s;
    }
    cv_.NotifyAll();
  }

  const std::thread::id who_;
  runtime::Mutex mu_;
  runtime::CondVar cv_;
  Stage stage_ = Stage::kBeforeWrite;
};

// One memory node, an index of `design` loaded with the even keys 2..80.
struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::vector<testing::U64Pair> data;
  Status loaded;
};

Bed LoadedBed(const std::string& design) {
  Bed b;
  fabric::InProcOptions fo;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  b.index = std::move(designs::MakeIndex(design, *b.fabric, testing::LockTestOptions(0.5))).value();
  for (uint64_t k = 1; k <= 40; ++k) b.data.push_back({2 * k, 20 * k});
  b.loaded = testing::BulkLoadU64(*b.index, b.data);
  return b;
}

// The slots held now (by the processes opened so far).
std::vector<lease::SlotInfo> HeldSlots(fabric::Fabric& fabric) {
  auto ep = std::move(fabric.Connect()).value();
  auto table = lease::ReadLeaseTable(*ep);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : std::vector<lease::SlotInfo>{};
}

// Revokes the slots held now that `before` did not hold, the way a taker's observer does: it
// saw each slot's word, and again, unchanged, after the clock moved past the takeover wait.
void RevokeNewLeases(fabric::Fabric& fabric, const std::vector<lease::SlotInfo>& before,
                     std::atomic<int64_t>& now_ms) {
  auto ep = std::move(fabric.Connect()).value();
  std::vector<lease::HolderId> fresh;
  for (const lease::SlotInfo& s : HeldSlots(fabric)) {
    bool old = false;
    for (const lease::SlotInfo& b : before) old |= b.slot == s.slot;
    if (!old) fresh.push_back({s.slot, s.state.epoch});
  }
  ASSERT_FALSE(fresh.empty());
  lease::LeaseObserver observer;
  for (const lease::HolderId& h : fresh) ASSERT_TRUE(observer.FenceIfExpired(*ep, h).ok());
  now_ms += 10'000;  // the outage: nobody could renew on memory node 0
  for (const lease::HolderId& h : fresh) {
    auto fenced = observer.FenceIfExpired(*ep, h);
    ASSERT_TRUE(fenced.ok() && *fenced) << "slot " << h.slot;
  }
}

class LockRepost : public ::testing::TestWithParam<std::string> {};

TEST_P(LockRepost, ABatchPostedAgainAfterAnOutageIsFencedByTheLease) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock([&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.load())); });
  Bed bed = LoadedBed(GetParam());
  ASSERT_TRUE(bed.loaded.ok()) << bed.loaded.ToString();
  auto& fabric = bed.fabric;
  auto& taker = bed.index;
  const std::vector<testing::U64Pair>& data = bed.data;
  const std::vector<lease::SlotInfo> taker_slots = HeldSlots(*fabric);
  auto holder = std::move(designs::MakeIndex(GetParam(), *fabric, testing::LockTestOptions(0.5))).value();
  auto holder_session = std::move(holder->OpenSession(0)).value();
  auto taker_session = std::move(taker->OpenSession(0)).value();
  const uint64_t key = 41, neighbour = 43;  // the same leaf: between 40 and 44

  // The holder's insert, on its own thread (the script follows its verbs only), started once
  // the script that knows the thread is installed.
  std::atomic<bool> go{false}, done{false};
  Status holder_status;
  std::unique_ptr<OutageScript> script;
  std::thread writer([&] {
    while (!go.load()) std::this_thread::yield();
    holder_status = holder_session->Insert(key, 4100);
    done = true;
    script->Poke();
  });
  script = std::make_unique<OutageScript>(writer.get_id());
  fabric->SetVerbScript(script.get());
  go = true;
  script->WaitReadHeld();
  RevokeNewLeases(*fabric, taker_slots, now_ms);
  if (HasFatalFailure()) {
    script->ResumeRead();
    writer.join();
    fabric->SetVerbScript(nullptr);
    return;
  }
  script->ResumeRead();
  const bool reposted = script->WaitRepostOr(done);
  // Whether the holder posted again or not, the taker now writes into the same leaf: it takes
  // the revoked holder's lock over (the taker's own lease renews on the spot: nobody revoked it).
  const Status taker_status = taker_session->Insert(neighbour, 4300);
  if (reposted) script->ResumeWrite();
  writer.join();
  fabric->SetVerbScript(nullptr);
  ASSERT_TRUE(taker_status.ok()) << taker_status.ToString();
  EXPECT_FALSE(reposted) << "the holder posted its batch again after its lease was revoked";
  EXPECT_TRUE(holder_status.IsUnavailable()) << holder_status.ToString();

  uint64_t got = 0;
  const Status n = taker_session->Lookup(neighbour, &got);
  EXPECT_TRUE(n.ok() && got == 4300) << "the taker's acknowledged insert was lost: " << n.ToString();
  const Status k = taker_session->Lookup(key, &got);
  if (holder_status.ok()) {
    EXPECT_TRUE(k.ok() && got == 4100) << "an acknowledged insert was lost: " << k.ToString();
  }
  for (const auto& kv : data) {
    ASSERT_TRUE(taker_session->Lookup(kv.key, &got).ok()) << kv.key;
    EXPECT_EQ(got, kv.value);
  }
  holder_session.reset();
}

// On one thread: the first lock CAS lands and its reply is lost; a READ of its word after that
// copies, then is held until Resume (a taker CASes the word meanwhile).
class LostLockReply final : public VerbScript {
 public:
  explicit LostLockReply(std::thread::id who) : who_(who) {}
  AtomicOutcome RunAtomic(const fabric::Verb& v) override {
    if (std::this_thread::get_id() != who_ || v.kind != fabric::VerbKind::kCas) return AtomicOutcome::kPass;
    std::lock_guard<runtime::Mutex> g(mu_);
    if (lost_) return AtomicOutcome::kPass;
    lost_ = true;
    word_ = v.remote;
    return AtomicOutcome::kLostReply;
  }
  Outcome Run(const VerbCopy& copy) override {
    if (std::this_thread::get_id() != who_) return Outcome::kPass;
    std::unique_lock<runtime::Mutex> lock(mu_);
    if (!lost_ || held_ || copy.verb().remote != word_ || copy.verb().kind != fabric::VerbKind::kRead)
      return Outcome::kPass;
    copy.Copy(0, copy.verb().length);
    held_ = true;
    cv_.NotifyAll();
    cv_.Wait(lock, [&] { return resumed_; });
    return Outcome::kDone;
  }
  // True once a READ of the word is held, false once `done` is set.
  bool WaitHeldOr(const std::atomic<bool>& done) {
    std::unique_lock<runtime::Mutex> lock(mu_);
    cv_.Wait(lock, [&] { return held_ || done.load(); });
    return held_;
  }
  void Resume() {
    {
      std::lock_guard<runtime::Mutex> g(mu_);
      resumed_ = true;
    }
    cv_.NotifyAll();
  }
  void Poke() { cv_.NotifyAll(); }
  GlobalAddress word() {
    std::lock_guard<runtime::Mutex> g(mu_);
    return word_;
  }

 private:
  const std::thread::id who_;
  runtime::Mutex mu_;
  runtime::CondVar cv_;
  bool lost_ = false, held_ = false, resumed_ = false;
  GlobalAddress word_;
};

// A lock CAS whose reply was lost is let go of only if the word still names us, atomically: a
// READ that finds our word and a WRITE of zero after it would release a taker's lock taken in
// between (docs/SYNCHRONIZATION.md, "A write posted again").
TEST_P(LockRepost, ALockWhoseReplyWasLostIsLetGoOfByACas) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock([&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.load())); });
  Bed bed = LoadedBed(GetParam());
  ASSERT_TRUE(bed.loaded.ok()) << bed.loaded.ToString();
  auto& fabric = bed.fabric;
  auto& index = bed.index;
  auto session = std::move(index->OpenSession(0)).value();
  std::atomic<bool> go{false}, done{false};
  Status status;
  std::unique_ptr<LostLockReply> script;
  std::thread writer([&] {
    while (!go.load()) std::this_thread::yield();
    status = session->Insert(41, 4100);
    done = true;
    script->Poke();
  });
  script = std::make_unique<LostLockReply>(writer.get_id());
  fabric->SetVerbScript(script.get());
  go = true;
  const bool read_held = script->WaitHeldOr(done);
  auto ep = std::move(fabric->Connect()).value();
  const uint64_t taker = 0x5eed'0000'0001;  // another process's owner word
  if (read_held) {
    EXPECT_TRUE(ep->Write(script->word(), &taker, 8).ok());  // the taker's CAS
  }
  script->Resume();
  writer.join();
  fabric->SetVerbScript(nullptr);
  uint64_t word = 1;
  ASSERT_TRUE(ep->Read(script->word(), &word, 8).ok());
  if (read_held) {
    EXPECT_EQ(word, taker) << "the lost-reply path released a lock another process had taken";
  } else {
    EXPECT_EQ(word, 0u) << "the lock whose reply was lost stayed held";
  }
  EXPECT_FALSE(read_held) << "the word was read, then written, not let go of by one CAS";
  session.reset();
}

INSTANTIATE_TEST_SUITE_P(LockTableDesigns, LockRepost, ::testing::Values("naive", "sherman"),
                         [](const auto& info) { return info.param; });


// Loses the reply of the next CAS on one lease slot (a renewal that may have landed).
class LoseRenewalReply final : public VerbScript {
 public:
  explicit LoseRenewalReply(uint32_t slot) : slot_(lease::SlotAddress(slot)) {}
  Outcome Run(const VerbCopy&) override { return Outcome::kPass; }
  AtomicOutcome RunAtomic(const fabric::Verb& v) override {
    if (v.kind != fabric::VerbKind::kCas || v.remote != slot_ || !armed_.exchange(false)) return AtomicOutcome::kPass;
    return AtomicOutcome::kLostReply;
  }

 private:
  const GlobalAddress slot_;
  std::atomic<bool> armed_{true};
};

// Only a batch that was posted is posted again. Here the holder's lease is due when it writes
// under its lock, and the on-the-spot renewal's reply is lost, so the first CheckLive fails
// with Unavailable and nothing is planned or posted. The word still names the holder and the
// next CheckLive finds the renewal landed: posting "the same verbs" again then posted none of
// the writes and answered Ok (found in review of the merge of the re-post fix). An Ok answer
// must mean the write landed; and a word left held that way must not name a lease that renews.
TEST(LockRepostPlanned, AnOkAnswerMeansTheWritesLandedAfterAFailedFirstCheckLive) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ClockFn clock = [&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.load())); };
  fabric::InProcOptions fo;
  fo.pool_bytes = 16ull << 20;
  auto fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  lease::LeaseOptions lo;
  lo.length = std::chrono::milliseconds(2000);
  lo.renew_in_background = false;
  lo.clock = clock;
  auto lease = std::move(lease::Lease::Claim(*fabric, lo)).value();
  auto ep = std::move(fabric->Connect()).value();
  const GlobalAddress node(0, 8ull << 20), redo_block(0, 12ull << 20);
  const tree::LockOwner owner{lease.get(), tree::EncodeLockWord(lease->id(), redo_block)};
  tree::NodeLock lock(/*combine=*/false, clock);
  tree::NodeLock::Held held;
  std::vector<std::byte> image(256);
  uint64_t cas_failures = 0;
  ASSERT_TRUE(lock.LockAndRead(*ep, nullptr, owner, node, image.data(), 256, &held, &cas_failures).ok());

  now_ms += 2100;  // the lease is due: CheckLive renews on the spot
  LoseRenewalReply lose(lease->id().slot);
  fabric->SetVerbScript(&lose);
  const uint64_t written = 0x5eed;
  std::vector<fabric::Verb> writes{fabric::Verb::Write(node, &written, sizeof written)};
  const Status s = lock.WriteAndUnlock(*ep, &held, writes);
  fabric->SetVerbScript(nullptr);

  uint64_t landed = 0;
  ASSERT_TRUE(ep->Read(node, &landed, sizeof landed).ok());
  EXPECT_TRUE(!s.ok() || landed == written) << "answered " << s.ToString() << " but the node holds " << landed;
  // Nothing was posted, so the word still names the holder: its lease must never renew again
  // (the lost renewal landed, and the next one would succeed), or nobody could take the word
  // over (docs/LEASES.md, "A live writer never keeps its own word").
  uint64_t word = 0;
  ASSERT_TRUE(ep->Read(held.word, &word, 8).ok());
  if (word == owner.word) {
    EXPECT_FALSE(lease->CheckLive().ok()) << "the lease renews with its word still held";
  }
}

}  // namespace
}  // namespace dmindex
