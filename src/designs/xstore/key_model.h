// How XStore's code sees the keys of a tree format (U64BytesKV: 8-byte integers; BytesKV:
// byte strings): their public bytes (the superblock's boundaries, RPCs), and what the learned
// models see of them (learned/key_projection.h): the integer itself, or the 8 bytes after the
// prefix the model set was trained with.
#pragma once

#include <string>
#include <string_view>

#include "common/u64.h"
#include "learned/key_projection.h"
#include "tree/key_traits.h"

namespace dmindex::designs::xstore {

template <typename KV>
struct KeyModel;

template <>
struct KeyModel<tree::U64BytesKV> {
  using Key = uint64_t;
  static Key FromPublic(std::string_view s) { return s.empty() ? Key{0} : u64::Decode(s); }
  static std::string ToPublic(Key k) { return u64::Encode(k); }
  // The u64 format needs no prefix: a key is its own model key.
  static std::string PrefixOf(const Key&, const Key&) { return {}; }

  explicit KeyModel(const std::string& /*prefix*/ = {}) {}
  learned::ModelKey operator()(Key k) const { return learned::ProjectU64(k); }
  // The largest model key a leaf with this (exclusive) high fence holds.
  learned::ModelKey High(Key high) const { return high == tree::U64Keys::kPosInf ? learned::kMaxModelKey : high - 1; }
  Key SmallestKeyAt(learned::ModelKey x) const { return x; }
  const std::string& prefix() const { return empty_; }

 private:
  std::string empty_;
};

template <>
struct KeyModel<tree::BytesKV> {
  using Key = std::string;
  static Key FromPublic(std::string_view s) { return Key(s); }
  static std::string ToPublic(const Key& k) { return k; }
  static std::string PrefixOf(const Key& lo, const Key& hi) {
    return learned::BytesProjection::Spanning(lo, hi).prefix();
  }

  explicit KeyModel(const std::string& prefix = {}) : projection_(prefix) {}
  learned::ModelKey operator()(std::string_view k) const { return projection_(k); }
  // The empty high fence is +inf; any other is an upper bound of the leaf's keys.
  learned::ModelKey High(const Key& high) const { return high.empty() ? learned::kMaxModelKey : projection_(high); }
  Key SmallestKeyAt(learned::ModelKey x) const { return projection_.SmallestKeyAt(x); }
  const std::string& prefix() const { return projection_.prefix(); }

 private:
  learned::BytesProjection projection_;
};

}  // namespace dmindex::designs::xstore
