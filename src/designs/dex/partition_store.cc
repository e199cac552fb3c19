#include "designs/dex/partition_store.h"

#include <algorithm>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/retry.h"
#include "common/retry_status.h"

namespace dmindex::designs::dex {
namespace {

constexpr uint64_t kSeed = 0x6d61702d786564ull;
// Offsets in a map image read from word 64 (the capacity word) on.
constexpr uint32_t kHeaderBytes = 32;  // capacity, version, checksum, size
constexpr uint32_t kImageVersion = 8, kImageChecksum = 16, kImageSize = 24;

uint64_t WordAt(const std::byte* p, uint32_t at) {
  uint64_t w;
  std::memcpy(&w, p + at, 8);
  return w;
}
void PutWord(std::byte* p, uint32_t at, uint64_t w) { std::memcpy(p + at, &w, 8); }

// The checksum of a size word followed by `area` used bytes, as stored at `version`.
uint64_t Checksum(const std::byte* size_word, uint64_t area, uint64_t version) {
  return XXH3_64bits_withSeed(size_word, 8 + area, kSeed ^ version);
}

}  // namespace

uint32_t PartitionStore::BlockBytes(uint32_t parts, uint32_t max_key_bytes) {
  const uint64_t area = uint64_t{parts > 0 ? parts - 1 : 0} * (kLengthBytes + max_key_bytes);
  return kAreaOff + static_cast<uint32_t>(std::max<uint64_t>(kFirstAreaBytes, (area + 7) / 8 * 8));
}

Result<std::vector<std::byte>> PartitionStore::Encode(uint64_t version, const std::vector<std::string>& boundaries,
                                                      uint64_t capacity) {
  uint64_t area = 0;
  for (const std::string& b : boundaries) area += kLengthBytes + b.size();
  if (boundaries.size() >= kMaxParts || area > capacity ||
      std::any_of(boundaries.begin(), boundaries.end(), [](const std::string& b) { return b.size() > 0xffff; }))
    return Status::InvalidArgument("dex partition map: " + std::to_string(boundaries.size()) + " boundaries of " +
                                   std::to_string(area) + " bytes do not fit the stored map's " +
                                   std::to_string(capacity) + " bytes");
  // From word 65: version, checksum, size, area.
  std::vector<std::byte> out(24 + area);
  PutWord(out.data(), 0, version);
  PutWord(out.data(), 16, boundaries.size() | (area << 32));
  size_t at = 24;
  for (const std::string& b : boundaries) {
    const uint16_t len = static_cast<uint16_t>(b.size());
    std::memcpy(out.data() + at, &len, kLengthBytes);
    std::memcpy(out.data() + at + kLengthBytes, b.data(), b.size());
    at += kLengthBytes + b.size();
  }
  PutWord(out.data(), 8, Checksum(out.data() + 16, area, version));
  return out;
}

std::optional<std::vector<std::string>> PartitionStore::Decode(const std::byte* image, size_t bytes,
                                                               uint64_t version) {
  const uint64_t size = WordAt(image, kImageSize);
  const uint64_t count = size & 0xffffffffu, area = size >> 32;
  if (count >= kMaxParts || area > WordAt(image, 0) || kHeaderBytes + area > bytes) return std::nullopt;
  if (WordAt(image, kImageChecksum) != Checksum(image + kImageSize, area, version)) return std::nullopt;
  std::vector<std::string> boundaries;
  const std::byte* p = image + kHeaderBytes;
  uint64_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint16_t len = 0;
    if (at + kLengthBytes > area) return std::nullopt;
    std::memcpy(&len, p + at, kLengthBytes);
    if (at + kLengthBytes + len > area) return std::nullopt;
    boundaries.emplace_back(reinterpret_cast<const char*>(p + at + kLengthBytes), len);
    at += kLengthBytes + len;
  }
  if (at != area) return std::nullopt;
  return boundaries;
}

Status PartitionStore::Initialize(fabric::Endpoint& ep, GlobalAddress block, uint32_t parts,
                                  uint32_t max_key_bytes, const std::vector<std::string>& boundaries) {
  if (parts > kMaxParts) return Status::InvalidArgument("dex: too many partitions");
  const uint32_t bytes = BlockBytes(parts, max_key_bytes);
  auto map = Encode(0, boundaries, bytes - kAreaOff);
  if (!map.ok()) return map.status();
  std::vector<std::byte> image(bytes);  // no leases
  PutWord(image.data(), 8 * kCapacityWord, bytes - kAreaOff);
  std::memcpy(image.data() + 8 * kVersionWord, map->data(), map->size());
  return ep.Write(block, image.data(), bytes);
}

Result<StoredMap> PartitionStore::Load(fabric::Endpoint& ep) const {
  std::vector<std::byte> image;
  // A change holds the lock for one flush of dirty pages: a reader allows it generous time
  // (retry_limits::kPartitionMapChanging) before calling the map stuck.
  RetryBudget budget(retry_limits::kPartitionMapChanging, "read the dex partition map");
  Backoff backoff(backoff::kPoll, "the partition map to settle", block_);
  for (;;) {
    image.resize(kHeaderBytes + kFirstAreaBytes);
    DMX_RETURN_IF_ERROR(ep.Read(Word(kCapacityWord), image.data(), image.size()));
    const uint64_t version = WordAt(image.data(), kImageVersion);
    const uint64_t area = WordAt(image.data(), kImageSize) >> 32;
    // A longer map: the rest of its area (a change between the two READs fails the checksum).
    if (version % 2 == 0 && area > kFirstAreaBytes && area <= WordAt(image.data(), 0)) {
      image.resize(kHeaderBytes + area);
      DMX_RETURN_IF_ERROR(ep.Read(Word(kCapacityWord) + kHeaderBytes + kFirstAreaBytes,
                                  image.data() + kHeaderBytes + kFirstAreaBytes, area - kFirstAreaBytes));
    }
    if (version % 2 == 0) {
      auto boundaries = Decode(image.data(), image.size(), version);
      if (boundaries) return StoredMap{version, std::move(*boundaries)};
    }
    if (!budget.Spend()) return budget.Exhausted("at " + block_.ToString());
    backoff.Pause();
  }
}

Status PartitionStore::Lock(fabric::Endpoint& ep, uint64_t version) const {
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(Word(kVersionWord), version, version + 1, &old));
  return old == version ? Status::Ok() : RetryStatus("partition map changed");
}

Status PartitionStore::Publish(fabric::Endpoint& ep, uint64_t locked_version,
                               const std::vector<std::string>& boundaries) const {
  uint64_t capacity = 0;
  DMX_RETURN_IF_ERROR(ep.Read(Word(kCapacityWord), &capacity, 8));
  // Even again: stable, and newer than every earlier copy.
  auto map = Encode(locked_version + 2, boundaries, capacity);
  if (!map.ok()) return map.status();
  // One WRITE publishes and unlocks. It may land in pieces in any order; readers validate
  // the checksum, which covers the version, so a half-written block never passes.
  return ep.Write(Word(kVersionWord), map->data(), map->size());
}

Status PartitionStore::Unlock(fabric::Endpoint& ep, uint64_t locked_version) const {
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(Word(kVersionWord), locked_version + 1, locked_version, &old));
  return old == locked_version + 1 ? Status::Ok() : Status::Corruption("dex partition map: lock lost");
}

Result<PartitionStore::Snapshot> PartitionStore::Inspect(fabric::Endpoint& ep) const {
  std::vector<std::byte> head(kAreaOff);
  DMX_RETURN_IF_ERROR(ep.Read(block_, head.data(), head.size()));
  const uint64_t capacity = WordAt(head.data(), 8 * kCapacityWord);
  if (capacity < kFirstAreaBytes || capacity > (1u << 20))
    return Status::Corruption("dex partition map at " + block_.ToString() + ": bad capacity " +
                              std::to_string(capacity));
  std::vector<std::byte> image(kHeaderBytes + capacity);
  std::memcpy(image.data(), head.data() + 8 * kCapacityWord, kHeaderBytes);
  DMX_RETURN_IF_ERROR(ep.Read(block_ + kAreaOff, image.data() + kHeaderBytes, capacity));
  Snapshot snap;
  snap.version = WordAt(image.data(), kImageVersion);
  // Locked (odd): the lock CAS changed only the version, so the map validates under the
  // version it was locked at.
  auto boundaries = Decode(image.data(), image.size(), snap.version - snap.version % 2);
  snap.valid = boundaries.has_value();
  const size_t parts = snap.valid ? boundaries->size() + 1 : 0;
  if (snap.valid) snap.boundaries = std::move(*boundaries);
  for (size_t i = 0; i < parts; ++i) snap.leases.push_back(WordAt(head.data(), static_cast<uint32_t>(8 * i)));
  return snap;
}

Status PartitionStore::ForceUnlock(fabric::Endpoint& ep) const {
  uint64_t version = 0;
  DMX_RETURN_IF_ERROR(ep.Read(Word(kVersionWord), &version, 8));
  if (version % 2 == 0) return Status::InvalidArgument("the partition map is not locked");
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(Word(kVersionWord), version, version - 1, &old));
  return old == version ? Status::Ok() : RetryStatus("the partition map changed meanwhile");
}

Result<uint32_t> PartitionStore::ClaimHosts(fabric::Endpoint& ep, uint32_t parts, uint32_t count,
                                            std::optional<uint32_t> first, uint64_t token) const {
  RetryBudget budget(retry_limits::kHostLeaseClaims, "claim compute nodes of the dex index");
  for (;;) {
    std::vector<uint64_t> leases(parts);
    DMX_RETURN_IF_ERROR(ep.Read(Word(0), leases.data(), 8 * parts));
    std::optional<uint32_t> start = first;
    for (uint32_t f = 0; !start && f + count <= parts; ++f)
      if (std::all_of(leases.begin() + f, leases.begin() + f + count, [](uint64_t l) { return l == 0; }))
        start = f;
    if (!start)
      return Status::InvalidArgument("dex: no " + std::to_string(count) + " free compute node(s) among the " +
                                     std::to_string(parts) + " of this index: other processes host them");
    uint32_t claimed = 0;
    uint64_t old = 0;
    for (; claimed < count; ++claimed) {
      DMX_RETURN_IF_ERROR(ep.Cas(Word(*start + claimed), 0, token, &old));
      if (old != 0) break;
    }
    if (claimed == count) return *start;
    DMX_RETURN_IF_ERROR(ReleaseHosts(ep, *start, claimed, token));
    if (first)
      return Status::InvalidArgument("dex: compute node " + std::to_string(*start + claimed) +
                                     " of this index is hosted by another process; each compute "
                                     "node may be hosted by one process at a time (knob first_node)");
    // Lost a race for a free run: look again.
    if (!budget.Spend())
      return budget.Exhausted(std::to_string(count).append(" of ").append(std::to_string(parts)));
  }
}

Status PartitionStore::ReleaseHosts(fabric::Endpoint& ep, uint32_t first, uint32_t count,
                                    uint64_t token) const {
  uint64_t old = 0;
  for (uint32_t i = first; i < first + count; ++i) DMX_RETURN_IF_ERROR(ep.Cas(Word(i), token, 0, &old));
  return Status::Ok();
}

}  // namespace dmindex::designs::dex
