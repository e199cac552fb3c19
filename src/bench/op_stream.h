// Per-thread operation streams, as YCSB's CoreWorkload (or DEX's benchmark) generates them.
//
// Record numbering: the bulk load holds records [0, loaded). Inserts take the next record of
// one counter shared by all threads, as YCSB's transaction insert sequence (an
// AcknowledgedCounterGenerator): a record counts as existing for requests only once its
// insert completed and every earlier one did too (the acknowledged limit). So a request
// never targets a record that is not there - a lookup that misses is always an index bug -
// and the key set at the end is exactly records [0, loaded + inserts issued).
//
// What a thread draws - kinds, ranks, scan lengths - depends only on (seed, thread id); with
// inserts and several threads, which record a draw lands on depends on how far the shared
// insert counter got, as in YCSB (timing). One thread: fully reproducible.
//
// Request distributions: see Generators and ZipfianRanks (workload_spec.h) and
// OpStream::ChooseRecord.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "common/runtime.h"
#include "bench/random.h"
#include "bench/workload_spec.h"
#include "bench/zipfian.h"
#include "bench/key_space.h"
#include "dmindex/index.h"

namespace dmindex::bench {

struct Operation {
  OpKind kind = OpKind::kRead;
  Key key = 0;               // target, or the start key of a scan
  uint64_t record = 0;       // the record `key` names (generated streams)
  uint32_t scan_length = 0;  // scans only
  Value value = 0;           // update, insert, read-modify-write: the value to write
  // A replayed trace may name a key that does not exist at that point (the trace's own
  // inserts and deletes say so): NotFound is then the right answer, not an index bug.
  bool may_be_absent = false;
};

// Where a measuring thread takes its operations from: a generated stream or a trace.
class OpSource {
 public:
  virtual ~OpSource() = default;
  virtual bool Next(Operation* op) = 0;  // false: nothing more
  virtual void Completed(const Operation& op) { (void)op; }
};

// YCSB's AcknowledgedCounterGenerator: Next() hands out record numbers; Last() is the highest
// record such that it and every record before it were acknowledged (their inserts completed).
class InsertCounter {
 public:
  explicit InsertCounter(uint64_t first) : next_(first), last_(first - 1) {}
  uint64_t Next() { return next_.fetch_add(1); }
  void Acknowledge(uint64_t record);
  // The highest existing record (loaded - 1 before any insert; wraps to 2^64-1 if none).
  uint64_t Last() const { return last_.load(std::memory_order_acquire); }
  uint64_t issued(uint64_t first) const { return next_.load() - first; }

 private:
  std::atomic<uint64_t> next_;
  std::atomic<uint64_t> last_;
  runtime::Mutex mu_;
  std::set<uint64_t> pending_;  // acknowledged beyond last_ + 1
};

// What all threads of one run share: the spec, the sizes, and the counters YCSB shares
// between its client threads. The plan itself is immutable; the counters are atomic.
class StreamPlan {
 public:
  // `expected_ops`: operations the run will execute (warm-up included), or 0 if unknown (a
  // timed run); YCSB sizes its zipfian key range with it (expected inserts x 2).
  static Result<std::shared_ptr<const StreamPlan>> Make(const WorkloadSpec& spec, uint64_t loaded,
                                                        uint32_t threads, uint64_t seed,
                                                        uint64_t expected_ops = 0);

  const WorkloadSpec& spec() const { return spec_; }
  uint64_t loaded() const { return loaded_; }
  uint32_t threads() const { return threads_; }
  uint64_t seed() const { return seed_; }
  // The records requests are drawn from (YCSB's insertstart / insertcount).
  uint64_t request_start() const { return request_start_; }
  uint64_t request_count() const { return request_count_; }
  // Items of YCSB's scrambled zipfian key range: request_count + expected new keys + 1.
  uint64_t zipfian_key_items() const { return zipfian_key_items_; }

  Key KeyOf(uint64_t record) const {
    return KeyOfRecord(record, spec_.insert_order, spec_.zero_padding);
  }
  InsertCounter& inserts() const { return *inserts_; }
  std::atomic<uint64_t>& sequential() const { return *sequential_; }

  // The bulk load: keys of records [0, loaded) with stamp-0 values, sorted by key.
  std::vector<RecordPair> LoadRecords() const;
  // Every key present after `inserted` inserts (all threads together), sorted.
  std::vector<Key> ExpectedKeys(uint64_t inserted) const;

  double zeta_loaded() const { return zeta_loaded_; }
  double zeta_ycsb() const { return zeta_ycsb_; }

 private:
  StreamPlan() = default;
  WorkloadSpec spec_;
  uint64_t loaded_ = 0;
  uint32_t threads_ = 1;
  uint64_t seed_ = 0;
  uint64_t request_start_ = 0, request_count_ = 0, zipfian_key_items_ = 0;
  double zeta_loaded_ = 0;  // Zeta(loaded, theta): DEX's ranks over the key space
  double zeta_ycsb_ = 0;    // Zeta(10^10, theta): YCSB's scrambled zipfian ranks
  std::shared_ptr<InsertCounter> inserts_;
  std::shared_ptr<std::atomic<uint64_t>> sequential_;
};

class OpStream {
 public:
  OpStream(std::shared_ptr<const StreamPlan> plan, uint32_t thread);

  Operation Next();
  // Called once `op` completed: an insert becomes visible to every thread's requests.
  void Completed(const Operation& op);
  uint64_t inserts() const { return inserts_; }

 private:
  OpKind ChooseKind();
  uint64_t ChooseRecord();  // an existing record
  uint64_t YcsbZipfianRecord(uint64_t last);
  uint64_t LatestRecord(uint64_t last);
  uint32_t ChooseScanLength();
  uint64_t HotspotRecord();
  uint64_t ExponentialRecord(uint64_t last);
  Value NextValue(Key key) { return MakeValue(key, static_cast<uint32_t>(++writes_)); }

  std::shared_ptr<const StreamPlan> plan_;
  const uint32_t thread_;
  Rng rng_;
  std::array<double, kOpKinds> cumulative_{};
  ZipfianGenerator ranks_;      // zipfian ranks: over 10^10 items (kYcsb) or the loaded records
  ZipfianGenerator recency_;    // latest: rank 0 = the newest record
  ZipfianGenerator scan_zipf_;  // scan lengths, when zipfian
  uint64_t inserts_ = 0;
  uint64_t writes_ = 0;
  uint64_t drawn_ = 0;         // operations this thread drew (the shifting working set's clock)
  uint32_t unit_left_ = 0;     // reads left of the current read unit
  uint64_t unit_record_ = 0;   // the last record read in it
};

// An OpStream as an endless OpSource.
class GeneratedOps : public OpSource {
 public:
  GeneratedOps(std::shared_ptr<const StreamPlan> plan, uint32_t thread) : stream_(std::move(plan), thread) {}
  bool Next(Operation* op) override {
    *op = stream_.Next();
    return true;
  }
  void Completed(const Operation& op) override { stream_.Completed(op); }

 private:
  OpStream stream_;
};

}  // namespace dmindex::bench
