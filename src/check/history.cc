#include "check/history.h"

#include <algorithm>
#include <cstdio>

namespace dmindex::check {
namespace {

const char* KindName(OpKind k) {
  switch (k) {
    case OpKind::kLookup: return "Lookup";
    case OpKind::kInsert: return "Insert";
    case OpKind::kUpdate: return "Update";
    case OpKind::kDelete: return "Delete";
    case OpKind::kScan: return "Scan";
  }
  return "?";
}

std::string Micros(int64_t ns) {
  if (ns == std::numeric_limits<int64_t>::max()) return "never";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1000.0);
  return buf;
}

Outcome OutcomeOf(const Status& s) {
  if (s.ok()) return Outcome::kOk;
  if (s.IsNotFound()) return Outcome::kNotFound;
  return Outcome::kUnknown;
}

}  // namespace

std::string HexValue(Value v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string Describe(const Operation& op, int64_t origin_ns) {
  std::string s = "T";
  s.append(std::to_string(op.thread)).append(" ").append(KindName(op.kind)).append("(");
  s.append(std::to_string(op.key));
  if (op.kind == OpKind::kInsert || op.kind == OpKind::kUpdate) s += ", " + HexValue(op.value);
  if (op.kind == OpKind::kScan) s += ", " + std::to_string(op.scan_count);
  s += ") -> ";
  if (op.outcome == Outcome::kNotFound) {
    s += "NotFound";
  } else if (op.outcome == Outcome::kUnknown) {
    s += "error (effect unknown)";
  } else if (op.kind == OpKind::kLookup) {
    s += HexValue(op.value);
  } else if (op.kind == OpKind::kScan) {
    s += "[";
    for (size_t i = 0; i < op.scan_result.size(); ++i) {
      if (i == 12) {
        s += " ... " + std::to_string(op.scan_result.size() - i) + " more";
        break;
      }
      if (i > 0) s += ' ';
      s.append(std::to_string(op.scan_result[i].key)).append("=").append(HexValue(op.scan_result[i].value));
    }
    s += "]";
  } else {
    s += "Ok";
  }
  const int64_t end = op.response_ns == std::numeric_limits<int64_t>::max()
                          ? op.response_ns : op.response_ns - origin_ns;
  return s + "  [" + Micros(op.invoke_ns - origin_ns) + " .. " + Micros(end) + " us]";
}

HistoryRecorder::HistoryRecorder(uint32_t threads) {
  const auto origin = std::chrono::steady_clock::now();
  for (uint32_t t = 0; t < threads; ++t) logs_.push_back(std::make_unique<ThreadLog>(t, origin));
}

History HistoryRecorder::Merge(std::map<Key, Value> initial) const {
  History h;
  h.initial = std::move(initial);
  for (const auto& log : logs_) h.ops.insert(h.ops.end(), log->ops().begin(), log->ops().end());
  std::stable_sort(h.ops.begin(), h.ops.end(), [](const Operation& a, const Operation& b) {
    return a.invoke_ns < b.invoke_ns;
  });
  return h;
}

Operation RecordingSession::Begin(OpKind kind, Key key, Value value) const {
  Operation op;
  op.kind = kind;
  op.key = key;
  op.value = value;
  op.invoke_ns = log_.Now();
  return op;
}

Status RecordingSession::Record(Operation op, const Status& s) {
  op.response_ns = log_.Now();
  op.outcome = OutcomeOf(s);
  log_.Add(std::move(op));
  return s;
}

Status RecordingSession::Lookup(Key key, Value* value) {
  Operation op = Begin(OpKind::kLookup, key, 0);
  Value v = 0;
  Status s = inner_.Lookup(key, &v);
  if (s.ok()) op.value = *value = v;
  return Record(std::move(op), s);
}

Status RecordingSession::Insert(Key key, Value value) {
  Operation op = Begin(OpKind::kInsert, key, value);
  Status s = inner_.Insert(key, value);
  return Record(std::move(op), s);
}

Status RecordingSession::Update(Key key, Value value) {
  Operation op = Begin(OpKind::kUpdate, key, value);
  Status s = inner_.Update(key, value);
  return Record(std::move(op), s);
}

Status RecordingSession::Delete(Key key) {
  Operation op = Begin(OpKind::kDelete, key, 0);
  Status s = inner_.Delete(key);
  return Record(std::move(op), s);
}

Status RecordingSession::Scan(Key start, size_t count, std::vector<KeyValue>* out) {
  Operation op = Begin(OpKind::kScan, start, 0);
  op.scan_count = static_cast<uint32_t>(count);
  Status s = inner_.Scan(start, count, out);
  if (s.ok()) op.scan_result = *out;
  return Record(std::move(op), s);
}

}  // namespace dmindex::check
