// Per-thread operation streams, identical for every design run with the same seed.
//
// Record numbering: the bulk load holds records [0, loaded). Thread t of T takes its j-th
// insert as record loaded + j*T + t, so threads never collide and each stream depends only
// on (seed, thread id), never on timing. A thread requests records it knows exist: the
// loaded ones, plus its own inserts (a "visible" sequence: loaded records, then its inserts
// in order). Hence a lookup that misses is always an index bug, and the driver knows the
// exact key set at the end of a run for the full-scan check.
//
// Request distributions (YCSB's meaning, per thread):
//   uniform    - any visible record
//   zipfian    - scrambled zipfian over the loaded records (a stable hot set, as YCSB's
//                ScrambledZipfianGenerator over recordcount)
//   latest     - zipfian over recency: the thread's newest insert is hottest
//   sequential - walks the visible records in order from a per-thread starting point
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "bench/random.h"
#include "bench/workload_spec.h"
#include "bench/zipfian.h"
#include "dmindex/index.h"

namespace dmindex::bench {

struct Operation {
  OpKind kind = OpKind::kRead;
  Key key = 0;               // target, or the start key of a scan
  uint32_t scan_length = 0;  // scans only
  Value value = 0;           // update, insert, read-modify-write: the value to write
};

// What all threads of one run share. Immutable after Make, so threads read it freely.
class StreamPlan {
 public:
  static Result<std::shared_ptr<const StreamPlan>> Make(const WorkloadSpec& spec, uint64_t loaded,
                                                        uint32_t threads, uint64_t seed);

  const WorkloadSpec& spec() const { return spec_; }
  uint64_t loaded() const { return loaded_; }
  uint32_t threads() const { return threads_; }
  uint64_t seed() const { return seed_; }

  Key KeyOf(uint64_t record) const { return KeyOfRecord(record, spec_.insert_order); }
  // Record number of the i-th record visible to `thread` (see above).
  uint64_t VisibleRecord(uint32_t thread, uint64_t index) const;

  // The bulk load: keys of records [0, loaded) with stamp-0 values, sorted by key.
  std::vector<KeyValue> LoadRecords() const;
  // Every key present after thread t made inserts[t] inserts, sorted.
  std::vector<Key> ExpectedKeys(std::span<const uint64_t> inserts) const;

  double zeta_loaded() const { return zeta_loaded_; }

 private:
  StreamPlan() = default;
  WorkloadSpec spec_;
  uint64_t loaded_ = 0;
  uint32_t threads_ = 1;
  uint64_t seed_ = 0;
  double zeta_loaded_ = 0;  // Zeta(loaded, theta), shared by every thread's generators
};

class OpStream {
 public:
  OpStream(std::shared_ptr<const StreamPlan> plan, uint32_t thread);

  Operation Next();
  uint64_t inserts() const { return inserts_; }

 private:
  OpKind ChooseKind();
  uint64_t ChooseRecord();  // an existing (visible) record
  uint32_t ChooseScanLength();
  uint64_t HotspotRecord();                  // index among the loaded records
  uint64_t ExponentialRecord(uint64_t visible);
  Value NextValue(Key key) { return MakeValue(key, static_cast<uint32_t>(++writes_)); }

  std::shared_ptr<const StreamPlan> plan_;
  const uint32_t thread_;
  Rng rng_;
  std::array<double, kOpKinds> cumulative_{};
  ScrambledZipfian scrambled_;
  ZipfianGenerator recency_;     // latest: rank 0 = newest visible record
  ZipfianGenerator scan_zipf_;   // scan lengths, when zipfian
  uint64_t sequential_next_;
  uint64_t inserts_ = 0;
  uint64_t writes_ = 0;
};

}  // namespace dmindex::bench
