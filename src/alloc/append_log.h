// AppendLog: a log-structured region of fixed-size blocks in the pool, shared by every
// compute process of an index (RF-tree's search layer, SPREAD section 3.2: internal nodes
// are appended sequentially, so the whole layer can be read back in a few large READs).
//
// The region is a list of segments, each a run of blocks on one memory node, taken from
// the compute node's allocator (256 KB, doubling with each segment of the node up to 8 MB,
// at most a memory server's chunk). A block is handed out by an FAA on its segment's tail word; a segment that runs full
// gets a successor on the same memory node, appended to the list under the directory's
// lock. The
// directory is one 4 KB block on memory node 0, whose address a catalog word holds:
//
//   word 0  magic           written before the directory is published
//   word 1  block bytes     every block of the log has this size
//   word 2  lock            0 free, else the owner growing the list: its lease's HolderId
//                           (epoch bits 0 without a lease)
//   word 3  segment count n
//   then n records of 3 words: base (GlobalAddress), tail (FAA target: blocks handed out,
//   may pass the capacity), capacity (blocks)
//
// A record is written before the count that covers it (one in-order batch with the unlock),
// but a READ of the directory may take its words at different instants: a reader skips a
// record it sees incomplete (null base or zero capacity). Blocks are never reused, so a
// block's address never changes meaning; a block handed out but not written yet is zero.
//
// A grower posts that batch only while its lease is live at the instant it goes out (the lease
// is the post's fabric::PostGuard), and lets go of the lock after a failure by a CAS expecting
// its own word (giving its lease up if even that fails): a grower that stalled past its lease
// was perhaps taken over by one that listed its own segment as record n, which a late batch
// would overwrite (AppendLogTakeover.*). A grower that died holding the lock (its lease
// expired: lease/lease.h) is taken over with nothing to repair: its only write under the lock is [record n, count := n + 1, unlock] in
// order, so the directory holds either n whole records (the count never moved; record n,
// whole or torn, lies past the count and the next grower writes it again whole) or n + 1
// (the count landed after its record). Its segment, if it got one, is leaked.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "alloc/node_allocator.h"
#include "lease/lease.h"
#include "common/runtime.h"
#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"

namespace dmindex::alloc {

class AppendLog {
 public:
  static constexpr uint32_t kDirectoryBytes = 4096;
  static constexpr uint32_t kHeaderWords = 4;
  static constexpr uint32_t kMaxSegments = (kDirectoryBytes / 8 - kHeaderWords) / 3;
  static constexpr uint64_t kFirstSegmentBytes = 256u << 10;
  static constexpr uint32_t kMaxSegmentDoublings = 5;

  struct Segment {
    GlobalAddress base;
    uint64_t used = 0;      // blocks handed out (the tail, at most the capacity)
    uint64_t capacity = 0;  // blocks
  };

  // The log whose directory address is held by the word `dir_word` (a catalog aux word), of
  // `block_bytes` blocks, over `memory_nodes` memory nodes. Open before any other call.
  AppendLog(GlobalAddress dir_word, uint32_t block_bytes, uint16_t memory_nodes)
      : dir_word_(dir_word), block_bytes_(block_bytes), newest_(memory_nodes) {}
  // Finds the directory, creating it (from `allocator`) if the word is 0; a race of creators
  // leaves one. InvalidArgument if the log has blocks of another size.
  Status Open(fabric::Endpoint& ep, NodeAllocator& allocator);

  // The lease this process grows the log under (null: none; a dead grower's lock is then
  // never taken over). Set before the first Append.
  void HoldUnder(lease::Lease* lease) { lease_ = lease; }

  // A block never handed out before, on memory node `node`; a new segment (taken from
  // `allocator`) when the node's newest one is full. Thread-safe.
  Result<GlobalAddress> Append(fabric::Endpoint& ep, NodeAllocator& allocator, uint16_t node);

  // What this process took for the log: segment bytes from its allocator, and of those the
  // bytes of blocks it was handed out (a whole segment is in the allocator's bytes in use;
  // the blocks are what the log really holds: reserved minus handed out is room not used yet).
  uint64_t reserved_bytes() const { return reserved_bytes_.load(std::memory_order_relaxed); }
  uint64_t appended_bytes() const { return appended_bytes_.load(std::memory_order_relaxed); }

  GlobalAddress directory() const { return directory_; }
  uint32_t block_bytes() const { return block_bytes_; }
  // The segments a READ of the directory (kDirectoryBytes at directory()) shows, in list
  // order, incomplete records left out.
  std::vector<Segment> Parse(const std::byte* image) const;

 private:
  GlobalAddress Word(uint32_t i) const { return directory_ + 8ull * i; }
  GlobalAddress TailWord(uint32_t segment) const { return Word(kHeaderWords + 3 * segment + 1); }
  // Reads the directory and notes each memory node's newest segment.
  Status SyncLocked(fabric::Endpoint& ep);
  // Adds a segment on `node` unless another process added one that has room.
  Status GrowLocked(fabric::Endpoint& ep, NodeAllocator& allocator, uint16_t node);
  // Takes the directory lock as `owner`: waits for a live holder, takes a dead one's over.
  Status LockDirectory(fabric::Endpoint& ep, uint64_t owner);

  struct Newest {  // a memory node's newest segment as this process knows it
    bool known = false;
    uint32_t index = 0;
    GlobalAddress base;
    uint64_t capacity = 0;
  };

  const GlobalAddress dir_word_;
  const uint32_t block_bytes_;
  GlobalAddress directory_;  // set by Open
  runtime::Mutex mu_;
  lease::Lease* lease_ = nullptr;
  lease::LeaseObserver observer_;
  std::vector<Newest> newest_;  // by memory node
  std::atomic<uint64_t> reserved_bytes_{0};
  std::atomic<uint64_t> appended_bytes_{0};
};

}  // namespace dmindex::alloc
