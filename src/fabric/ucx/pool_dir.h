// A persistent pool: `dmindex memserver --data-dir DIR`. DIR/pool holds the pool's bytes and,
// inside them, its identity and chunk allocator (pool_identity.h); the server maps it shared,
// so every one-sided write is in the kernel's page cache the moment it lands and outlives the
// server process. DIR/lock carries an flock held for the server's lifetime: the kernel drops
// it when the process dies however it dies, so a second server on a live DIR is refused and a
// restart after kill -9 is not.
//
// How the file reaches UCX (docs/UCX.md, "Persistent pools"): UCX's shared-memory transports
// export only memory UCX allocated itself, so over shm the server lets UCX allocate its posix
// segment and then puts the file under it (AdoptUcxSegment); over TCP UCX emulates every verb
// with messages anyway, and the file's own mapping is registered.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dmindex/status.h"

namespace dmindex::fabric::ucx {

class PoolDir {
 public:
  // Locks DIR (created with its parents if absent) and opens DIR/pool, creating it sparse with `pool_bytes`
  // zero bytes if absent. Busy if a live server holds DIR; InvalidArgument if DIR/pool has
  // another size.
  static Result<std::unique_ptr<PoolDir>> Open(const std::string& dir, uint64_t pool_bytes);
  ~PoolDir();
  PoolDir(const PoolDir&) = delete;
  PoolDir& operator=(const PoolDir&) = delete;

  int pool_fd() const { return pool_fd_; }
  const std::string& pool_path() const { return pool_path_; }
  // True when DIR/pool was created by Open: its bytes are zero and it has no identity yet.
  bool created() const { return created_; }

  // Maps the pool file shared at a place of the kernel's choosing.
  Result<void*> Map(uint64_t bytes) const;
  // Replaces a posix shared-memory segment UCX allocated at [base, base + bytes) by the pool
  // file: the mapping at base becomes the file's (MAP_FIXED), and UCX's descriptor of the
  // segment, which clients open as /proc/<pid>/fd/<n>, becomes a descriptor of the file.
  Status AdoptUcxSegment(void* base, uint64_t bytes) const;

 private:
  PoolDir() = default;
  std::string pool_path_;
  int lock_fd_ = -1;
  int pool_fd_ = -1;
  bool created_ = false;
};

}  // namespace dmindex::fabric::ucx
