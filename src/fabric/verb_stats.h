// Verb accounting: exact counts of verbs, round trips and bytes, per endpoint and in total.
// Benchmarks report verbs/op by taking a snapshot before and after and subtracting.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "fabric/verb.h"

namespace dmindex::fabric {

// A plain snapshot of counters; cheap to copy, add and subtract.
struct VerbCounts {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t cas = 0;
  uint64_t faa = 0;
  uint64_t rpcs = 0;
  uint64_t round_trips = 0;  // batches + single verbs + RPCs: each is one network round trip
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t rpc_bytes = 0;    // request + reply payload

  uint64_t atomics() const { return cas + faa; }
  uint64_t verbs() const { return reads + writes + cas + faa; }
  // Bytes moved over the network, atomics counted as 8 bytes each way's payload.
  uint64_t bytes() const { return read_bytes + write_bytes + rpc_bytes + 8 * atomics(); }

  VerbCounts& operator+=(const VerbCounts& o);
  friend VerbCounts operator-(VerbCounts a, const VerbCounts& b);
  friend VerbCounts operator+(VerbCounts a, const VerbCounts& b) { return a += b; }
  friend bool operator==(const VerbCounts&, const VerbCounts&) = default;
  std::string ToString() const;
};

// Live counters owned by one endpoint. Only the owning thread writes (so increments are
// plain load+store, no locked instruction); any thread may take a Snapshot.
class VerbCounters {
 public:
  void CountVerb(const Verb& v);
  void CountRoundTrip() { Bump(round_trips_, 1); }
  void CountRpc(uint64_t payload_bytes) {
    Bump(rpcs_, 1);
    Bump(rpc_bytes_, payload_bytes);
    Bump(round_trips_, 1);
  }
  VerbCounts Snapshot() const;

 private:
  using Counter = std::atomic<uint64_t>;
  static void Bump(Counter& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  Counter reads_{0}, writes_{0}, cas_{0}, faa_{0}, rpcs_{0}, round_trips_{0};
  Counter read_bytes_{0}, write_bytes_{0}, rpc_bytes_{0};
};

}  // namespace dmindex::fabric
