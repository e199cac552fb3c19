// How XStore's code sees the keys of a tree format (U64BytesKV: 8-byte integers; BytesKV:
// byte strings): their public bytes (the superblock's boundaries, RPCs), and what the learned
// models see of them (learned/key_projection.h): the integer itself, or the digits after the
// prefix in the alphabet the model set was trained with (both kept in the model set).
#pragma once

#include <span>
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
  using Alphabet = learned::BytesProjection::Alphabet;
  // The u64 format needs no projection: a key is its own model key.
  static KeyModel Fitted(std::span<const Key>) { return KeyModel(); }

  explicit KeyModel(const std::string& /*prefix*/ = {}, const Alphabet& = learned::BytesProjection::kAllBytes) {}
  learned::ModelKey operator()(Key k) const { return learned::ProjectU64(k); }
  // The largest model key a leaf with this (exclusive) high fence holds.
  learned::ModelKey High(Key high) const { return high == tree::U64Keys::kPosInf ? learned::kMaxModelKey : high - 1; }
  Key SmallestKeyAt(learned::ModelKey x) const { return x; }
  const std::string& prefix() const { return empty_; }
  const Alphabet& alphabet() const { return learned::BytesProjection::kAllBytes; }

 private:
  std::string empty_;
};

template <>
struct KeyModel<tree::BytesKV> {
  using Key = std::string;
  static Key FromPublic(std::string_view s) { return Key(s); }
  static std::string ToPublic(const Key& k) { return k; }
  using Alphabet = learned::BytesProjection::Alphabet;
  // The projection for a model set over `sorted` keys: their common prefix and alphabet.
  static KeyModel Fitted(std::span<const Key> sorted) { return KeyModel(learned::BytesProjection::Fitted(sorted)); }

  explicit KeyModel(const std::string& prefix = {}, const Alphabet& alphabet = learned::BytesProjection::kAllBytes)
      : projection_(prefix, alphabet) {}
  explicit KeyModel(learned::BytesProjection projection) : projection_(std::move(projection)) {}
  learned::ModelKey operator()(std::string_view k) const { return projection_(k); }
  // The empty high fence is +inf; any other is an upper bound of the leaf's keys.
  learned::ModelKey High(const Key& high) const { return high.empty() ? learned::kMaxModelKey : projection_(high); }
  Key SmallestKeyAt(learned::ModelKey x) const { return projection_.SmallestKeyAt(x); }
  const std::string& prefix() const { return projection_.prefix(); }
  const Alphabet& alphabet() const { return projection_.alphabet(); }

 private:
  learned::BytesProjection projection_;
};

}  // namespace dmindex::designs::xstore
