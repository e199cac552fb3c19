#include "designs/rftree/inline_lock_writer.h"

#include <algorithm>
#include <vector>

#include "common/retry.h"

namespace dmindex::designs::rftree {

template <tree::KeyValueTraits KV>
Status InlineLockWriter<KV>::Write(Ctx& c, tree::WriteOp op, KeyRef key, ValueRef value,
                                  const tree::CompareValue* cas) const {
  using Reach = typename tree::TreeReader<KV>::Reach;
  const auto& leaf = t_.validator.leaf();
  // The node format's limits (key and value sizes): refused before anything is read.
  if (op != tree::WriteOp::kDelete) {
    DMX_RETURN_IF_ERROR(tree::CheckValue<KV>(t_.options, value));
    DMX_RETURN_IF_ERROR(leaf.CheckEntry(key, value));
  }
  const uint32_t trailer = t_.layout.TrailerOffset();
  // Restarts only after creating the root of an empty tree (someone else may create it too).
  RetryBudget restarts(retry_limits::kTreeRestarts, "write");
  // A leaf whose lock stays taken (held, or a write of it still landing): its holder
  // releases it within its write's round trips.
  RetryBudget locked(retry_limits::kNodeLockHeld, "lock leaf");
  Backoff backoff(backoff::kLockHeld, "the leaf's inline lock");
  std::vector<tree::LeafEntry<KV>> entries;
  for (;;) {
    typename tree::TreeReader<KV>::Found f;
    DMX_RETURN_IF_ERROR(reader_.Descend(c, key, 0, c.node(), &f));
    if (f.reach == Reach::kEmpty) {
      if (op != tree::WriteOp::kUpsert) return Status::NotFound();
      DMX_RETURN_IF_ERROR(smo_.CreateRoot(c));
      if (!restarts.Spend()) return restarts.Exhausted("of " + tree::DescribeKey(key) + " into an empty tree");
      continue;
    }
    if (f.reach == Reach::kRootBelow) return Status::Corruption("tree has no leaf level");

    entries.clear();
    leaf.Collect(c.node(), f.h, &entries);
    const auto at = std::lower_bound(entries.begin(), entries.end(), key,
                                     [](const tree::LeafEntry<KV>& e, KeyRef k) { return e.key < k; });
    const bool found = at != entries.end() && key == at->key;
    // NotFound takes effect at the READ: the image was the leaf at an instant of it.
    if (!found && op != tree::WriteOp::kUpsert) return Status::NotFound();
    if (cas != nullptr) {
      // Compared on this image: a mismatch takes effect at the READ, as NotFound does; a
      // match stays true through the write, since the CAS below succeeds only if the leaf
      // is still exactly this image.
      std::string current;
      bool fetched = false;
      DMX_RETURN_IF_ERROR(ValueOf(c, key, *at, &current, &fetched));
      if (!fetched) {
        c.CountRetry();
        if (!locked.Spend()) return locked.Exhausted("value block of a compare-and-swap at " + f.addr.ToString());
        continue;
      }
      if (std::string_view(current) != cas->expected) {
        if (cas->current != nullptr) *cas->current = std::move(current);
        return Status::Ok();
      }
    }

    // The trailer, held, names this session's lease and redo block (tree/lock_word.h).
    auto me = c.LockOwnerOn(f.addr.node());
    if (!me.ok()) return me.status();
    const uint64_t v = f.h.version;
    const uint64_t seen = tree::LoadAt<uint64_t>(c.node(), trailer);
    uint64_t old = seen;
    // A CAS whose reply is lost is let go of before its Unavailable comes back (NodeLock).
    if (seen == v)
      DMX_RETURN_IF_ERROR(t_.lock.TryTrailerLock(c.ep, *me, f.addr + trailer, v, GlobalAddress(), nullptr, 0, &old));
    if (seen != v || old != v) {
      // Held (odd), or the write of a newer version is landing or landed after the READ:
      // READ again once its writer is done - or, every 16th time, once a holder whose lease
      // expired is taken over and its write finished (docs/SYNCHRONIZATION.md).
      c.CountRetry();
      if (locked.spent() % 16 == 15 && (old & 1) != 0) {
        // Our own lease's: a live process releases its trailers, so this one was left to a
        // taker by a writer of ours that gave our lease up (NodeLock): stop, fenced, at once.
        if (me->lease != nullptr && tree::LockWordHolder(tree::TrailerLockWord(old)) == me->lease->id())
          DMX_RETURN_IF_ERROR(me->lease->CheckLive());
        bool took = false;
        DMX_RETURN_IF_ERROR(reader_.TakeOverDeadTrailer(c, f.addr, c.node(), old, &took));
        if (took) continue;
      }
      if (!locked.Spend())
        return locked.Exhausted(f.addr.ToString() + " (lock word " + std::to_string(old) +
                                ", version read " + std::to_string(v) + ")");
      backoff.Pause();
      continue;
    }

    // Locked, and the image is the leaf's content (the CAS from v proves nothing was written
    // since the write of v). A value too long for the leaf goes to a block on its memory node.
    tree::ValueBlockRef block, unlinked;
    fabric::Verb block_write;
    if constexpr (KV::kValueBlocks) {
      if (found) unlinked = at->block;
      if (op != tree::WriteOp::kDelete && value.size() > leaf.InlineLimit()) {
        auto prepared = values_.Prepare(c, key, value, f.addr.node(), &block_write);
        if (!prepared.ok()) {
          Unlock(c, *me, f.addr, v);
          return prepared.status();
        }
        block = *prepared;
        value = ValueRef{};
      }
    }
    DMX_RETURN_IF_ERROR(tree::ApplyToSorted<KV>(entries, op, key, value, block));  // checked above
    DMX_RETURN_IF_ERROR(WriteLocked(c, *me, f.addr, f.h, entries, block, block_write, unlinked));
    if (cas != nullptr) *cas->swapped = true;
    return Status::Ok();
  }
}

template <tree::KeyValueTraits KV>
Status InlineLockWriter<KV>::ValueOf(Ctx& c, KeyRef key, const tree::LeafEntry<KV>& entry, std::string* value,
                                     bool* fetched) const {
  *fetched = true;
  if constexpr (KV::kValueBlocks) {
    if (!entry.block.is_null()) {
      typename tree::ValueStore<KV>::Fetch fetch{entry.block, KV::Owner(key), value};
      return values_.FetchAll(c, {&fetch, 1}, runtime::Now(), fetched);
    }
  }
  *value = entry.value;
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
void InlineLockWriter<KV>::Unlock(Ctx& c, tree::LockOwner me, GlobalAddress addr, uint64_t version) const {
  // Its failure is not the caller's answer (the caller has one), but the release follows
  // NodeLock's rules: asked until it answers, or the trailer left to a taker, never kept.
  (void)reader_.ReleaseTrailer(c, me, addr, version);
}

template <tree::KeyValueTraits KV>
Status InlineLockWriter<KV>::PostAndUnlock(Ctx& c, tree::LockOwner me, GlobalAddress addr,
                                           std::vector<fabric::Verb>* verbs, const typename KV::Key* separator,
                                           tree::NodeLockGuard* parent) const {
  const uint32_t nb = t_.layout.node_bytes, trailer = t_.layout.TrailerOffset();
  const std::byte* image = c.node();
  tree::NodeLock::Held held = tree::NodeLock::TrailerHeld(me, addr, trailer);
  fabric::Verb release;
  if (unlock_ == UnlockMode::kWithNode) {
    // The paper's unlock=with_node: node and unlocked trailer in one WRITE, with no record (the
    // fresh blocks in `verbs` lie outside the leaf: none is recorded).
    release = fabric::Verb::Write(addr, image, nb);
  } else {
    // Only while our lease lets us write (otherwise the trailer is left for a taker, who finds
    // no record of this write and releases the leaf as it was); the record covers the leaf up
    // to its trailer, and the trailer (the release) lands last. A batch that fails is posted
    // again while the trailer still names us (NodeLock::WriteAndReleaseTrailer).
    verbs->push_back(fabric::Verb::Write(addr, image, trailer));
    release = fabric::Verb::Write(addr + trailer, image + trailer, nb - trailer);
  }
  const std::span<fabric::Verb> writes(*verbs);
  if (separator == nullptr) return t_.lock.WriteAndReleaseTrailer(c.ep, &held, writes, release);
  return smo_.ReleaseTryingParent(c, &held, writes, addr, *separator, 1, parent, &release);
}

template <tree::KeyValueTraits KV>
Status InlineLockWriter<KV>::WriteLocked(Ctx& c, tree::LockOwner me, GlobalAddress addr,
                                         const tree::NodeHeader<KV>& h,
                                         const std::vector<tree::LeafEntry<KV>>& entries,
                                         const tree::ValueBlockRef& block, const fabric::Verb& block_write,
                                         const tree::ValueBlockRef& old) const {
  const auto& leaf = t_.validator.leaf();
  const uint32_t nb = t_.layout.node_bytes;
  // A new value block goes first: it lands before the leaf that points at it.
  std::vector<fabric::Verb> verbs;
  if (!block.is_null()) verbs.push_back(block_write);
  auto retire_old = [&] {
    if constexpr (KV::kValueBlocks) values_.Retire(c, old);
  };
  tree::NodeHeader<KV> nh = h;
  nh.version = c.NewVersion(h.version);
  if (leaf.Build(c.node(), nh, entries, false)) {  // fits; its trailer: the new version, unlocked
    DMX_RETURN_IF_ERROR(PostAndUnlock(c, me, addr, &verbs));
    retire_old();
    return Status::Ok();
  }

  typename tree::StructureModifier<KV>::LeafSplitImages split;
  if (Status s = smo_.BuildLeafSplit(c, h, entries, &split); !s.ok()) {
    // Nothing was written: the block goes back, the version back into the trailer.
    if constexpr (KV::kValueBlocks) {
      if (!block.is_null()) values_.Free(c, block);
    }
    Unlock(c, me, addr, h.version);
    return s;
  }
  // The right half must be complete before the left one's sibling link exposes it.
  verbs.push_back(fabric::Verb::Write(split.right, c.sibling(), nb));
  if (split.right.node() != addr.node()) {
    // The leaf is untouched until the right half has landed: a failure releases it as it was.
    if (Status s = c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kUnordered); !s.ok()) {
      Unlock(c, me, addr, h.version);
      return s;
    }
    verbs.clear();
  }
  tree::NodeLockGuard parent(t_.lock, c.ep);
  DMX_RETURN_IF_ERROR(PostAndUnlock(c, me, addr, &verbs, &split.separator, &parent));
  retire_old();
  return smo_.InsertSeparator(c, 1, split.separator, split.right, &parent);
}

template class InlineLockWriter<tree::U64BytesKV>;
template class InlineLockWriter<tree::BytesKV>;

}  // namespace dmindex::designs::rftree
