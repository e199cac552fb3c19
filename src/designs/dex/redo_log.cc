#include "designs/dex/redo_log.h"

#include <algorithm>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dmindex::designs::dex {
namespace {

constexpr uint64_t kStart = uint64_t{1} << 63;
constexpr uint64_t kSeed = 0x7265646f2d6c6f67ull;
constexpr uint32_t kFirstHeader = 32;  // position, slots|op, lengths, checksum
constexpr uint32_t kOtherHeader = 8;   // position
constexpr uint32_t kChecksumAt = 24;

uint64_t WordAt(const std::byte* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
void PutWord(std::byte* p, uint64_t w) { std::memcpy(p, &w, 8); }

// The checksum of an encoded record whose checksum word is still zero, seeded by position.
uint64_t Checksum(const std::byte* rec, uint64_t bytes, uint64_t pos) {
  return XXH3_64bits_withSeed(rec, bytes, kSeed ^ pos);
}

}  // namespace

Status RedoLog::Initialize(fabric::Endpoint& ep, GlobalAddress block, uint64_t capacity) {
  const uint64_t words[2] = {capacity / kSlot * kSlot, 0};
  return ep.Write(block, words, sizeof words);
}

Result<RedoLog> RedoLog::Open(fabric::Endpoint& ep, GlobalAddress block) {
  uint64_t capacity = 0;
  DMX_RETURN_IF_ERROR(ep.Read(block, &capacity, 8));
  if (capacity == 0 || capacity % kSlot != 0 || capacity > (uint64_t{1} << 31))
    return Status::Corruption("dex redo log at " + block.ToString() + ": capacity word " +
                              std::to_string(capacity) + " is not a ring size");
  return RedoLog(block, capacity);
}

uint64_t RedoLog::RecordBytes(size_t key_bytes, size_t value_bytes) {
  const uint64_t payload = key_bytes + value_bytes;
  const uint64_t first = kSlot - kFirstHeader, other = kSlot - kOtherHeader;
  return kSlot * (1 + (payload <= first ? 0 : (payload - first + other - 1) / other));
}

void RedoLog::Encode(uint64_t pos, Op op, std::string_view key, std::string_view value,
                     std::vector<std::byte>* out) {
  const uint64_t bytes = RecordBytes(key.size(), value.size());
  out->assign(bytes, std::byte{0});
  std::byte* rec = out->data();
  PutWord(rec, pos | kStart);
  PutWord(rec + 8, bytes / kSlot | uint64_t{static_cast<uint8_t>(op)} << 32);
  PutWord(rec + 16, key.size() | uint64_t{value.size()} << 32);
  // The payload (key, then value) fills each slot after its header.
  uint64_t slot = 0, at = kFirstHeader;
  auto put = [&](std::string_view s) {
    for (size_t done = 0; done < s.size();) {
      if (at == kSlot) {
        ++slot;
        PutWord(rec + slot * kSlot, pos + slot * kSlot);
        at = kOtherHeader;
      }
      const size_t n = std::min<size_t>(s.size() - done, kSlot - at);
      std::memcpy(rec + slot * kSlot + at, s.data() + done, n);
      done += n;
      at += n;
    }
  };
  put(key);
  put(value);
  for (++slot; slot < bytes / kSlot; ++slot) PutWord(rec + slot * kSlot, pos + slot * kSlot);
  PutWord(rec + kChecksumAt, Checksum(rec, bytes, pos));
}

int RedoLog::Verbs(uint64_t pos, const std::vector<std::byte>& encoded, fabric::Verb out[2]) const {
  const uint64_t at = pos % capacity_;
  const uint64_t first = std::min<uint64_t>(encoded.size(), capacity_ - at);
  out[0] = fabric::Verb::Write(block_ + kHeaderBytes + at, encoded.data(), static_cast<uint32_t>(first));
  if (first == encoded.size()) return 1;
  out[1] = fabric::Verb::Write(block_ + kHeaderBytes, encoded.data() + first,
                               static_cast<uint32_t>(encoded.size() - first));
  return 2;
}

Status RedoLog::WriteHead(fabric::Endpoint& ep, uint64_t head, fabric::PostGuard* guard) const {
  if (guard == nullptr) return ep.Write(block_ + 8, &head, 8);
  fabric::Verb write = fabric::Verb::Write(block_ + 8, &head, 8);
  return ep.Post(std::span<fabric::Verb>(&write, 1), fabric::Ordering::kInOrder, *guard);
}

bool RedoLog::Decode(const std::byte* ring, uint64_t p, uint64_t head, Record* out, uint64_t* bytes) const {
  auto slot_at = [&](uint64_t q) { return ring + q % capacity_; };
  if (WordAt(slot_at(p)) != (p | kStart)) return false;
  const uint64_t counts = WordAt(slot_at(p) + 8), lengths = WordAt(slot_at(p) + 16);
  const uint64_t slots = counts & 0xffffffffu;
  const uint8_t op = static_cast<uint8_t>(counts >> 32);
  const uint64_t key_bytes = lengths & 0xffffffffu, value_bytes = lengths >> 32;
  *bytes = slots * kSlot;
  if (slots == 0 || p + *bytes > head + capacity_ || (counts >> 40) != 0 ||
      op < static_cast<uint8_t>(Op::kPut) || op > static_cast<uint8_t>(Op::kInPool) ||
      RecordBytes(key_bytes, value_bytes) != *bytes)
    return false;
  std::vector<std::byte> rec(*bytes);  // contiguous, also when the record wraps
  for (uint64_t s = 0; s < slots; ++s) {
    std::memcpy(rec.data() + s * kSlot, slot_at(p + s * kSlot), kSlot);
    if (s > 0 && WordAt(rec.data() + s * kSlot) != p + s * kSlot) return false;
  }
  const uint64_t stored = WordAt(rec.data() + kChecksumAt);
  PutWord(rec.data() + kChecksumAt, 0);
  if (stored != Checksum(rec.data(), *bytes, p)) return false;
  std::string payload;
  payload.reserve(key_bytes + value_bytes);
  for (uint64_t s = 0; s < slots; ++s) {
    const uint64_t from = s == 0 ? kFirstHeader : kOtherHeader;
    payload.append(reinterpret_cast<const char*>(rec.data() + s * kSlot + from), kSlot - from);
  }
  out->pos = p;
  out->op = static_cast<Op>(op);
  out->key = payload.substr(0, key_bytes);
  out->value = payload.substr(key_bytes, value_bytes);
  return true;
}

Result<RedoLog::Contents> RedoLog::Scan(fabric::Endpoint& ep) const {
  std::vector<std::byte> image(BlockBytes(capacity_));
  DMX_RETURN_IF_ERROR(ep.Read(block_, image.data(), static_cast<uint32_t>(image.size())));
  Contents c;
  c.head = WordAt(image.data() + 8);
  if (c.head % kSlot != 0)
    return Status::Corruption("dex redo log at " + block_.ToString() + ": head " + std::to_string(c.head) +
                              " is not on a slot");
  const std::byte* ring = image.data() + kHeaderBytes;
  // Every position of the current lap is looked at once: a valid record is taken whole,
  // anything else is stepped over slot by slot (a record cut short, or never written).
  for (uint64_t p = c.head; p < c.head + capacity_;) {
    Record r;
    uint64_t bytes = 0;
    if (Decode(ring, p, c.head, &r, &bytes)) {
      c.records.push_back(std::move(r));
      p += bytes;
    } else {
      const uint64_t word = WordAt(ring + p % capacity_) & ~kStart;
      if (word == p) ++c.skipped_slots;
      p += kSlot;
    }
  }
  return c;
}

}  // namespace dmindex::designs::dex
