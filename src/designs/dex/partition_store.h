// The partition map's copy in the memory pool: what every process opening a DEX index
// routes by, and how a process moving a boundary tells the others (DEX §4, across
// processes). One block, reached from the catalog entry's aux word 0:
//
//   word 0            version: even = stable; odd = a process is changing the map (a lock)
//   word 1            number of boundaries
//   words 2..65       boundaries (kMaxParts - 1 used at most)
//   word 66           XXH3 of words 0..65: a READ torn by a concurrent change fails it
//   words 67..130     host leases: word 67 + i names the process hosting compute node i
//                     (0: nobody), so two processes never serve one partition
//
// Only the process hosting the compute node that loses keys publishes a change (after
// writing its dirty pages back), so a process's stale view only ever misses ranges it
// gained; it reloads the block when asked for a key it does not serve.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "designs/dex/partition_map.h"
#include "fabric/endpoint.h"

namespace dmindex::designs::dex {

struct StoredMap {
  uint64_t version = 0;
  std::vector<Key> boundaries;
};

class PartitionStore {
 public:
  static constexpr uint32_t kBoundaryWords = PartitionMap::kMaxParts;
  static constexpr uint32_t kChecksumWord = 2 + kBoundaryWords;
  static constexpr uint32_t kLeaseWord = kChecksumWord + 1;
  static constexpr uint32_t kBlockBytes = 8 * (kLeaseWord + PartitionMap::kMaxParts);
  static constexpr uint32_t kMapBytes = 8 * kLeaseWord;

  explicit PartitionStore(GlobalAddress block) : block_(block) {}
  GlobalAddress block() const { return block_; }

  // Writes version 0 of the map into a fresh block (no leases held).
  static Status Initialize(fabric::Endpoint& ep, GlobalAddress block, const std::vector<Key>& boundaries);

  // The current map; retries while a change is in progress or the read was torn.
  Result<StoredMap> Load(fabric::Endpoint& ep) const;
  // Takes the change lock at `version` (version -> version + 1). Retry if the map changed
  // since (load it again) or another process holds the lock.
  Status Lock(fabric::Endpoint& ep, uint64_t version) const;
  // Writes `boundaries` as version + 2 and releases the lock in the same WRITE.
  Status Publish(fabric::Endpoint& ep, uint64_t locked_version, const std::vector<Key>& boundaries) const;
  // Releases the lock without a change.
  Status Unlock(fabric::Endpoint& ep, uint64_t locked_version) const;

  // Host leases: `token` is this process's (random, non-zero). Claims compute nodes
  // first .. first + count - 1 of `parts`, all or none; without `first`, the lowest run of
  // free ones. InvalidArgument if they are (or no run is) free.
  Result<uint32_t> ClaimHosts(fabric::Endpoint& ep, uint32_t parts, uint32_t count,
                              std::optional<uint32_t> first, uint64_t token) const;
  Status ReleaseHosts(fabric::Endpoint& ep, uint32_t first, uint32_t count, uint64_t token) const;

  // For an operator (`dmindex indexes`): the raw state, read once, without waiting: the
  // version (odd: a change is in progress, or a process died while changing the map),
  // whether the map part validated, and the lease words.
  struct Snapshot {
    uint64_t version = 0;
    bool valid = false;
    std::vector<Key> boundaries;
    std::vector<uint64_t> leases;  // one per compute node
  };
  Result<Snapshot> Inspect(fabric::Endpoint& ep) const;
  // Releases the change lock a dead process left (odd version -> version - 1).
  Status ForceUnlock(fabric::Endpoint& ep) const;

 private:
  static uint64_t Checksum(const uint64_t* words);
  // The map part of a block (version, count, boundaries, checksum), `bytes` long.
  static std::vector<uint64_t> Encode(uint64_t version, const std::vector<Key>& boundaries, uint32_t bytes);
  static std::vector<Key> Boundaries(const std::vector<uint64_t>& words);  // count checked
  GlobalAddress Word(uint32_t i) const { return block_ + 8ull * i; }
  GlobalAddress block_;
};

}  // namespace dmindex::designs::dex
