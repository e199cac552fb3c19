// What the learned models see of a key: an order-preserving 64-bit number (a "model key").
// Projections are weakly monotone - k1 < k2 implies Project(k1) <= Project(k2) - so a
// monotone model over model keys is monotone over keys; distinct keys may share a model key
// (the models then cannot tell them apart: their error bounds cover all of them).
//
//   u64 keys:   the integer itself (exact).
//   byte keys:  relative to a prefix P that the keys of interest share (their common prefix)
//               and an alphabet A (the byte values they use after it): a key starting with P
//               gives the bytes after P as the digits of a number in base |A| + 1 - each byte
//               its rank in A plus one, 0 where the key has ended - as many digits as fit in
//               64 bits (8 for all 256 byte values, 18 for the 10 digits of YCSB's
//               user<number> keys). A key below every key starting with P gives 0, a key
//               above all of them 2^64-1; a byte outside A gives the largest number of the
//               keys whose byte there is the next smaller one of A (the rest of its digits at
//               their maximum), so the projection stays weakly monotone over all byte strings,
//               also over keys inserted later with bytes training never saw.
// Why the alphabet: keys built of a few byte values (ASCII digits: 10 of 256) projected byte
// by byte fill a 64-bit range in clumps - 10 values used of every 256 at each byte - so a
// line over them is far off everywhere, and a linear top model sends most keys to a few
// sub-models (YCSB keys: 0.87 of the lookups fell back to the server). In base |A| + 1 every
// digit is used: numbers of one length project linearly.
// With 0x00 in A the end of a key and a 0x00 byte share digit 0 (as zero padding): weakly
// monotone still, and with all 256 values the projection is the 8 bytes after P, big-endian.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace dmindex::learned {

using ModelKey = uint64_t;
inline constexpr ModelKey kMaxModelKey = UINT64_MAX;

inline ModelKey ProjectU64(uint64_t key) { return key; }

class BytesProjection {
 public:
  // 256 bits, one per byte value.
  using Alphabet = std::array<uint64_t, 4>;
  static constexpr Alphabet kAllBytes = {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}};

  BytesProjection() : BytesProjection(std::string()) {}
  explicit BytesProjection(std::string prefix, const Alphabet& alphabet = kAllBytes);
  // The projection relative to the common prefix of `lo` and `hi` (the smallest and largest
  // key of a set share every byte of it with the keys between them), over all byte values.
  static BytesProjection Spanning(std::string_view lo, std::string_view hi);
  // The projection for a set of keys, ascending: their common prefix and the byte values
  // they use in the digits after it.
  static BytesProjection Fitted(std::span<const std::string> sorted);

  ModelKey operator()(std::string_view key) const;
  const std::string& prefix() const { return prefix_; }
  const Alphabet& alphabet() const { return alphabet_; }
  // Digits after the prefix that the model key holds.
  uint32_t digits() const { return digits_; }
  // A byte string at or below every key whose model key is `x` or more (the empty one for 0):
  // a walk over the keys of an interval of model keys can start at the key it returns.
  std::string SmallestKeyAt(ModelKey x) const;

 private:
  std::string prefix_;
  Alphabet alphabet_{};
  uint64_t base_ = 256;
  uint32_t digits_ = 8;
  // Per byte value: its digit, and whether it is outside the alphabet (the digits after it
  // saturate).
  std::array<uint16_t, 256> digit_{};
  std::array<bool, 256> outside_{};
  std::array<uint8_t, 257> byte_of_{};  // per digit: the byte of the alphabet it stands for
  bool zero_in_alphabet_ = true;
};

}  // namespace dmindex::learned
