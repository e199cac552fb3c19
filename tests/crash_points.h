// Deterministic crash points for the in-process fabric (fabric/inproc/verb_script.h): a thread
// that "dies" at its k-th READ or WRITE, and what it may leave behind in the pool's lock tables.
// Used by the lock-takeover tests (a compute process's writer dies) and the XStore restart
// tests (the memory server's write dies; in process, RPCs run on the caller's thread).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "dmindex/global_address.h"
#include "dmindex/options.h"
#include "fabric/fabric.h"
#include "fabric/inproc/verb_script.h"
#include "fabric/pool_layout.h"

namespace dmindex::testing {

// Counts the READs and WRITEs of one thread; from the `die_at`-th on (1-based; 0: never) it
// fails them, landing the first half of the `die_at`-th's words if it is a WRITE. Every later
// verb of the thread fails too, atomic ones included (none lands: a killed process posts
// nothing), so whatever lock it held stays held. Atomic verbs before the `die_at`-th pass: the
// CAS that takes a lock lands with the READ batched behind it. A dead thread also renews no
// lease (CheckLive's on-the-spot renewal is its CAS), so one that asks after its own lock word
// (tree/node_lock.cc, AskOurWord) stops once the test clock moved past its lease.
class DyingThread final : public fabric::VerbScript {
 public:
  DyingThread(std::thread::id who, uint64_t die_at) : who_(who), die_at_(die_at) {}
  Outcome Run(const fabric::VerbCopy& copy) override {
    if (std::this_thread::get_id() != who_) return Outcome::kPass;
    const uint64_t n = ++seen_;
    if (die_at_ == 0 || n < die_at_) return Outcome::kPass;
    // Half the words of a WRITE land (an aligned 8-byte word never tears: none of a lock word).
    if (n == die_at_ && copy.verb().kind == fabric::VerbKind::kWrite) copy.Copy(0, copy.verb().length / 16 * 8);
    return Outcome::kFail;
  }
  AtomicOutcome RunAtomic(const fabric::Verb&) override {
    const bool dead = std::this_thread::get_id() == who_ && die_at_ != 0 && seen_ >= die_at_;
    return dead ? AtomicOutcome::kNotLanded : AtomicOutcome::kPass;
  }
  uint64_t seen() const { return seen_; }

 private:
  const std::thread::id who_;
  const uint64_t die_at_;
  std::atomic<uint64_t> seen_{0};
};

// The indexes of the lock tests: u64 keys, 256-byte nodes filled to `fill` (few keys make a
// tree of several levels) and a 100 ms lease.
inline IndexOptions LockTestOptions(double fill) {
  IndexOptions o;
  o.name = "t";
  o.key_format = KeyFormat::kU64;
  o.node_bytes = 256;
  o.bulk_fill = fill;
  o.knobs["lease_ms"] = "100";
  return o;
}

// Lock words held anywhere in the pools' lock tables.
inline uint64_t HeldLocks(fabric::Fabric& fabric) {
  auto ep = std::move(fabric.Connect()).value();
  std::vector<uint64_t> table(fabric::kLockTableBytes / 8);
  uint64_t held = 0;
  for (uint16_t node = 0; node < fabric.memory_nodes(); ++node) {
    EXPECT_TRUE(ep->Read(GlobalAddress(node, fabric::kLockTableOffset), table.data(),
                         static_cast<uint32_t>(fabric::kLockTableBytes)).ok());
    for (uint64_t w : table) held += w != 0;
  }
  return held;
}

}  // namespace dmindex::testing
