#include "bench/op_executor.h"

#include <string>

namespace dmindex::bench {

// A failed call becomes an error naming the operation and its key.
Status OpExecutor::Failed(const char* what, const Status& s) const {
  return Status::Corruption(std::string(what) + " of " + codec_.KeyText(key_) + " failed: " + s.ToString());
}

Status OpExecutor::Lookup(const Operation& op) {
  Status s = session_.Lookup(key_, &read_);
  if (s.IsNotFound() && op.may_be_absent) return Status::Ok();
  if (s.IsNotFound())
    return Status::Corruption("lookup of " + codec_.KeyText(key_) + ": NotFound, but the key was loaded "
                              "or inserted by this thread");
  if (!s.ok()) return Failed("lookup", s);
  return codec_.Check(key_, read_);
}

Status OpExecutor::Write(const char* what, const Operation& op) {
  codec_.EncodeValue(key_, op.value, &value_);
  Status s = op.kind == OpKind::kInsert ? session_.Insert(key_, value_) : session_.Update(key_, value_);
  if (s.IsNotFound() && op.may_be_absent) return Status::Ok();
  return s.ok() ? s : Failed(what, s);
}

Status OpExecutor::CheckScan(const Operation& op) const {
  if (scan_buffer_.size() > op.scan_length)
    return Status::Corruption("scan from " + codec_.KeyText(key_) + " asked for " +
                              std::to_string(op.scan_length) + " pairs, got " +
                              std::to_string(scan_buffer_.size()));
  // The start key exists (it was chosen among existing records), so it comes first.
  if (!op.may_be_absent && (scan_buffer_.empty() || scan_buffer_.front().key != key_))
    return Status::Corruption("scan from existing " + codec_.KeyText(key_) + " did not return it first");
  if (!scan_buffer_.empty() && Slice(scan_buffer_.front().key) < Slice(key_))
    return Status::Corruption("scan from " + codec_.KeyText(key_) + " returned the smaller " +
                              codec_.KeyText(scan_buffer_.front().key));
  for (size_t i = 0; i < scan_buffer_.size(); ++i) {
    const KeyValue& kv = scan_buffer_[i];
    if (i > 0 && kv.key <= scan_buffer_[i - 1].key)
      return Status::Corruption("scan from " + codec_.KeyText(key_) + " is not in ascending order at " +
                                codec_.KeyText(kv.key));
    if (Status s = codec_.Check(kv.key, kv.value); !s.ok())
      return Status::Corruption("scan from " + codec_.KeyText(key_) + ": " + s.message());
  }
  return Status::Ok();
}

Status OpExecutor::Execute(const Operation& op) {
  codec_.EncodeKey(op.key, &key_);
  switch (op.kind) {
    case OpKind::kRead:
      return Lookup(op);
    case OpKind::kUpdate:
      return Write("update", op);
    case OpKind::kDelete: {
      Status s = session_.Delete(key_);
      if (s.IsNotFound() && op.may_be_absent) return Status::Ok();
      return s.ok() ? s : Failed("delete", s);
    }
    case OpKind::kInsert:
      return Write("insert", op);
    case OpKind::kScan: {
      Status s = session_.Scan(key_, op.scan_length, &scan_buffer_);
      return s.ok() ? CheckScan(op) : Failed("scan", s);
    }
    case OpKind::kReadModifyWrite: {
      DMX_RETURN_IF_ERROR(Lookup(op));
      return Write("read-modify-write", op);
    }
  }
  return Status::InvalidArgument("unknown operation kind");
}

}  // namespace dmindex::bench
