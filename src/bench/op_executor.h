// Carries out one operation on a Session and checks the answer: the driver knows which keys
// exist (op_stream.h; a replayed trace marks the keys it may name absent), so a lookup that
// misses, a value that belongs to another key, or a scan out of order is an index bug,
// reported as Corruption, never ignored. Keys and values reach the index as the record
// codec makes them (record_shape.h).
#pragma once

#include <string>
#include <vector>

#include "bench/op_stream.h"
#include "bench/record_shape.h"
#include "dmindex/index.h"

namespace dmindex::bench {

class OpExecutor {
 public:
  OpExecutor(Session& session, const RecordCodec& codec) : session_(session), codec_(codec) {}
  Status Execute(const Operation& op);

 private:
  Status Lookup(const Operation& op);
  Status Write(const char* what, const Operation& op);
  Status CheckScan(const Operation& op) const;
  Status Failed(const char* what, const Status& s) const;

  Session& session_;
  const RecordCodec& codec_;
  std::string key_, value_, read_;  // reused, so no operation allocates for small records
  std::vector<KeyValue> scan_buffer_;
};

}  // namespace dmindex::bench
