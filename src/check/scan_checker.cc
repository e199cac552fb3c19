// The scan checker. Scans are not snapshots, so instead of a model search each scan is held
// to three properties that any correct non-snapshot scan has, judged conservatively from
// real-time order alone (a report is a certain violation, never a guess):
//  1. order: keys strictly ascending, all >= start, at most `count` of them;
//  2. completeness: a key the scan covers (start .. last returned key, or everything if the
//     scan returned fewer than `count`) that was surely present for the whole scan - a
//     completed operation showed it present before the scan began, and no Delete could have
//     taken effect between that operation and the scan's end - must be returned;
//  3. freshness: each returned value was written by an Insert/Update invoked before the
//     scan returned and not surely overwritten (by a write or delete that began after it
//     returned and completed before the scan began).
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "check/checker.h"

namespace dmindex::check {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kBeforeAll = std::numeric_limits<int64_t>::min();

int64_t ResponseOf(const Operation& op) {
  return op.outcome == Outcome::kUnknown ? kNever : op.response_ns;
}

bool Writes(const Operation& op) { return MayWriteValue(op); }  // may have set the value to op.value
bool SurelyChanges(const Operation& op) {  // certainly replaced or removed the value
  return op.outcome == Outcome::kOk &&
         (op.kind == OpKind::kInsert || op.kind == OpKind::kUpdate || op.kind == OpKind::kDelete ||
          (op.kind == OpKind::kCompareAndSwap && op.swapped));
}
bool ShowsPresent(const Operation& op) {
  return op.outcome == Outcome::kOk &&
         (op.kind == OpKind::kInsert || op.kind == OpKind::kUpdate || op.kind == OpKind::kLookup ||
          op.kind == OpKind::kCompareAndSwap);
}
bool MayDelete(const Operation& op) {
  return op.kind == OpKind::kDelete && op.outcome != Outcome::kNotFound;
}

// The point operations on one key, ordered by invocation, with indexes that make each
// question a scan asks about the key O(log n) or O(concurrency) instead of O(n): merged
// histories of multi-process runs put thousands of operations on a key.
struct KeyHistory {
  std::vector<const Operation*> ops;  // point operations on the key, by invocation
  bool initially_present = false;
  Value initial_value;

  // Built by Index():
  std::vector<int64_t> invokes;                  // ops[i]->invoke_ns
  std::vector<int> change_suffix_min;            // among SurelyChanges ops[i..]: the earliest response, -1 if none
  std::vector<int64_t> delete_prefix_max;        // max ResponseOf over MayDelete ops[0..i]
  std::unordered_map<Value, std::vector<int>> writes_of;  // Writes ops by value

  void Index() {
    std::stable_sort(ops.begin(), ops.end(), [](const Operation* a, const Operation* b) {
      return a->invoke_ns < b->invoke_ns;
    });
    const int n = static_cast<int>(ops.size());
    invokes.resize(n);
    change_suffix_min.assign(n + 1, -1);
    delete_prefix_max.resize(n);
    for (int i = 0; i < n; ++i) {
      invokes[i] = ops[i]->invoke_ns;
      const int64_t deleted = MayDelete(*ops[i]) ? ResponseOf(*ops[i]) : kBeforeAll;
      delete_prefix_max[i] = std::max(i > 0 ? delete_prefix_max[i - 1] : kBeforeAll, deleted);
      if (Writes(*ops[i])) writes_of[ops[i]->value].push_back(i);
    }
    for (int i = n - 1; i >= 0; --i) {
      const int later = change_suffix_min[i + 1];
      change_suffix_min[i] =
          SurelyChanges(*ops[i]) && (later < 0 || ops[i]->response_ns < ops[later]->response_ns) ? i : later;
    }
  }
  // Number of operations invoked before `t`.
  int InvokedBefore(int64_t t) const {
    return static_cast<int>(std::lower_bound(invokes.begin(), invokes.end(), t) - invokes.begin());
  }
  // A completed write or delete invoked after `t` that responded before `before`, or null.
  const Operation* ChangedBetween(int64_t t, int64_t before) const {
    const auto first = std::upper_bound(invokes.begin(), invokes.end(), t) - invokes.begin();
    const int x = change_suffix_min[first];
    return x >= 0 && ops[x]->response_ns < before ? ops[x] : nullptr;
  }
  // Whether a Delete that may have taken effect responded after `since` and was invoked
  // before `until`.
  bool MayDeleteBetween(int64_t since, int64_t until) const {
    const int n = InvokedBefore(until);
    return n > 0 && delete_prefix_max[n - 1] > since;
  }
};

// The operations on a key that overlap [from, to], for reports.
std::string Excerpt(const KeyHistory& kh, int64_t from, int64_t to) {
  std::string s;
  size_t shown = 0;
  for (const Operation* op : kh.ops) {
    if (ResponseOf(*op) < from || op->invoke_ns > to) continue;
    if (++shown > 16) {
      s += "    ...\n";
      break;
    }
    s += "    " + Describe(*op) + "\n";
  }
  return s.empty() ? "    (none)\n" : s;
}

// Property 3 for one returned pair; empty if fine, else the explanation.
std::string CheckFresh(const KeyHistory& kh, Value value, const Operation& scan) {
  // A write or delete that began after `written_by` and completed before the scan began.
  auto surely_overwritten = [&](int64_t written_by) { return kh.ChangedBetween(written_by, scan.invoke_ns); };
  std::string why;
  if (kh.initially_present && kh.initial_value == value) {
    const Operation* x = surely_overwritten(kBeforeAll);
    if (x == nullptr) return {};
    why += "  it was the initial value, surely replaced before the scan by:\n    " + Describe(*x) + "\n";
  }
  bool written = false;
  if (auto it = kh.writes_of.find(value); it != kh.writes_of.end())
    for (int i : it->second) {
      const Operation* w = kh.ops[i];
      written = true;
      if (w->invoke_ns >= scan.response_ns) {
        why += "  its write began only after the scan returned:\n    " + Describe(*w) + "\n";
        continue;
      }
      const Operation* x = surely_overwritten(ResponseOf(*w));
      if (x == nullptr) return {};
      why += "  written by\n    " + Describe(*w) + "\n  and surely replaced before the scan by\n    " +
             Describe(*x) + "\n";
    }
  if (!written && !(kh.initially_present && kh.initial_value == value))
    why += "  no operation ever wrote this value to this key\n";
  return why;
}

// Property 2: a completed operation that shows `key` present before the scan began, with no
// possible Delete after it and before the scan ended; nullptr if there is none.
const Operation* SurelyPresentWitness(const KeyHistory& kh, const Operation& scan, bool* initially) {
  static const Operation kInitialState{};
  // The witness is the latest-invoked operation that showed the key present and completed
  // before the scan began. Walking back from the scan's invocation, a Delete met first (and
  // of positive length) may have taken effect after any witness found further back: done.
  const Operation* witness = nullptr;
  for (int i = kh.InvokedBefore(scan.invoke_ns) - 1; i >= 0 && witness == nullptr; --i) {
    const Operation& op = *kh.ops[i];
    if (ShowsPresent(op) && op.response_ns < scan.invoke_ns) witness = &op;
    else if (MayDelete(op) && ResponseOf(op) > op.invoke_ns) return nullptr;
  }
  int64_t since = witness != nullptr ? witness->invoke_ns : kBeforeAll;
  if (witness == nullptr && kh.initially_present) witness = &kInitialState;
  if (witness == nullptr || kh.MayDeleteBetween(since, scan.response_ns)) return nullptr;
  *initially = witness == &kInitialState;
  return witness;
}

// Whether `k` is in the scan's range (a reverse scan's: ReverseRange, history.h).
bool InScanRange(const Operation& scan, const Key& k) {
  if (!scan.scan_reverse) return scan.scan_range().Contains(k);
  return ReverseRange{scan.key, scan.scan_end, scan.scan_after}.Contains(k);
}

std::string CheckOrder(const Operation& scan) {
  const auto& r = scan.scan_result;
  if (r.size() > scan.scan_count)
    return "returned " + std::to_string(r.size()) + " pairs, more than the " +
           std::to_string(scan.scan_count) + " asked for";
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].key.empty()) return "returned an empty key";
    if (!InScanRange(scan, r[i].key))
      return "returned key " + KeyStr(r[i].key) + " outside the scanned range";
    if (i > 0 && (scan.scan_reverse ? r[i].key >= r[i - 1].key : r[i].key <= r[i - 1].key))
      return std::string("keys not strictly ") + (scan.scan_reverse ? "descending" : "ascending") +
             " at position " + std::to_string(i) + " (" + KeyStr(r[i - 1].key) + " then " + KeyStr(r[i].key) + ")";
  }
  return {};
}

}  // namespace

CheckReport CheckScans(const History& history) {
  std::map<Key, KeyHistory> keys;
  for (const auto& [key, value] : history.initial) {
    keys[key].initially_present = true;
    keys[key].initial_value = value;
  }
  for (const Operation& op : history.ops)
    if (op.kind != OpKind::kScan) keys[op.key].ops.push_back(&op);
  for (auto& [key, kh] : keys) kh.Index();

  CheckReport report;
  for (const Operation& scan : history.ops) {
    if (scan.kind != OpKind::kScan || scan.outcome != Outcome::kOk) continue;
    ++report.scans_checked;
    const std::string scan_line = "  scan: " + Describe(scan) + "\n";
    if (std::string bad = CheckOrder(scan); !bad.empty()) {
      report.violations.push_back({"scan out of order", scan.key, scan_line + "  " + bad + "\n"});
      continue;
    }
    for (const KeyValue& kv : scan.scan_result) {
      auto it = keys.find(kv.key);
      std::string why = it == keys.end() ? "  no operation ever wrote this key\n"
                                         : CheckFresh(it->second, kv.value, scan);
      if (why.empty()) continue;
      std::string detail = scan_line + "  returned value " + ValueStr(kv.value) +
                           ", which was not current at any instant during the scan:\n" + why;
      if (it != keys.end())
        detail += "  operations on the key around the scan:\n" +
                  Excerpt(it->second, scan.invoke_ns - 1'000'000, scan.response_ns);
      report.violations.push_back({"scan returned a stale value", kv.key, std::move(detail)});
    }
    const bool full = scan.scan_result.size() == scan.scan_count;
    if (full && scan.scan_count == 0) continue;
    // A full scan covered its range up to its last key (a reverse one down to it); a short
    // one all of it. Walked in ascending order, over the result in ascending order.
    std::vector<KeyValue> ascending = scan.scan_result;
    if (scan.scan_reverse) std::reverse(ascending.begin(), ascending.end());
    const Key* covered_end = full && !scan.scan_reverse ? &ascending.back().key : nullptr;
    const Key& covered_start = full && scan.scan_reverse ? ascending.front().key : scan.key;
    auto returned = ascending.cbegin();
    for (auto it = keys.lower_bound(covered_start);
         it != keys.end() && (covered_end == nullptr || it->first <= *covered_end); ++it) {
      if (!InScanRange(scan, it->first)) continue;
      while (returned != ascending.cend() && returned->key < it->first) ++returned;
      if (returned != ascending.cend() && returned->key == it->first) continue;
      bool initially = false;
      const Operation* witness = SurelyPresentWitness(it->second, scan, &initially);
      if (witness == nullptr) continue;
      std::string detail = scan_line + "  covered key " + KeyStr(it->first) +
                           " but did not return it, though it was present for the whole scan:\n";
      detail += initially ? "  present from the start, " : "  shown present before the scan by\n    " +
                                                             Describe(*witness) + "\n  and ";
      detail += "no Delete could take effect before the scan ended. Operations on the key:\n" +
                Excerpt(it->second, initially ? kBeforeAll : witness->invoke_ns, scan.response_ns);
      report.violations.push_back({"scan missed a key", it->first, std::move(detail)});
    }
  }
  return report;
}

}  // namespace dmindex::check
