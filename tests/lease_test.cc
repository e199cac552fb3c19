// Leases (lease/lease.h) on the in-process fabric, with time driven by an injected clock and
// renewals called by the test (no background thread, no sleeps): a live holder is never
// fenced, a silent one is fenced exactly after TakeoverWait, a fenced holder can never renew
// again, released and revoked slots are claimed anew with a new epoch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "lease/lease.h"

namespace dmindex::lease {
namespace {

using std::chrono::milliseconds;

// A clock the test moves by hand; shared by holders and observers of one test.
struct ManualClock {
  std::atomic<int64_t> ms{1'000'000};
  ClockFn Fn() {
    return [this] { return runtime::Clock::time_point(milliseconds(ms.load())); };
  }
  void Advance(milliseconds d) { ms += d.count(); }
};

class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fabric::InProcOptions fo;
    fo.memory_nodes = 2;
    fo.pool_bytes = 16ull << 20;
    fabric_ = std::move(fabric::InProcFabric::Create(fo)).value();
    ep_ = std::move(fabric_->Connect()).value();
  }
  void TearDown() override { ep_.reset(); }
  LeaseOptions Manual() {
    LeaseOptions o;
    o.length = milliseconds(2000);
    o.renew_in_background = false;
    o.clock = clock_.Fn();
    return o;
  }
  std::unique_ptr<Lease> Claim() { return std::move(Lease::Claim(*fabric_, Manual())).value(); }

  ManualClock clock_;
  std::unique_ptr<fabric::Fabric> fabric_;
  std::unique_ptr<fabric::Endpoint> ep_;
};

TEST_F(LeaseTest, TwoProcessesGetDistinctSlots) {
  auto a = Claim(), b = Claim();
  EXPECT_NE(a->id().slot, b->id().slot);
  EXPECT_TRUE(a->id().valid());
  auto table = ReadLeaseTable(*ep_);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->size(), 2u);
  for (const SlotInfo& s : *table) {
    EXPECT_EQ(s.state.phase, Phase::kHeld);
    EXPECT_EQ(s.state.length(), milliseconds(2000));
    EXPECT_NE(s.pid, 0u);
  }
}

TEST_F(LeaseTest, ALiveHolderIsNeverFenced) {
  auto holder = Claim();
  LeaseObserver watcher(clock_.Fn());
  for (int i = 0; i < 40; ++i) {  // 40 periods of 600 ms: 24 s, far beyond the lease
    auto fenced = watcher.FenceIfExpired(*ep_, holder->id());
    ASSERT_TRUE(fenced.ok());
    EXPECT_FALSE(*fenced) << "period " << i;
    clock_.Advance(milliseconds(600));
    ASSERT_TRUE(holder->Renew().ok());
    EXPECT_TRUE(holder->CheckLive().ok());
  }
}

TEST_F(LeaseTest, ASilentHolderIsFencedAfterLengthPlusMarginAndNeverRenewsAgain) {
  auto holder = Claim();
  const HolderId id = holder->id();
  LeaseObserver watcher(clock_.Fn());
  ASSERT_FALSE(*watcher.FenceIfExpired(*ep_, id));  // first sight starts the wait
  clock_.Advance(milliseconds(2000));
  // The holder's own view ran out first: it stops writing (CheckLive renews on the spot
  // only if nobody revoked it; here we ask without renewing).
  clock_.Advance(milliseconds(499));
  EXPECT_FALSE(*watcher.FenceIfExpired(*ep_, id)) << "fenced before length + margin";
  clock_.Advance(milliseconds(1));
  EXPECT_TRUE(*watcher.FenceIfExpired(*ep_, id));
  // The stalled holder wakes up: its renewal fails, for good.
  Status s = holder->CheckLive();
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_NE(s.message().find("revoked"), std::string::npos) << s.ToString();
  EXPECT_TRUE(holder->Renew().IsUnavailable());
  EXPECT_TRUE(holder->CheckLive().IsUnavailable());
  // Another observer agrees at once (the slot says revoked).
  LeaseObserver other(clock_.Fn());
  EXPECT_TRUE(*other.FenceIfExpired(*ep_, id));
}

// What a read checks before it reads (tree/tree_index_adapter.h, DEX's session): only whether
// the lease is known fenced, without the clock; an expired lease nobody noticed passes it,
// and the CheckLive after the read is what refuses the answer and fences the holder.
TEST_F(LeaseTest, CheckNotFencedReadsNoClockAndFailsOnlyOnceFenced) {
  std::atomic<int> reads{0};
  LeaseOptions o = Manual();
  o.clock = [this, &reads] {
    ++reads;
    return runtime::Clock::time_point(milliseconds(clock_.ms.load()));
  };
  auto holder = std::move(Lease::Claim(*fabric_, o)).value();
  LeaseObserver watcher(clock_.Fn());
  ASSERT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  clock_.Advance(milliseconds(2500));
  ASSERT_TRUE(*watcher.FenceIfExpired(*ep_, holder->id()));  // revoked while it stalled
  const int before = reads.load();
  EXPECT_TRUE(holder->CheckNotFenced().ok()) << "it has not found out yet";
  EXPECT_EQ(reads.load(), before) << "CheckNotFenced read the clock";
  EXPECT_TRUE(holder->CheckLive().IsUnavailable());  // the check after a read finds out
  EXPECT_GT(reads.load(), before);
  Status s = holder->CheckNotFenced();
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_NE(s.message().find("revoked"), std::string::npos) << s.ToString();
}

TEST_F(LeaseTest, AHolderStopsWritingBeforeAnyObserverCouldFenceIt) {
  auto holder = Claim();
  LeaseObserver watcher(clock_.Fn());
  ASSERT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  clock_.Advance(milliseconds(1999));
  EXPECT_TRUE(holder->CheckLive().ok());  // still inside its lease: no renewal needed
  EXPECT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  // Past its length the holder renews before it may write again; the renewal resets the wait.
  clock_.Advance(milliseconds(1));
  EXPECT_TRUE(holder->CheckLive().ok());
  clock_.Advance(milliseconds(2000));
  EXPECT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
}

TEST_F(LeaseTest, ARenewalThatWinsTheRaceKeepsTheHolderAndTheRevocationFails) {
  auto holder = Claim();
  LeaseObserver watcher(clock_.Fn());
  ASSERT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  clock_.Advance(milliseconds(2500));
  ASSERT_TRUE(holder->Renew().ok());  // lands after the observer's last look
  // The observer's next look sees a new beat: the wait starts again, no revocation.
  EXPECT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  EXPECT_TRUE(holder->CheckLive().ok());
}

// Loses the reply of the next CAS on one lease slot: the CAS lands, its poster gets
// Unavailable (memory node 0 died with the reply in flight, its pool kept the word).
class LoseOneCasReply final : public fabric::VerbScript {
 public:
  explicit LoseOneCasReply(uint32_t slot) : slot_(SlotAddress(slot)) {}
  Outcome Run(const fabric::VerbCopy&) override { return Outcome::kPass; }
  AtomicOutcome RunAtomic(const fabric::Verb& v) override {
    if (v.kind != fabric::VerbKind::kCas || v.remote != slot_ || armed_.exchange(false) == false)
      return AtomicOutcome::kPass;
    return AtomicOutcome::kLostReply;
  }
  void Arm() { armed_ = true; }

 private:
  const GlobalAddress slot_;
  std::atomic<bool> armed_{true};
};

TEST_F(LeaseTest, ARenewalWhoseReplyWasLostIsRecognisedAsOurOwnNotARevocation) {
  auto holder = Claim();
  auto* inproc = static_cast<fabric::InProcFabric*>(fabric_.get());
  LoseOneCasReply lose(holder->id().slot);
  inproc->SetVerbScript(&lose);
  Status lost = holder->Renew();
  inproc->SetVerbScript(nullptr);
  EXPECT_TRUE(lost.IsUnavailable()) << lost.ToString();
  // The word in the slot is the lost renewal's; the next renewal must build on it.
  clock_.Advance(milliseconds(2100));
  Status next = holder->CheckLive();
  EXPECT_TRUE(next.ok()) << next.ToString();
  EXPECT_TRUE(holder->CheckLive().ok());
  // Observers see a live holder, and the release frees the slot (no wait for a fence).
  LeaseObserver watcher(clock_.Fn());
  EXPECT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  const HolderId id = holder->id();
  lose.Arm();
  inproc->SetVerbScript(&lose);
  EXPECT_TRUE(holder->Renew().IsUnavailable());  // in doubt again, then released
  inproc->SetVerbScript(nullptr);
  holder.reset();
  auto table = ReadLeaseTable(*ep_);
  ASSERT_TRUE(table.ok());
  for (const SlotInfo& s : *table) EXPECT_NE(s.slot, id.slot) << "the released slot is still held";
}

TEST_F(LeaseTest, ARevocationAfterALostRenewalReplyStillFencesTheHolder) {
  auto holder = Claim();
  LeaseObserver watcher(clock_.Fn());
  ASSERT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  auto* inproc = static_cast<fabric::InProcFabric*>(fabric_.get());
  LoseOneCasReply lose(holder->id().slot);
  inproc->SetVerbScript(&lose);
  EXPECT_TRUE(holder->Renew().IsUnavailable());
  inproc->SetVerbScript(nullptr);
  // The observer saw the landed renewal change the slot, then silence for length + margin.
  ASSERT_FALSE(*watcher.FenceIfExpired(*ep_, holder->id()));
  clock_.Advance(milliseconds(2500));
  ASSERT_TRUE(*watcher.FenceIfExpired(*ep_, holder->id()));
  Status s = holder->CheckLive();
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_NE(s.message().find("revoked"), std::string::npos) << s.ToString();
}

TEST_F(LeaseTest, ReleasedAndRevokedSlotsAreClaimedWithANewEpoch) {
  HolderId first;
  {
    auto holder = Claim();
    first = holder->id();
  }  // released
  LeaseObserver watcher(clock_.Fn());
  EXPECT_TRUE(*watcher.FenceIfExpired(*ep_, first)) << "a released lease holds nothing";
  // Claim slots until the released one comes back: its epoch moved on.
  std::vector<std::unique_ptr<Lease>> held;
  for (uint32_t i = 0; i < kSlots; ++i) {
    held.push_back(Claim());
    if (held.back()->id().slot == first.slot) break;
  }
  ASSERT_EQ(held.back()->id().slot, first.slot);
  EXPECT_EQ(held.back()->id().epoch, first.epoch + 1);
  EXPECT_TRUE(*watcher.FenceIfExpired(*ep_, first)) << "the old epoch stays dead";
  EXPECT_FALSE(*watcher.FenceIfExpired(*ep_, held.back()->id()));
}

TEST_F(LeaseTest, BadOptionsAreRejected) {
  LeaseOptions o = Manual();
  o.length = milliseconds(0);
  EXPECT_TRUE(Lease::Claim(*fabric_, o).status().IsInvalidArgument());
  o.length = milliseconds(50'000);
  EXPECT_TRUE(Lease::Claim(*fabric_, o).status().IsInvalidArgument());
  o.length = milliseconds(1000);
  o.renew_every = milliseconds(1000);
  EXPECT_TRUE(Lease::Claim(*fabric_, o).status().IsInvalidArgument());
}

TEST_F(LeaseTest, TheBackgroundThreadKeepsALeaseAlive) {
  // Real clock, short lease: the renewer must keep the slot's beat moving. Asserts only that
  // renewals happen (no timing bound): the beat changes between two looks far enough apart.
  LeaseOptions o;
  o.length = milliseconds(200);
  auto holder = std::move(Lease::Claim(*fabric_, o)).value();
  auto beat = [&] {
    uint64_t w = 0;
    EXPECT_TRUE(ep_->Read(SlotAddress(holder->id().slot), &w, 8).ok());
    return SlotState::Decode(w).beat;
  };
  const uint32_t first = beat();
  while (beat() == first) runtime::SleepFor(milliseconds(10));
  EXPECT_TRUE(holder->CheckLive().ok());
}

}  // namespace
}  // namespace dmindex::lease
