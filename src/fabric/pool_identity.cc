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
  const PoolIdentityRecord r{PoolIdentityRecord::kMagic, identity.id, identity.created_unix_ms};
  std::memcpy(pool + kPoolIdentityOffset, &r, sizeof r);
}

Result<PoolIdentity> ReadPoolIdentity(Endpoint& ep, uint16_t node) {
  PoolIdentityRecord r{};
  DMX_RETURN_IF_ERROR(ep.Read(GlobalAddress(node, kPoolIdentityOffset), &r, sizeof r));
  if (r.magic != PoolIdentityRecord::kMagic)
    return Status::Corruption("memory node " + std::to_string(node) + " has no pool identity");
  return PoolIdentity{r.id, r.created_unix_ms};
}

}  // namespace dmindex::fabric
