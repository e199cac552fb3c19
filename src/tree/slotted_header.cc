#include "tree/slotted_header.h"

#include "tree/node_check.h"
#include "tree/slotted_keys.h"

namespace dmindex::tree {

void SlottedHeaderCodec::Place(Header* h) {
  h->prefix = static_cast<uint16_t>(slotted::FencePrefix(h->low, h->high));
  h->slots_off = static_cast<uint16_t>(L::SlotsOffset(h->low.size(), h->high.size() - h->prefix));
}

void SlottedHeaderCodec::Write(const Header& h, std::byte* image) {
  std::memset(image, 0, h.slots_off);
  const bool high_inf = h.high.empty();
  const uint8_t flags = static_cast<uint8_t>((h.flags & ~kFlagHighInf) | (high_inf ? kFlagHighInf : 0));
  const uint64_t high_len = h.high.size() - h.prefix;
  StoreAt(image, L::kVersionOff, h.version);
  StoreAt(image, L::kMetaOff,
          uint64_t{h.level} | (uint64_t{flags} << 8) | (uint64_t{h.count} << 16) |
              (uint64_t{h.low.size()} << 32) | (high_len << 48));
  StoreAt(image, L::kSiblingOff, h.sibling.raw());
  StoreAt(image, L::kLeftmostOff, h.is_leaf() ? h.incarnation : h.leftmost.raw());
  StoreAt(image, L::kBodyCheckOff, h.body_check);
  StoreAt(image, L::kFenceWordOff, uint64_t{h.prefix} | (uint64_t{h.heap_off} << 32));
  std::memcpy(image + L::kFencesOff, h.low.data(), h.low.size());
  std::memcpy(image + L::kFencesOff + h.low.size(), h.high.data() + h.prefix, high_len);
  StoreAt(image, L::kCheckOff, HeaderCheck(image + 8, h.slots_off - 8));
}

bool SlottedHeaderCodec::Read(const std::byte* image, Header* h, bool validate) const {
  const uint64_t meta = LoadAt<uint64_t>(image, L::kMetaOff);
  const uint64_t fence_word = LoadAt<uint64_t>(image, L::kFenceWordOff);
  const uint32_t low_len = static_cast<uint32_t>((meta >> 32) & 0xffff);
  const uint32_t high_len = static_cast<uint32_t>(meta >> 48);
  const uint32_t prefix = static_cast<uint32_t>(fence_word & 0xffff);
  const uint32_t heap_off = static_cast<uint32_t>(fence_word >> 32);
  const uint8_t level = static_cast<uint8_t>(meta);
  const uint8_t flags = static_cast<uint8_t>(meta >> 8);
  const uint16_t count = static_cast<uint16_t>(meta >> 16);
  const bool high_inf = (flags & kFlagHighInf) != 0;
  // Bounds first: a torn or foreign header must not send the reader outside the image.
  if (prefix > low_len || (high_inf && (high_len != 0 || prefix != 0))) return false;
  if (!high_inf && prefix + high_len == 0) return false;  // a finite high fence is never empty
  const uint32_t slots_off = L::SlotsOffset(low_len, high_len);
  const uint64_t slots_end = uint64_t{slots_off} + uint64_t{count} * L::kSlotBytes;
  if (slots_end > content_end_) return false;
  if (level > 0 && (heap_off < slots_end || heap_off > content_end_)) return false;
  if (validate && LoadAt<uint64_t>(image, L::kCheckOff) != HeaderCheck(image + 8, slots_off - 8))
    return false;
  h->version = LoadAt<uint64_t>(image, L::kVersionOff);
  h->level = level;
  h->flags = flags;
  h->count = count;
  h->sibling = GlobalAddress::FromRaw(LoadAt<uint64_t>(image, L::kSiblingOff));
  const uint64_t leftmost = LoadAt<uint64_t>(image, L::kLeftmostOff);
  h->leftmost = level == 0 ? GlobalAddress::Null() : GlobalAddress::FromRaw(leftmost);
  h->incarnation = level == 0 ? leftmost : 0;
  h->body_check = LoadAt<uint64_t>(image, L::kBodyCheckOff);
  const char* fences = reinterpret_cast<const char*>(image + L::kFencesOff);
  h->low.assign(fences, low_len);
  h->high.assign(fences, high_inf ? 0 : prefix);
  h->high.append(fences + low_len, high_len);
  h->prefix = static_cast<uint16_t>(prefix);
  h->slots_off = static_cast<uint16_t>(slots_off);
  h->heap_off = level > 0 ? heap_off : 0;
  return true;
}

}  // namespace dmindex::tree
