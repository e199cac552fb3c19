#include "tree/covering_lock.h"

namespace dmindex::tree {
namespace {

constexpr uint32_t kMaxRestarts = 10000;
constexpr uint32_t kMaxHops = 1 << 16;

}  // namespace

template <KeyValueTraits KV>
Status CoveringLocker<KV>::Lock(Ctx& c, const Key& key, uint8_t level, NodeLockGuard& guard,
                                GlobalAddress* addr, NodeHeader<KV>* h, Outcome* outcome) const {
  for (uint32_t restart = 0; restart < kMaxRestarts; ++restart) {
    typename TreeReader<KV>::Located loc;
    DMX_RETURN_IF_ERROR(reader_.Locate(c, key, level, &loc));
    if (loc.reach == TreeReader<KV>::Reach::kEmpty) {
      *outcome = Outcome::kEmpty;
      return Status::Ok();
    }
    if (loc.reach == TreeReader<KV>::Reach::kRootBelow) {
      *outcome = Outcome::kRootBelow;
      return Status::Ok();
    }
    GlobalAddress at = loc.addr;
    bool stale = false;
    for (uint32_t hop = 0; hop < kMaxHops && !stale; ++hop) {
      uint64_t cas_failures = 0;
      Status s = t_.lock.LockAndRead(c.ep, c.cn.local_locks.get(), c.owner_tag, at, c.node(),
                                     t_.layout.node_bytes, guard.held(), &cas_failures);
      c.CountRetry(cas_failures);
      DMX_RETURN_IF_ERROR(s);
      // Under the lock nobody writes the node, so a failed check means the pointer was
      // stale (the memory holds no node of this tree any more), not a torn read.
      if (!t_.validator.Decode(c.node(), h) || h->dead() || h->level != level || key < h->low) {
        DMX_RETURN_IF_ERROR(guard.Unlock());
        stale = true;
        break;
      }
      if (!h->BeyondHigh(key)) {
        *addr = at;
        *outcome = Outcome::kLocked;
        return Status::Ok();
      }
      // Split since the parent was read: move right (B-link), holding one lock at a time.
      GlobalAddress next = h->sibling;
      DMX_RETURN_IF_ERROR(guard.Unlock());
      if (hop == 0) reader_.DropCached(c, loc, key);
      if (next.is_null()) stale = true;
      at = next;
    }
    reader_.DropCached(c, loc, key);
    c.CountRetry();
    if (!loc.from_cache) DMX_RETURN_IF_ERROR(reader_.RefreshRoot(c).status());
  }
  return Status::Corruption("could not lock a node covering a key after " +
                            std::to_string(kMaxRestarts) + " restarts");
}

template class CoveringLocker<U64KV>;

}  // namespace dmindex::tree
