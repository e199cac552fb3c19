// Options and counters of the compute-side cache.
#pragma once

#include <cstdint>
#include <string>

namespace dmindex::cache {

struct CacheOptions {
  uint64_t cache_bytes = 64ull << 20;  // page memory; frame count = cache_bytes / page_bytes
  uint32_t page_bytes = 1024;          // one tree node
  double cooling_fraction = 0.10;      // cooling map capacity, as a share of the frames
  double leaf_admission = 0.10;        // P_A: chance that a missed leaf is admitted
  uint32_t cooling_samples = 2;        // frames sampled for cooling when a free frame is needed
  // Frequency-aware replacement (TinyLFU, frequency_sketch.h), off by default (LeanStore's and
  // the paper's random policy). On: the cache keeps a sketch of sampled accesses (Touch); a
  // missed leaf is admitted only when the caller says it is worth a frame (WorthAdmitting:
  // its estimate beats the next eviction victim's) - P_A is then no draw: 0 is never, 1
  // always, anything between the sketch's word -
  // and cooling takes the least frequent of lfu_samples sampled path ends.
  bool frequency = false;
  uint32_t touch_period = 8;           // Touch counts one access in this many, per worker
  uint32_t sketch_window = 16;         // sketch increments between halvings, per frame
  // Path ends sampled per frame to cool; the least frequent goes. 8: in-process dex-ro
  // (docs/results/dex.md, "Frequency policy") 0.47 RTT/op with 2, 0.46 with 4, 0.45 with 8.
  uint32_t lfu_samples = 8;
  uint64_t seed = 1;                   // per-worker random streams derive from it
};

struct CacheStats {
  uint64_t hits = 0;        // child found cached (swizzled, or cooling/unswizzled: second chance)
  uint64_t misses = 0;      // child READ from remote memory
  uint64_t admitted = 0;    // missed pages kept in the cache
  uint64_t bypassed = 0;    // missed leaves not admitted (lazy admission)
  uint64_t cooled = 0;      // frames moved to the cooling map
  uint64_t evicted = 0;     // frames dropped from the cooling map
  uint64_t write_backs = 0; // dirty pages written to remote memory
  uint64_t frames = 0;      // capacity
  uint64_t frames_used = 0; // frames holding a node

  CacheStats& operator+=(const CacheStats& o);
  std::string ToString() const;
};

}  // namespace dmindex::cache
