// The partition map's copy in the memory pool: what every process opening a DEX index
// routes by, and how a process moving a boundary tells the others (DEX §4, across
// processes). One block, reached from the catalog entry's aux word 0:
//
//   words 0..63   host leases: word i names the process hosting compute node i (0: nobody),
//                 so two processes never serve one partition
//   word 64       the boundary area's capacity in bytes (set when the block is made)
//   word 65       version: even = stable; odd = a process is changing the map (a lock)
//   word 66       checksum: XXH3 of word 67 and the used area, seeded by the version: a READ
//                 torn by a concurrent change fails it
//   word 67       number of boundaries | used area bytes << 32
//   bytes 544..   the area: each boundary as its public byte string (the u64 format's 8
//                 big-endian bytes), a 2-byte length and the bytes, packed
//
// The area holds parts - 1 boundaries of up to the index's longest key, and at least
// kFirstAreaBytes, which a reader takes with the header in one READ: every u64 map (up to 63
// boundaries of 10 bytes) is one READ; a longer map of byte keys a second READ of the rest.
//
// Only the process hosting the compute node that loses keys publishes a change (after
// writing its dirty pages back), so a process's stale view only ever misses ranges it
// gained; it reloads the block when asked for a key it does not serve.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/endpoint.h"

namespace dmindex::designs::dex {

struct StoredMap {
  uint64_t version = 0;
  std::vector<std::string> boundaries;
};

class PartitionStore {
 public:
  static constexpr uint32_t kMaxParts = 64;
  static constexpr uint32_t kCapacityWord = kMaxParts;
  static constexpr uint32_t kVersionWord = kCapacityWord + 1;
  static constexpr uint32_t kChecksumWord = kVersionWord + 1;
  static constexpr uint32_t kSizeWord = kChecksumWord + 1;
  static constexpr uint32_t kAreaOff = 8 * (kSizeWord + 1);
  static constexpr uint32_t kFirstAreaBytes = 640;
  static constexpr uint32_t kLengthBytes = 2;  // before each boundary in the area

  explicit PartitionStore(GlobalAddress block) : block_(block) {}
  GlobalAddress block() const { return block_; }

  // The bytes of a block for `parts` compute nodes and keys of up to `max_key_bytes`.
  static uint32_t BlockBytes(uint32_t parts, uint32_t max_key_bytes);
  // Writes version 0 of the map into a fresh block of BlockBytes(parts, max_key_bytes) (no
  // leases held).
  static Status Initialize(fabric::Endpoint& ep, GlobalAddress block, uint32_t parts,
                           uint32_t max_key_bytes, const std::vector<std::string>& boundaries);

  // The current map; retries while a change is in progress or the read was torn.
  Result<StoredMap> Load(fabric::Endpoint& ep) const;
  // Takes the change lock at `version` (version -> version + 1). Retry if the map changed
  // since (load it again) or another process holds the lock.
  Status Lock(fabric::Endpoint& ep, uint64_t version) const;
  // Writes `boundaries` as version + 2 and releases the lock in the same WRITE.
  // InvalidArgument (nothing written) if they do not fit the block.
  Status Publish(fabric::Endpoint& ep, uint64_t locked_version, const std::vector<std::string>& boundaries) const;
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
    std::vector<std::string> boundaries;
    std::vector<uint64_t> leases;  // one per compute node
  };
  Result<Snapshot> Inspect(fabric::Endpoint& ep) const;
  // Releases the change lock a dead process left (odd version -> version - 1).
  Status ForceUnlock(fabric::Endpoint& ep) const;

 private:
  // The header words 65..67 and the area of a map, as one WRITE's bytes (from word 65).
  static Result<std::vector<std::byte>> Encode(uint64_t version, const std::vector<std::string>& boundaries,
                                               uint64_t capacity);
  // The boundaries of a map image starting at word 64 (capacity, version, checksum, size,
  // area): nothing if it does not validate as stored at `version`.
  static std::optional<std::vector<std::string>> Decode(const std::byte* image, size_t bytes, uint64_t version);
  GlobalAddress Word(uint32_t i) const { return block_ + 8ull * i; }
  GlobalAddress block_;
};

}  // namespace dmindex::designs::dex
