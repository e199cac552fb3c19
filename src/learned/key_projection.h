// What the learned models see of a key: an order-preserving 64-bit number (a "model key").
// Projections are weakly monotone - k1 < k2 implies Project(k1) <= Project(k2) - so a
// monotone model over model keys is monotone over keys; distinct keys may share a model key
// (the models then cannot tell them apart: their error bounds cover all of them, see rmi.h).
//
//   u64 keys:   the integer itself (exact).
//   byte keys:  relative to a prefix P that the keys of interest share (their common prefix):
//               a key starting with P gives the 8 bytes after P as a big-endian integer,
//               zero-padded if shorter; a key below every key starting with P gives 0, a key
//               above all of them 2^64-1. The keys starting with P are one contiguous range
//               in byte order, so this is weakly monotone over all byte strings, also over
//               keys inserted later that do not share P (they saturate).
// Why 8 bytes after the common prefix: the prefix carries no information within the set, and
// the next bytes are where keys of an ordered set differ first; a wider window would need
// more than 64 bits. Keys that agree on those 8 bytes collide (e.g. "user" + a long common
// run of digits); docs/XSTORE.md says what that costs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dmindex::learned {

using ModelKey = uint64_t;
inline constexpr ModelKey kMaxModelKey = UINT64_MAX;

inline ModelKey ProjectU64(uint64_t key) { return key; }

class BytesProjection {
 public:
  BytesProjection() = default;
  explicit BytesProjection(std::string prefix) : prefix_(std::move(prefix)) {}
  // The projection relative to the common prefix of `lo` and `hi` (the smallest and largest
  // key of a set share every byte of it with the keys between them).
  static BytesProjection Spanning(std::string_view lo, std::string_view hi);

  ModelKey operator()(std::string_view key) const;
  const std::string& prefix() const { return prefix_; }
  // The smallest byte string whose model key is `x` (the empty one for 0): every key whose
  // model key is x or more sorts at or after it, so a walk over the keys of an interval of
  // model keys can start at the key it returns.
  std::string SmallestKeyAt(ModelKey x) const;

 private:
  std::string prefix_;
};

}  // namespace dmindex::learned
