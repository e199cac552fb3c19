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
#include "fabric/fabric.h"
#include "fabric/inproc/verb_script.h"
#include "fabric/pool_layout.h"

namespace dmindex::testing {

// Counts the READs and WRITEs of one thread; from the `die_at`-th on (1-based; 0: never) it
// fails them, landing the first half of the `die_at`-th's words if it is a WRITE. Every later
// READ and WRITE of the thread fails too, so whatever lock it held stays held, as in a killed
// process (atomic verbs pass: the CAS that takes a lock lands with the READ batched behind it).
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
  uint64_t seen() const { return seen_; }

 private:
  const std::thread::id who_;
  const uint64_t die_at_;
  std::atomic<uint64_t> seen_{0};
};

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
