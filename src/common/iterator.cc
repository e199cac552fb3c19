// The public Iterator: batches of the design's range scan, each continuing after the last
// key of the one before (KeyRange::after_start), so no caller ever computes a successor key.
#include "dmindex/iterator.h"

#include <algorithm>

#include "dmindex/index.h"

namespace dmindex {
namespace {

// Without ReadOptions::readahead, batches start small (a short iteration reads about one
// leaf) and double, so a long one costs few design scans, up to a batch that bounds the
// iterator's memory.
constexpr size_t kFirstBatch = 16;
constexpr size_t kLargestBatch = 1024;

}  // namespace

Iterator::Iterator(Session& session, const ReadOptions& options)
    : session_(&session), session_alive_(session.alive_), options_(options) {}

bool Iterator::SessionAlive() {
  if (session_alive_ != nullptr && session_alive_->load(std::memory_order_acquire)) return true;
  batch_.clear();
  pos_ = 0;
  more_ = false;
  status_ = Status::InvalidArgument("iterator used after its session was destroyed (or after it was moved from)");
  return false;
}

void Iterator::Seek(Slice target) {
  next_batch_ = options_.readahead > 0 ? options_.readahead : kFirstBatch;
  Fill(KeyRange{std::string(target), false, options_.upper_bound});
}

void Iterator::SeekToFirst() {
  if (!SessionAlive()) return;
  // The first position of the key space: below every key of either format.
  if (session_->rules().format == KeyFormat::kU64) Seek(U64Key(0));
  else Seek(Slice());
}

void Iterator::Next() {
  if (!Valid() || !SessionAlive()) return;
  if (++pos_ < batch_.size()) return;
  if (!more_) {
    status_ = pending_;
    return;
  }
  std::string last = std::move(batch_.back().key);
  if (options_.readahead == 0) next_batch_ = std::min(kLargestBatch, next_batch_ * 2);
  Fill(KeyRange{std::move(last), true, options_.upper_bound});
}

void Iterator::Fill(const KeyRange& range) {
  if (!SessionAlive()) return;
  batch_.clear();
  pos_ = 0;
  more_ = false;
  pending_ = Status::Ok();
  status_ = Session::ScanRangeOf(*session_, range, next_batch_, &batch_);
  if (status_.IsNotOwner()) {
    // The pairs before the foreign partition are good: hand them out, then stop there.
    std::swap(status_, pending_);
    if (batch_.empty()) std::swap(status_, pending_);
    return;
  }
  if (!status_.ok()) {
    batch_.clear();
    return;
  }
  more_ = batch_.size() == next_batch_;
}

}  // namespace dmindex
