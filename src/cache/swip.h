// Swip: a child pointer inside a cached inner node. Either the child's remote GlobalAddress
// (unswizzled) or, once the child is cached and swizzled into this parent, a pointer to the
// child's local BufferFrame. The most significant bit tells them apart (DEX §3: pointers are
// [swizzled, memory-server-id, address]); memory node ids therefore stay below 2^15.
//
// Swips live in 8-byte aligned words of cached pages and are read by optimistic readers
// while a writer may change them, so they are loaded and stored as whole atomic words.
#pragma once

#include <atomic>
#include <cstdint>

#include "dmindex/global_address.h"

namespace dmindex::cache {

struct BufferFrame;

class Swip {
 public:
  static constexpr uint64_t kSwizzledBit = uint64_t{1} << 63;

  constexpr Swip() = default;
  static constexpr Swip FromRaw(uint64_t raw) { return Swip(raw); }
  static Swip Remote(GlobalAddress a) { return Swip(a.raw() & ~kSwizzledBit); }
  static Swip Local(const BufferFrame* f) {
    return Swip(reinterpret_cast<uint64_t>(f) | kSwizzledBit);
  }
  // A GlobalAddress can be stored as a swip only if its node id leaves the tag bit free.
  static constexpr bool Representable(GlobalAddress a) { return (a.raw() & kSwizzledBit) == 0; }

  constexpr bool swizzled() const { return (raw_ & kSwizzledBit) != 0; }
  constexpr bool is_null() const { return raw_ == 0; }
  GlobalAddress remote() const { return GlobalAddress::FromRaw(raw_); }  // !swizzled()
  BufferFrame* frame() const { return reinterpret_cast<BufferFrame*>(raw_ & ~kSwizzledBit); }
  constexpr uint64_t raw() const { return raw_; }
  friend constexpr bool operator==(Swip, Swip) = default;

  // Whole-word access to a swip stored in a page (the word must be 8-byte aligned).
  static Swip Load(const uint64_t* slot) {
    return Swip(std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(slot)).load(std::memory_order_acquire));
  }
  static void Store(uint64_t* slot, Swip s) {
    std::atomic_ref<uint64_t>(*slot).store(s.raw_, std::memory_order_release);
  }

 private:
  constexpr explicit Swip(uint64_t raw) : raw_(raw) {}
  uint64_t raw_ = 0;
};

static_assert(sizeof(Swip) == 8);

}  // namespace dmindex::cache
