#include "tree/slotted_internal.h"

#include <limits>

#include "tree/node_check.h"

namespace dmindex::tree {

using slotted::SlotWord;

bool SlottedInternalCodec::ValidBody(const std::byte* image, const Header& h, bool validate) const {
  const uint32_t slots_end = SlotOff(h, h.count);  // the header codec checked both bounds
  if (validate && h.body_check != SlottedBodyCheck(image + h.slots_off, slots_end - h.slots_off,
                                                   image + h.heap_off, l_.ContentEnd() - h.heap_off,
                                                   h.version))
    return false;
  for (uint32_t i = 0; i < h.count; ++i) {
    const SlotWord s = WordAt(image, h, i);
    if (s.rest() > 0 && (s.offset < h.heap_off || uint64_t{s.offset} + s.rest() > l_.ContentEnd()))
      return false;
  }
  return true;
}

SlottedInternalCodec::Key SlottedInternalCodec::KeyAt(const std::byte* image, const Header& h,
                                                      uint32_t i) const {
  const SlotWord s = WordAt(image, h, i);
  Key key(h.low, 0, h.prefix);
  slotted::AppendStored(&key, s, image + s.offset);
  return key;
}

int SlottedInternalCodec::ChildIndexFor(const std::byte* image, const Header& h, KeyRef key) const {
  // A key without the node's prefix is left or right of every separator (callers only ask
  // for keys inside the fences, but a stale cache entry must not mislead the search).
  const int c = key.substr(0, h.prefix).compare(std::string_view(h.low).substr(0, h.prefix));
  if (c < 0 || (c == 0 && key.size() < h.prefix)) return -1;
  if (c > 0) return static_cast<int>(h.count) - 1;
  const std::string_view q = key.substr(h.prefix);
  const uint32_t q_head = slotted::HeadOf(q);
  uint32_t lo = 0, hi = h.count;  // the last separator <= key
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const SlotWord s = WordAt(image, h, mid);
    if (slotted::CompareStored(s, image + s.offset, q, q_head) > 0) hi = mid; else lo = mid + 1;
  }
  return static_cast<int>(lo) - 1;
}

bool SlottedInternalCodec::HasSeparator(const std::byte* image, const Header& h, KeyRef key) const {
  const int i = ChildIndexFor(image, h, key);
  return i >= 0 && KeyAt(image, h, static_cast<uint32_t>(i)) == key;
}

void SlottedInternalCodec::Collect(const std::byte* image, const Header& h, std::vector<Entry>* out) const {
  for (uint32_t i = 0; i < h.count; ++i) out->push_back({KeyAt(image, h, i), ChildAt(image, h, i)});
}

bool SlottedInternalCodec::FitsBetween(std::string_view low, std::string_view high,
                                       std::span<const Entry> sorted) const {
  const size_t prefix = slotted::FencePrefix(low, high);
  uint64_t bytes = L::SlotsOffset(low.size(), high.size() - prefix);
  for (const Entry& e : sorted) {
    if (!slotted::HasPrefix(e.key, low, prefix)) return false;
    bytes += L::InternalEntryBytes(e.key.size(), prefix);
  }
  return bytes <= l_.ContentEnd() && sorted.size() <= std::numeric_limits<uint16_t>::max();
}

bool SlottedInternalCodec::Build(std::byte* image, Header h, std::span<const Entry> sorted) const {
  if (!Fits(h, sorted)) return false;
  h.flags = static_cast<uint8_t>(h.flags & ~kFlagUnsortedLeaf);
  h.count = static_cast<uint16_t>(sorted.size());
  SlottedHeaderCodec::Place(&h);
  std::memset(image, 0, l_.node_bytes);
  uint32_t pos = l_.ContentEnd();
  for (uint32_t i = 0; i < sorted.size(); ++i) {
    const std::string_view q = std::string_view(sorted[i].key).substr(h.prefix);
    SlotWord s{0, static_cast<uint32_t>(q.size()), slotted::HeadOf(q)};
    if (s.rest() > 0) {
      pos -= s.rest();
      std::memcpy(image + pos, q.data() + L::kKeyHeadBytes, s.rest());
      s.offset = pos;
    }
    StoreAt(image, SlotOff(h, i), s.Pack());
    StoreAt(image, SlotOff(h, i) + 8, sorted[i].child.raw());
  }
  h.heap_off = pos;
  const uint32_t slots_end = SlotOff(h, h.count);
  h.body_check = SlottedBodyCheck(image + h.slots_off, slots_end - h.slots_off, image + pos,
                                  l_.ContentEnd() - pos, h.version);
  SlottedHeaderCodec::Write(h, image);
  l_.StoreTrailer(image, h.version);
  return true;
}

InternalSplit<BytesKV> SlottedInternalCodec::Split(const Header& h, std::span<const Entry> sorted) const {
  const size_t n = sorted.size();
  std::vector<uint64_t> before(n + 1, 0);
  for (size_t i = 0; i < n; ++i) before[i + 1] = before[i] + L::InternalEntryBytes(sorted[i].key.size(), 0);
  // Entry `mid` moves up: left [0, mid), right (mid, n), both non-empty.
  auto fits = [&](size_t mid) {
    const std::string_view sep = sorted[mid].key;
    return FitsBetween(h.low, sep, sorted.first(mid)) && FitsBetween(sep, h.high, sorted.subspan(mid + 1));
  };
  size_t balanced = 1;
  while (balanced + 2 < n && before[balanced + 1] <= before[n] / 2) ++balanced;
  // The size rule (SlottedLayout::MinNodeBytes) guarantees the balanced split fits.
  size_t mid = balanced;
  for (size_t d = 1; d < n && !fits(mid); ++d) {
    if (balanced + d + 1 < n && fits(balanced + d)) { mid = balanced + d; break; }
    if (d < balanced && fits(balanced - d)) { mid = balanced - d; break; }
  }
  return {sorted.first(mid), sorted.subspan(mid + 1), sorted[mid].key, sorted[mid].child};
}

std::vector<size_t> SlottedInternalCodec::PlanRuns(std::span<const Key> lows, double fill) const {
  std::vector<size_t> starts = {0};
  const size_t n = lows.size();
  std::vector<Entry> entries;
  size_t b = 0;
  while (b < n) {
    // Node: children [b, e), leftmost b, separators lows[b + 1, e); fences lows[b], lows[e].
    const std::string_view low = b == 0 ? std::string_view() : std::string_view(lows[b]);
    const uint64_t room = l_.ContentEnd() - std::min<uint64_t>(l_.ContentEnd(), L::SlotsOffset(low.size(), low.size()));
    const uint64_t target = static_cast<uint64_t>(static_cast<double>(room) * fill);
    size_t e = b + 1;
    uint64_t bytes = 0;
    while (e < n) {
      const size_t p = low.empty() ? 0 : slotted::CommonPrefix(low, lows[e]);
      const uint64_t add = L::InternalEntryBytes(lows[e].size(), p);
      if (e > b + 1 && bytes + add > target) break;
      bytes += add;
      ++e;
    }
    auto fits = [&](size_t end) {
      entries.clear();
      for (size_t i = b + 1; i < end; ++i) entries.push_back({lows[i], GlobalAddress()});
      return FitsBetween(low, end < n ? std::string_view(lows[end]) : std::string_view(), entries);
    };
    while (e > b + 2 && !fits(e)) --e;
    starts.push_back(e);
    b = e;
  }
  return starts;
}

}  // namespace dmindex::tree
