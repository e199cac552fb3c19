#include "tree/tree_reader.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common/retry.h"
#include "tree/lock_table.h"
#include "tree/node_lock.h"

namespace dmindex::tree {
namespace {

bool AllZero(const std::byte* p, size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

template <KeyValueTraits KV>
Status TreeReader<KV>::Read(Ctx& c, GlobalAddress addr, std::byte* buf, NodeHeader<KV>* h) const {
  DMX_RETURN_IF_ERROR(c.ep.Read(addr, buf, t_.layout.node_bytes));
  if (t_.validator.Decode(buf, h)) return Status::Ok();
  return ReadTorn(c, addr, buf, h);
}

// The image did not validate. Who can be writing a published node (docs/SYNCHRONIZATION.md,
// "Readers of an image that does not validate"): a writer holding the node's lock (every
// write of the core), or - with TreeOptions::unlocked_writers - the DEX compute node that owns
// it, writing it back from its cache. Never a block that no node was written to: nothing
// links one (docs/DEX.md, rule 1). So the reader looks at the lock word and at whether the
// image changes between two READs (with TreeOptions::trailer_lock a leaf's lock word is its
// trailer, held from before its writer's first word lands until after its last):
//  * zero memory: no node was ever written there - Corruption at once;
//  * the lock is held: its holder is writing (or about to); wait for it, as long as it holds
//    the lock (kTornUnderLock: a holder that never lets go died);
//  * the lock is free but the image changed since the last READ: a write landed in between
//    (a locked one that just finished, or an unlocked one in flight): read again
//    (kTornImage bounds a node written so often that no READ ever falls between writes);
//  * the lock is free and the image is byte for byte the torn image of the READ before: that
//    proves nothing. A writer may have taken the lock after the lock word was read and torn
//    this READ exactly as an earlier writer tore the one before: the pieces of a node repeat
//    across versions (a key inserted and deleted again puts a heap line back as it was), so
//    equal bytes are no evidence that no write landed. The lock is: the reader takes it for
//    one READ (NodeLock::TryLockAndRead). Under it no locked writer is at work, so an image
//    that still does not validate is broken for good - a write cut short by a crash, or
//    memory overwritten: Corruption at once. With unlocked writers it may also be an owner's
//    write-back in flight and stalled, so Retry, and the design decides. If the lock is taken
//    meanwhile, its holder is writing: wait for it as above. With trailer_lock the reader
//    holds the leaf's trailer for that READ too (ReadUnderTrailer): an inline writer takes no
//    lock-table word.
template <KeyValueTraits KV>
Status TreeReader<KV>::ReadTorn(Ctx& c, GlobalAddress addr, std::byte* buf, NodeHeader<KV>* h) const {
  const uint32_t nb = t_.layout.node_bytes;
  const GlobalAddress lock_word = t_.lock.WordFor(addr);
  std::vector<std::byte> before(buf, buf + nb);
  Backoff backoff(backoff::kLockHeld);
  RetryBudget under_lock(retry_limits::kTornUnderLock, "read node");
  RetryBudget landing(retry_limits::kTornImage, "read node");
  for (;;) {
    if (AllZero(buf, nb))
      return Status::Corruption("node " + addr.ToString() +
                                " holds zero memory: no node image was ever written there, yet a "
                                "pointer leads to it");
    c.CountRetry();
    uint64_t owner = 0, trailer = 0;
    if (t_.options.trailer_lock) {
      // Leaves lock in their trailer (odd: held), internal nodes in the lock table, and a
      // torn image does not tell which this is: look at both, in one round trip.
      DMX_RETURN_IF_ERROR(c.ep.Post({fabric::Verb::Read(lock_word, &owner, 8),
                                     fabric::Verb::Read(addr + t_.layout.TrailerOffset(), &trailer, 8)},
                                    fabric::Ordering::kUnordered));
      if (trailer & 1) owner = trailer;
    } else {
      DMX_RETURN_IF_ERROR(c.ep.Read(lock_word, &owner, 8));
    }
    DMX_RETURN_IF_ERROR(c.ep.Read(addr, buf, nb));
    if (t_.validator.Decode(buf, h)) return Status::Ok();
    const bool changed = std::memcmp(before.data(), buf, nb) != 0;
    std::memcpy(before.data(), buf, nb);
    // A tree whose only writer reads for its readers (XStore's clients): they never write a
    // lock word, so none can die holding one (docs/SYNCHRONIZATION.md).
    if (t_.read_from_writer && owner == 0 && !changed) return ReadFromWriter(c, addr, buf, h);
    if (owner == 0 && !changed) {  // equal bytes prove nothing: read once under the lock
      NodeLockGuard guard(t_.lock, c.ep);
      auto me = c.LockOwnerOn(addr.node());
      if (!me.ok()) return me.status();
      DMX_RETURN_IF_ERROR(t_.lock.TryLockAndRead(c.ep, *me, addr, buf, nb, guard.held(), &owner));
      // With trailer locks an inline writer takes no lock-table word: hold the trailer too.
      if (guard.holds() && t_.options.trailer_lock) {
        DMX_RETURN_IF_ERROR(ReadUnderTrailer(c, addr, buf, trailer, *me, &owner));
        if (owner != 0) DMX_RETURN_IF_ERROR(guard.Unlock());
      }
      if (guard.holds()) {
        const bool valid = t_.validator.Decode(buf, h);
        DMX_RETURN_IF_ERROR(guard.Unlock());
        if (valid) return Status::Ok();
        const std::string what = "node " + addr.ToString() + " does not validate even under its lock";
        if (t_.options.unlocked_writers)
          return RetryStatus(what + " (a write-back in flight by the compute node that owns it, "
                                    "which writes without the lock, or a write cut short by a crash)");
        return Status::Corruption(what + ": a write cut short by a crash, or overwritten memory");
      }
      // Taken since the lock word was read: its holder is writing.
    }
    if (owner != 0) {  // being written by the lock holder: wait for it, unless it is dead
      if (owner == trailer && under_lock.spent() % 16 == 15) {
        // A leaf's inline lock (trailer_lock) whose holder's lease expired: the same repair.
        bool took = false;
        DMX_RETURN_IF_ERROR(TakeOverDeadTrailer(c, addr, buf, trailer, &took));
        if (took) continue;
      } else if (t_.read_from_writer && under_lock.spent() % 16 == 15) {
        return ReadFromWriter(c, addr, buf, h);  // the writer waits for its own lock, or judges it
      } else if (under_lock.spent() % 16 == 15) {
        // A holder whose lease expired is taken over: its write is finished (redo_log.h) and
        // the image read again.
        auto me = c.LockOwnerOn(addr.node());
        if (!me.ok()) return me.status();
        NodeLockGuard guard(t_.lock, c.ep);
        bool took = false;
        DMX_RETURN_IF_ERROR(t_.lock.TakeOverIfDead(c.ep, *me, addr, buf, nb, owner, guard.held(), &took));
        if (took) {
          DMX_RETURN_IF_ERROR(guard.Unlock());
          continue;
        }
      }
      if (!under_lock.Spend())
        return under_lock.Exhausted(addr.ToString() + " (lock word " + lock_word.ToString() +
                                    " held by owner " + std::to_string(owner) + ")");
      backoff.Pause();
      continue;
    }
    // A write landed between the two READs: try again.
    if (!landing.Spend()) return landing.Exhausted(addr.ToString());
  }
}

// TreeShared::read_from_writer: the tree's only writer reads the node under its own lock and
// sends the image; the reader checks it as any other.
template <KeyValueTraits KV>
Status TreeReader<KV>::ReadFromWriter(Ctx& c, GlobalAddress addr, std::byte* buf, NodeHeader<KV>* h) const {
  DMX_RETURN_IF_ERROR(t_.read_from_writer(c, addr, buf));
  if (t_.validator.Decode(buf, h)) return Status::Ok();
  return Status::Corruption("node " + addr.ToString() + " does not validate even as its writer reads it");
}

// The leaf's own lock for one READ: CAS its trailer from the free value `trailer` (even, as
// just read) to held, READ behind it in one in-order batch, and put `trailer` back. While the
// trailer is held no inline writer can start (it must CAS it from even first), and none is in
// flight (a writer holds it odd until its last word has landed). The caller holds the node's
// lock-table word, so no writer of an internal node is at work either, and restoring the
// trailer overwrites nothing (an internal node's trailer is only written with its node).
// *holder: non-zero if the trailer was not `trailer` (taken or rewritten since: wait).
template <KeyValueTraits KV>
Status TreeReader<KV>::ReadUnderTrailer(Ctx& c, GlobalAddress addr, std::byte* buf, uint64_t trailer,
                                        LockOwner me, uint64_t* holder) const {
  const GlobalAddress word = addr + t_.layout.TrailerOffset();
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(t_.lock.TryTrailerLock(c.ep, me, word, trailer, addr, buf, t_.layout.node_bytes, &old));
  if (old != trailer) {
    *holder = old | 1;
    return Status::Ok();
  }
  *holder = 0;
  return ReleaseTrailer(c, me, addr, trailer);
}

template <KeyValueTraits KV>
Status TreeReader<KV>::ReleaseTrailer(Ctx& c, LockOwner me, GlobalAddress addr, const uint64_t& version) const {
  NodeLock::Held held = NodeLock::TrailerHeld(me, addr, t_.layout.TrailerOffset());
  return t_.lock.WriteAndReleaseTrailer(c.ep, &held, {}, fabric::Verb::Write(held.word, &version, 8));
}

template <KeyValueTraits KV>
Status TreeReader<KV>::TakeOverDeadTrailer(Ctx& c, GlobalAddress addr, std::byte* buf, uint64_t trailer,
                                           bool* took) const {
  auto me = c.LockOwnerOn(addr.node());
  if (!me.ok()) return me.status();
  const GlobalAddress word = addr + t_.layout.TrailerOffset();
  DMX_RETURN_IF_ERROR(t_.lock.TakeOverTrailerIfDead(c.ep, *me, addr, word, buf, t_.layout.node_bytes,
                                                    trailer, took));
  if (!*took) return Status::Ok();
  // The leaf is whole now (the dead holder's image, or the one it found): its version is
  // what the trailer says once free. A stale image of the old version still matches it, and
  // rightly: the leaf holds exactly that image then (redo_log.h: no record, nothing landed).
  NodeHeader<KV> h;
  if (!t_.validator.Decode(buf, &h))
    return Status::Corruption("leaf " + addr.ToString() + " does not validate after its dead holder's "
                              "write was finished (its trailer stays held)");
  return ReleaseTrailer(c, *me, addr, h.version);
}

template <KeyValueTraits KV>
Result<GlobalAddress> TreeReader<KV>::Root(Ctx& c) const {
  uint64_t raw = c.cn.root.load(std::memory_order_acquire);
  if (raw != 0) return GlobalAddress::FromRaw(raw);
  return RefreshRoot(c);
}

template <KeyValueTraits KV>
Result<GlobalAddress> TreeReader<KV>::RefreshRoot(Ctx& c) const {
  uint64_t raw = 0;
  DMX_RETURN_IF_ERROR(c.ep.Read(t_.root_word, &raw, 8));
  c.cn.root.store(raw, std::memory_order_release);
  return GlobalAddress::FromRaw(raw);
}

template <KeyValueTraits KV>
Status TreeReader<KV>::WalkDown(Ctx& c, KeyRef key, uint8_t level, GlobalAddress addr,
                                int expect, std::byte* buf, Found* out, Walk* walk,
                                uint32_t* first_hops) const {
  RoutingCache<KV>* cache = c.cn.cache.get();
  bool first_level = true;
  *first_hops = 0;
  // Down and right: more hops than that cannot come from a tree, only from a cycle.
  RetryBudget hops(retry_limits::kLevelHops, "walk to");
  for (;;) {
    if (!hops.Spend()) return hops.Exhausted(DescribeKey(key) + ", at node " + addr.ToString());
    NodeHeader<KV> h;
    DMX_RETURN_IF_ERROR(Read(c, addr, buf, &h));
    // Fences and level tell whether this is (still) a node on our path: a node reached
    // through a stale pointer (freed and reused, or a different level) does not cover key.
    switch (NextStep(h, key, expect, level)) {
      case Step::kStale:
        *walk = Walk::kStale;
        return Status::Ok();
      case Step::kRight:  // B-link: the node split after its parent was read
        if (first_level) ++*first_hops;
        if (expect < 0) c.cn.root.store(0, std::memory_order_relaxed);  // root split: re-read
        expect = h.level;
        addr = h.sibling;
        break;
      case Step::kArrived:
        if (cache != nullptr && h.level > 0) cache->Insert(addr, h, buf);  // internal: keep it
        *out = {addr, h, h.level == level ? Reach::kAtLevel : Reach::kRootBelow};
        *walk = Walk::kDone;
        return Status::Ok();
      case Step::kDown:
        if (cache != nullptr) cache->Insert(addr, h, buf);
        addr = t_.validator.internal().ChildFor(buf, h, key);
        expect = h.level - 1;
        first_level = false;
        break;
    }
  }
}

template <KeyValueTraits KV>
Status TreeReader<KV>::Descend(Ctx& c, KeyRef key, uint8_t level, std::byte* buf,
                               Found* out, const typename RoutingCache<KV>::Hit* hint) const {
  RoutingCache<KV>* cache = c.cn.cache.get();
  // A restart means the walk met a stale node: a concurrent structure change went through.
  RetryBudget restarts(retry_limits::kTreeRestarts, "descend to");
  Backoff backoff(backoff::kRestart);
  for (bool first = true;; first = false) {
    typename RoutingCache<KV>::Hit hit;
    bool from_cache = false;
    if (first && hint != nullptr) {
      hit = *hint;
      from_cache = true;
    } else if (cache != nullptr) {
      from_cache = cache->FindChild(key, static_cast<uint8_t>(level + 1), &hit);
    }
    GlobalAddress addr = hit.child;
    int expect = from_cache ? hit.level - 1 : -1;
    if (!from_cache) {
      auto root = Root(c);
      if (!root.ok()) return root.status();
      if (root->is_null()) {
        out->reach = Reach::kEmpty;
        return Status::Ok();
      }
      addr = *root;
    }
    Walk walk;
    uint32_t first_hops;
    DMX_RETURN_IF_ERROR(WalkDown(c, key, level, addr, expect, buf, out, &walk, &first_hops));
    // The cache learns what its node led to: a child that split since (the cached node is
    // outdated) or a stale one.
    if (from_cache && walk == Walk::kStale) cache->Stale(hit, key);
    else if (from_cache && first_hops > 0) cache->MovedRight(hit, key, first_hops);
    if (walk == Walk::kDone) return Status::Ok();
    c.CountRetry();
    if (!restarts.Spend())
      return restarts.Exhausted(DescribeKey(key) + " at level " + std::to_string(level) +
                                " (the last walk started at node " + addr.ToString() + ")");
    backoff.Pause();
    if (!from_cache) DMX_RETURN_IF_ERROR(RefreshRoot(c).status());
  }
}

template <KeyValueTraits KV>
Status TreeReader<KV>::Locate(Ctx& c, KeyRef key, uint8_t level, Located* out) const {
  *out = Located{};
  RoutingCache<KV>* cache = c.cn.cache.get();
  typename RoutingCache<KV>::Hit hit;
  bool cached = cache != nullptr && cache->FindChild(key, static_cast<uint8_t>(level + 1), &hit);
  if (cached && hit.level == level + 1) {  // the parent is cached: no remote access
    *out = {hit.child, Reach::kAtLevel, true, hit};
    return Status::Ok();
  }
  Found f;
  DMX_RETURN_IF_ERROR(
      Descend(c, key, static_cast<uint8_t>(level + 1), c.scratch(), &f, cached ? &hit : nullptr));
  out->reach = f.reach;
  if (f.reach == Reach::kAtLevel) {
    out->addr = t_.validator.internal().ChildFor(c.scratch(), f.h, key);
  } else if (f.reach == Reach::kRootBelow && f.h.level == level) {
    out->addr = f.addr;  // the tree's top level is the asked one: lock that node itself
    out->reach = Reach::kAtLevel;
  }
  return Status::Ok();
}

template <KeyValueTraits KV>
void TreeReader<KV>::TellCache(Ctx& c, const Located& loc, KeyRef key, int hops) const {
  if (!loc.from_cache || !c.cn.cache) return;
  if (hops < 0) c.cn.cache->Stale(loc.hit, key);
  else if (hops > 0) c.cn.cache->MovedRight(loc.hit, key, static_cast<uint32_t>(hops));
}

template <KeyValueTraits KV>
Status TreeReader<KV>::Lookup(Ctx& c, KeyRef key, Value* value) const {
  const auto& leaf = t_.validator.leaf();
  RetryBudget restarts(retry_limits::kTreeRestarts, "look up the value of");
  for (;;) {
    runtime::Clock::time_point started;
    if constexpr (KV::kValueBlocks) started = runtime::Now();  // before the leaf is READ
    Found f;
    DMX_RETURN_IF_ERROR(Descend(c, key, 0, c.node(), &f));
    if (f.reach == Reach::kEmpty) return Status::NotFound();
    const int slot = leaf.Find(c.node(), f.h, key);
    if (slot < 0) return Status::NotFound();
    if constexpr (KV::kValueBlocks) {
      const ValueBlockRef ref = leaf.BlockAt(c.node(), f.h, static_cast<uint32_t>(slot));
      if (!ref.is_null()) {
        typename ValueStore<KV>::Fetch fetch{ref, KV::Owner(key), value};
        bool ok = false;
        DMX_RETURN_IF_ERROR(values_.FetchAll(c, {&fetch, 1}, started, &ok));
        if (ok) return Status::Ok();
        c.CountRetry();  // replaced, or read past the lease: read the leaf again
        if (!restarts.Spend())
          return restarts.Exhausted(DescribeKey(key) + " (its value block at " + ref.addr.ToString() +
                                    " never validated within the lease)");
        continue;
      }
    }
    *value = leaf.ValueAt(c.node(), f.h, static_cast<uint32_t>(slot));
    return Status::Ok();
  }
}

template <KeyValueTraits KV>
bool TreeReader<KV>::TakeLeaf(Ctx& c, const std::byte* image, const NodeHeader<KV>& h,
                              const ScanRange<KV>& range, Key* cursor, size_t count,
                              std::vector<LeafEntry<KV>>* out) const {
  c.leaf_entries.clear();
  t_.validator.leaf().Collect(image, h, &c.leaf_entries);
  c.NoteLeafEntries(c.leaf_entries.size());
  for (auto& e : c.leaf_entries) {
    if (e.key < *cursor || range.Before(e.key)) continue;
    if (range.Beyond(e.key)) return true;
    out->push_back(std::move(e));
    if (out->size() >= count) return true;
  }
  // Continue right of this image's high fence: entries moved right by a later split are
  // found in the sibling, none is returned twice.
  *cursor = h.high;
  return h.sibling.is_null() || range.Beyond(h.high);
}

template <KeyValueTraits KV>
Status TreeReader<KV>::ScanFrom(Ctx& c, GlobalAddress next, const ScanRange<KV>& range, Key cursor,
                                size_t count, std::vector<LeafEntry<KV>>* out) const {
  Found f;
  for (;;) {
    Walk walk;
    uint32_t hops;
    DMX_RETURN_IF_ERROR(WalkDown(c, cursor, 0, next, 0, c.node(), &f, &walk, &hops));
    if (walk == Walk::kStale) {  // the sibling is not what the link promised: re-descend
      c.CountRetry();
      DMX_RETURN_IF_ERROR(Descend(c, cursor, 0, c.node(), &f));
      if (f.reach == Reach::kEmpty) return Status::Ok();
    }
    if (TakeLeaf(c, c.node(), f.h, range, &cursor, count, out)) return Status::Ok();
    next = f.h.sibling;
  }
}

template <KeyValueTraits KV>
Status TreeReader<KV>::Scan(Ctx& c, const ScanRange<KV>& range, size_t count,
                            std::vector<LeafEntry<KV>>* out) const {
  if (out->size() >= count) return Status::Ok();
  Found f;
  DMX_RETURN_IF_ERROR(Descend(c, range.start, 0, c.node(), &f));
  if (f.reach == Reach::kEmpty) return Status::Ok();
  Key cursor(range.start);
  if (TakeLeaf(c, c.node(), f.h, range, &cursor, count, out)) return Status::Ok();
  return ScanFrom(c, f.h.sibling, range, cursor, count, out);
}

template class TreeReader<U64BytesKV>;
template class TreeReader<U64KV>;
template class TreeReader<BytesKV>;

}  // namespace dmindex::tree
