// Tiers: IndeXY's one index over X (memory) and Y (disk) - the public API's operations,
// linearizable, over the rules of x_index.h (docs/INDEXY.md, "Why it is linearizable"):
//
//  * Lookup: X's entry answers (a tombstone: NotFound). A miss outside any mounted region is
//    NotFound without touching Y; inside one, Y answers, and the key is admitted into X clean
//    (insert-if-absent, and only if no entry left X since before Y was read: the removal
//    sequence; otherwise a newer value that went to Y meanwhile could be overwritten).
//  * Insert: an upsert into X, dirty; in-Y carried over from the old entry or, for a new one,
//    set if its region is mounted.
//  * Update / Delete: on an X hit as the entry says; a key only in Y is read from Y and, if
//    present, its new value (or a tombstone) goes into X under the same insert-if-absent
//    rule; a delete of an entry Y never saw removes it outright.
//  * Scan: chunks read from X, then from Y, merged by key (tiers_scan.cc).
//
// Y is written only by the background (cleaning, release), through Sink(), which also counts.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "designs/indexy/indexy_options.h"
#include "designs/indexy/memory_budget.h"
#include "designs/indexy/x_index.h"
#include "dmindex/index.h"
#include "tiering/cold_store.h"

namespace dmindex::designs::indexy {

struct TierCounters {
  // Point operations - lookups, updates, deletes - that X answered (hit, tombstone, or an
  // unmounted miss), and those that read Y: the index's cache hits and misses. Both count
  // every kind, so that their ratio is X's hit ratio also when writes miss (an update of a
  // key only in Y reads Y; counting its misses but not its hits put YCSB A's at half of C's).
  uint64_t x_answers = 0;
  uint64_t y_reads = 0;
  uint64_t y_hits = 0;
  uint64_t admissions = 0;       // keys read from Y and admitted into X
  uint64_t admissions_skipped = 0;  // not admitted: X at the high mark, or the key moved
  uint64_t y_scans = 0;          // Y iterators a scan opened
  uint64_t y_writes = 0;         // batches the background wrote to Y
  uint64_t y_written_entries = 0;
  uint64_t y_written_bytes = 0;
  uint64_t removals = 0;         // entries that left X for Y (the removal sequence)
  uint64_t tier_retries = 0;     // update/delete attempts redone because the key moved
};

class Tiers final : public YSink {
 public:
  Tiers(const IndexyOptions& options, std::unique_ptr<XTree> x, std::unique_ptr<tiering::ColdStore> y);

  XTree& x() { return *x_; }
  const XTree& x() const { return *x_; }
  tiering::ColdStore& y() { return *y_; }
  MemoryBudget& budget() { return budget_; }
  const MemoryBudget& budget() const { return budget_; }
  const IndexyOptions& options() const { return options_; }

  Status Lookup(XWorker& w, Slice key, std::string* value);
  Status Insert(XWorker& w, Slice key, Slice value);
  Status Update(XWorker& w, Slice key, Slice value);
  Status Delete(XWorker& w, Slice key);
  Status Scan(XWorker& w, const KeyRange& range, size_t count, std::vector<KeyValue>* out);
  // Into an empty index: pairs go into X (dirty) while it stays below the low mark, the rest
  // straight into Y in sorted batches (the whole key space is then mounted).
  Status BulkLoad(XWorker& w, std::span<const KeyValue> sorted);

  // YSink: the background's writes, counted.
  Status Write(const tiering::ColdBatch& batch) override;
  void BeforeUnlink() override { removals_.fetch_add(1, std::memory_order_seq_cst); }

  TierCounters Counters() const;

 private:
  // What the first look at X decided for an update or delete.
  enum class Step : uint8_t { kDone, kNotFound, kAskY };
  // Update and Delete: the X step, then (a key only in Y) the Y read and the conditional put.
  template <typename OnEntry>
  Status ChangeExisting(XWorker& w, Slice key, const char* what, OnEntry on_entry);
  void Admit(XWorker& w, Slice key, const std::string& value, uint64_t removals_before);
  uint64_t removals() const { return removals_.load(std::memory_order_seq_cst); }

  const IndexyOptions options_;
  std::unique_ptr<XTree> x_;
  std::unique_ptr<tiering::ColdStore> y_;
  MemoryBudget budget_;
  // Entries that left X after Y took them (release, dropped tombstones): a reader of Y that
  // finds it unchanged since before its read knows Y still holds what it read.
  std::atomic<uint64_t> removals_{0};
  // Set before the first write to Y: until then no scan needs to read Y.
  std::atomic<bool> y_written_{false};

  std::atomic<uint64_t> x_answers_{0}, y_reads_{0}, y_hits_{0}, admissions_{0}, admissions_skipped_{0},
      y_scans_{0}, y_writes_{0}, y_written_entries_{0}, y_written_bytes_{0}, tier_retries_{0};
};

}  // namespace dmindex::designs::indexy
