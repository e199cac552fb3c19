// Leases: how a process that takes remote locks says it is alive, and how another process
// decides, without the first one's help, that it is dead and can never write again.
//
//   auto lease = Lease::Claim(fabric, LeaseOptions{});  // a slot in node 0's lease table
//   HolderId me = (*lease)->id();                        // written into the lock words I take
//   DMX_RETURN_IF_ERROR((*lease)->CheckLive());          // before every write under a lock
//
//   LeaseObserver watcher;                               // in the process that waits
//   auto fenced = watcher.FenceIfExpired(ep, holder);    // true: take the holder's lock over
//
// The rule (docs/SYNCHRONIZATION.md, "Leases", argues it): a holder writes under its locks
// only while its last successful renewal *began* less than its lease length ago; an observer
// fences a holder only after watching its slot stand still for that length plus the margin
// (TakeoverWait) on its own clock, and then by a CAS that turns the slot revoked - which any
// later renewal of the holder fails on, so a holder that was merely stalled stops for good
// instead of writing over its taker. No clocks are compared between processes; only their
// rates are assumed close (the margin covers that and a write's flight time).
//
// Layer: lease/ sits on fabric/ (verbs to node 0, a thread through the runtime seam) and
// under tree/ and designs/, so every design that locks remote words can use one mechanism.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/runtime.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "lease/lease_table.h"

namespace dmindex::lease {

using ClockFn = std::function<runtime::Clock::time_point()>;

// How long an observer waits without seeing a renewal before it may fence a holder whose
// lease is `length` long: the length plus a quarter of it (500 ms at the default 2 s). The
// quarter is the margin: it must exceed the longest time between a holder's CheckLive and the
// landing of the write it then posts, plus the clock-rate drift over one lease.
inline std::chrono::milliseconds TakeoverWait(std::chrono::milliseconds length) { return length + length / 4; }

// Tests: while one is alive, leases claimed and observers made without a clock of their own
// read `clock` instead of runtime::Now, and such leases renew only when CheckLive finds them
// due (no background thread), so a test decides with its clock when a holder that stopped
// working expires. One at a time.
class ScopedTestClock {
 public:
  explicit ScopedTestClock(ClockFn clock);
  ~ScopedTestClock();
  ScopedTestClock(const ScopedTestClock&) = delete;
  ScopedTestClock& operator=(const ScopedTestClock&) = delete;

 private:
  const ClockFn clock_;
};
// The installed test clock, or null.
ClockFn DefaultClock();

struct LeaseOptions {
  // How long the lease lasts without a renewal (at most 40.95 s; kept in 10 ms units).
  std::chrono::milliseconds length{2000};
  // Renew this often; 0: length / 4.
  std::chrono::milliseconds renew_every{0};
  // false: no background thread; whoever owns the lease calls Renew (deterministic tests).
  bool renew_in_background = true;
  ClockFn clock;  // null: runtime::Now
};

// Checks `o` (length in (0, 40.95 s], renew_every below length): InvalidArgument naming it.
Status ValidateLeaseOptions(const LeaseOptions& o);

// This process's lease. Thread-safe. As a fabric::PostGuard (CheckLive), it keeps a batch
// written under its locks from going out after a wait of the fabric's own.
class Lease final : public fabric::PostGuard {
 public:
  // Claims a free (or released, or revoked) slot and starts renewing it.
  static Result<std::unique_ptr<Lease>> Claim(fabric::Fabric& fabric, const LeaseOptions& options);
  // What a memory server's own tree holds its locks under (XStore's server-side writes): no
  // slot of the table (a server reaches only its own pool) but MemoryServerHolder(incarnation).
  // Always live: the server process is the holder, and a dead one writes nothing. Nobody
  // fences it or takes its words over (LeaseObserver says no); the next incarnation on the
  // pool frees them at start, finishing their writes (tree/server_locks.h). Neither does it
  // take anyone over: the lease table is on memory node 0, out of a server's reach.
  static std::unique_ptr<Lease> OfMemoryServer(uint64_t incarnation);
  // Stops renewing and frees the slot (whoever owned locks under it must have released them).
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  HolderId id() const { return id_; }
  bool memory_server() const { return id_.memory_server(); }
  std::chrono::milliseconds length() const { return options_.length; }

  // Ok while this process may write under its locks; renews on the spot if the background
  // renewal is late. Unavailable once fenced (revoked by another process after it saw no
  // renewal for TakeoverWait): for good, the process must reopen its indexes.
  Status CheckLive();
  // Unavailable if this process already knows the lease fenced; reads no clock. What a read
  // checks before it reads (a handle known to be revoked reads nothing): the read's answer
  // stands only on a CheckLive after it, which also finds an expired lease that nobody has
  // noticed yet.
  Status CheckNotFenced() const {
    return fenced_.load(std::memory_order_relaxed) ? Fenced("was revoked") : Status::Ok();
  }
  Status MayPost() override { return CheckLive(); }
  // One renewal now (the background thread calls this every renew_every).
  Status Renew();
  // Fences this lease for good from this side: never renewed again, CheckLive fails from now
  // on, so other processes take its locks over after TakeoverWait, as a dead process's. For a
  // process that may have left a lock word naming it that it could not release
  // (tree/node_lock.cc). Returns what its writers get from now on, with `why`.
  Status GiveUp(const std::string& why);

 private:
  Lease(const LeaseOptions& options, std::unique_ptr<fabric::Endpoint> ep, HolderId id, uint64_t state_word,
        runtime::Clock::time_point claimed);
  runtime::Clock::time_point Now() const;
  Status Fenced(const char* why) const;
  void RenewLoop();

  const LeaseOptions options_;
  const HolderId id_;
  runtime::Mutex mu_;  // renewals, the endpoint, stop_
  runtime::CondVar wake_;
  std::unique_ptr<fabric::Endpoint> ep_;  // null: a memory server's (OfMemoryServer)
  uint64_t state_word_;  // the slot's word 0 as our last successful CAS left it
  uint64_t in_doubt_word_ = 0;  // what a renewal whose CAS failed would have left; 0: none
  std::atomic<int64_t> live_until_ns_;  // clock: last successful renewal's start + length
  std::atomic<bool> fenced_{false};
  bool stop_ = false;
  runtime::Thread renewer_;
};

// Another process's view of the lease table. Remembers when it first saw each slot's state,
// so call it again and again on the same observer (one per process or per waiting thread).
class LeaseObserver {
 public:
  // null clock: DefaultClock(), else runtime::Now.
  explicit LeaseObserver(ClockFn clock = nullptr) : clock_(clock ? std::move(clock) : DefaultClock()) {}

  // True if `holder` can never write again: its slot was released or reclaimed (epoch moved
  // on), or revoked, or its state stood still for TakeoverWait(its length) on this observer's
  // clock and this call revoked it. False: it may be alive (look again later), or it names no
  // lease (epoch 0: a holder without one is waited for as before leases), or it is a memory
  // server's own tree (its successor frees its words, Lease::OfMemoryServer).
  Result<bool> FenceIfExpired(fabric::Endpoint& ep, HolderId holder);

  // How long this observer has seen `holder`'s slot unchanged (0 if it changed or just now
  // first seen); for listings.
  Result<std::chrono::milliseconds> StillFor(fabric::Endpoint& ep, HolderId holder);

 private:
  runtime::Clock::time_point Now() const { return clock_ ? clock_() : runtime::Now(); }
  struct Seen {
    uint64_t word = 0;
    runtime::Clock::time_point since;
  };
  // Reads `slot`'s state word and updates seen_; returns it and how long it stood still.
  Result<std::pair<uint64_t, runtime::Clock::duration>> Look(fabric::Endpoint& ep, uint32_t slot);

  const ClockFn clock_;
  runtime::Mutex mu_;
  std::unordered_map<uint32_t, Seen> seen_;
};

// One slot of the table as a listing shows it.
struct SlotInfo {
  uint32_t slot = 0;
  SlotState state;
  uint64_t pid = 0;
  uint64_t claimed_unix_ms = 0;
  uint64_t renewed_unix_ms = 0;  // the holder's wall clock at its last renewal
};
// Every slot that is not free (held or revoked).
Result<std::vector<SlotInfo>> ReadLeaseTable(fabric::Endpoint& ep);

}  // namespace dmindex::lease
