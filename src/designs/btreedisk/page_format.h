// The pages of btree-disk's B+-tree (paged_tree.h): slotted pages of `page_bytes`, read from
// a private copy (cached pages change under optimistic readers: cache/page_io.h) and written
// by re-encoding a whole page under the frame's exclusive latch.
//
//   header (16 B)  word 0: level (u16) | count (u16) | heap_top (u32); word 1: aux (the meta
//                  page: the root's level)
//   inner          child words at 16 + 8 i for i <= count (8-byte aligned: the cache swizzles
//                  them), capacity MaxChildren(); then one directory word per separator
//                  (offset | length << 32); separator bytes in a heap at the page's end
//   leaf           two directory words per entry (key offset | key length << 32; value offset
//                  | value length << 32, the top bit set for a value kept out of line, whose
//                  heap bytes are then its 16-byte reference into the value log), heap at the end
// Heap items are padded to 8 bytes. The meta page above the root is an inner page of level
// kMetaLevel with no separators and one child, the root.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace dmindex::designs::btreedisk {

inline constexpr uint16_t kMetaLevel = 0xffff;
inline constexpr uint32_t kHeaderBytes = 16;
inline constexpr uint64_t kOutOfLine = uint64_t{1} << 63;

inline uint32_t Pad8(size_t n) { return static_cast<uint32_t>((n + 7) & ~size_t{7}); }
inline uint32_t MaxChildren(uint32_t page_bytes) { return (page_bytes - kHeaderBytes) / 32; }

// A value as a leaf keeps it: its bytes, or where the value log holds them.
struct StoredValue {
  bool out_of_line = false;
  std::string inline_bytes;
  uint64_t log_offset = 0;
  uint64_t log_length = 0;
  uint32_t stored_bytes() const { return out_of_line ? 16 : Pad8(inline_bytes.size()); }
};

struct LeafEntry {
  std::string key;
  StoredValue value;
};

// A decoded private copy of a page.
class PageView {
 public:
  PageView(const std::byte* copy, uint32_t page_bytes) : p_(copy), page_bytes_(page_bytes) {}

  uint16_t level() const { return static_cast<uint16_t>(Word(0)); }
  uint16_t count() const { return static_cast<uint16_t>(Word(0) >> 16); }
  uint64_t aux() const { return Word(8); }
  bool is_leaf() const { return level() == 0; }

  // Inner pages.
  uint64_t child(uint32_t i) const { return Word(kHeaderBytes + 8 * i); }
  std::string_view separator(uint32_t i) const { return Bytes(Word(SeparatorDir(i))); }
  // The child covering `key`: the number of separators <= key.
  uint32_t ChildIndex(std::string_view key) const {
    uint32_t lo = 0, hi = count();
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (separator(mid) <= key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // Leaf pages.
  std::string_view key(uint32_t i) const { return Bytes(Word(kHeaderBytes + 16 * i)); }
  StoredValue value(uint32_t i) const {
    const uint64_t d = Word(kHeaderBytes + 16 * i + 8);
    StoredValue v;
    v.out_of_line = (d & kOutOfLine) != 0;
    const uint32_t off = static_cast<uint32_t>(d);
    if (v.out_of_line) {
      std::memcpy(&v.log_offset, p_ + off, 8);
      std::memcpy(&v.log_length, p_ + off + 8, 8);
    } else {
      v.inline_bytes.assign(reinterpret_cast<const char*>(p_ + off), (d & ~kOutOfLine) >> 32);
    }
    return v;
  }
  // The first entry with key >= k (count() if none); *found if equal.
  uint32_t LowerBound(std::string_view k, bool* found) const {
    uint32_t lo = 0, hi = count();
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (key(mid) < k) lo = mid + 1;
      else hi = mid;
    }
    *found = lo < count() && key(lo) == k;
    return lo;
  }
  std::vector<LeafEntry> Entries() const {
    std::vector<LeafEntry> out(count());
    for (uint32_t i = 0; i < count(); ++i) out[i] = {std::string(key(i)), value(i)};
    return out;
  }

  // Whether the copy is one a torn read could not have produced: only then may it be decoded
  // (the caller validates the latch too; this keeps a bad count from reading out of bounds).
  bool Plausible() const {
    const uint32_t n = count();
    if (level() == kMetaLevel) return n == 0;
    if (level() > 0) return n + 1 <= MaxChildren(page_bytes_);
    return kHeaderBytes + 16ull * n <= page_bytes_;
  }

 private:
  uint32_t SeparatorDir(uint32_t i) const { return kHeaderBytes + 8 * MaxChildren(page_bytes_) + 8 * i; }
  uint64_t Word(uint32_t off) const {
    uint64_t w;
    std::memcpy(&w, p_ + off, 8);
    return w;
  }
  std::string_view Bytes(uint64_t dir) const {
    const uint32_t off = static_cast<uint32_t>(dir), len = static_cast<uint32_t>(dir >> 32);
    if (off + static_cast<uint64_t>(len) > page_bytes_) return {};
    return {reinterpret_cast<const char*>(p_ + off), len};
  }

  const std::byte* p_;
  const uint32_t page_bytes_;
};

// Bytes a leaf needs for these entries; a page holds them if it is at most page_bytes.
inline uint64_t LeafBytes(const std::vector<LeafEntry>& entries) {
  uint64_t b = kHeaderBytes;
  for (const LeafEntry& e : entries) b += 16 + Pad8(e.key.size()) + e.value.stored_bytes();
  return b;
}
inline uint64_t InnerBytes(uint32_t page_bytes, const std::vector<std::string>& separators) {
  uint64_t b = kHeaderBytes + 16ull * MaxChildren(page_bytes);
  for (const std::string& s : separators) b += Pad8(s.size());
  return b;
}

// Writes a whole page into `out` (page_bytes, zeroed first).
void EncodeLeaf(const std::vector<LeafEntry>& entries, uint32_t page_bytes, std::byte* out);
void EncodeInner(uint16_t level, const std::vector<std::string>& separators, const std::vector<uint64_t>& children,
                 uint32_t page_bytes, std::byte* out);
// The meta page: no separators, the root's word in child slot 0, the root's level in aux.
void EncodeMeta(uint64_t root, uint16_t root_level, uint32_t page_bytes, std::byte* out);

}  // namespace dmindex::designs::btreedisk
