// dmindex's one retry policy: how a thread waits before it tries again (Backoff) and how often
// or how long it may try before it gives up with a Status that says why (RetryBudget).
//
// Every retry loop in src/ uses these, with a named limit from the list below, so the policy
// can be read (and changed) in one place. A limit is a backstop, not a fix: each loop it bounds
// makes progress under its protocol (a restart means someone else's write went through; a held
// lock is released by its holder); a budget that runs out means that argument failed (a bug, a
// crashed peer, a corrupted pool), and the Status names the operation, where, the counts and
// the limit, so the failure is never a hang and never an unexplained Corruption.
//
// All waiting goes through common/runtime.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "common/activity.h"
#include "common/retry_status.h"
#include "common/runtime.h"
#include "dmindex/status.h"

namespace dmindex {

// Spin, then yield, then sleep with doubling sleeps.
struct BackoffStages {
  uint32_t spins = 0;   // CPU pauses first: the other party is nanoseconds from done
  uint32_t yields = 0;  // then yields: it is a round trip from done, or descheduled
  // Then sleeps from first_sleep, doubling up to max_sleep. 0: never sleep (keep yielding).
  std::chrono::microseconds first_sleep{0};
  std::chrono::microseconds max_sleep{0};
};

namespace backoff {
// An optimistic operation restarts after meeting a concurrent writer, which finishes within a
// round trip or two; after many restarts the writer is probably descheduled: give it the core.
inline constexpr BackoffStages kRestart{2, 64, std::chrono::microseconds(1), std::chrono::microseconds(64)};
// A remote node lock is held: the holder is a round trip or two from releasing it. Sleeping
// soon keeps waiting threads off the CPU (compute nodes have few cores) and off the NIC.
inline constexpr BackoffStages kLockHeld{0, 4, std::chrono::microseconds(1), std::chrono::microseconds(64)};
// A local latch is held for a short in-memory critical section.
inline constexpr BackoffStages kLatchHeld{16, 0, {}, {}};
// Polling a shared word another process changes in a slow step of its own (a repartitioning,
// creating an index): no hurry, sleep early and long.
inline constexpr BackoffStages kPoll{0, 4, std::chrono::microseconds(50), std::chrono::milliseconds(10)};
}  // namespace backoff

// Past its spins, a Backoff with a `waits_for` ("the node lock", a string literal) notes the
// wait on the calling thread's Activity, for the watchdog's report.
class Backoff {
 public:
  enum class Stage { kSpin, kYield, kSleep };
  explicit Backoff(const BackoffStages& stages, const char* waits_for = nullptr, GlobalAddress where = {})
      : stages_(stages), sleep_(stages.first_sleep), waits_for_(waits_for), where_(where) {}
  ~Backoff() {
    if (noted_ != nullptr) noted_->EndWait();
  }
  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;

  // Waits one step of the current stage and moves on.
  void Pause();
  void Reset();
  Stage stage() const;
  uint64_t steps() const { return steps_; }

 private:
  void Note();

  BackoffStages stages_;
  uint64_t steps_ = 0;
  std::chrono::microseconds sleep_;
  const char* const waits_for_;
  const GlobalAddress where_;
  Activity* noted_ = nullptr;
};

// How often, or how long, one loop may try. `bounds` names what is counted ("restarts"),
// `meaning` what running out says about the system; both go into the Status.
struct RetryLimit {
  const char* bounds;
  uint64_t attempts = 0;            // 0: no count limit
  std::chrono::milliseconds time{}; // 0: no time limit; counted from the first failed attempt
  Status::Code code = Status::Code::kBusy;
  const char* meaning = "";
};

// A limit of `time` set at run time (a timeout option). A zero time means "do not wait": one
// failed attempt spends the budget (a RetryLimit's zero time means no time limit at all).
inline RetryLimit TimeLimit(const char* bounds, std::chrono::milliseconds time, Status::Code code,
                            const char* meaning) {
  return RetryLimit{bounds, time.count() > 0 ? 0u : 1u, time, code, meaning};
}

namespace retry_limits {
// Restarts of one tree traversal (descend, lock the covering node, write) that met a stale
// pointer or a concurrent structure change; each restart means another thread's change went in.
inline constexpr RetryLimit kTreeRestarts{"restarts", 10'000, {}, Status::Code::kBusy,
                                          "the path to the key kept changing"};
// Sibling hops along one level within one traversal: a B-link chain is acyclic, so running
// out means a cycle of sibling pointers.
inline constexpr RetryLimit kLevelHops{"hops along one level", 1u << 16, {}, Status::Code::kCorruption,
                                       "the sibling chain has a cycle"};
// Re-reading a node image that does not validate because writes keep landing in it (each
// failed READ saw it change): the writers are making progress, the reader is unlucky.
inline constexpr RetryLimit kTornImage{"reads torn by landing writes", 1'000'000, {}, Status::Code::kBusy,
                                       "writes to the node never paused for the length of one READ"};
// A reader waiting for the writer that holds a node's lock and is writing it (a torn image).
inline constexpr RetryLimit kTornUnderLock{"reads while a writer held the node's lock", 0,
                                           std::chrono::seconds(60), Status::Code::kUnavailable,
                                           "the lock stays held (did its holder crash?)"};
// Waiting for a remote node lock: a holder releases it within its write's round trips.
inline constexpr RetryLimit kNodeLockHeld{"failed lock attempts", 0, std::chrono::seconds(60),
                                          Status::Code::kUnavailable,
                                          "the lock stays held (did its holder crash?)"};
// Reading back our own lock word after a batch on its memory server failed with Unavailable
// (the server went away with it in flight). Each READ already waits for a restarting server;
// this outlasts the UCX fabric's own reconnection window (60 s by default), after which it
// has given the pool up and every verb fails alike.
inline constexpr RetryLimit kOwnLockWordAnswer{"reads of our own lock word", 0, std::chrono::seconds(90),
                                               Status::Code::kUnavailable,
                                               "its memory server did not come back"};
// Attempts of one DEX operation over its cached traversal (each a restart of the descent).
inline constexpr RetryLimit kDexOperation{"attempts", 1'000'000, {}, Status::Code::kBusy,
                                          "the operation kept meeting concurrent changes"};
// An operation that read a DEX write waiting for its redo record to land: the writer is
// posting it (twice at most, each within the fabric's operation timeout).
inline constexpr RetryLimit kDexRecordInFlight{"waits", 0, std::chrono::seconds(60), Status::Code::kUnavailable,
                                               "the record of a write it read never landed"};
// Attempts of an optional DEX merge after a delete: a contended merge is skipped, not failed.
inline constexpr RetryLimit kDexMerge{"attempts", 8, {}, Status::Code::kBusy, "contended"};
// Waiting for a compute node whose partition is moving (its caches are written back).
inline constexpr RetryLimit kDexDraining{"waits", 0, std::chrono::seconds(30), Status::Code::kUnavailable,
                                         "the compute node stays drained by a repartitioning"};
// The stored partition map: locking it for a change, and reading it while another process
// changes it (the changer holds it for one flush of dirty pages).
inline constexpr RetryLimit kPartitionMapLocked{"attempts to lock the partition map", 0,
                                                std::chrono::seconds(30), Status::Code::kUnavailable,
                                                "did a process die while repartitioning?"};
inline constexpr RetryLimit kPartitionMapChanging{"reads of a changing partition map", 0,
                                                  std::chrono::seconds(30), Status::Code::kUnavailable,
                                                  "did a process die while repartitioning?"};
// A process opening an index another one is creating waits for its partition map.
inline constexpr RetryLimit kPartitionMapCreated{"polls for the partition map", 0, std::chrono::seconds(10),
                                                 Status::Code::kUnavailable, "did its creator die?"};
// Claiming free compute nodes (host leases) against other processes claiming at once.
inline constexpr RetryLimit kHostLeaseClaims{"claim attempts", 64, {}, Status::Code::kBusy,
                                             "other processes kept claiming the same compute nodes"};
// XStore: fetching a sub-model whose directory word names a blob already replaced and reused
// (the server retrains it again and again faster than one READ).
inline constexpr RetryLimit kModelFetch{"fetches of a sub-model", 1'000, {}, Status::Code::kBusy,
                                        "its blob was replaced before each READ of it ended"};
// Creating or opening a catalog entry while another process creates one.
inline constexpr RetryLimit kCatalogClaim{"polls of the catalog", 0, std::chrono::seconds(5),
                                          Status::Code::kUnavailable,
                                          "an entry stays half-created (did its creator die?)"};
// The compute-side cache: rounds of freeing a frame, and attempts to invalidate a busy frame.
// Running out asks the operation to restart (its own budget bounds the restarts).
inline constexpr RetryLimit kFreeFrameRounds{"rounds", 256, {}, kRetryCode,
                                             "no frame could be freed (cache too small for this concurrency?)"};
inline constexpr RetryLimit kInvalidateBusyFrame{"attempts", 1000, {}, kRetryCode,
                                                 "the frame stays busy"};
// Waits for a frame's I/O or latch before an operation restarts anyway.
inline constexpr RetryLimit kFrameBusyWait{"waits", 4096, {}, kRetryCode, "the frame stays busy"};
// Waits for a frame's writer before an optimistic read gives up and its operation restarts.
inline constexpr RetryLimit kOptimisticRead{"waits", 256, {}, kRetryCode, "a writer holds the frame"};
// Restarts of one operation of the in-memory tree (designs/local).
inline constexpr RetryLimit kLocalTreeRestarts{"restarts", 1'000'000, {}, Status::Code::kBusy,
                                               "the nodes on the path kept changing"};
// Restarts of one operation of the adaptive radix tree (src/art: IndeXY's X).
inline constexpr RetryLimit kArtRestarts{"restarts", 1'000'000, {}, Status::Code::kBusy,
                                         "the nodes on the path kept changing"};
// Attempts of one IndeXY update or delete of a key that was only in Y (designs/indexy): each
// failed attempt means the key moved between X and Y meanwhile (a release, an admission, a
// dropped tombstone), which the background does a bounded number of times per key.
inline constexpr RetryLimit kIndexyTierMoves{"attempts", 100'000, {}, Status::Code::kBusy,
                                             "the key kept moving between X and Y"};
// Processes started together (dmindex check --start-barrier) waiting for each other.
inline constexpr RetryLimit kStartBarrier{"polls", 0, std::chrono::seconds(120), Status::Code::kUnavailable,
                                          "the other processes never arrived (did one fail to start?)"};
}  // namespace retry_limits

class RetryBudget {
 public:
  // `operation`: what is retried ("insert", "lock node"), a string that outlives the budget.
  RetryBudget(const RetryLimit& limit, const char* operation) : limit_(limit), operation_(operation) {}

  // Counts one failed attempt; true while the limit allows another one. Reads the clock only
  // if the limit has a time and an attempt failed, so the fast path costs nothing.
  bool Spend();
  uint64_t spent() const { return spent_; }
  // A fresh budget for the next stage of the same operation (e.g. one level up).
  void Reset() { spent_ = 0; }
  // The Status of a spent budget: "<operation> <where>: gave up after <n> <bounds> in <t> ms
  // (limit ...): <meaning>", with the limit's code.
  Status Exhausted(std::string_view where) const;

 private:
  RetryLimit limit_;
  const char* operation_;
  uint64_t spent_ = 0;
  runtime::Clock::time_point first_failure_{};
};

}  // namespace dmindex
