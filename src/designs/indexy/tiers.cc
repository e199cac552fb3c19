#include "designs/indexy/tiers.h"

#include "common/retry.h"

namespace dmindex::designs::indexy {
namespace {

void Count(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

// A new or replacing entry's in-Y: kept from the entry it replaces; for a new key, set if its
// region is mounted (Y may hold an older copy, so a later delete must leave a tombstone).
uint32_t InYOf(const XCurrent& cur) {
  if (cur.present) return cur.flags & xflags::kInY;
  return cur.mounted ? xflags::kInY : 0;
}

}  // namespace

Tiers::Tiers(const IndexyOptions& options, std::unique_ptr<XTree> x, std::unique_ptr<tiering::ColdStore> y)
    : options_(options), x_(std::move(x)), y_(std::move(y)), budget_(options_, *x_) {}

Status Tiers::Lookup(XWorker& w, Slice key, std::string* value) {
  const uint64_t before = removals();
  XRead r;
  DMX_RETURN_IF_ERROR(w.Read(key, &r));
  if (r.found || !r.mounted) {
    Count(x_answers_);
    if (!r.found || (r.flags & xflags::kTombstone)) return Status::NotFound();
    *value = std::move(r.value);
    return Status::Ok();
  }
  // X does not have it, and Y may. What Y holds now was the key's value at some instant since
  // X missed (docs/INDEXY.md): Y changes only by the writes of entries X held meanwhile.
  Count(y_reads_);
  Status got = y_->Get(key, value);
  if (!got.ok()) return got;
  Count(y_hits_);
  Admit(w, key, *value, before);
  return Status::Ok();
}

void Tiers::Admit(XWorker& w, Slice key, const std::string& value, uint64_t removals_before) {
  // Admissions never wait for room: at the high mark the key stays in Y only.
  if (budget_.AtHigh()) {
    Count(admissions_skipped_);
    return;
  }
  bool admitted = false;
  Status s = w.Modify(key, [&](const XCurrent& cur) {
    // Clean, in Y: only if X still has no entry and none left X since Y was read (then Y
    // still holds `value`).
    admitted = !cur.present && removals() == removals_before;
    return admitted ? XDecision::Put(value, xflags::kInY) : XDecision::Keep();
  });
  Count(s.ok() && admitted ? admissions_ : admissions_skipped_);
  if (admitted) budget_.AfterGrowth();
}

Status Tiers::Insert(XWorker& w, Slice key, Slice value) {
  DMX_RETURN_IF_ERROR(budget_.WaitForRoom(w));
  DMX_RETURN_IF_ERROR(w.Modify(key, [&](const XCurrent& cur) {
    return XDecision::Put(value, xflags::kDirty | InYOf(cur));
  }));
  budget_.AfterGrowth();
  return Status::Ok();
}

template <typename OnEntry>
Status Tiers::ChangeExisting(XWorker& w, Slice key, const char* what, OnEntry on_entry) {
  // on_entry(cur): the decision for a live entry of the key (X's, or Y's value in cur.value
  // with in-Y set); a tombstone or an absent key is NotFound.
  RetryBudget attempts(retry_limits::kIndexyTierMoves, what);
  std::string from_y;
  for (;;) {
    const uint64_t before = removals();
    Step step = Step::kNotFound;
    DMX_RETURN_IF_ERROR(w.Modify(key, [&](const XCurrent& cur) {
      if (cur.present) {
        step = (cur.flags & xflags::kTombstone) ? Step::kNotFound : Step::kDone;
        return step == Step::kDone ? on_entry(cur) : XDecision::Keep();
      }
      step = cur.mounted ? Step::kAskY : Step::kNotFound;
      return XDecision::Keep();
    }));
    if (step != Step::kAskY && attempts.spent() == 0) Count(x_answers_);  // a retry read Y already
    if (step == Step::kDone) return Status::Ok();
    if (step == Step::kNotFound) return Status::NotFound();
    Count(y_reads_);
    Status got = y_->Get(key, &from_y);
    if (!got.ok()) return got;  // NotFound: absent in Y at some instant since X missed
    Count(y_hits_);
    bool moved = false;
    DMX_RETURN_IF_ERROR(w.Modify(key, [&](const XCurrent& cur) {
      moved = false;
      if (cur.present) {  // X has it again: that entry is the current state
        step = (cur.flags & xflags::kTombstone) ? Step::kNotFound : Step::kDone;
        return step == Step::kDone ? on_entry(cur) : XDecision::Keep();
      }
      if (removals() != before) {  // Y may have changed since it was read: ask again
        moved = true;
        return XDecision::Keep();
      }
      step = Step::kDone;
      XCurrent in_y;
      in_y.present = true;
      in_y.flags = xflags::kInY;
      in_y.value = from_y;
      in_y.mounted = true;
      return on_entry(in_y);
    }));
    if (!moved) return step == Step::kDone ? Status::Ok() : Status::NotFound();
    Count(tier_retries_);
    if (!attempts.Spend()) return attempts.Exhausted("of a " + std::to_string(key.size()) + "-byte key");
  }
}

Status Tiers::Update(XWorker& w, Slice key, Slice value) {
  DMX_RETURN_IF_ERROR(budget_.WaitForRoom(w));
  DMX_RETURN_IF_ERROR(ChangeExisting(w, key, "indexy update", [&](const XCurrent& cur) {
    return XDecision::Put(value, xflags::kDirty | (cur.flags & xflags::kInY));
  }));
  budget_.AfterGrowth();
  return Status::Ok();
}

Status Tiers::Delete(XWorker& w, Slice key) {
  DMX_RETURN_IF_ERROR(budget_.WaitForRoom(w));  // a tombstone is an entry too
  DMX_RETURN_IF_ERROR(ChangeExisting(w, key, "indexy delete", [&](const XCurrent& cur) {
    // Y never saw the key: nothing to hide there.
    if (!(cur.flags & xflags::kInY)) return XDecision::Remove();
    return XDecision::Put({}, xflags::kDirty | xflags::kInY | xflags::kTombstone);
  }));
  budget_.AfterGrowth();
  return Status::Ok();
}

Status Tiers::BulkLoad(XWorker& w, std::span<const KeyValue> sorted) {
  constexpr size_t kBatch = 4096;
  if (x_->entries() != 0 || y_written_.load(std::memory_order_seq_cst))
    return Status::InvalidArgument("BulkLoad needs an empty index");
  size_t i = 0;
  // X first, while it stays below the low mark (a margin of one value left for the next one).
  for (; i < sorted.size(); ++i) {
    if (budget_.used() + sorted[i].key.size() + sorted[i].value.size() >= options_.low_bytes()) break;
    DMX_RETURN_IF_ERROR(w.Modify(sorted[i].key, [&](const XCurrent&) {
      return XDecision::Put(sorted[i].value, xflags::kDirty);
    }));
  }
  if (i == sorted.size()) return Status::Ok();
  tiering::ColdBatch batch;
  for (; i < sorted.size(); ++i) {
    batch.Put(sorted[i].key, sorted[i].value);
    if (batch.size() == kBatch || i + 1 == sorted.size()) {
      DMX_RETURN_IF_ERROR(Write(batch));
      batch.Clear();
    }
  }
  x_->MountAll();
  return Status::Ok();
}

Status Tiers::Write(const tiering::ColdBatch& batch) {
  y_written_.store(true, std::memory_order_seq_cst);
  DMX_RETURN_IF_ERROR(y_->Write(batch));
  Count(y_writes_);
  Count(y_written_entries_, batch.size());
  Count(y_written_bytes_, batch.bytes());
  return Status::Ok();
}

TierCounters Tiers::Counters() const {
  TierCounters c;
  c.x_answers = x_answers_.load(std::memory_order_relaxed);
  c.y_reads = y_reads_.load(std::memory_order_relaxed);
  c.y_hits = y_hits_.load(std::memory_order_relaxed);
  c.admissions = admissions_.load(std::memory_order_relaxed);
  c.admissions_skipped = admissions_skipped_.load(std::memory_order_relaxed);
  c.y_scans = y_scans_.load(std::memory_order_relaxed);
  c.y_writes = y_writes_.load(std::memory_order_relaxed);
  c.y_written_entries = y_written_entries_.load(std::memory_order_relaxed);
  c.y_written_bytes = y_written_bytes_.load(std::memory_order_relaxed);
  c.removals = removals();
  c.tier_retries = tier_retries_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace dmindex::designs::indexy
