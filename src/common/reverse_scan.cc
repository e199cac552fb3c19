// The generic reverse scan (Session::DoScanReverse's default) for designs without a reverse
// path of their own: forward scans of windows below the end, each reaching down further than
// the one before, until the pairs found hold `count` or the range's start is reached; the
// last `count` of them are returned, descending.
//
// A window's start is the end position with one byte lowered: the last byte first, by 1, 4,
// 16 and 64, then to zero, then the byte before it the same way (byte keys: cut after that
// byte, u64 keys: the bytes after it zeroed). Each start is at or below every key between it
// and the one before, and no key arithmetic is needed. Each window scans only what the one
// before did not cover ([new start, old start)), so a batch reads the pairs between its
// lowest key and the first start below it: where keys are dense about 4 times the batch, plus
// one forward scan per window tried (empty ones where keys are sparse below the position);
// where nothing lies below for long, every pair from the range's start (docs/API.md, "Reverse
// iteration"). Each window is read with DoScan: each returned value was current at some
// instant of its read, and a key present for the whole call is returned (as a forward scan's).
#include <algorithm>

#include "dmindex/index.h"

namespace dmindex {
namespace {

constexpr size_t kWindowBatch = 512;
constexpr unsigned kSteps[] = {1, 4, 16, 64, 256};  // how far a byte is lowered; 256: to zero

// The window starts below `end`, highest first, ending with the lowest position.
std::vector<std::string> WindowStarts(const KeyRules& rules, const std::string& end) {
  std::vector<std::string> starts;
  const bool u64 = rules.format == KeyFormat::kU64;
  for (size_t i = end.size(); i-- > 0;) {
    const unsigned byte = static_cast<unsigned char>(end[i]);
    for (unsigned step : kSteps) {
      if (step > byte && step != 256) continue;
      std::string s = end.substr(0, i);
      if (step != 256) s.push_back(static_cast<char>(byte - step));
      if (u64) s.resize(kU64KeyBytes, '\0');
      if (starts.empty() || s < starts.back()) starts.push_back(std::move(s));
    }
  }
  return starts;
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
  std::vector<KeyValue> found;  // the pairs of [covered, end), ascending
  std::optional<std::string> covered;  // where the windows read so far start
  std::vector<KeyValue> window, batch;
  for (const std::string& candidate : WindowStarts(rules(), end)) {
    const std::string from = std::max(candidate, range.start);
    // [from, covered): the pairs below what earlier windows read (the first: up to the end).
    KeyRange part{from, false, covered ? covered : (inclusive ? std::nullopt : std::optional<std::string>(end))};
    window.clear();
    for (bool more = true; more;) {
      batch.clear();
      DMX_RETURN_IF_ERROR(DoScan(part, kWindowBatch, &batch));
      more = batch.size() == kWindowBatch;
      for (KeyValue& kv : batch) {
        if (inclusive && !covered && Slice(kv.key) > Slice(end)) {
          more = false;
          break;
        }
        part.start = kv.key;
        window.push_back(std::move(kv));
      }
      part.after_start = true;
    }
    window.insert(window.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
    found.swap(window);
    covered = from;
    if (found.size() >= count || from == range.start) break;
  }
  const size_t take = std::min(count, found.size());
  out->reserve(take);
  for (size_t i = 0; i < take; ++i) out->push_back(std::move(found[found.size() - 1 - i]));
  return Status::Ok();
}

}  // namespace dmindex
