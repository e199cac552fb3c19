#include "tools/lock_listing.h"

#include <map>
#include <string>
#include <vector>

#include "common/runtime.h"
#include "fabric/pool_layout.h"
#include "lease/lease.h"
#include "tree/lock_word.h"

namespace dmindex::tools {
namespace {

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(runtime::WallNow().time_since_epoch()).count();
}

std::string Describe(const lease::SlotInfo& s) {
  const char* phase = s.state.phase == lease::Phase::kHeld ? "held" : "revoked (its holder was fenced)";
  const int64_t age = WallMs() - static_cast<int64_t>(s.renewed_unix_ms);
  return "lease slot " + std::to_string(s.slot) + " epoch " + std::to_string(s.state.epoch) + ", pid " +
         std::to_string(s.pid) + ", " + phase + ", lease " + std::to_string(s.state.length().count()) +
         " ms, renewed " + std::to_string(age) + " ms ago" +
         (s.state.phase == lease::Phase::kHeld && age > lease::TakeoverWait(s.state.length()).count()
              ? " (expired: its locks are taken over by their next writer)"
              : "");
}

}  // namespace

Status ListLocks(fabric::Endpoint& ep, uint16_t memory_nodes, std::ostream& out) {
  auto leases = lease::ReadLeaseTable(ep);
  if (!leases.ok()) return leases.status();
  std::map<uint32_t, lease::SlotInfo> by_slot;
  out << "leases (memory node 0):" << (leases->empty() ? " none" : "") << "\n";
  for (const lease::SlotInfo& s : *leases) {
    by_slot[s.slot] = s;
    out << "  " << Describe(s) << "\n";
  }
  std::vector<uint64_t> table(fabric::kLockTableBytes / 8);
  uint64_t held = 0;
  for (uint16_t mn = 0; mn < memory_nodes; ++mn) {
    DMX_RETURN_IF_ERROR(ep.Read(GlobalAddress(mn, fabric::kLockTableOffset), table.data(),
                                static_cast<uint32_t>(fabric::kLockTableBytes)));
    for (uint64_t i = 0; i < table.size(); ++i) {
      if (table[i] == 0) continue;
      ++held;
      const lease::HolderId h = tree::LockWordHolder(table[i]);
      out << "lock " << GlobalAddress(mn, fabric::kLockTableOffset + 8 * i).ToString() << ": ";
      auto it = by_slot.find(h.slot);
      if (!h.valid()) out << "held without a lease (value " << table[i] << ": lease_ms=0, or DEX)\n";
      else if (h.memory_server())
        out << "held by memory node " << mn << "'s server (XStore's server-side tree), incarnation " << h.epoch
            << " (a restarted server frees its predecessors' words at start)\n";
      else if (it == by_slot.end() || it->second.state.epoch != h.epoch)
        out << "held by lease slot " << h.slot << " epoch " << h.epoch
            << ", which has ended (its next writer takes it over at once)\n";
      else out << "held by " << Describe(it->second) << "\n";
    }
  }
  out << held << " lock" << (held == 1 ? "" : "s") << " held (a lock word guards every node hashing to it, of any index)\n";
  return Status::Ok();
}

}  // namespace dmindex::tools
