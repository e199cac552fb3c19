#include "learned/key_projection.h"

#include <algorithm>

namespace dmindex::learned {

BytesProjection BytesProjection::Spanning(std::string_view lo, std::string_view hi) {
  const size_t n = std::min(lo.size(), hi.size());
  size_t common = 0;
  while (common < n && lo[common] == hi[common]) ++common;
  return BytesProjection(std::string(lo.substr(0, common)));
}

ModelKey BytesProjection::operator()(std::string_view key) const {
  if (key.substr(0, prefix_.size()) != prefix_)  // outside the prefix's range: saturate
    return key < std::string_view(prefix_) ? 0 : kMaxModelKey;
  ModelKey x = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t at = prefix_.size() + i;
    x = x << 8 | (at < key.size() ? static_cast<uint8_t>(key[at]) : 0);
  }
  return x;
}

std::string BytesProjection::SmallestKeyAt(ModelKey x) const {
  if (x == 0) return {};
  std::string key = prefix_;
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>((x >> shift) & 0xff));
  while (key.size() > prefix_.size() && key.back() == '\0') key.pop_back();  // zero padding is implied
  return key;
}

}  // namespace dmindex::learned
