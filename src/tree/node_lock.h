// Exclusive node locks over one-sided verbs, with Sherman's techniques as switches:
//   hocl     a LocalLockTable (per compute node) in front of the global lock word: local FIFO
//            queueing and hand-over of a held global lock to the next local waiter;
//   combine  "CAS lock + READ node" and "WRITE node(s) + WRITE unlock" each go in one in-order
//            batch (one round trip) instead of one round trip per verb.
// The global lock word is in the lock table of the node's memory node (lock_table.h).
//
// Writers hold the lock of every node they write (lock-free readers validate instead), and a
// thread holds at most one node lock at a time, so there is no deadlock.
#pragma once

#include <cstdint>
#include <span>

#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "tree/local_lock_table.h"

namespace dmindex::tree {

class NodeLock {
 public:
  NodeLock(bool combine) : combine_(combine) {}

  // What a holder needs to release the lock.
  struct Held {
    GlobalAddress word;
    LocalLockTable* local = nullptr;  // null: no local layer (hocl off)
    bool held = false;
    uint64_t owner = 0;  // what the lock word holds while we hold it
  };

  // Takes the lock of `node` and then reads `len` bytes of it into `buf`. `local` is the
  // compute node's local lock table, or null. `owner` (non-zero) is written into the lock
  // word. *cas_failures counts failed remote attempts.
  Status LockAndRead(fabric::Endpoint& ep, LocalLockTable* local, uint64_t owner,
                     GlobalAddress node, void* buf, uint32_t len, Held* held,
                     uint64_t* cas_failures) const;

  // One attempt at the lock of `node`: on success *held holds it and `buf` the node read
  // under it; otherwise *holder is the lock word's owner (non-zero) and nothing is held.
  // Only the global word is tried (no local queueing): for a reader that needs the node quiet
  // for one READ (TreeReader::ReadTorn), not for a writer.
  Status TryLockAndRead(fabric::Endpoint& ep, uint64_t owner, GlobalAddress node, void* buf,
                        uint32_t len, Held* held, uint64_t* holder) const;

  // Executes `writes` in posting order, then releases the lock (or hands it to a local
  // waiter). Writes on the lock's memory node share the unlock's batch when combine is on.
  // If they were in flight when a memory server went away (Unavailable) and the server came
  // back with its pool (memserver --data-dir), a lock word that still names us means no one
  // took the node since: the writes and the unlock are posted again (the same bytes, still
  // under our lock), so the lock is not left held by us for good.
  Status WriteAndUnlock(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes) const;
  Status Unlock(fabric::Endpoint& ep, Held* held) const { return WriteAndUnlock(ep, held, {}); }

 private:
  Status Acquire(fabric::Endpoint& ep, uint64_t owner, GlobalAddress node, void* buf,
                 uint32_t len, Held* held, uint64_t* cas_failures) const;
  // One CAS on held->word (with the READ of the node when combining); *holder as above. A
  // CAS in flight when its memory server went away may have landed: if the word names us
  // once the server is back, it is released again before the Unavailable is returned.
  Status TryOnce(fabric::Endpoint& ep, uint64_t owner, GlobalAddress node, void* buf,
                 uint32_t len, Held* held, uint64_t* holder) const;
  // Posts verbs so that they land in order: one in-order batch per run of verbs on one
  // memory node when combining, one round trip per verb otherwise.
  Status PostInOrder(fabric::Endpoint& ep, std::span<fabric::Verb> verbs) const;
  // Whether the lock word `word` holds `owner` (read once the memory node answers again).
  static bool StillOurs(fabric::Endpoint& ep, GlobalAddress word, uint64_t owner);

  const bool combine_;
};

// RAII holder: releases a still-held lock when it goes out of scope (error paths).
class NodeLockGuard {
 public:
  NodeLockGuard(const NodeLock& lock, fabric::Endpoint& ep) : lock_(lock), ep_(ep) {}
  NodeLockGuard(const NodeLockGuard&) = delete;
  NodeLockGuard& operator=(const NodeLockGuard&) = delete;
  ~NodeLockGuard() {
    if (held_.held) (void)lock_.Unlock(ep_, &held_);
  }

  NodeLock::Held* held() { return &held_; }
  bool holds() const { return held_.held; }
  Status WriteAndUnlock(std::span<fabric::Verb> writes) {
    return lock_.WriteAndUnlock(ep_, &held_, writes);
  }
  Status Unlock() { return lock_.Unlock(ep_, &held_); }

 private:
  const NodeLock& lock_;
  fabric::Endpoint& ep_;
  NodeLock::Held held_;
};

}  // namespace dmindex::tree
