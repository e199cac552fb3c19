#include "tree/server_locks.h"

#include <string>
#include <vector>

#include "dmindex/options.h"
#include "fabric/pool_layout.h"
#include "tree/lock_word.h"
#include "tree/redo_log.h"

namespace dmindex::tree {

Result<ServerLockRecovery> FreeLocksOfEarlierIncarnations(fabric::Endpoint& ep, uint16_t node,
                                                          lease::HolderId current) {
  std::vector<uint64_t> table(fabric::kLockTableBytes / 8);
  const GlobalAddress first(node, fabric::kLockTableOffset);
  DMX_RETURN_IF_ERROR(ep.Read(first, table.data(), static_cast<uint32_t>(fabric::kLockTableBytes)));
  ServerLockRecovery done;
  for (uint64_t i = 0; i < table.size(); ++i) {
    const uint64_t dead = table[i];
    const lease::HolderId holder = LockWordHolder(dead);
    if (dead == 0 || !holder.memory_server() || holder == current) continue;
    const GlobalAddress word = first + 8 * i;
    // The record bounds its pieces by the node's size, which this layer does not know: the
    // largest any tree has. Its checksum decides whether it is whole.
    bool replayed = false;
    DMX_RETURN_IF_ERROR(ReplayRedoRecord(ep, dead, word, kMaxNodeBytes, &replayed));
    uint64_t seen = 0;
    DMX_RETURN_IF_ERROR(ep.Cas(word, dead, 0, &seen));
    if (seen != dead)
      return Status::Corruption("lock word " + word.ToString() + " of an earlier memory-server incarnation (" +
                                std::to_string(dead) + ") changed to " + std::to_string(seen) +
                                " while the server started: another process writes this pool's server words");
    ++done.freed;
    done.replayed += replayed ? 1 : 0;
  }
  return done;
}

}  // namespace dmindex::tree
