// The generic reverse scan (Session::DoScanReverse's default) for designs without a reverse
// path of their own: forward scans over windows [w, end) that widen below the end until one
// holds `count` pairs or reaches the range's start, keeping its last `count` pairs.
//
// The windows' starts are the end position cut short: for byte keys end[0, L) for L = |end|-1
// down to 0; for u64 keys the end with its last bytes zeroed (both are <= every key of the
// window they open, and no key arithmetic is needed). Each window is a prefix of the
// key space below the end, about 256 times wider than the one before, so the scans read at
// most about 256 times the pairs a step needs where keys are dense, and every pair from the
// range's start where they are sparse (docs/API.md, "Reverse iteration"). Each window is read
// whole with DoScan, so each returned value was current at some instant of its read, and a
// key present for the whole call is returned (as a forward scan's).
#include <algorithm>
#include <deque>

#include "dmindex/index.h"

namespace dmindex {
namespace {

constexpr size_t kWindowBatch = 512;

// The start of the window `level` bytes shorter than the end.
std::string WindowStart(const KeyRules& rules, const std::string& end, size_t level) {
  if (rules.format == KeyFormat::kU64) {
    std::string s = end;
    for (size_t i = s.size() > level ? s.size() - level : 0; i < s.size(); ++i) s[i] = '\0';
    return s;
  }
  return end.substr(0, end.size() > level ? end.size() - level : 0);
}

// The position above every key: the end of a range without one.
std::string Top(const KeyRules& rules) {
  return rules.format == KeyFormat::kU64 ? std::string(kU64KeyBytes, '\xff') : std::string(rules.max_key_bytes, '\xff');
}

}  // namespace

Status Session::DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) {
  const std::string end = range.end ? *range.end : Top(rules());
  // Without an end the top position is included only in the bytes format, where it can be
  // a key; the u64 format's top (2^64-1) is reserved.
  const bool inclusive = range.end ? range.end_inclusive : rules().format == KeyFormat::kBytes;
  std::deque<KeyValue> last;  // the last `count` pairs of the window read so far
  for (size_t level = 1;; ++level) {
    std::string from = std::max(WindowStart(rules(), end, level), range.start);
    const bool whole = from == range.start;
    last.clear();
    KeyRange window{from, false, inclusive ? std::nullopt : std::optional<std::string>(end)};
    std::vector<KeyValue> batch;
    for (bool more = true; more;) {
      batch.clear();
      DMX_RETURN_IF_ERROR(DoScan(window, kWindowBatch, &batch));
      more = batch.size() == kWindowBatch;
      for (KeyValue& kv : batch) {
        if (inclusive ? Slice(kv.key) > Slice(end) : Slice(kv.key) >= Slice(end)) {
          more = false;
          break;
        }
        window.start = kv.key;
        last.push_back(std::move(kv));
        if (last.size() > count) last.pop_front();
      }
      window.after_start = true;
    }
    if (last.size() == count || whole) break;
  }
  out->reserve(last.size());
  for (auto it = last.rbegin(); it != last.rend(); ++it) out->push_back(std::move(*it));
  return Status::Ok();
}

}  // namespace dmindex
