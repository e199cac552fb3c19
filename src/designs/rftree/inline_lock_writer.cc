#include "designs/rftree/inline_lock_writer.h"

#include <vector>

#include "common/retry.h"

namespace dmindex::designs::rftree {

template <tree::KeyValueTraits KV>
Status InlineLockWriter<KV>::Write(Ctx& c, tree::WriteOp op, const Key& key, const Value& value) const {
  using Reach = typename tree::TreeReader<KV>::Reach;
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
    t_.validator.leaf().Collect(c.node(), f.h, &entries);
    // NotFound takes effect at the READ: the image was the leaf at an instant of it.
    DMX_RETURN_IF_ERROR(tree::ApplyToSorted<KV>(entries, op, key, value));

    const uint64_t v = f.h.version;
    const uint64_t seen = tree::LoadAt<uint64_t>(c.node(), trailer);
    uint64_t old = seen;
    if (seen == v) DMX_RETURN_IF_ERROR(c.ep.Cas(f.addr + trailer, v, v | 1, &old));
    if (seen != v || old != v) {
      // Held (v|1), or the write of a newer version is landing or landed after the READ:
      // READ again once its writer is done.
      c.CountRetry();
      if (!locked.Spend())
        return locked.Exhausted(f.addr.ToString() + " (lock word " + std::to_string(old) +
                                ", version read " + std::to_string(v) + ")");
      backoff.Pause();
      continue;
    }
    return WriteLocked(c, f.addr, f.h, entries);
  }
}

template <tree::KeyValueTraits KV>
void InlineLockWriter<KV>::WriteAndUnlockVerbs(GlobalAddress addr, const std::byte* image,
                                               std::vector<fabric::Verb>* verbs) const {
  const uint32_t nb = t_.layout.node_bytes, trailer = t_.layout.TrailerOffset();
  if (unlock_ == UnlockMode::kWithNode) {  // the paper's: node and unlocked trailer at once
    verbs->push_back(fabric::Verb::Write(addr, image, nb));
    return;
  }
  verbs->push_back(fabric::Verb::Write(addr, image, trailer));
  verbs->push_back(fabric::Verb::Write(addr + trailer, image + trailer, nb - trailer));
}

template <tree::KeyValueTraits KV>
Status InlineLockWriter<KV>::WriteLocked(Ctx& c, GlobalAddress addr, const tree::NodeHeader<KV>& h,
                                         const std::vector<tree::LeafEntry<KV>>& entries) const {
  const auto& leaf = t_.validator.leaf();
  const uint32_t nb = t_.layout.node_bytes;
  std::vector<fabric::Verb> verbs;
  tree::NodeHeader<KV> nh = h;
  nh.version = c.NewVersion(h.version);
  if (leaf.Build(c.node(), nh, entries, false)) {  // fits; its trailer: the new version, unlocked
    WriteAndUnlockVerbs(addr, c.node(), &verbs);
    return c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kInOrder);
  }

  typename tree::StructureModifier<KV>::LeafSplitImages split;
  if (Status s = smo_.BuildLeafSplit(c, h, entries, &split); !s.ok()) {
    // Nothing was written: put the version back, which releases the lock.
    const uint64_t unlocked = h.version;
    (void)c.ep.Write(addr + t_.layout.TrailerOffset(), &unlocked, 8);
    return s;
  }
  // The right half must be complete before the left one's sibling link exposes it.
  verbs.push_back(fabric::Verb::Write(split.right, c.sibling(), nb));
  if (split.right.node() != addr.node()) {
    DMX_RETURN_IF_ERROR(c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kUnordered));
    verbs.clear();
  }
  WriteAndUnlockVerbs(addr, c.node(), &verbs);
  DMX_RETURN_IF_ERROR(c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kInOrder));
  return smo_.InsertSeparator(c, 1, split.separator, split.right);
}

template class InlineLockWriter<tree::U64KV>;

}  // namespace dmindex::designs::rftree
