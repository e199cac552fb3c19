// GlobalAddress: a 64-bit pointer into the disaggregated memory pool.
// High 16 bits name the memory node, low 48 bits the byte offset inside its pool.
// The all-zero value is null; no node ever hands out offset 0 (see pool_layout.h),
// so freshly zeroed remote memory reads as null pointers.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace dmindex {

class GlobalAddress {
 public:
  static constexpr int kOffsetBits = 48;
  static constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;

  constexpr GlobalAddress() = default;
  constexpr GlobalAddress(uint16_t node, uint64_t offset)
      : raw_((uint64_t{node} << kOffsetBits) | (offset & kOffsetMask)) {}
  static constexpr GlobalAddress FromRaw(uint64_t raw) {
    GlobalAddress a;
    a.raw_ = raw;
    return a;
  }
  static constexpr GlobalAddress Null() { return {}; }

  constexpr uint16_t node() const { return static_cast<uint16_t>(raw_ >> kOffsetBits); }
  constexpr uint64_t offset() const { return raw_ & kOffsetMask; }
  constexpr uint64_t raw() const { return raw_; }
  constexpr bool is_null() const { return raw_ == 0; }
  constexpr explicit operator bool() const { return raw_ != 0; }

  constexpr GlobalAddress operator+(uint64_t delta) const { return {node(), offset() + delta}; }
  friend constexpr bool operator==(GlobalAddress a, GlobalAddress b) = default;
  friend constexpr auto operator<=>(GlobalAddress a, GlobalAddress b) { return a.raw_ <=> b.raw_; }

  std::string ToString() const;  // "null" or "node:0xoffset"

 private:
  uint64_t raw_ = 0;
};

static_assert(sizeof(GlobalAddress) == 8, "GlobalAddress must fit one RDMA atomic word");

inline std::ostream& operator<<(std::ostream& os, GlobalAddress a) { return os << a.ToString(); }

}  // namespace dmindex

template <>
struct std::hash<dmindex::GlobalAddress> {
  size_t operator()(dmindex::GlobalAddress a) const noexcept {
    // Fibonacci hashing: node offsets are 64-byte aligned, so the low bits carry no entropy.
    return static_cast<size_t>(a.raw() * 0x9E3779B97F4A7C15ull);
  }
};
