#include "fabric/pool_identity.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>

#include "common/runtime.h"
#include "dmindex/global_address.h"
#include "fabric/endpoint.h"
#include "fabric/pool_layout.h"

namespace dmindex::fabric {

static_assert(sizeof(PoolIdentityRecord) <= kPoolIdentityBytes);

PoolIdentity PoolIdentity::New() {
  PoolIdentity p;
  while (p.id == 0) p.id = runtime::Entropy();
  p.created_unix_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          runtime::WallNow().time_since_epoch())
          .count());
  return p;
}

std::string PoolIdentity::ToString() const {
  char id_hex[17];
  std::snprintf(id_hex, sizeof id_hex, "%016llx", static_cast<unsigned long long>(id));
  const std::time_t seconds = static_cast<std::time_t>(created_unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &utc);
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          runtime::WallNow().time_since_epoch())
                          .count();
  const long long age_s = (static_cast<long long>(now_ms) - static_cast<long long>(created_unix_ms)) / 1000;
  return std::string("pool ") + id_hex + ", created " + when + " (" + std::to_string(age_s) + " s ago)";
}

void WritePoolIdentity(std::byte* pool, const PoolIdentity& identity) {
  const uint64_t words[3] = {PoolIdentityRecord::kMagic, identity.id, identity.created_unix_ms};
  std::memcpy(pool + kPoolIdentityOffset, words, sizeof words);
}

Result<PoolIdentity> CheckRestoredPool(const std::byte* pool, uint64_t pool_bytes,
                                       uint64_t chunk_bytes, const std::string& where) {
  PoolIdentityRecord r;
  std::memcpy(&r, pool + kPoolIdentityOffset, sizeof r);
  const auto mib = [](uint64_t b) { return std::to_string(b >> 20) + " MiB"; };
  if (r.magic == PoolIdentityRecord::kMagicV1)
    return Status::InvalidArgument(where + " holds a pool of layout 1, made by an older dmindex; this build "
                                   "serves layout 2 (lock words name leases; XStore's memory servers own "
                                   "part of each lock table): serve it with the dmindex that made it, or "
                                   "move it away to start a new pool");
  if (r.magic != PoolIdentityRecord::kMagic || r.id == 0 || r.pool_bytes != pool_bytes ||
      r.chunk_bytes == 0 || r.next_chunk < kChunkAreaOffset || r.next_chunk > pool_bytes ||
      (r.next_chunk - kChunkAreaOffset) % r.chunk_bytes != 0)
    return Status::Corruption(where + " holds no valid pool identity (not a dmindex pool, or "
                              "damaged): refusing to serve it; move it away to start a new pool");
  if (r.chunk_bytes != chunk_bytes)
    return Status::InvalidArgument(where + " was created with chunks of " + mib(r.chunk_bytes) +
                                   ", not " + mib(chunk_bytes) + ": start it with --chunk-size " +
                                   std::to_string(r.chunk_bytes));
  return PoolIdentity{r.id, r.created_unix_ms};
}

Result<PoolIdentity> ReadPoolIdentity(Endpoint& ep, uint16_t node) {
  PoolIdentityRecord r{};
  DMX_RETURN_IF_ERROR(ep.Read(GlobalAddress(node, kPoolIdentityOffset), &r, sizeof r));
  if (r.magic == PoolIdentityRecord::kMagicV1)
    return Status::InvalidArgument("memory node " + std::to_string(node) +
                                   " serves a pool of layout 1 (an older dmindex); this build needs layout 2");
  if (r.magic != PoolIdentityRecord::kMagic)
    return Status::Corruption("memory node " + std::to_string(node) + " has no pool identity");
  return PoolIdentity{r.id, r.created_unix_ms};
}

}  // namespace dmindex::fabric
