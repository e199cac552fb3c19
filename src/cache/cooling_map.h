// CoolingMap: DEX's scalable replacement structure (§5.2). Instead of one FIFO queue of
// eviction candidates behind one lock, a hash table of cache-line-sized buckets, each a
// small FIFO array with its own lock: cooling and eviction by different threads touch
// different buckets. FIFO order holds within a bucket; a full bucket evicts its head.
//
// Membership is exact: a frame is listed iff its state is kCooling, whenever its latch is
// free. Both change together, under the frame's exclusive latch and the bucket lock. To
// avoid deadlock with threads that hold a frame latch and wait for the bucket lock
// (reheating), the map only ever *tries* frame latches while it holds a bucket lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "dmindex/global_address.h"

namespace dmindex::cache {

struct BufferFrame;

class CoolingMap {
 public:
  static constexpr size_t kSlotsPerBucket = 6;  // 6 pointers + lock + count = one cache line

  // Room for about `capacity_frames` cooling frames.
  explicit CoolingMap(size_t capacity_frames);

  // Lists `f` (the caller holds its exclusive latch) at the tail of its bucket. If the bucket
  // is full, the oldest entry whose latch can be taken without waiting leaves the map and is
  // returned exclusively latched, for the caller to evict. If the bucket is full and no entry
  // can be latched, `f` is not listed: *listed is false.
  BufferFrame* Push(BufferFrame* f, bool* listed);
  // Unlists `f` (the caller holds its exclusive latch); false if it was not listed.
  bool Remove(BufferFrame* f);
  // The oldest latchable entry of the bucket picked by `random` (or of the next non-empty
  // ones, up to `buckets_to_try`), unlisted and exclusively latched; null if none.
  BufferFrame* PopOldest(uint64_t random, size_t buckets_to_try = 4);
  // The remote node of the oldest entry of the first non-empty bucket from the one `random`
  // picks (up to `buckets_to_try`), left listed: PopOldest's likely victim, for a policy to
  // compare against. Null if those buckets are empty.
  GlobalAddress PeekOldest(uint64_t random, size_t buckets_to_try = 4);

  size_t size() const { return size_.load(std::memory_order_relaxed); }
  size_t capacity() const { return buckets_count_ * kSlotsPerBucket; }
  size_t buckets() const { return buckets_count_; }

 private:
  struct alignas(64) Bucket {
    std::atomic<uint32_t> lock{0};
    uint32_t count = 0;
    BufferFrame* slots[kSlotsPerBucket] = {};
    void Lock();
    void Unlock() { lock.store(0, std::memory_order_release); }
    void EraseAt(uint32_t i);
    // Index of the oldest entry whose latch this thread could take, or count if none.
    uint32_t OldestLatchable();
  };
  static_assert(sizeof(Bucket) == 64, "a cooling bucket is one cache line");

  Bucket& BucketFor(const BufferFrame* f) const;

  size_t buckets_count_;
  std::unique_ptr<Bucket[]> buckets_;
  std::atomic<size_t> size_{0};
};

}  // namespace dmindex::cache
