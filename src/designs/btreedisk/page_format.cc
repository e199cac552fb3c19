#include "designs/btreedisk/page_format.h"

namespace dmindex::designs::btreedisk {
namespace {

void PutWord(std::byte* out, uint32_t off, uint64_t w) { std::memcpy(out + off, &w, 8); }

uint64_t HeaderWord(uint16_t level, uint16_t count, uint32_t heap_top) {
  return uint64_t{level} | uint64_t{count} << 16 | uint64_t{heap_top} << 32;
}

// Places `bytes` at the top of the heap (which grows down from the page's end).
uint32_t Place(std::byte* out, uint32_t* heap_top, const void* bytes, size_t len) {
  *heap_top -= Pad8(len);
  if (len > 0) std::memcpy(out + *heap_top, bytes, len);
  return *heap_top;
}

}  // namespace

void EncodeLeaf(const std::vector<LeafEntry>& entries, uint32_t page_bytes, std::byte* out) {
  std::memset(out, 0, page_bytes);
  uint32_t heap = page_bytes;
  for (uint32_t i = 0; i < entries.size(); ++i) {
    const LeafEntry& e = entries[i];
    const uint32_t koff = Place(out, &heap, e.key.data(), e.key.size());
    uint64_t vdir;
    if (e.value.out_of_line) {
      const uint64_t ref[2] = {e.value.log_offset, e.value.log_length};
      vdir = Place(out, &heap, ref, 16) | kOutOfLine;
    } else {
      vdir = Place(out, &heap, e.value.inline_bytes.data(), e.value.inline_bytes.size()) |
             uint64_t{e.value.inline_bytes.size()} << 32;
    }
    PutWord(out, kHeaderBytes + 16 * i, koff | uint64_t{e.key.size()} << 32);
    PutWord(out, kHeaderBytes + 16 * i + 8, vdir);
  }
  PutWord(out, 0, HeaderWord(0, static_cast<uint16_t>(entries.size()), heap));
}

void EncodeInner(uint16_t level, const std::vector<std::string>& separators, const std::vector<uint64_t>& children,
                 uint32_t page_bytes, std::byte* out) {
  std::memset(out, 0, page_bytes);
  uint32_t heap = page_bytes;
  const uint32_t dir = kHeaderBytes + 8 * MaxChildren(page_bytes);
  for (uint32_t i = 0; i < children.size(); ++i) PutWord(out, kHeaderBytes + 8 * i, children[i]);
  for (uint32_t i = 0; i < separators.size(); ++i) {
    const uint32_t off = Place(out, &heap, separators[i].data(), separators[i].size());
    PutWord(out, dir + 8 * i, off | uint64_t{separators[i].size()} << 32);
  }
  PutWord(out, 0, HeaderWord(level, static_cast<uint16_t>(separators.size()), heap));
}

void EncodeMeta(uint64_t root, uint16_t root_level, uint32_t page_bytes, std::byte* out) {
  std::memset(out, 0, page_bytes);
  PutWord(out, 0, HeaderWord(kMetaLevel, 0, page_bytes));
  PutWord(out, 8, root_level);
  PutWord(out, kHeaderBytes, root);
}

}  // namespace dmindex::designs::btreedisk
