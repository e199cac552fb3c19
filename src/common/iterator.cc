// The public Iterator: batches of the design's range scan, each continuing after the last
// key of the one before (KeyRange::after_start), so no caller ever computes a successor key.
// Backwards the same with the design's reverse scan, each batch continuing below the last
// key of the one before.
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

// The smallest string above every string that starts with `prefix`; none if there is none
// (a prefix of 0xff bytes only).
std::optional<std::string> PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (prefix.empty()) return std::nullopt;
  prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

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

std::string Iterator::Lowest() const {
  // The first position of the key space: below every key of either format.
  return session_->rules().format == KeyFormat::kU64 ? U64Key(0).str() : std::string();
}

void Iterator::SetBounds(const std::optional<std::string>& target) {
  lower_ = options_.lower_bound ? *options_.lower_bound : Lowest();
  upper_ = options_.upper_bound;
  next_batch_ = options_.readahead > 0 ? options_.readahead : kFirstBatch;
  if (options_.prefix_bytes == 0 || !target) return;
  // The keys that share the target's prefix: [prefix, PrefixEnd(prefix)), as positions of
  // the index's format (u64 positions are 8 bytes: the prefix padded with zeros).
  std::string prefix = target->substr(0, options_.prefix_bytes);
  std::optional<std::string> end = PrefixEnd(prefix);
  if (session_->rules().format == KeyFormat::kU64) {
    prefix.resize(kU64KeyBytes, '\0');
    if (end) end->resize(kU64KeyBytes, '\0');
  }
  lower_ = std::max(lower_, prefix);
  if (end && (!upper_ || *end < *upper_)) upper_ = end;
}

bool Iterator::Failed(Status s) {
  status_ = std::move(s);
  if (status_.ok()) return false;
  batch_.clear();
  pos_ = 0;
  more_ = false;
  return true;
}

void Iterator::Seek(Slice target) {
  if (!SessionAlive()) return;
  SetBounds(std::string(target));
  if (Failed(session_->rules().format == KeyFormat::kU64 || target.size() <= session_->rules().max_key_bytes
                 ? Status::Ok()
                 : session_->rules().CheckKey(target)))
    return;
  Fill(KeyRange{std::max(std::string(target), lower_), false, upper_});
}

void Iterator::SeekToFirst() {
  if (!SessionAlive()) return;
  SetBounds(std::nullopt);
  Fill(KeyRange{lower_, false, upper_});
}

void Iterator::SeekForPrev(Slice target) {
  if (!SessionAlive()) return;
  SetBounds(std::string(target));
  if (upper_ && target >= Slice(*upper_)) FillReverse(ReverseRange{lower_, upper_, false});
  else FillReverse(ReverseRange{lower_, std::string(target), true});
}

void Iterator::SeekToLast() {
  if (!SessionAlive()) return;
  SetBounds(std::nullopt);
  FillReverse(ReverseRange{lower_, upper_, false});
}

void Iterator::Next() {
  if (!Valid() || !SessionAlive()) return;
  if (reverse_) {
    // Turning: the keys after the current one, read afresh.
    std::string at = std::move(batch_[pos_].key);
    next_batch_ = options_.readahead > 0 ? options_.readahead : kFirstBatch;
    Fill(KeyRange{std::move(at), true, upper_});
    return;
  }
  if (++pos_ < batch_.size()) return;
  if (!more_) {
    status_ = pending_;
    return;
  }
  std::string last = std::move(batch_.back().key);
  if (options_.readahead == 0) next_batch_ = std::min(kLargestBatch, next_batch_ * 2);
  Fill(KeyRange{std::move(last), true, upper_});
}

void Iterator::Prev() {
  if (!Valid() || !SessionAlive()) return;
  if (!reverse_) {
    std::string at = std::move(batch_[pos_].key);
    next_batch_ = options_.readahead > 0 ? options_.readahead : kFirstBatch;
    FillReverse(ReverseRange{lower_, std::move(at), false});
    return;
  }
  if (++pos_ < batch_.size()) return;
  if (!more_) return;
  std::string last = std::move(batch_.back().key);
  if (options_.readahead == 0) next_batch_ = std::min(kLargestBatch, next_batch_ * 2);
  FillReverse(ReverseRange{lower_, std::move(last), false});
}

void Iterator::Fill(const KeyRange& range) {
  if (!SessionAlive()) return;
  reverse_ = false;
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
  if (Failed(status_)) return;
  more_ = batch_.size() == next_batch_;
}

void Iterator::FillReverse(const ReverseRange& range) {
  if (!SessionAlive()) return;
  reverse_ = true;
  batch_.clear();
  pos_ = 0;
  more_ = false;
  pending_ = Status::Ok();
  if (Failed(Session::ScanReverseOf(*session_, range, next_batch_, &batch_))) return;
  more_ = batch_.size() == next_batch_;
}

}  // namespace dmindex
