#include "learned/key_projection.h"

#include <algorithm>

namespace dmindex::learned {
namespace {

bool Has(const BytesProjection::Alphabet& a, uint8_t b) { return (a[b >> 6] >> (b & 63)) & 1; }

// Most digits a model key can hold after the prefix, however small the alphabet (base 2).
constexpr size_t kMaxDigits = 64;

}  // namespace

BytesProjection::BytesProjection(std::string prefix, const Alphabet& alphabet)
    : prefix_(std::move(prefix)), alphabet_(alphabet) {
  zero_in_alphabet_ = Has(alphabet_, 0);
  // Digit 0 is the end of a key (shared with byte 0x00 if the alphabet has it); the bytes of
  // the alphabet take the following digits in order.
  const uint16_t first = zero_in_alphabet_ ? 0 : 1;
  uint16_t next = first;  // the digit of the next byte of the alphabet
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    if (Has(alphabet_, byte)) {
      digit_[byte] = next;
      byte_of_[next] = byte;
      outside_[byte] = false;
      ++next;
    } else {
      // Between the alphabet's bytes below it and those above: the largest number of the
      // keys whose byte here is the next smaller one of the alphabet (or that end here).
      digit_[byte] = next == 0 ? 0 : static_cast<uint16_t>(next - 1);
      outside_[byte] = true;
    }
  }
  base_ = std::max<uint64_t>(2, next);
  digits_ = 0;
  for (unsigned __int128 span = base_; span <= (static_cast<unsigned __int128>(1) << 64); span *= base_) ++digits_;
}

BytesProjection BytesProjection::Spanning(std::string_view lo, std::string_view hi) {
  const size_t n = std::min(lo.size(), hi.size());
  size_t common = 0;
  while (common < n && lo[common] == hi[common]) ++common;
  return BytesProjection(std::string(lo.substr(0, common)));
}

BytesProjection BytesProjection::Fitted(std::span<const std::string> sorted) {
  if (sorted.empty()) return BytesProjection();
  const std::string prefix = Spanning(sorted.front(), sorted.back()).prefix();
  Alphabet a{};
  for (const std::string& k : sorted)
    for (size_t i = prefix.size(); i < std::min(k.size(), prefix.size() + kMaxDigits); ++i) {
      const auto b = static_cast<uint8_t>(k[i]);
      a[b >> 6] |= uint64_t{1} << (b & 63);
    }
  if (a == Alphabet{}) a = kAllBytes;  // every key is the prefix itself: nothing to learn
  return BytesProjection(prefix, a);
}

ModelKey BytesProjection::operator()(std::string_view key) const {
  if (key.substr(0, prefix_.size()) != prefix_)  // outside the prefix's range: saturate
    return key < std::string_view(prefix_) ? 0 : kMaxModelKey;
  ModelKey x = 0;
  bool saturated = false;
  for (size_t i = 0; i < digits_; ++i) {
    const size_t at = prefix_.size() + i;
    uint64_t d = 0;
    if (saturated) {
      d = base_ - 1;
    } else if (at < key.size()) {
      const auto b = static_cast<uint8_t>(key[at]);
      d = digit_[b];
      saturated = outside_[b];
    }
    x = x * base_ + d;
  }
  return x;
}

std::string BytesProjection::SmallestKeyAt(ModelKey x) const {
  if (x == 0) return {};
  std::array<uint16_t, kMaxDigits> d{};
  for (size_t i = digits_; i-- > 0;) {
    d[i] = static_cast<uint16_t>(x % base_);
    x /= base_;
  }
  // The alphabet's bytes the digits stand for, up to the first digit that ends a key. Any
  // key with a model key >= x agrees with them up to where it is larger, or is larger where a
  // byte outside the alphabet saturates its digits (key_projection.h): it sorts at or after.
  std::string key = prefix_;
  for (size_t i = 0; i < digits_; ++i) {
    if (d[i] == 0 && !zero_in_alphabet_) break;
    key.push_back(static_cast<char>(byte_of_[d[i]]));
  }
  while (zero_in_alphabet_ && key.size() > prefix_.size() && key.back() == '\0') key.pop_back();  // zero padding
  return key;
}

}  // namespace dmindex::learned
