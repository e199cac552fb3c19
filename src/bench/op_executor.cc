#include "bench/op_executor.h"

#include <string>

#include "bench/key_space.h"

namespace dmindex::bench {
namespace {

std::string KeyText(Key key) { return "key " + std::to_string(key); }

// A failed call becomes an error naming the operation.
Status Failed(const char* what, Key key, const Status& s) {
  return Status::Corruption(std::string(what) + " of " + KeyText(key) + " failed: " + s.ToString());
}

}  // namespace

Status OpExecutor::Lookup(const Operation& op) {
  const Key key = op.key;
  Value value = 0;
  Status s = session_.Lookup(key, &value);
  if (s.IsNotFound() && op.may_be_absent) return Status::Ok();
  if (s.IsNotFound())
    return Status::Corruption("lookup of " + KeyText(key) + ": NotFound, but the key was loaded "
                              "or inserted by this thread");
  if (!s.ok()) return Failed("lookup", key, s);
  if (!ValueMatchesKey(key, value))
    return Status::Corruption("lookup of " + KeyText(key) + " returned value " +
                              std::to_string(value) + ", which was never written to that key");
  return Status::Ok();
}

Status OpExecutor::CheckScan(const Operation& op) const {
  if (scan_buffer_.size() > op.scan_length)
    return Status::Corruption("scan from " + KeyText(op.key) + " asked for " +
                              std::to_string(op.scan_length) + " pairs, got " +
                              std::to_string(scan_buffer_.size()));
  // The start key exists (it was chosen among existing records), so it comes first.
  if (!op.may_be_absent && (scan_buffer_.empty() || scan_buffer_.front().key != op.key))
    return Status::Corruption("scan from existing " + KeyText(op.key) + " did not return it first");
  if (!scan_buffer_.empty() && scan_buffer_.front().key < op.key)
    return Status::Corruption("scan from " + KeyText(op.key) + " returned the smaller " +
                              KeyText(scan_buffer_.front().key));
  for (size_t i = 0; i < scan_buffer_.size(); ++i) {
    const RecordPair& kv = scan_buffer_[i];
    if (i > 0 && kv.key <= scan_buffer_[i - 1].key)
      return Status::Corruption("scan from " + KeyText(op.key) + " is not in ascending order at " +
                                KeyText(kv.key));
    if (!ValueMatchesKey(kv.key, kv.value))
      return Status::Corruption("scan returned " + KeyText(kv.key) + " with a value never written to it");
  }
  return Status::Ok();
}

Status OpExecutor::Execute(const Operation& op) {
  switch (op.kind) {
    case OpKind::kRead:
      return Lookup(op);
    case OpKind::kUpdate: {
      Status s = session_.Update(op.key, op.value);
      if (s.IsNotFound() && op.may_be_absent) return Status::Ok();
      return s.ok() ? s : Failed("update", op.key, s);
    }
    case OpKind::kDelete: {
      Status s = session_.Delete(op.key);
      if (s.IsNotFound() && op.may_be_absent) return Status::Ok();
      return s.ok() ? s : Failed("delete", op.key, s);
    }
    case OpKind::kInsert: {
      Status s = session_.Insert(op.key, op.value);
      return s.ok() ? s : Failed("insert", op.key, s);
    }
    case OpKind::kScan: {
      Status s = session_.Scan(U64Key(op.key), op.scan_length, &pairs_);
      if (!s.ok()) return Failed("scan", op.key, s);
      scan_buffer_.clear();
      for (const KeyValue& kv : pairs_) {
        if (kv.key.size() != 8 || kv.value.size() != 8)
          return Status::Corruption("scan from " + KeyText(op.key) + " returned a pair of " +
                                    std::to_string(kv.key.size()) + "+" + std::to_string(kv.value.size()) +
                                    " bytes in a u64 index");
        scan_buffer_.push_back({u64::Decode(kv.key), u64::Decode(kv.value)});
      }
      return CheckScan(op);
    }
    case OpKind::kReadModifyWrite: {
      DMX_RETURN_IF_ERROR(Lookup(op));
      Status s = session_.Update(op.key, op.value);
      return s.ok() ? s : Failed("read-modify-write", op.key, s);
    }
  }
  return Status::InvalidArgument("unknown operation kind");
}

}  // namespace dmindex::bench
