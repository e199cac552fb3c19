// The public API's keys (byte strings, Slice) and a tree's, per key half of the traits: the
// u64 format's 8 big-endian bytes are an integer (U64Keys), byte keys are themselves
// (BytesKeys). Keys reach a design checked against the index's format (Session's public
// calls), so the conversions check nothing. Every design built on the tree's traits (the core's
// tree_index.cc, DEX) converts through these.
#pragma once

#include <string>
#include <string_view>

#include "common/key_text.h"
#include "common/u64.h"
#include "tree/scan_range.h"

namespace dmindex::tree {

template <typename Keys>
struct PublicKeys;

template <>
struct PublicKeys<U64Keys> {
  static u64::Key Tree(Slice k) { return u64::Decode(k); }
  static std::string Public(u64::Key k) { return u64::Encode(k); }
  static KeyRangeOf<U64Keys> Range(const KeyRange& r) { return ToScanRange(r); }
  // The lowest position a route of this format starts at (the smallest user key).
  static u64::Key Lowest() { return u64::kMinKey; }
  static std::string Text(u64::Key k) { return std::to_string(k); }
};

template <>
struct PublicKeys<BytesKeys> {
  static std::string_view Tree(Slice k) { return k; }
  static std::string Public(std::string_view k) { return std::string(k); }
  static KeyRangeOf<BytesKeys> Range(const KeyRange& r) {
    return {std::string(r.start), r.after_start, r.end ? std::string(*r.end) : BytesKeys::kPosInf};
  }
  static std::string Lowest() { return BytesKeys::kNegInf; }  // the empty string: below every key
  static std::string Text(std::string_view k) { return KeyText(k); }
};

}  // namespace dmindex::tree
