// Carries out one operation on a Session and checks the answer: the driver knows which keys
// exist (op_stream.h; a replayed trace marks the keys it may name absent), so a lookup that
// misses, a value that belongs to another key, or a scan out of order is an index bug,
// reported as Corruption, never ignored.
#pragma once

#include <vector>

#include "bench/op_stream.h"
#include "dmindex/index.h"

namespace dmindex::bench {

class OpExecutor {
 public:
  explicit OpExecutor(Session& session) : session_(session) {}
  Status Execute(const Operation& op);

 private:
  Status Lookup(const Operation& op);
  Status CheckScan(const Operation& op) const;

  Session& session_;
  std::vector<KeyValue> pairs_;          // a scan's answer
  std::vector<RecordPair> scan_buffer_;  // the same as integers
};

}  // namespace dmindex::bench
