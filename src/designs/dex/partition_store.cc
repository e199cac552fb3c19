#include "designs/dex/partition_store.h"

#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/retry.h"
#include "common/retry_status.h"

namespace dmindex::designs::dex {

uint64_t PartitionStore::Checksum(const uint64_t* words) {
  return XXH3_64bits_withSeed(words, 8 * kChecksumWord, 0x6d61702d786564ull);
}

std::vector<uint64_t> PartitionStore::Encode(uint64_t version, const std::vector<Key>& boundaries,
                                             uint32_t bytes) {
  std::vector<uint64_t> words(bytes / 8, 0);
  words[0] = version;
  words[1] = boundaries.size();
  std::copy(boundaries.begin(), boundaries.end(), words.begin() + 2);
  words[kChecksumWord] = Checksum(words.data());
  return words;
}

std::vector<Key> PartitionStore::Boundaries(const std::vector<uint64_t>& words) {
  return std::vector<Key>(words.begin() + 2, words.begin() + 2 + words[1]);
}

Status PartitionStore::Initialize(fabric::Endpoint& ep, GlobalAddress block,
                                  const std::vector<Key>& boundaries) {
  if (boundaries.size() >= kBoundaryWords) return Status::InvalidArgument("dex: too many partitions");
  const std::vector<uint64_t> words = Encode(0, boundaries, kBlockBytes);  // and no leases
  return ep.Write(block, words.data(), kBlockBytes);
}

Result<StoredMap> PartitionStore::Load(fabric::Endpoint& ep) const {
  std::vector<uint64_t> words(kMapBytes / 8);
  // A change holds the lock for one flush of dirty pages: a reader allows it generous time
  // (retry_limits::kPartitionMapChanging) before calling the map stuck.
  RetryBudget budget(retry_limits::kPartitionMapChanging, "read the dex partition map");
  Backoff backoff(backoff::kPoll, "the partition map to settle", block_);
  for (;;) {
    DMX_RETURN_IF_ERROR(ep.Read(block_, words.data(), kMapBytes));
    const bool stable = words[0] % 2 == 0 && words[kChecksumWord] == Checksum(words.data());
    if (stable) {
      if (words[1] >= kBoundaryWords) return Status::Corruption("dex partition map: bad count");
      return StoredMap{words[0], Boundaries(words)};
    }
    if (!budget.Spend()) return budget.Exhausted("at " + block_.ToString());
    backoff.Pause();
  }
}

Status PartitionStore::Lock(fabric::Endpoint& ep, uint64_t version) const {
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(block_, version, version + 1, &old));
  return old == version ? Status::Ok() : RetryStatus("partition map changed");
}

Status PartitionStore::Publish(fabric::Endpoint& ep, uint64_t locked_version,
                               const std::vector<Key>& boundaries) const {
  // Even again: stable, and newer than every earlier copy.
  const std::vector<uint64_t> words = Encode(locked_version + 2, boundaries, kMapBytes);
  // One WRITE publishes and unlocks. It may land in pieces in any order; readers validate
  // the checksum, which covers the version, so a half-written block never passes.
  return ep.Write(block_, words.data(), kMapBytes);
}

Status PartitionStore::Unlock(fabric::Endpoint& ep, uint64_t locked_version) const {
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(block_, locked_version + 1, locked_version, &old));
  return old == locked_version + 1 ? Status::Ok() : Status::Corruption("dex partition map: lock lost");
}

Result<PartitionStore::Snapshot> PartitionStore::Inspect(fabric::Endpoint& ep) const {
  std::vector<uint64_t> words(kBlockBytes / 8);
  DMX_RETURN_IF_ERROR(ep.Read(block_, words.data(), kBlockBytes));
  Snapshot snap;
  snap.version = words[0];
  // Locked (odd): the lock CAS changed only the version, so the map validates under the
  // version it was locked at.
  std::vector<uint64_t> as_stored(words.begin(), words.begin() + kChecksumWord);
  if (as_stored[0] % 2 == 1) --as_stored[0];
  snap.valid = words[kChecksumWord] == Checksum(as_stored.data()) && words[1] < kBoundaryWords;
  const size_t parts = snap.valid ? words[1] + 1 : 0;
  if (snap.valid) snap.boundaries = Boundaries(words);
  snap.leases.assign(words.begin() + kLeaseWord, words.begin() + kLeaseWord + parts);
  return snap;
}

Status PartitionStore::ForceUnlock(fabric::Endpoint& ep) const {
  uint64_t version = 0;
  DMX_RETURN_IF_ERROR(ep.Read(block_, &version, 8));
  if (version % 2 == 0) return Status::InvalidArgument("the partition map is not locked");
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(block_, version, version - 1, &old));
  return old == version ? Status::Ok() : RetryStatus("the partition map changed meanwhile");
}

Result<uint32_t> PartitionStore::ClaimHosts(fabric::Endpoint& ep, uint32_t parts, uint32_t count,
                                            std::optional<uint32_t> first, uint64_t token) const {
  RetryBudget budget(retry_limits::kHostLeaseClaims, "claim compute nodes of the dex index");
  for (;;) {
    std::vector<uint64_t> leases(parts);
    DMX_RETURN_IF_ERROR(ep.Read(Word(kLeaseWord), leases.data(), 8 * parts));
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
      DMX_RETURN_IF_ERROR(ep.Cas(Word(kLeaseWord + *start + claimed), 0, token, &old));
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
  for (uint32_t i = first; i < first + count; ++i)
    DMX_RETURN_IF_ERROR(ep.Cas(Word(kLeaseWord + i), token, 0, &old));
  return Status::Ok();
}

}  // namespace dmindex::designs::dex
