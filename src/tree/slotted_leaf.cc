#include "tree/slotted_leaf.h"

#include <algorithm>
#include <limits>

#include "tree/node_check.h"

namespace dmindex::tree {

using slotted::SlotWord;

uint64_t SlottedLeafCodec::CheckWord(uint64_t word, const std::byte* record, uint32_t record_len,
                                     uint64_t version, uint32_t slot, bool tomb) {
  return (RecordCheck(word, record, record_len, version, slot, tomb) & ~kTombBit) | (tomb ? kTombBit : 0);
}

bool SlottedLeafCodec::RecordOf(const std::byte* image, const Header& h, uint64_t word,
                                uint32_t* offset, uint32_t* len) const {
  const SlotWord s = SlotWord::Unpack(word);
  *offset = s.offset;
  *len = 0;
  if (s.offset == 0) return word == 0;  // empty slot
  const uint64_t slots_end = SlotOff(h, h.count);
  if (s.offset < slots_end || uint64_t{s.offset} + L::kValueLenBytes > l_.ContentEnd()) return false;
  const uint32_t value_len = LoadAt<uint16_t>(image, s.offset) & L::kMaxInlineValue;
  const uint64_t record_len = uint64_t{L::kValueLenBytes} + s.rest() + value_len;
  if (s.offset + record_len > l_.ContentEnd()) return false;
  *len = static_cast<uint32_t>(record_len);
  return true;
}

bool SlottedLeafCodec::ValidBody(const std::byte* image, const Header& h, bool validate) const {
  for (uint32_t i = 0; i < h.count; ++i) {
    const uint32_t at = SlotOff(h, i);
    const uint64_t word = LoadAt<uint64_t>(image, at);
    uint32_t offset, len;
    if (!RecordOf(image, h, word, &offset, &len)) return false;
    if (!h.unsorted() && word == 0) return false;  // sorted leaves hold no empty slots
    if (!validate) continue;
    const uint64_t check = LoadAt<uint64_t>(image, at + 8);
    if (check != CheckWord(word, image + offset, len, h.version, i, (check & kTombBit) != 0)) return false;
  }
  return true;
}

SlottedLeafCodec::Key SlottedLeafCodec::KeyAt(const std::byte* image, const Header& h,
                                              uint32_t slot) const {
  const SlotWord s = SlotWord::Unpack(LoadAt<uint64_t>(image, SlotOff(h, slot)));
  Key key(h.low, 0, h.prefix);
  slotted::AppendStored(&key, s, image + s.offset + L::kValueLenBytes);
  return key;
}

SlottedLeafCodec::Value SlottedLeafCodec::ValueAt(const std::byte* image, const Header& h,
                                                  uint32_t slot) const {
  const SlotWord s = SlotWord::Unpack(LoadAt<uint64_t>(image, SlotOff(h, slot)));
  const uint16_t field = LoadAt<uint16_t>(image, s.offset);
  if (field & L::kBlockFlag) return Value();
  const auto* v = reinterpret_cast<const char*>(image + s.offset + L::kValueLenBytes + s.rest());
  return Value(v, field & L::kMaxInlineValue);
}

ValueBlockRef SlottedLeafCodec::BlockAt(const std::byte* image, const Header& h, uint32_t slot) const {
  const SlotWord s = SlotWord::Unpack(LoadAt<uint64_t>(image, SlotOff(h, slot)));
  const uint16_t field = LoadAt<uint16_t>(image, s.offset);
  // Only a record whose value area is a whole reference (RecordOf checked its bounds).
  if (!(field & L::kBlockFlag) || (field & L::kMaxInlineValue) != L::kBlockRefBytes) return {};
  const uint32_t at = s.offset + L::kValueLenBytes + s.rest();
  return {GlobalAddress::FromRaw(LoadAt<uint64_t>(image, at)),
          value_block::kHeaderBytes + LoadAt<uint32_t>(image, at + 8), true};
}

uint32_t SlottedLeafCodec::WriteRecord(std::byte* image, uint32_t at, std::string_view q, const Entry& e) {
  const uint32_t rest = L::RestBytes(q.size());
  const uint32_t value_len = StoredValueBytes(e);
  StoreAt(image, at, static_cast<uint16_t>(value_len | (e.block.is_null() ? 0 : L::kBlockFlag)));
  std::memcpy(image + at + L::kValueLenBytes, q.data() + (q.size() - rest), rest);
  std::byte* v = image + at + L::kValueLenBytes + rest;
  if (e.block.is_null()) {
    std::memcpy(v, e.value.data(), e.value.size());
  } else {
    StoreAt(v, 0, e.block.addr.raw());
    StoreAt(v, 8, static_cast<uint32_t>(e.block.read_bytes - value_block::kHeaderBytes));
  }
  return L::kValueLenBytes + rest + value_len;
}

int SlottedLeafCodec::BoundSlot(const std::byte* image, const Header& h, std::string_view q) const {
  const uint32_t q_head = slotted::HeadOf(q);
  for (uint32_t i = 0; i < h.count; ++i) {
    const uint64_t word = LoadAt<uint64_t>(image, SlotOff(h, i));
    if (word == 0) continue;
    const SlotWord s = SlotWord::Unpack(word);
    if (slotted::EqualsStored(s, image + s.offset + L::kValueLenBytes, q, q_head)) return static_cast<int>(i);
  }
  return -1;
}

int SlottedLeafCodec::Find(const std::byte* image, const Header& h, KeyRef key) const {
  if (!slotted::HasPrefix(key, h.low, h.prefix)) return -1;  // not a key of this node
  const std::string_view q = key.substr(h.prefix);
  if (h.unsorted()) {  // the key has at most one slot in this version: live or not
    const int i = BoundSlot(image, h, q);
    return i >= 0 && !TombAt(image, h, static_cast<uint32_t>(i)) ? i : -1;
  }
  const uint32_t q_head = slotted::HeadOf(q);
  uint32_t lo = 0, hi = h.count;  // binary search over the sorted slots
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const SlotWord s = SlotWord::Unpack(LoadAt<uint64_t>(image, SlotOff(h, mid)));
    const int c = slotted::CompareStored(s, image + s.offset + L::kValueLenBytes, q, q_head);
    if (c == 0) return static_cast<int>(mid);
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return -1;
}

void SlottedLeafCodec::Collect(const std::byte* image, const Header& h, std::vector<Entry>* out) const {
  const size_t first = out->size();
  for (uint32_t i = 0; i < h.count; ++i)
    if (LiveAt(image, h, i)) out->push_back({KeyAt(image, h, i), ValueAt(image, h, i), BlockAt(image, h, i)});
  if (h.unsorted())
    std::sort(out->begin() + static_cast<ptrdiff_t>(first), out->end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
}

bool SlottedLeafCodec::FitsBetween(std::string_view low, std::string_view high,
                                   std::span<const Entry> sorted) const {
  const size_t prefix = slotted::FencePrefix(low, high);
  uint64_t bytes = L::SlotsOffset(low.size(), high.size() - prefix);
  for (const Entry& e : sorted) {
    if (!slotted::HasPrefix(e.key, low, prefix)) return false;  // as the internal codec's
    bytes += L::LeafEntryBytes(e.key.size(), StoredValueBytes(e), prefix);
  }
  return bytes <= l_.ContentEnd() && sorted.size() <= std::numeric_limits<uint16_t>::max();
}

uint32_t SlottedLeafCodec::Used(const std::byte* image, const Header& h) const {
  uint64_t used = uint64_t{h.count} * L::kSlotBytes;
  for (uint32_t i = 0; i < h.count; ++i) {
    uint32_t offset = 0, len = 0;
    if (RecordOf(image, h, LoadAt<uint64_t>(image, SlotOff(h, i)), &offset, &len)) used += len;
  }
  return static_cast<uint32_t>(std::min<uint64_t>(used, l_.ContentEnd()));
}

bool SlottedLeafCodec::HasRoom(const std::byte* image, const Header& h) const {
  const uint32_t largest = L::LeafEntryBytes(l_.max_key_bytes, std::max(l_.inline_value_bytes, L::kBlockRefBytes),
                                             h.prefix);
  return uint64_t{Used(image, h)} + largest <= Capacity(h);
}

bool SlottedLeafCodec::Build(std::byte* image, Header h, std::span<const Entry> sorted,
                             bool unsorted) const {
  if (!Fits(h, sorted)) return false;
  h.level = 0;
  h.flags = static_cast<uint8_t>((h.flags & ~kFlagUnsortedLeaf) | (unsorted ? kFlagUnsortedLeaf : 0));
  h.leftmost = GlobalAddress::Null();
  h.body_check = 0;
  h.heap_off = 0;
  SlottedHeaderCodec::Place(&h);
  uint64_t record_bytes = 0;
  for (const Entry& e : sorted) record_bytes += L::LeafEntryBytes(e.key.size(), StoredValueBytes(e), h.prefix);
  const uint64_t used = h.slots_off + record_bytes;
  uint64_t slots = sorted.size();
  if (unsorted) {
    // Empty slots for entry writes, as many as the free space holds entries of the average
    // size (of an assumed 32-byte record in an empty leaf): slots and heap run out together.
    const uint64_t average = sorted.empty() ? L::kSlotBytes + 32 : record_bytes / sorted.size();
    slots += (l_.ContentEnd() - used) / std::max<uint64_t>(average, L::kSlotBytes + L::kValueLenBytes);
    slots = std::min<uint64_t>(slots, std::numeric_limits<uint16_t>::max());
  }
  h.count = static_cast<uint16_t>(slots);
  std::memset(image, 0, l_.node_bytes);
  uint32_t pos = l_.ContentEnd();
  for (uint32_t i = 0; i < sorted.size(); ++i) {
    const std::string_view q = std::string_view(sorted[i].key).substr(h.prefix);
    const SlotWord s{0, static_cast<uint32_t>(q.size()), slotted::HeadOf(q)};
    const uint32_t len = L::kValueLenBytes + s.rest() + StoredValueBytes(sorted[i]);
    pos -= len;
    WriteRecord(image, pos, q, sorted[i]);
    const uint64_t word = SlotWord{pos, s.len, s.head}.Pack();
    StoreAt(image, SlotOff(h, i), word);
    StoreAt(image, SlotOff(h, i) + 8, CheckWord(word, image + pos, len, h.version, i, false));
  }
  for (uint32_t i = static_cast<uint32_t>(sorted.size()); i < h.count; ++i)
    StoreAt(image, SlotOff(h, i) + 8, CheckWord(0, image, 0, h.version, i, false));
  SlottedHeaderCodec::Write(h, image);
  l_.StoreTrailer(image, h.version);
  return true;
}

LeafSplit<BytesKV> SlottedLeafCodec::Split(const Header& h, std::span<const Entry> sorted) const {
  const size_t n = sorted.size();
  std::vector<uint64_t> before(n + 1, 0);  // bytes of entries [0, i), untruncated
  for (size_t i = 0; i < n; ++i)
    before[i + 1] = before[i] + L::LeafEntryBytes(sorted[i].key.size(), StoredValueBytes(sorted[i]), 0);
  const uint64_t total = before[n];
  // The balanced split: the first that takes the left half past half the bytes.
  size_t balanced = 1;
  while (balanced + 1 < n && before[balanced + 1] <= total / 2) ++balanced;
  auto separator = [&](size_t m) {
    return l_.suffix_truncation ? slotted::ShortestSeparator(sorted[m - 1].key, sorted[m].key)
                                : std::string_view(sorted[m].key);
  };
  auto fits = [&](size_t m) {
    const std::string_view sep = separator(m);
    return FitsBetween(h.low, sep, sorted.first(m)) && FitsBetween(sep, h.high, sorted.subspan(m));
  };
  // Among the splits leaving each half 40..60% of the bytes, the shortest separator (ties:
  // the most balanced); LeanStore's BTreeNode::findSep picks in a window the same way.
  size_t best = balanced;
  for (size_t m = 1; m < n; ++m) {
    if (before[m] * 10 < total * 4 || before[m] * 10 > total * 6) continue;
    const size_t len = separator(m).size(), best_len = separator(best).size();
    const auto dist = [&](size_t x) { return x > balanced ? x - balanced : balanced - x; };
    if (len < best_len || (len == best_len && dist(m) < dist(best))) best = m;
  }
  // The size rule (SlottedLayout::MinNodeBytes) guarantees the balanced split fits; search
  // outward from it should the window's choice not.
  if (!fits(best)) {
    best = balanced;
    for (size_t d = 0; d < n; ++d) {
      if (balanced + d < n && fits(balanced + d)) { best = balanced + d; break; }
      if (d < balanced && fits(balanced - d)) { best = balanced - d; break; }
    }
  }
  return {sorted.first(best), sorted.subspan(best), Key(separator(best))};
}

bool SlottedLeafCodec::Allocate(const std::byte* image, const Header& h, uint32_t len,
                                uint32_t* offset) const {
  struct Range {
    uint32_t from, to;
  };
  std::vector<Range> used;
  used.reserve(h.count);
  for (uint32_t i = 0; i < h.count; ++i) {
    uint32_t off, rec;
    if (RecordOf(image, h, LoadAt<uint64_t>(image, SlotOff(h, i)), &off, &rec) && rec > 0)
      used.push_back({off, off + rec});
  }
  std::sort(used.begin(), used.end(), [](const Range& a, const Range& b) { return a.from < b.from; });
  used.push_back({l_.ContentEnd(), l_.ContentEnd()});
  uint32_t free_from = SlotOff(h, h.count), best_gap = 0;
  bool found = false;
  for (const Range& r : used) {
    if (r.from >= free_from + len) {
      const uint32_t gap = r.from - free_from;
      if (!found || gap < best_gap) {
        found = true;
        best_gap = gap;
        *offset = r.from - len;  // at the top of the gap: the heap grows down
      }
    }
    free_from = std::max(free_from, r.to);
  }
  return found;
}

EntryWrite SlottedLeafCodec::WriteEntry(std::byte* image, const Header& h, WriteOp op, KeyRef key,
                                        const Entry& e) const {
  EntryWrite w;
  if (!h.unsorted() || !slotted::HasPrefix(key, h.low, h.prefix)) return w;  // kWhole
  const std::string_view q = key.substr(h.prefix);
  const int bound = BoundSlot(image, h, q);
  const bool live = bound >= 0 && !TombAt(image, h, static_cast<uint32_t>(bound));
  if (!live && op != WriteOp::kUpsert) {
    w.outcome = EntryWrite::Outcome::kNotFound;
    return w;
  }
  if (op == WriteOp::kDelete) {  // the key's tombstone: same slot word and record, flag set
    const uint32_t at = SlotOff(h, static_cast<uint32_t>(bound));
    const uint64_t word = LoadAt<uint64_t>(image, at);
    uint32_t off, len;
    RecordOf(image, h, word, &off, &len);
    StoreAt(image, at + 8, CheckWord(word, image + off, len, h.version, static_cast<uint32_t>(bound), true));
    w.outcome = EntryWrite::Outcome::kWritten;
    w.Add(at + 8, 8);
    return w;
  }
  // The key's own slot (live or its tombstone), else an empty one, never another key's
  // tombstone: within a version a key keeps one slot.
  int slot = bound;
  for (uint32_t i = 0; slot < 0 && i < h.count; ++i)
    if (EmptyAt(image, h, i)) slot = static_cast<int>(i);
  const SlotWord s{0, static_cast<uint32_t>(q.size()), slotted::HeadOf(q)};
  const uint32_t len = L::kValueLenBytes + s.rest() + StoredValueBytes(e);
  uint32_t off;
  if (slot < 0 || !Allocate(image, h, len, &off)) return w;  // kWhole: rewrite or split
  WriteRecord(image, off, q, e);
  const uint32_t at = SlotOff(h, static_cast<uint32_t>(slot));
  const uint64_t word = SlotWord{off, s.len, s.head}.Pack();
  StoreAt(image, at, word);
  StoreAt(image, at + 8, CheckWord(word, image + off, len, h.version, static_cast<uint32_t>(slot), false));
  w.outcome = EntryWrite::Outcome::kWritten;
  w.Add(off, len);              // the record first,
  w.Add(at, L::kSlotBytes);     // then the slot that points at it
  return w;
}

std::vector<size_t> SlottedLeafCodec::PlanRuns(std::span<const Entry> sorted, double fill) const {
  std::vector<size_t> starts = {0};
  const size_t n = sorted.size();
  size_t b = 0;
  std::string low;
  while (b < n) {
    // Grow the run while its entries (truncated by the prefix they share with the low fence,
    // an estimate) take at most `fill` of what the node has after its header.
    const uint64_t room = l_.ContentEnd() - std::min<uint64_t>(l_.ContentEnd(), L::SlotsOffset(low.size(), low.size()));
    const uint64_t target = static_cast<uint64_t>(static_cast<double>(room) * fill);
    size_t e = b;
    uint64_t bytes = 0;
    while (e < n) {
      const size_t p = low.empty() ? 0 : slotted::CommonPrefix(low, sorted[e].key);
      const uint64_t add = L::LeafEntryBytes(sorted[e].key.size(), StoredValueBytes(sorted[e]), p);
      if (e > b && bytes + add > target) break;
      bytes += add;
      ++e;
    }
    // Exact check with the real fences; the estimate may have been too kind.
    auto high = [&](size_t end) { return end < n ? Separator(sorted[end - 1].key, sorted[end].key) : Key(); };
    while (e > b + 1 && !FitsBetween(low, high(e), sorted.subspan(b, e - b))) --e;
    starts.push_back(e);
    low = high(e);
    b = e;
  }
  return starts;
}

Status SlottedLeafCodec::CheckEntry(KeyRef key, ValueRef value) const {
  if (key.empty()) return Status::InvalidArgument("empty key: keys are 1 to " +
                                                  std::to_string(l_.max_key_bytes) + " bytes");
  if (key.size() > l_.max_key_bytes)
    return Status::InvalidArgument("key of " + std::to_string(key.size()) +
                                   " bytes is longer than max_key_bytes " + std::to_string(l_.max_key_bytes));
  return Status::Ok();
}

}  // namespace dmindex::tree
