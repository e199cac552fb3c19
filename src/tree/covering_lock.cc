#include "tree/covering_lock.h"

#include <string>

#include "common/retry.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
Status CoveringLocker<KV>::Lock(Ctx& c, KeyRef key, uint8_t level, NodeLockGuard& guard,
                                GlobalAddress* addr, NodeHeader<KV>* h, Outcome* outcome) const {
  // A restart means the located node was stale: a concurrent structure change went through.
  RetryBudget restarts(retry_limits::kTreeRestarts, "lock the node covering");
  Backoff backoff(backoff::kRestart);
  for (;;) {
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
    RetryBudget hops(retry_limits::kLevelHops, "move right to the node covering");
    for (int moved = 0;; ++moved) {
      uint64_t cas_failures = 0;
      auto owner = c.LockOwnerOn(at.node());
      if (!owner.ok()) return owner.status();
      Status s = t_.lock.LockAndRead(c.ep, c.cn.local_locks.get(), *owner, at, c.node(),
                                     t_.layout.node_bytes, guard.held(), &cas_failures);
      c.CountRetry(cas_failures);
      DMX_RETURN_IF_ERROR(s);
      // Under the lock nobody writes the node, so a failed check means the pointer was
      // stale (the memory holds no node of this tree any more), not a torn read.
      if (!t_.validator.Decode(c.node(), h) || h->dead() || h->level != level || key < h->low) {
        DMX_RETURN_IF_ERROR(guard.Unlock());
        break;
      }
      if (!h->BeyondHigh(key)) {
        reader_.TellCache(c, loc, key, moved);  // a split since the parent was cached
        *addr = at;
        *outcome = Outcome::kLocked;
        return Status::Ok();
      }
      // Split since the parent was read: move right (B-link), holding one lock at a time.
      GlobalAddress next = h->sibling;
      DMX_RETURN_IF_ERROR(guard.Unlock());
      if (next.is_null()) break;
      if (!hops.Spend())
        return hops.Exhausted(DescribeKey(key) + " at level " + std::to_string(level) + ", at node " +
                              next.ToString());
      at = next;
    }
    reader_.TellCache(c, loc, key, -1);
    c.CountRetry();
    if (!restarts.Spend())
      return restarts.Exhausted(DescribeKey(key) + " at level " + std::to_string(level) +
                                " (last stale node " + at.ToString() + ")");
    backoff.Pause();
    if (!loc.from_cache) DMX_RETURN_IF_ERROR(reader_.RefreshRoot(c).status());
  }
}

template class CoveringLocker<U64BytesKV>;
template class CoveringLocker<U64KV>;
template class CoveringLocker<BytesKV>;

}  // namespace dmindex::tree
