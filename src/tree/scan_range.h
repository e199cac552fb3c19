// The keys a tree scan returns: from `start` (or after it: an iterator continuing after the
// last key it returned) up to `end`, exclusive (kPosInf: no end; KV::Below says so).
#pragma once

#include "common/u64.h"
#include "tree/key_traits.h"

namespace dmindex::tree {

// A range depends on the keys only (U64BytesKV and U64KV share theirs).
template <typename Keys>
struct KeyRangeOf {
  using Key = typename Keys::Key;
  using KeyRef = typename Keys::KeyRef;
  Key start = Keys::kNegInf;
  bool after_start = false;
  Key end = Keys::kPosInf;

  // Left of the range: a scan skips it.
  bool Before(KeyRef k) const { return k < start || (after_start && k == start); }
  // At or beyond the end: a scan stops there.
  bool Beyond(KeyRef k) const { return !Keys::Below(k, end); }
};

template <KeyValueTraits KV>
using ScanRange = KeyRangeOf<typename KV::Keys>;

// The tree's range of a public one of the u64 format (8-byte positions, checked by Session).
inline ScanRange<U64BytesKV> ToScanRange(const KeyRange& r) {
  return {u64::Decode(r.start), r.after_start, r.end ? u64::Decode(*r.end) : U64BytesKV::kPosInf};
}

}  // namespace dmindex::tree
