// The exact call counters every ColdStore keeps (ColdStoreCounters), as relaxed atomics.
#pragma once

#include <atomic>
#include <cstdint>

#include "tiering/cold_store.h"

namespace dmindex::tiering {

class StoreCounters {
 public:
  void CountGet(bool hit) {
    gets_.fetch_add(1, std::memory_order_relaxed);
    if (hit) get_hits_.fetch_add(1, std::memory_order_relaxed);
  }
  void CountWrite(const ColdBatch& batch) {
    writes_.fetch_add(1, std::memory_order_relaxed);
    written_ops_.fetch_add(batch.size(), std::memory_order_relaxed);
    written_bytes_.fetch_add(batch.bytes(), std::memory_order_relaxed);
  }
  void CountSeek() { seeks_.fetch_add(1, std::memory_order_relaxed); }

  ColdStoreCounters Snapshot() const {
    ColdStoreCounters c;
    c.gets = gets_.load(std::memory_order_relaxed);
    c.get_hits = get_hits_.load(std::memory_order_relaxed);
    c.writes = writes_.load(std::memory_order_relaxed);
    c.written_ops = written_ops_.load(std::memory_order_relaxed);
    c.written_bytes = written_bytes_.load(std::memory_order_relaxed);
    c.seeks = seeks_.load(std::memory_order_relaxed);
    return c;
  }

 private:
  std::atomic<uint64_t> gets_{0}, get_hits_{0}, writes_{0}, written_ops_{0}, written_bytes_{0}, seeks_{0};
};

}  // namespace dmindex::tiering
