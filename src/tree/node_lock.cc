#include "tree/node_lock.h"

#include <vector>

#include "common/retry.h"
#include "tree/lock_table.h"

namespace dmindex::tree {
namespace {

constexpr uint64_t kUnlocked = 0;

}  // namespace

Status NodeLock::LockAndRead(fabric::Endpoint& ep, LocalLockTable* local, uint64_t owner,
                             GlobalAddress node, void* buf, uint32_t len, Held* held,
                             uint64_t* cas_failures) const {
  held->word = LockWordFor(node);
  held->local = local;
  if (local != nullptr && local->Acquire(held->word)) {
    // Handed over: the global lock is already ours and the previous owner's writes landed.
    held->held = true;
    Status s = ep.Read(node, buf, len);
    if (!s.ok()) (void)Unlock(ep, held);
    return s;
  }
  Status s = Acquire(ep, owner, node, buf, len, held, cas_failures);
  if (!s.ok() && local != nullptr) local->Release(held->word, false);
  return s;
}

Status NodeLock::TryLockAndRead(fabric::Endpoint& ep, uint64_t owner, GlobalAddress node,
                                void* buf, uint32_t len, Held* held, uint64_t* holder) const {
  held->word = LockWordFor(node);
  held->local = nullptr;
  return TryOnce(ep, owner, node, buf, len, held, holder);
}

Status NodeLock::TryOnce(fabric::Endpoint& ep, uint64_t owner, GlobalAddress node, void* buf,
                         uint32_t len, Held* held, uint64_t* holder) const {
  uint64_t old = ~kUnlocked;
  // The READ lands after the CAS (in-order batch); it is only used if the CAS won.
  Status cas = combine_ ? ep.Post({fabric::Verb::Cas(held->word, kUnlocked, owner, &old),
                                   fabric::Verb::Read(node, buf, len)},
                                  fabric::Ordering::kInOrder)
                        : ep.Cas(held->word, kUnlocked, owner, &old);
  if (cas.IsUnavailable() && StillOurs(ep, held->word, owner)) {
    static const uint64_t kZero = kUnlocked;
    (void)ep.Write(held->word, &kZero, 8);
  }
  DMX_RETURN_IF_ERROR(cas);
  *holder = old;
  if (old != kUnlocked) return Status::Ok();
  held->held = true;
  held->owner = owner;
  if (combine_) return Status::Ok();
  Status s = ep.Read(node, buf, len);
  if (!s.ok()) (void)Unlock(ep, held);
  return s;
}

Status NodeLock::Acquire(fabric::Endpoint& ep, uint64_t owner, GlobalAddress node, void* buf,
                         uint32_t len, Held* held, uint64_t* cas_failures) const {
  // A lock held for longer than its limit is reported instead of waited on forever (a crashed
  // holder would otherwise hang every writer of that node). The backoff (backoff::kLockHeld)
  // keeps waiting threads off the holder's CPU and off the memory node's NIC.
  RetryBudget budget(retry_limits::kNodeLockHeld, "lock node");
  Backoff backoff(backoff::kLockHeld, "the node lock", held->word);
  for (;;) {
    uint64_t holder = 0;
    DMX_RETURN_IF_ERROR(TryOnce(ep, owner, node, buf, len, held, &holder));
    if (held->held) return Status::Ok();
    ++*cas_failures;
    if (!budget.Spend())
      return budget.Exhausted(node.ToString() + " (lock word " + held->word.ToString() +
                              ", held by owner " + std::to_string(holder) + ")");
    backoff.Pause();
  }
}

Status NodeLock::WriteAndUnlock(fabric::Endpoint& ep, Held* held,
                                std::span<fabric::Verb> writes) const {
  static const uint64_t kZero = kUnlocked;
  const bool hand_over = held->local != nullptr && held->local->ShouldHandOver(held->word);
  std::vector<fabric::Verb> verbs(writes.begin(), writes.end());
  if (!hand_over) verbs.push_back(fabric::Verb::Write(held->word, &kZero, 8));
  Status s = PostInOrder(ep, verbs);
  if (s.IsUnavailable() && StillOurs(ep, held->word, held->owner)) s = PostInOrder(ep, verbs);
  held->held = false;
  if (held->local != nullptr) held->local->Release(held->word, hand_over && s.ok());
  return s;
}

bool NodeLock::StillOurs(fabric::Endpoint& ep, GlobalAddress word, uint64_t owner) {
  // Owner tags are random per session (tree_state.h): a word holding ours was written by us.
  uint64_t now = 0;
  return owner != kUnlocked && ep.Read(word, &now, 8).ok() && now == owner;
}

Status NodeLock::PostInOrder(fabric::Endpoint& ep, std::span<fabric::Verb> verbs) const {
  size_t begin = 0;
  while (begin < verbs.size()) {
    size_t end = begin + 1;
    if (combine_)
      while (end < verbs.size() && verbs[end].remote.node() == verbs[begin].remote.node()) ++end;
    DMX_RETURN_IF_ERROR(ep.Post(verbs.subspan(begin, end - begin), fabric::Ordering::kInOrder));
    begin = end;
  }
  return Status::Ok();
}

}  // namespace dmindex::tree
