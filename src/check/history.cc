#include "check/history.h"

#include "common/key_text.h"

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
    case OpKind::kCompareAndSwap: return "CompareAndSwap";
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

std::string KeyStr(const Key& key) {
  const bool integer = key.size() == kU64KeyBytes && static_cast<unsigned char>(key[0]) < 0x20;
  return KeyText(key, integer ? KeyFormat::kU64 : KeyFormat::kBytes);
}

std::string ValueStr(const Value& value) {
  if (value.size() != 8) return BytesText(value);
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(U64Key::Decode(value)));
  return buf;
}

std::string Describe(const Operation& op, int64_t origin_ns) {
  std::string s;  // appended piece by piece: "C" + std::to_string(...) trips GCC 12's -Wrestrict
  if (op.process > 0) s.append("C").append(std::to_string(op.process)).append(".");
  s.append("T").append(std::to_string(op.thread)).append(" ").append(KindName(op.kind)).append("(");
  s.append(KeyStr(op.key));
  if (op.kind == OpKind::kInsert || op.kind == OpKind::kUpdate) s += ", " + ValueStr(op.value);
  if (op.kind == OpKind::kCompareAndSwap) {
    s.append(", ").append(ValueStr(op.expected));
    if (op.swapped || op.outcome == Outcome::kUnknown) s.append(", ").append(ValueStr(op.value));
  }
  if (op.kind == OpKind::kScan && op.scan_reverse) {
    s += ", " + std::to_string(op.scan_count) + ", reverse";
    if (op.scan_end) s.append(op.scan_after ? ", from " : ", below ").append(KeyStr(*op.scan_end));
  } else if (op.kind == OpKind::kScan) {
    s += ", " + std::to_string(op.scan_count);
    if (op.scan_after) s += ", after start";
    if (op.scan_end) s += ", below " + KeyStr(*op.scan_end);
  }
  s += ") -> ";
  if (op.outcome == Outcome::kNotFound) {
    s += "NotFound";
  } else if (op.outcome == Outcome::kUnknown) {
    s += "error (effect unknown)";
  } else if (op.kind == OpKind::kLookup) {
    s += ValueStr(op.value);
  } else if (op.kind == OpKind::kCompareAndSwap) {
    s += op.swapped ? std::string("swapped") : "not swapped, found " + ValueStr(op.value);
  } else if (op.kind == OpKind::kScan) {
    s += "[";
    for (size_t i = 0; i < op.scan_result.size(); ++i) {
      if (i == 12) {
        s += " ... " + std::to_string(op.scan_result.size() - i) + " more";
        break;
      }
      if (i > 0) s += ' ';
      s.append(KeyStr(op.scan_result[i].key)).append("=").append(ValueStr(op.scan_result[i].value));
    }
    s += "]";
  } else {
    s += "Ok";
  }
  const int64_t end = op.response_ns == std::numeric_limits<int64_t>::max()
                          ? op.response_ns : op.response_ns - origin_ns;
  return s + "  [" + Micros(op.invoke_ns - origin_ns) + " .. " + Micros(end) + " us]";
}

namespace {

void SortByInvocation(std::vector<Operation>* ops) {
  std::stable_sort(ops->begin(), ops->end(), [](const Operation& a, const Operation& b) {
    return a.invoke_ns < b.invoke_ns;
  });
}

// Moves `from`'s operations onto clock origin `origin_ns` and appends them to *to.
void MoveRebased(History&& from, int64_t origin_ns, std::vector<Operation>* to) {
  const int64_t shift = from.clock_origin_ns - origin_ns;
  for (Operation& op : from.ops) {
    op.invoke_ns += shift;
    if (op.response_ns != std::numeric_limits<int64_t>::max()) op.response_ns += shift;
    to->push_back(std::move(op));
  }
}

int64_t SteadyNs(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

History History::StartingNow(std::map<Key, Value> initial) {
  History h;
  h.initial = std::move(initial);
  h.clock_origin_ns = SteadyNs(runtime::Now());
  return h;
}

HistoryRecorder::HistoryRecorder(uint32_t threads, uint32_t process)
    : origin_(runtime::Now()) {
  for (uint32_t t = 0; t < threads; ++t)
    logs_.push_back(std::make_unique<ThreadLog>(t, process, origin_));
}

History HistoryRecorder::Merge(std::map<Key, Value> initial) const {
  History h;
  h.initial = std::move(initial);
  h.clock_origin_ns = SteadyNs(origin_);
  for (const auto& log : logs_) h.ops.insert(h.ops.end(), log->ops().begin(), log->ops().end());
  SortByInvocation(&h.ops);
  return h;
}

void AppendHistory(History* into, History later) {
  const size_t before = into->ops.size();
  MoveRebased(std::move(later), into->clock_origin_ns, &into->ops);
  // Rounds follow each other, so this is nearly sorted already.
  if (before > 0 && before < into->ops.size() &&
      into->ops[before].invoke_ns < into->ops[before - 1].invoke_ns)
    SortByInvocation(&into->ops);
}

Result<History> MergeHistories(std::vector<History> histories) {
  History merged;
  if (histories.empty()) return merged;
  merged.clock_origin_ns = histories.front().clock_origin_ns;
  for (const History& h : histories) merged.clock_origin_ns = std::min(merged.clock_origin_ns, h.clock_origin_ns);
  for (History& h : histories) {
    for (const auto& [key, value] : h.initial) {
      auto [it, fresh] = merged.initial.emplace(key, value);
      if (!fresh && it->second != value)
        return Status::InvalidArgument("histories disagree on the initial value of key " +
                                       KeyStr(key) + " (" + ValueStr(it->second) +
                                       " vs " + ValueStr(value) + ")");
    }
    MoveRebased(std::move(h), merged.clock_origin_ns, &merged.ops);
  }
  SortByInvocation(&merged.ops);
  return merged;
}

Operation RecordingSession::Begin(OpKind kind, Slice key, Slice value) const {
  Operation op;
  op.kind = kind;
  op.key = key;
  op.value = value;
  op.invoke_ns = log_.Now();
  return op;
}

Status RecordingSession::Record(Operation op, const Status& s) {
  // NotOwner promises the call changed and read nothing (another process serves the key):
  // it is no operation of the history.
  if (!s.IsNotOwner()) Log(std::move(op), s);
  return s;
}

void RecordingSession::Log(Operation op, const Status& s) {
  op.response_ns = log_.Now();
  op.outcome = OutcomeOf(s);
  log_.Add(std::move(op));
}

Status RecordingSession::DoLookup(Slice key, std::string* value) {
  Operation op = Begin(OpKind::kLookup, key, {});
  Status s = inner_.Lookup(key, value);
  if (s.ok()) op.value = *value;
  return Record(std::move(op), s);
}

Status RecordingSession::DoInsert(Slice key, Slice value) {
  Operation op = Begin(OpKind::kInsert, key, value);
  Status s = inner_.Insert(key, value);
  return Record(std::move(op), s);
}

Status RecordingSession::DoUpdate(Slice key, Slice value) {
  Operation op = Begin(OpKind::kUpdate, key, value);
  Status s = inner_.Update(key, value);
  return Record(std::move(op), s);
}

Status RecordingSession::DoDelete(Slice key) {
  Operation op = Begin(OpKind::kDelete, key, {});
  Status s = inner_.Delete(key);
  return Record(std::move(op), s);
}

Status RecordingSession::DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) {
  Operation op = Begin(OpKind::kScan, range.start, {});
  op.scan_count = static_cast<uint32_t>(count);
  op.scan_after = range.after_start;
  op.scan_end = range.end;
  Status s = ScanRangeOf(inner_, range, count, out);
  if (s.ok()) op.scan_result = *out;
  if (s.IsNotOwner() && !out->empty()) {
    // Cut short at a partition served elsewhere: the pairs before it are a scan of their
    // own, which covered (at least) the keys up to its last pair.
    op.scan_result = *out;
    op.scan_count = static_cast<uint32_t>(out->size());
    Log(std::move(op), Status::Ok());
    return s;
  }
  return Record(std::move(op), s);
}

Status RecordingSession::DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                                          std::string* current) {
  Operation op = Begin(OpKind::kCompareAndSwap, key, desired);
  op.expected = std::string(expected);
  Status s = inner_.CompareAndSwap(key, expected, desired, swapped, current);
  op.swapped = s.ok() && *swapped;
  if (s.ok() && !*swapped) op.value = *current;
  return Record(std::move(op), s);
}

Status RecordingSession::DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) {
  Operation op = Begin(OpKind::kScan, range.start, {});
  op.scan_count = static_cast<uint32_t>(count);
  op.scan_reverse = true;
  op.scan_after = range.end_inclusive;
  op.scan_end = range.end;
  Status s = ScanReverseOf(inner_, range, count, out);
  if (s.ok()) op.scan_result = *out;
  return Record(std::move(op), s);
}

void RecordingSession::DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                                  std::span<Status> statuses) {
  const int64_t invoke = log_.Now();
  std::vector<std::string> found;
  const std::vector<Status> answers = inner_.MultiGet(keys, &found);
  const int64_t response = log_.Now();
  for (size_t i = 0; i < keys.size(); ++i) {
    statuses[i] = answers[i];
    if (answers[i].ok()) values[i] = found[i];
    if (answers[i].IsNotOwner()) continue;  // no operation of the history (Record)
    Operation op;
    op.kind = OpKind::kLookup;
    op.key = keys[i];
    if (answers[i].ok()) op.value = found[i];
    op.invoke_ns = invoke;
    op.response_ns = response;
    op.outcome = OutcomeOf(answers[i]);
    log_.Add(std::move(op));
  }
}

}  // namespace dmindex::check
