// Leaf: one key and its value in the ART, a separate allocation reached by a tagged child
// pointer (lazy expansion stores it at the first depth where its key is unique). Key and value
// are immutable once the leaf is published: an update publishes a new leaf and retires the old
// one through the epochs, so a reader holding a leaf pointer reads a consistent pair without
// validation. Only `flags` changes, by compare-and-swap:
//
//   kDirty     X's value (or deletion) is not yet in Y
//   kInY       Y may hold a copy of the key (possibly older); 0: Y certainly has none
//   kTombstone the key is deleted; kept in X until Y has the deletion too
//   kCleaning  a cleaner took this leaf's value for a Y write still in flight
//   kObsolete  the leaf was unlinked from the tree (replaced or removed)
//
// The CAS on flags is what orders writers and cleaners without the node lock: a writer that
// replaces or removes a leaf first sets kObsolete (reading kInY in the same step), and a
// cleaner sets kInY|kCleaning only on a leaf that is not obsolete, so each sees the other.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>

namespace dmindex::art {

namespace leaf_flags {
inline constexpr uint32_t kDirty = 1;
inline constexpr uint32_t kInY = 2;
inline constexpr uint32_t kTombstone = 4;
inline constexpr uint32_t kCleaning = 8;
inline constexpr uint32_t kObsolete = 16;
}  // namespace leaf_flags

class Leaf {
 public:
  // Bytes of a leaf holding this key and value (the allocation, a multiple of 8).
  static size_t SizeFor(size_t key_bytes, size_t value_bytes) {
    return (offsetof(Leaf, data_) + key_bytes + value_bytes + 7) & ~size_t{7};
  }
  static Leaf* Create(std::string_view key, std::string_view value, uint32_t flags) {
    void* mem = ::operator new(SizeFor(key.size(), value.size()), std::align_val_t{8});
    return new (mem) Leaf(key, value, flags);
  }
  static void Destroy(Leaf* leaf) {
    leaf->~Leaf();
    ::operator delete(leaf, std::align_val_t{8});
  }

  std::string_view key() const { return {data_, key_bytes_}; }
  std::string_view value() const { return {data_ + key_bytes_, value_bytes_}; }
  size_t bytes() const { return SizeFor(key_bytes_, value_bytes_); }

  uint32_t flags() const { return flags_.load(std::memory_order_acquire); }
  bool CasFlags(uint32_t& expected, uint32_t desired) {
    return flags_.compare_exchange_strong(expected, desired, std::memory_order_acq_rel);
  }

 private:
  Leaf(std::string_view key, std::string_view value, uint32_t flags)
      : flags_(flags), key_bytes_(static_cast<uint32_t>(key.size())), value_bytes_(static_cast<uint32_t>(value.size())) {
    // An empty view may have a null data(): memcpy from null is undefined even for 0 bytes.
    if (!key.empty()) std::memcpy(data_, key.data(), key.size());
    if (!value.empty()) std::memcpy(data_ + key.size(), value.data(), value.size());
  }

  std::atomic<uint32_t> flags_;
  const uint32_t key_bytes_;
  const uint32_t value_bytes_;
  char data_[];  // key, then value
};

}  // namespace dmindex::art
