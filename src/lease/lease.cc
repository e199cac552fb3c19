#include "lease/lease.h"

#include <unistd.h>

#include <random>
#include <string>

#include "common/retry.h"

namespace dmindex::lease {
namespace {

constexpr uint32_t kMaxLength10ms = 0xfff;

std::string Name(HolderId id) {
  return "lease slot " + std::to_string(id.slot) + " epoch " + std::to_string(id.epoch);
}

int64_t Ns(runtime::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

uint64_t WallMs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(runtime::WallNow().time_since_epoch()).count());
}

uint32_t NextEpoch(uint32_t epoch) {
  const uint32_t next = (epoch + 1) & 0xffffff;
  return next == 0 ? 1 : next;  // epoch 0 never names a live lease
}

// Reads every slot (one READ of the whole table).
Result<std::vector<uint64_t>> ReadStates(fabric::Endpoint& ep) {
  std::vector<uint64_t> table(fabric::kLeaseTableBytes / 8);
  DMX_RETURN_IF_ERROR(ep.Read(SlotAddress(0), table.data(), static_cast<uint32_t>(fabric::kLeaseTableBytes)));
  return table;
}

}  // namespace

namespace {
std::atomic<const ClockFn*> g_test_clock{nullptr};
}  // namespace

ScopedTestClock::ScopedTestClock(ClockFn clock) : clock_(std::move(clock)) { g_test_clock.store(&clock_); }
ScopedTestClock::~ScopedTestClock() { g_test_clock.store(nullptr); }

ClockFn DefaultClock() {
  const ClockFn* test = g_test_clock.load();
  return test != nullptr ? *test : ClockFn();
}

Status ValidateLeaseOptions(const LeaseOptions& o) {
  if (o.length.count() < 10 || o.length.count() > 10 * kMaxLength10ms)
    return Status::InvalidArgument("lease length " + std::to_string(o.length.count()) +
                                   " ms: must be in [10, " + std::to_string(10 * kMaxLength10ms) + "] ms");
  if (o.renew_every.count() < 0 || o.renew_every >= o.length)
    return Status::InvalidArgument("lease renew_every " + std::to_string(o.renew_every.count()) +
                                   " ms: must be below the lease length (" + std::to_string(o.length.count()) +
                                   " ms); 0 means a quarter of it");
  return Status::Ok();
}

Result<std::unique_ptr<Lease>> Lease::Claim(fabric::Fabric& fabric, const LeaseOptions& given) {
  DMX_RETURN_IF_ERROR(ValidateLeaseOptions(given));
  LeaseOptions options = given;
  if (!options.clock && g_test_clock.load() != nullptr) {
    options.clock = DefaultClock();
    options.renew_in_background = false;  // the test's clock decides when renewals are due
  }
  // Renewals are nobody's operation: their verbs are counted apart (Fabric::MaintenanceCounts).
  auto connected = fabric.Connect(fabric::Fabric::Traffic::kMaintenance);
  if (!connected.ok()) return connected.status();
  std::unique_ptr<fabric::Endpoint> ep = std::move(connected).value();
  const uint32_t length_10ms = static_cast<uint32_t>((options.length.count() + 9) / 10);
  // Dead processes' slots stay held until someone fences them; if every slot is held, watch
  // them (as a taker would) until one can be fenced.
  LeaseObserver watcher(options.clock);
  RetryBudget budget(TimeLimit("polls of the lease table", 4 * TakeoverWait(std::chrono::milliseconds(10 * kMaxLength10ms)),
                               Status::Code::kUnavailable, "every lease slot is held by a live process"),
                     "claim a lease");
  Backoff backoff(backoff::kPoll);
  const uint32_t start = static_cast<uint32_t>(runtime::Entropy() % kSlots);  // spread claimants
  for (;;) {
    auto table = ReadStates(*ep);
    if (!table.ok()) return table.status();
    for (uint32_t i = 0; i < kSlots; ++i) {
      const uint32_t slot = (start + i) % kSlots;
      if (slot == kMemoryServerSlot) continue;  // never a process's (lease_table.h)
      uint64_t old = (*table)[slot * (kSlotBytes / 8)];
      SlotState s = SlotState::Decode(old);
      if (s.phase == Phase::kHeld) {
        auto fenced = watcher.FenceIfExpired(*ep, HolderId{slot, s.epoch});
        if (!fenced.ok()) return fenced.status();
        if (!*fenced) continue;
        DMX_RETURN_IF_ERROR(ep->Read(SlotAddress(slot), &old, 8));  // revoked by the call above
        s = SlotState::Decode(old);
        if (s.phase == Phase::kHeld) continue;
      }
      const SlotState mine{NextEpoch(s.epoch), length_10ms, 0, Phase::kHeld};
      // Before the CAS is posted: the claim lands later, so no observer starts its wait
      // earlier than this instant (see Renew).
      const runtime::Clock::time_point began = options.clock ? options.clock() : runtime::Now();
      uint64_t seen = 0;
      DMX_RETURN_IF_ERROR(ep->Cas(SlotAddress(slot), old, mine.Encode(), &seen));
      if (seen != old) continue;  // another claimant won it
      const uint64_t info[3] = {static_cast<uint64_t>(getpid()), WallMs(), WallMs()};
      DMX_RETURN_IF_ERROR(ep->Write(SlotAddress(slot) + 8, info, sizeof info));
      return std::unique_ptr<Lease>(new Lease(options, std::move(ep), HolderId{slot, mine.epoch}, mine.Encode(), began));
    }
    if (!budget.Spend()) return budget.Exhausted("in memory node 0's lease table");
    backoff.Pause();
  }
}

Lease::Lease(const LeaseOptions& options, std::unique_ptr<fabric::Endpoint> ep, HolderId id, uint64_t state_word,
             runtime::Clock::time_point claimed)
    : options_(options), id_(id), ep_(std::move(ep)), state_word_(state_word),
      live_until_ns_(Ns(claimed + options.length)) {
  if (options_.renew_in_background) renewer_ = runtime::Thread([this] { RenewLoop(); });
}

std::unique_ptr<Lease> Lease::OfMemoryServer(uint64_t incarnation) {
  LeaseOptions o;
  o.renew_in_background = false;
  return std::unique_ptr<Lease>(new Lease(o, nullptr, MemoryServerHolder(incarnation), 0, runtime::Clock::time_point()));
}

Lease::~Lease() {
  {
    std::lock_guard<runtime::Mutex> g(mu_);
    stop_ = true;
  }
  wake_.NotifyAll();
  if (renewer_.joinable()) renewer_.join();
  std::lock_guard<runtime::Mutex> g(mu_);
  if (ep_ == nullptr) return;  // a memory server's: no slot
  if (fenced_.load()) return;  // a revoked slot is its taker's to leave
  // Fails only if revoked, or if a renewal whose reply was lost landed: then free from there.
  for (uint64_t expected : {state_word_, in_doubt_word_}) {
    if (expected == 0) continue;
    SlotState s = SlotState::Decode(expected);
    s.phase = Phase::kFree;
    uint64_t seen = 0;
    if (!ep_->Cas(SlotAddress(id_.slot), expected, s.Encode(), &seen).ok() || seen == expected) return;
  }
}

runtime::Clock::time_point Lease::Now() const { return options_.clock ? options_.clock() : runtime::Now(); }

Status Lease::Fenced(const char* why) const {
  return Status::Unavailable("this process's " + Name(id_) + " " + why +
                             ": another process may have taken over its locks; reopen the index");
}

Status Lease::CheckLive() {
  if (ep_ == nullptr) return Status::Ok();  // a memory server's: it is the server process
  if (fenced_.load(std::memory_order_relaxed)) [[unlikely]]
    return Fenced("was revoked");
  if (Ns(Now()) < live_until_ns_.load(std::memory_order_acquire)) return Status::Ok();
  // The background renewal is late (a loaded machine, no renewal thread): renew here. Safe:
  // if the renewal succeeds, nobody revoked us before it, and nobody can after it until
  // another TakeoverWait without renewals.
  return Renew();
}

Status Lease::GiveUp(const std::string& why) {
  if (ep_ == nullptr) return Status::Unavailable(why);  // a memory server's: it has no slot to stop renewing
  // The background renewal stops at its next round (Renew answers fenced); writes posted
  // before this instant passed CheckLive, so a taker's wait covers them as for a dead holder.
  fenced_.store(true);
  return Fenced(("was revoked by this process (" + why + ")").c_str());
}

Status Lease::Renew() {
  std::lock_guard<runtime::Mutex> g(mu_);
  if (ep_ == nullptr) return Status::Ok();  // a memory server's: nothing to renew
  if (fenced_.load()) return Fenced("was revoked");
  // Taken before the CAS is posted: the renewal lands later, so observers that see it start
  // their wait after this instant, and live_until is never later than they allow.
  const runtime::Clock::time_point began = Now();
  for (;;) {
    SlotState next = SlotState::Decode(state_word_);
    next.beat = (next.beat + 1) & 0x3ffffff;
    uint64_t seen = 0;
    if (Status cas = ep_->Cas(SlotAddress(id_.slot), state_word_, next.Encode(), &seen); !cas.ok()) {
      // Its outcome is unknown: memory node 0 may have gone away with the CAS landed (a
      // persistent pool keeps it) and the reply lost. Remember what it would have left, so
      // that finding exactly that word later is known for our own renewal, not a revocation.
      in_doubt_word_ = next.Encode();
      return cas;
    }
    if (seen == state_word_) {
      state_word_ = next.Encode();
      break;
    }
    // Only this process writes beats under its epoch, and a revocation changes the phase,
    // so the in-doubt word there means our lost renewal landed and nobody revoked us since.
    if (in_doubt_word_ != 0 && seen == in_doubt_word_) {
      state_word_ = seen;
      in_doubt_word_ = 0;
      continue;  // renew on top of it: this renewal's CAS lands after `began`
    }
    fenced_.store(true);
    return Fenced("was revoked");
  }
  in_doubt_word_ = 0;
  live_until_ns_.store(Ns(began + options_.length), std::memory_order_release);
  // For listings only (dmindex indexes --locks): when, by the wall clock, it was renewed. Its
  // failure says nothing about the renewal, which landed: CheckLive's answer (on which a
  // writer gives its lease up, tree/node_lock.cc) must not depend on it.
  const uint64_t wall = WallMs();
  (void)ep_->Write(SlotAddress(id_.slot) + 24, &wall, 8);
  return Status::Ok();
}

void Lease::RenewLoop() {
  const auto every = options_.renew_every.count() > 0 ? options_.renew_every : options_.length / 4;
  std::unique_lock<runtime::Mutex> lock(mu_);
  while (!stop_) {
    // The real clock paces the thread; decisions read options_.clock.
    wake_.WaitUntil(lock, runtime::Now() + every, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    // A failed renewal (a fabric error) is retried next period; CheckLive fences writers
    // meanwhile once the lease runs out, and a revoked lease stops the loop.
    (void)Renew();
    lock.lock();
    if (fenced_.load()) break;
  }
}

Result<std::pair<uint64_t, runtime::Clock::duration>> LeaseObserver::Look(fabric::Endpoint& ep, uint32_t slot) {
  uint64_t word = 0;
  DMX_RETURN_IF_ERROR(ep.Read(SlotAddress(slot), &word, 8));
  // After the READ returned: the state it shows landed before this instant.
  const runtime::Clock::time_point now = Now();
  std::lock_guard<runtime::Mutex> g(mu_);
  auto [it, first] = seen_.try_emplace(slot, Seen{word, now});
  if (!first && it->second.word != word) it->second = Seen{word, now};
  return std::make_pair(word, now - it->second.since);
}

Result<bool> LeaseObserver::FenceIfExpired(fabric::Endpoint& ep, HolderId holder) {
  // Epoch 0 names no lease (a holder that takes locks without one): it is waited for, never
  // fenced.
  if (!holder.valid() || holder.memory_server()) return false;
  auto looked = Look(ep, holder.slot);
  if (!looked.ok()) return looked.status();
  const auto& look = *looked;
  const SlotState s = SlotState::Decode(look.first);
  if (s.epoch != holder.epoch || s.phase != Phase::kHeld) return true;  // released, revoked or reclaimed
  if (look.second < TakeoverWait(s.length())) return false;
  SlotState revoked = s;
  revoked.phase = Phase::kRevoked;
  uint64_t seen = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(SlotAddress(holder.slot), look.first, revoked.Encode(), &seen));
  if (seen == look.first) return true;
  const SlotState now = SlotState::Decode(seen);
  return now.epoch != holder.epoch || now.phase != Phase::kHeld;  // false: it renewed just now
}

Result<std::chrono::milliseconds> LeaseObserver::StillFor(fabric::Endpoint& ep, HolderId holder) {
  auto look = Look(ep, holder.slot);
  if (!look.ok()) return look.status();
  return std::chrono::duration_cast<std::chrono::milliseconds>(look->second);
}

Result<std::vector<SlotInfo>> ReadLeaseTable(fabric::Endpoint& ep) {
  auto table = ReadStates(ep);
  if (!table.ok()) return table.status();
  std::vector<SlotInfo> held;
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    const uint64_t* w = &(*table)[slot * (kSlotBytes / 8)];
    const SlotState s = SlotState::Decode(w[0]);
    if (s.phase != Phase::kFree) held.push_back({slot, s, w[1], w[2], w[3]});
  }
  return held;
}

}  // namespace dmindex::lease
