// Ordered iteration over an index, RocksDB-style: Seek to a key, then Next until !Valid();
// or backwards: SeekToLast / SeekForPrev, then Prev. Direction may change at any position.
//
//   dmindex::ReadOptions ro;
//   ro.upper_bound = "user2000";                   // stop before this key
//   dmindex::Iterator it = session->NewIterator(ro);
//   for (it.Seek("user1000"); it.Valid(); it.Next()) use(it.key(), it.value());
//   if (!it.status().ok()) ...                      // why iteration stopped early, if it did
//
// An iterator reads the index in batches through its session (one design scan per batch, so a
// tree design fetches the leaves of a batch in one round trip where it can) and continues each
// batch after the last key it returned. Like Session::Scan it is not a snapshot: every key
// present for the whole iteration (within the range it covered) is returned, once, in
// ascending order, and each value was current at some instant while its batch was read
// (docs/SYNCHRONIZATION.md, "Scans"). It belongs to its session: use it from the session's
// thread. Used after its session is destroyed it reads nothing: Seek and Next leave it
// invalid with status() InvalidArgument.
//
// Backwards, batches are read by the design's reverse scan (Session::DoScanReverse): a
// design with a reverse path of its own uses it; the others read forward over windows that
// widen below the position (the cost is in docs/API.md, "Reverse iteration").
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "dmindex/options.h"
#include "dmindex/status.h"
#include "dmindex/types.h"

namespace dmindex {

class Session;

class Iterator {
 public:
  Iterator(Iterator&&) noexcept = default;
  Iterator& operator=(Iterator&&) noexcept = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;

  // Positions at the first key >= target (and below the upper bound), or makes the iterator
  // invalid if there is none. A key the index's format does not allow is InvalidArgument
  // (in status()).
  void Seek(Slice target);
  // Positions at the first key of the index (and below the upper bound).
  void SeekToFirst();
  // Moves to the next key. Valid() must be true.
  void Next();
  // Positions at the last key <= target (and not below the lower bound), or invalid.
  void SeekForPrev(Slice target);
  // Positions at the last key of the index (below the upper bound).
  void SeekToLast();
  // Moves to the previous key. Valid() must be true.
  void Prev();

  // True while positioned at a pair. False at the end of the range, or after an error.
  bool Valid() const { return pos_ < batch_.size(); }
  // The current pair; valid until the next call on the iterator.
  Slice key() const { return batch_[pos_].key; }
  Slice value() const { return batch_[pos_].value; }
  // OK while valid and at a normal end; otherwise why iteration stopped early. NotOwner
  // (partitioned designs): the range runs on in a partition another process serves; the
  // pairs before it were returned (route the rest: Partitioning::RouteKey).
  const Status& status() const { return status_; }

 private:
  friend class Session;
  Iterator(Session& session, const ReadOptions& options);
  // Reads the next batch of `range`; leaves the iterator invalid at the end or on an error.
  void Fill(const KeyRange& range);
  void FillReverse(const ReverseRange& range);
  // The bounds of an iteration around `target` (prefix mode confines them to its prefix).
  void SetBounds(const std::optional<std::string>& target);
  // The first position below every key of the index's format.
  std::string Lowest() const;
  // Keeps an error's status and empties the batch; true if `s` is not OK.
  bool Failed(Status s);

  // Whether the session may be used: false once it is destroyed (checked before each read).
  bool SessionAlive();

  Session* session_;
  std::shared_ptr<const std::atomic<bool>> session_alive_;
  ReadOptions options_;
  std::string lower_;                  // the iteration's bounds: lower_ inclusive,
  std::optional<std::string> upper_;   // upper_ exclusive (none: the end of the key space)
  bool reverse_ = false;               // the batch is in descending order
  std::vector<KeyValue> batch_;
  size_t pos_ = 0;
  bool more_ = false;  // the range may hold keys after the batch
  size_t next_batch_ = 0;
  Status status_;
  Status pending_;     // what status() becomes once the batch is used up (NotOwner)
};

}  // namespace dmindex
