// CacheWorker: one thread's handle on a BufferManager (like an Endpoint on the fabric).
// Holds what must not be shared: the thread's free-frame set, its random stream, the
// writer its evictions use, counters, and a private scratch frame for a page that was not
// admitted (lazy admission) and is used for one operation only.
//
// Not thread-safe. Destroy workers before their BufferManager.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "cache/buffer_frame.h"
#include "cache/cache_options.h"
#include "cache/frequency_sketch.h"
#include "cache/page_io.h"

namespace dmindex::cache {

class BufferManager;

class CacheWorker {
 public:
  CacheWorker(BufferManager& bm, PageWriter& writer);
  CacheWorker(const CacheWorker&) = delete;
  CacheWorker& operator=(const CacheWorker&) = delete;
  ~CacheWorker();

  // Ends the current index operation: the page this worker holds without having admitted
  // it is written back if dirty and unregistered, so other threads may load it. Call it
  // when an operation returns and before it restarts. Inline: every operation ends twice
  // (before its first attempt and at its end), nearly always with no transient page.
  Status EndOperation() { return transient_ == nullptr ? Status::Ok() : EndTransient(); }
  // The transient page of the current operation, if any (state kTransient).
  BufferFrame* transient() const { return transient_; }

  CacheStats stats() const;
  PageWriter& writer() { return writer_; }
  BufferManager& buffer_manager() { return bm_; }

 private:
  Status EndTransient();  // EndOperation with a transient page
  friend class BufferManager;
  // Counters written only by the owning thread, read by anyone (see fabric::VerbCounters).
  struct Counters {
    std::atomic<uint64_t> hits{0}, misses{0}, admitted{0}, bypassed{0}, cooled{0}, evicted{0},
        write_backs{0};
  };
  static void Bump(std::atomic<uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  double Uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

  BufferManager& bm_;
  PageWriter& writer_;
  std::mt19937_64 rng_;
  uint32_t touch_countdown_ = 1;  // BufferManager::Touch counts when it reaches 0
  uint32_t touching_ = 0;         // counters BeginTouch located for EndTouch
  FrequencySketch::Counters touch_[2];
  std::vector<BufferFrame*> free_frames_;  // thread-local free set (§5.2)
  std::unique_ptr<std::byte[]> staging_;  // private landing buffer of READs
  Counters counters_;  // before scratch_: registration makes them visible to Stats()
  // Owned by the buffer manager: other threads may still look at it after we are gone.
  BufferFrame* scratch_;
  // The page registered in the mapping table for this operation only: scratch_, or a pool
  // frame holding a page that turned out not admissible.
  BufferFrame* transient_ = nullptr;
  BufferFrame* transient_parent_ = nullptr;  // pinned while transient_ is in use
  // BufferManager::ReadPrivate's frame: never registered nor swizzled, so no other thread
  // ever holds a pointer to it.
  std::unique_ptr<std::byte[]> private_page_;
  std::unique_ptr<BufferFrame> private_;
};

}  // namespace dmindex::cache
