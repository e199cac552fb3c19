// Exclusive node locks over one-sided verbs, with Sherman's techniques as switches:
//   hocl     a LocalLockTable (per compute node) in front of the global lock word: local FIFO
//            queueing and hand-over of a held global lock to the next local waiter;
//   combine  "CAS lock + READ node" and "WRITE node(s) + WRITE unlock" each go in one in-order
//            batch (one round trip) instead of one round trip per verb.
// The global lock word is in the lock table of the node's memory node (lock_table.h). It names
// its holder's lease and redo block (lock_word.h); a waiter that sees the holder's lease expire
// takes the word over and replays the holder's half-done write first (redo_log.h,
// docs/SYNCHRONIZATION.md "Lock takeover and repair").
//
// Writers hold the lock of every node they write (lock-free readers validate instead), and a
// thread holds at most one node lock at a time, so there is no deadlock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "lease/lease.h"
#include "tree/local_lock_table.h"
#include "tree/lock_table.h"
#include "tree/lock_word.h"

namespace dmindex::tree {

class NodeLock {
 public:
  // `clock`: what the holder checks read (null: the lease layer's default). `area`: the part
  // of the lock table the tree's nodes hash onto (lock_table.h: a memory server's own trees
  // have their own).
  explicit NodeLock(bool combine, lease::ClockFn clock = nullptr, LockArea area = LockArea::kProcesses)
      : combine_(combine), area_(area), observer_(std::move(clock)) {}

  // The lock-table word guarding `node`.
  GlobalAddress WordFor(GlobalAddress node) const { return LockWordFor(node, area_); }

  // What a holder needs to write under the lock and release it.
  struct Held {
    GlobalAddress word;
    GlobalAddress node;
    uint32_t node_bytes = 0;          // the node's extent: writes inside it get a redo record
    LockOwner owner;
    bool rename = false;              // handed over locally: the word names the previous holder
    LocalLockTable* local = nullptr;  // null: no local layer (hocl off)
    // The lock is the node's trailer (word: its address), which holds EncodeTrailerLock(owner.word)
    // while held and a version when free; otherwise a lock-table word holding owner.word.
    bool trailer = false;
    bool held = false;
  };

  // Takes the lock of `node` and then reads `len` bytes of it (the whole node) into `buf`.
  // `local` is the compute node's local lock table, or null. `owner.word` (non-zero) is
  // written into the lock word. *cas_failures counts failed remote attempts. With a lease,
  // a holder whose lease expired is taken over (its write repaired) instead of waited for.
  Status LockAndRead(fabric::Endpoint& ep, LocalLockTable* local, LockOwner owner,
                     GlobalAddress node, void* buf, uint32_t len, Held* held,
                     uint64_t* cas_failures) const;

  // One attempt at the lock of `node`: on success *held holds it and `buf` the node read
  // under it; otherwise *holder is the lock word's owner (non-zero) and nothing is held.
  // Only the global word is tried (no local queueing): for a reader that needs the node quiet
  // for one READ (TreeReader::ReadTorn), not for a writer.
  Status TryLockAndRead(fabric::Endpoint& ep, LockOwner owner, GlobalAddress node, void* buf,
                        uint32_t len, Held* held, uint64_t* holder) const;
  // If `holder` (a value TryLockAndRead saw in the word) names a lease that expired, takes
  // the word over as `owner` (a lease of the table required: not a memory server's), finishes
  // the dead holder's write and reads the node: *took says whether it did.
  Status TakeOverIfDead(fabric::Endpoint& ep, LockOwner owner, GlobalAddress node, void* buf,
                        uint32_t len, uint64_t holder, Held* held, bool* took) const;

  // A lock kept in the node's own trailer (TreeOptions::trailer_lock, lock_word.h): if
  // `trailer` (the odd value seen at `trailer_addr`) names a lease that expired, takes the
  // trailer over as `owner`, finishes the dead holder's write (its record never covers the
  // trailer) and reads the node's `len` bytes into `buf`: *took says whether it did. The caller then holds the trailer and releases it by writing the
  // version of the image in `buf` (it knows the node format; this layer does not).
  Status TakeOverTrailerIfDead(fabric::Endpoint& ep, LockOwner owner, GlobalAddress node,
                               GlobalAddress trailer_addr, void* buf, uint32_t len, uint64_t trailer,
                               bool* took) const;
  // One attempt at a lock kept in the node's trailer (RF-tree's inline leaf locks): a CAS of
  // the trailer at `trailer_addr` from `version` (even: free) to `owner`'s lock
  // (EncodeTrailerLock), with `len` bytes of `node` READ into `buf` behind it in one in-order
  // batch (len 0: none; the READ is used only if the CAS won). *seen: what the CAS found
  // (`version`: the trailer is ours). A CAS in flight when its memory server went away may
  // have landed: it is let go of by a CAS back to `version`, asked until it answers, before the
  // Unavailable is returned (or left to a taker, as in WriteAndUnlock) - as TryOnce does.
  Status TryTrailerLock(fabric::Endpoint& ep, LockOwner owner, GlobalAddress trailer_addr, uint64_t version,
                        GlobalAddress node, void* buf, uint32_t len, uint64_t* seen) const;
  // How `owner` holds the trailer lock of `node`, whose trailer is at `trailer_offset`: a
  // record covers the node up to its trailer, never the trailer.
  static Held TrailerHeld(LockOwner owner, GlobalAddress node, uint32_t trailer_offset) {
    return Held{node + trailer_offset, node, trailer_offset, owner, false, nullptr, true, true};
  }
  // WriteAndUnlock for a trailer lock (held->trailer; word: the trailer's address, node_bytes:
  // the extent the record covers, which never includes the trailer): `writes` with their redo
  // record, then `release` (the WRITE that puts a version into the trailer), as one in-order
  // batch on the node's memory node. The same rules: a holder whose lease cannot be shown live
  // writes nothing and leaves the trailer to a taker (its lease given up), and a batch that
  // fails with Unavailable is posted again while the trailer still names us and our lease is
  // live, or the trailer is left to a taker - so no trailer is kept naming a live lease.
  Status WriteAndReleaseTrailer(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                                const fabric::Verb& release) const;
  // Either of the two by the holding's kind: a trailer holding with its `trailer_release`,
  // a lock-table word's with WriteAndUnlock.
  Status WriteAndRelease(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                         const fabric::Verb* trailer_release) const {
    return held->trailer ? WriteAndReleaseTrailer(ep, held, writes, *trailer_release) : WriteAndUnlock(ep, held, writes);
  }

  // A release posted without waiting (WriteAndUnlockPosted): what it needs until it is
  // reaped - the holding, its batch, the record's header and copies of the writes' sources -
  // owned by the thread's context, reaped before its next operation and before it closes.
  struct Posted {
    const NodeLock* lock = nullptr;  // non-null: posted and not reaped yet
    Held held;
    std::vector<fabric::Verb> verbs;
    uint64_t header[8] = {};
    std::vector<std::byte> sources;
    bool in_flight() const { return lock != nullptr; }
  };

  // Executes `writes` in posting order, then releases the lock (or hands it to a local
  // waiter). Writes on the lock's memory node share the unlock's batch when combine is on;
  // those inside the node are recorded first (redo_log.h). A holder whose lease was revoked
  // writes nothing and leaves the word to its taker: Unavailable.
  // If they were in flight when a memory server went away (Unavailable) and the server came
  // back with its pool (memserver --data-dir), a lock word that still names us means no one
  // took the node since: the writes and the unlock are posted again. The word is read until
  // it answers while our lease is live; one that may still name us and cannot be released
  // (our lease lost, or the fabric gave the pool up) is left to a taker with our lease given
  // up (Unavailable "... revoked by this process ...": reopen the index).
  Status WriteAndUnlock(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes) const;
  Status Unlock(fabric::Endpoint& ep, Held* held) const { return WriteAndUnlock(ep, held, {}); }
  // WriteAndUnlock as one unwaited batch (Endpoint::PostUnwaited), kept in *posted until
  // ReapPosted: the caller goes on without waiting for it. Always an unlock of the word,
  // never a local hand-over, so the local lock is let go of at once; the word stays ours until
  // the batch lands. Where the verbs are not one in-order batch on one memory node (combine
  // off, a write on another memory node) or the lock is a trailer, just WriteAndUnlock.
  // A release still in *posted is reaped first (one in flight per thread).
  // docs/SYNCHRONIZATION_DETAIL.md, "The separator's batch, unwaited".
  Status WriteAndUnlockPosted(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                              Posted* posted) const;
  // Completes *posted (nothing if none is in flight): a batch that failed is handled as
  // WriteAndUnlock handles one (posted again while the word names us, or left to a taker).
  Status ReapPosted(fabric::Endpoint& ep, Posted* posted) const;
  // WriteAndUnlock, with one attempt at the lock of `next` (as `owner`) and a READ of it
  // (`len` bytes into `buf`) at the end of the same in-order batch - behind the unlock, so
  // the two locks are never held together remotely; locally (hocl) the attempt never waits.
  // A leaf split takes its parent's lock this way (docs/SYNCHRONIZATION.md, "The parent's
  // lock in a split's batch"). Only with combine, `next` on the memory node of held's node and under
  // another lock word; otherwise (or if the lock is taken) just WriteAndUnlock.
  // *next_held holds the lock and `buf` the node read under it, or nothing.
  // A trailer holding (RF-tree's inline lock) passes its `trailer_release` (as to
  // WriteAndReleaseTrailer), which goes between the writes and the attempt.
  Status WriteUnlockAndTryLock(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                               LocalLockTable* local, LockOwner owner, GlobalAddress next, void* buf,
                               uint32_t len, Held* next_held,
                               const fabric::Verb* trailer_release = nullptr) const;

  // Locks taken over from expired holders, and how many of them had a write to finish.
  uint64_t takeovers() const { return takeovers_.load(std::memory_order_relaxed); }
  uint64_t repairs() const { return repairs_.load(std::memory_order_relaxed); }

 private:
  Status Acquire(fabric::Endpoint& ep, GlobalAddress node, void* buf, uint32_t len, Held* held,
                 uint64_t* cas_failures) const;
  // One CAS on held->word (with the READ of the node when combining); *holder as above. A
  // CAS in flight when its memory server went away may have landed: it is let go of by a CAS
  // expecting our word, asked until it answers, before the Unavailable is returned (or left to
  // a taker, as in WriteAndUnlock).
  Status TryOnce(fabric::Endpoint& ep, GlobalAddress node, void* buf, uint32_t len, Held* held,
                 uint64_t* holder) const;
  // WriteAndUnlock, with `tail` posted behind its verbs (in the unlock's batch when it is
  // on the unlock's memory node).
  Status PostAndRelease(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                        std::span<const fabric::Verb> tail) const;
  // PostAndRelease's unwaited form (WriteAndUnlockPosted, once it is known to apply).
  Status PostReleaseUnwaited(fabric::Endpoint& ep, Held* held, std::span<fabric::Verb> writes,
                             Posted* posted) const;
  // The verbs of WriteAndUnlock, in posting order; `header` backs the redo record.
  Status PlanWrites(const Held& held, std::span<fabric::Verb> writes, bool unlock, uint64_t (&header)[8],
                    std::vector<fabric::Verb>* verbs) const;
  // Posts verbs so that they land in order: one in-order batch per run of verbs on one
  // memory node when combining, one round trip per verb otherwise. Each batch goes out only
  // while `lease` (the holder's, null: none) is live at the instant it is posted, after any
  // wait of the fabric's (docs/LEASES.md, "A write posted again").
  Status PostInOrder(fabric::Endpoint& ep, lease::Lease* lease, std::span<fabric::Verb> verbs) const;
  // The takeover itself, once `dead` (the lock word a holder wrote, as it appears at `word`:
  // `seen`) is known: fences its lease if it expired, copies its whole record (if any) into
  // our redo block ahead of the CAS of `seen` to `mine`, replays it and reads the node.
  // *took: we hold the lock and the node is whole (also on error: only its READ failed). A
  // replay that cannot be finished leaves the word naming us, our record in our block, and
  // our lease given up: the next taker finishes it (*took false).
  Status TakeOver(fabric::Endpoint& ep, LockOwner owner, GlobalAddress word, uint64_t seen, uint64_t mine,
                  uint64_t dead, GlobalAddress node, void* buf, uint32_t len, bool* took) const;
  // After a takeover that carried a large record in `taker`'s large block and finished it:
  // CASes the word (`word`) from `taken` back to `mine`, which names our own block.
  Status BackToOwnBlock(fabric::Endpoint& ep, const LockOwner& taker, GlobalAddress word, uint64_t taken,
                        uint64_t mine) const;
  // After `verbs` (writes under held's lock and its release) failed with Unavailable
  // (`failed`): reads the lock word until it answers and posts the verbs again while it names
  // us and our lease is live; a word that may still name us and cannot be released now is left
  // to a taker, with our lease given up (node_lock.cc, AskOurWord).
  Status PostAgainWhileOurs(fabric::Endpoint& ep, const Held& held, std::span<fabric::Verb> verbs,
                            Status failed) const;
  // Posts a holding's batch: a trailer lock's as one in-order batch (all on the node's memory
  // node), a lock-table word's by PostInOrder.
  Status PostHolding(fabric::Endpoint& ep, const Held& held, std::span<fabric::Verb> verbs) const;

  const bool combine_;
  const LockArea area_;
  mutable lease::LeaseObserver observer_;
  mutable std::atomic<uint64_t> takeovers_{0};
  mutable std::atomic<uint64_t> repairs_{0};
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
  Status WriteAndUnlockPosted(std::span<fabric::Verb> writes, NodeLock::Posted* posted) {
    return lock_.WriteAndUnlockPosted(ep_, &held_, writes, posted);
  }

 private:
  const NodeLock& lock_;
  fabric::Endpoint& ep_;
  NodeLock::Held held_;
};

}  // namespace dmindex::tree
