// A batch of point writes applied by Session::Write in order.
//
//   dmindex::WriteBatch batch;
//   batch.Put("user1", "a");
//   batch.Delete("user2");
//   dmindex::Status s = session->Write(batch);
//
// What is atomic: each write, as the same call alone (Insert or Delete) - not the batch. A
// reader may see a prefix of a batch applied; two batches writing the same keys interleave
// per key. Write checks every key and value first, so a batch with an invalid one changes
// nothing; an error while applying (Unavailable, OutOfSpace) stops at that write, the ones
// before it applied (Session::Write says how many).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dmindex/types.h"

namespace dmindex {

class WriteBatch {
 public:
  enum class Kind : unsigned char { kPut, kDelete };
  struct Write {
    Kind kind = Kind::kPut;
    std::string key;
    std::string value;  // empty for kDelete
  };

  // Inserts or overwrites (as Session::Insert).
  void Put(Slice key, Slice value) { writes_.push_back({Kind::kPut, std::string(key), std::string(value)}); }
  // Deletes the key if present (as Session::Delete; an absent key is not an error in a batch).
  void Delete(Slice key) { writes_.push_back({Kind::kDelete, std::string(key), {}}); }
  void Clear() { writes_.clear(); }
  size_t Count() const { return writes_.size(); }
  const std::vector<Write>& writes() const { return writes_; }

 private:
  std::vector<Write> writes_;
};

}  // namespace dmindex
