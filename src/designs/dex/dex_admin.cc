#include "designs/dex/dex_admin.h"

#include <cinttypes>
#include <cstdio>

#include "common/key_text.h"
#include "common/u64.h"
#include "designs/dex/partition_store.h"

namespace dmindex::designs::dex {
namespace {

Result<PartitionStore> StoreOf(fabric::Endpoint& ep, const alloc::CatalogEntry& entry) {
  if (entry.design != "dex")
    return Status::InvalidArgument("index " + entry.name + " is a " + entry.design + " index, not dex");
  uint64_t raw = 0;
  DMX_RETURN_IF_ERROR(ep.Read(entry.aux_word(0), &raw, 8));
  if (raw == 0) return Status::NotFound("index " + entry.name + " has no partition map (yet)");
  return PartitionStore(GlobalAddress::FromRaw(raw));
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

}  // namespace

Result<std::string> DescribeDexIndex(fabric::Endpoint& ep, const alloc::CatalogEntry& entry) {
  auto store = StoreOf(ep, entry);
  if (!store.ok()) return store.status();
  auto snap = store->Inspect(ep);
  if (!snap.ok()) return snap.status();
  std::string out = "  partition map version " + std::to_string(snap->version);
  if (snap->version % 2 == 1) out += " LOCKED (a repartitioning is running, or its process died: --unlock-map)";
  if (!snap->valid) return out + "\n  partition map does not validate (being written?)\n";
  out += "\n";
  const KeyFormat format = entry.schema.format;
  const std::vector<std::string>& b = snap->boundaries;
  const std::string lowest = format == KeyFormat::kU64 ? KeyText(U64Key(u64::kMinKey).str(), format) : "\"\"";
  for (uint32_t i = 0; i <= b.size(); ++i) {
    out += "  compute node " + std::to_string(i) + ": keys [" + (i == 0 ? lowest : KeyText(b[i - 1], format)) +
           ", " + (i < b.size() ? KeyText(b[i], format) : "end") + "), ";
    out += snap->leases[i] == 0 ? "not hosted" : "hosted by token " + Hex(snap->leases[i]);
    out += "\n";
  }
  return out;
}

Status ReleaseDexHost(fabric::Endpoint& ep, const alloc::CatalogEntry& entry, uint32_t compute_node,
                      uint64_t token) {
  auto store = StoreOf(ep, entry);
  if (!store.ok()) return store.status();
  auto snap = store->Inspect(ep);
  if (!snap.ok()) return snap.status();
  if (compute_node >= snap->leases.size())
    return Status::InvalidArgument("index " + entry.name + " has " + std::to_string(snap->leases.size()) +
                                   " compute nodes");
  if (snap->leases[compute_node] != token)
    return Status::InvalidArgument("compute node " + std::to_string(compute_node) + " is " +
                                   (snap->leases[compute_node] == 0
                                        ? std::string("not hosted")
                                        : "hosted by token " + Hex(snap->leases[compute_node])) +
                                   ", not by " + Hex(token) + "; nothing released");
  return store->ReleaseHosts(ep, compute_node, 1, token);
}

Status UnlockDexMap(fabric::Endpoint& ep, const alloc::CatalogEntry& entry) {
  auto store = StoreOf(ep, entry);
  if (!store.ok()) return store.status();
  return store->ForceUnlock(ep);
}

}  // namespace dmindex::designs::dex
