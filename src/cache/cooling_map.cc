#include "cache/cooling_map.h"

#include <algorithm>
#include <functional>

#include "cache/buffer_frame.h"
#include "common/retry.h"

namespace dmindex::cache {

CoolingMap::CoolingMap(size_t capacity_frames)
    : buckets_count_(std::max<size_t>(1, capacity_frames / kSlotsPerBucket)),
      buckets_(new Bucket[buckets_count_]) {}

void CoolingMap::Bucket::Lock() {
  Backoff backoff(backoff::kLatchHeld, "a bucket lock of the cooling map");
  for (;;) {
    uint32_t expected = 0;
    if (lock.load(std::memory_order_relaxed) == 0 &&
        lock.compare_exchange_weak(expected, 1, std::memory_order_acquire))
      return;
    backoff.Pause();
  }
}

void CoolingMap::Bucket::EraseAt(uint32_t i) {
  std::copy(slots + i + 1, slots + count, slots + i);  // keep FIFO order
  slots[--count] = nullptr;
}

uint32_t CoolingMap::Bucket::OldestLatchable() {
  for (uint32_t i = 0; i < count; ++i)
    if (slots[i]->latch.TryLock()) return i;
  return count;
}

CoolingMap::Bucket& CoolingMap::BucketFor(const BufferFrame* f) const {
  // Hash the node id (not the frame): a node lands in the same bucket each time it cools.
  return buckets_[std::hash<GlobalAddress>{}(f->remote()) % buckets_count_];
}

BufferFrame* CoolingMap::Push(BufferFrame* f, bool* listed) {
  Bucket& b = BucketFor(f);
  b.Lock();
  BufferFrame* victim = nullptr;
  if (b.count == kSlotsPerBucket) {
    const uint32_t i = b.OldestLatchable();
    if (i == b.count) {
      b.Unlock();
      *listed = false;
      return nullptr;
    }
    victim = b.slots[i];
    b.EraseAt(i);
    size_.fetch_sub(1, std::memory_order_relaxed);
  }
  b.slots[b.count++] = f;
  size_.fetch_add(1, std::memory_order_relaxed);
  b.Unlock();
  *listed = true;
  return victim;
}

bool CoolingMap::Remove(BufferFrame* f) {
  Bucket& b = BucketFor(f);
  b.Lock();
  bool found = false;
  for (uint32_t i = 0; i < b.count; ++i) {
    if (b.slots[i] == f) {
      b.EraseAt(i);
      size_.fetch_sub(1, std::memory_order_relaxed);
      found = true;
      break;
    }
  }
  b.Unlock();
  return found;
}

BufferFrame* CoolingMap::PopOldest(uint64_t random, size_t buckets_to_try) {
  for (size_t t = 0; t < std::min(buckets_to_try, buckets_count_); ++t) {
    Bucket& b = buckets_[(random + t) % buckets_count_];
    b.Lock();
    const uint32_t i = b.OldestLatchable();
    if (i < b.count) {
      BufferFrame* victim = b.slots[i];
      b.EraseAt(i);
      size_.fetch_sub(1, std::memory_order_relaxed);
      b.Unlock();
      return victim;
    }
    b.Unlock();
  }
  return nullptr;
}

GlobalAddress CoolingMap::PeekOldest(uint64_t random, size_t buckets_to_try) {
  for (size_t t = 0; t < std::min(buckets_to_try, buckets_count_); ++t) {
    Bucket& b = buckets_[(random + t) % buckets_count_];
    b.Lock();
    // Listed frames keep their node while listed (eviction unlists first), so under the
    // bucket lock slots[0] names the node it caches.
    const GlobalAddress a = b.count > 0 ? b.slots[0]->remote() : GlobalAddress{};
    b.Unlock();
    if (!a.is_null()) return a;
  }
  return {};
}

}  // namespace dmindex::cache
