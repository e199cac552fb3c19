// The keys a tree scan returns: from `start` (or after it: an iterator continuing after the
// last key it returned) up to `end`, exclusive (kPosInf: no end; KV::Below says so).
#pragma once

#include "common/u64.h"
#include "tree/key_traits.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
struct ScanRange {
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  Key start = KV::kNegInf;
  bool after_start = false;
  Key end = KV::kPosInf;

  // Left of the range: a scan skips it.
  bool Before(KeyRef k) const { return k < start || (after_start && k == start); }
  // At or beyond the end: a scan stops there.
  bool Beyond(KeyRef k) const { return !KV::Below(k, end); }
};

// The tree's range of a public one of the u64 format (8-byte positions, checked by Session).
inline ScanRange<U64KV> ToScanRange(const KeyRange& r) {
  return {u64::Decode(r.start), r.after_start, r.end ? u64::Decode(*r.end) : U64KV::kPosInf};
}

}  // namespace dmindex::tree
