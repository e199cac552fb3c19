// XStore's RPCs to a partition's memory server (opcodes kXStore* in fabric/rpc.h): how the
// requests and replies are laid out. Every request starts with the partition's descriptor
// address (pool_format.h), which names the tree: one memory server serves the partitions of
// any number of indexes. Keys and values travel as their public bytes.
//
//   Write   op, key, value                    -> outcome, model word
//           (op kCompareAndSwap: value is the     (kCompareAndSwap: swapped, and the value
//           desired one, then expected)            found when it was not `expected`)
//   Lookup  model word, sub-model, blob word,  -> outcome, model word, blob word, blob, value
//           key
//   Locate  (as Lookup)                        -> outcome, model word, blob word, blob, leaf
//   Load    last, count, count x (key, value)  -> outcome, model word (after the last batch:
//           the batches are bulk-loaded and the models trained; kNotFound: not empty)
//   Quiesce -                                  -> -
//   Store   (no descriptor: 0) record          -> its address on the server's node
//   ReadNode node address                      -> its image, read by the server's tree
//
// Lookup and Locate are a compute node falling back: the reply carries the current model word
// (the client reloads its model set when it changed) and, if the sub-model the client asked
// with has been retrained since its copy (its blob word differs), the new blob (§5.2.1).
// ReadNode is a client's reader that met a leaf torn the same way twice with its lock free:
// the server, the tree's only writer, reads it under its own lock; the client holds none
// (docs/SYNCHRONIZATION.md, "Readers of an image that does not validate").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dmindex/status.h"
#include "fabric/rpc.h"

namespace dmindex::designs::xstore::wire {

enum class Outcome : uint8_t { kOk = 0, kNotFound = 1 };
// Bulk-load batches stay about this size (the RPC's payload).
inline constexpr size_t kLoadBatchBytes = 256 << 10;
enum class WriteKind : uint8_t { kUpsert = 0, kUpdate = 1, kDelete = 2, kCompareAndSwap = 3 };

// Appends fixed-size values and length-prefixed strings.
class Out {
 public:
  explicit Out(fabric::RpcReply* buf) : buf_(*buf) {}
  template <typename T>
  Out& Pod(const T& v) {
    fabric::AppendPod(&buf_, v);
    return *this;
  }
  Out& Str(std::string_view s) {
    Pod(static_cast<uint32_t>(s.size()));
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    buf_.insert(buf_.end(), p, p + s.size());
    return *this;
  }

 private:
  fabric::RpcReply& buf_;
};

// Reads them back; every read is bounds-checked (ok() false after a short message).
class In {
 public:
  explicit In(std::span<const std::byte> buf) : buf_(buf) {}
  template <typename T>
  In& Pod(T* v) {
    ok_ = ok_ && fabric::ReadPod(buf_, at_, v);
    at_ += sizeof(T);
    return *this;
  }
  In& Str(std::string_view* s) {
    uint32_t n = 0;
    Pod(&n);
    ok_ = ok_ && at_ <= buf_.size() && n <= buf_.size() - at_;
    if (ok_) *s = std::string_view(reinterpret_cast<const char*>(buf_.data() + at_), n);
    at_ += n;
    return *this;
  }
  bool ok() const { return ok_; }
  Status Check(const char* what) const {
    return ok_ ? Status::Ok() : Status::InvalidArgument(std::string("xstore ") + what + ": malformed message");
  }

 private:
  std::span<const std::byte> buf_;
  size_t at_ = 0;
  bool ok_ = true;
};

// What a falling-back compute node holds of the key's sub-model, so the server can tell it
// what changed.
struct ModelState {
  uint64_t model_word = 0;  // its model set (0: none)
  uint32_t sub_model = 0;
  uint64_t blob_word = 0;   // its copy of that sub-model (0: none)
};

}  // namespace dmindex::designs::xstore::wire
