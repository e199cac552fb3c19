// TieredTree: cleaning (dirty entries written to Y, the leaves kept) and release (a unit's
// subtree written to Y and pruned to one mounted leaf) - IndeXY's two moves of data from X to
// Y. The rest of the tree is tiered_tree.cc, whose explicit instantiation provides the members
// used here (FindAtLevel, LowOf, AppendEntry, RetireNode); these two are instantiated below.
#include <algorithm>

#include "common/retry.h"
#include "designs/local/tiered_tree.h"

namespace dmindex::designs::local {

template <class F>
Result<uint64_t> TieredTree<F>::Clean(Worker& w, std::string_view id, std::string_view end_id, ColdSink& sink) {
  typename Base::OpScope scope(w, true);
  constexpr size_t kBatch = 1024;
  std::string from;
  bool from_set = LowOf(id, &from), after = false;
  std::string end;
  const bool bounded = LowOf(end_id, &end);
  const Probe end_probe = bounded ? F::ProbeOf(end) : Probe{};
  uint64_t written = 0;
  struct Held {
    NodeT* leaf;
    uint64_t version;                 // before our lock, for Abandon
    std::vector<uint32_t> positions;  // entries taken
  };
  for (;;) {
    // 1. Lock the leaves of the range from `from`, left to right, taking their dirty entries.
    Path path;
    NodeT* leaf;
    uint64_t v;
    if (!FindAtLevel(from_set ? &from : nullptr, 0, &path, &leaf, &v)) {
      this->restarts_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    uint64_t locked_at;
    if (!leaf->lock().LockLive(&locked_at)) continue;  // released meanwhile: find again
    std::vector<Held> held;
    std::vector<ColdEntry> batch;
    bool done = false;
    const Probe from_probe = F::ProbeOf(from);
    while (leaf != nullptr) {
      Held& h = held.emplace_back(Held{leaf, locked_at, {}});
      const uint32_t n = leaf->count();
      uint32_t i = !from_set ? 0 : after ? leaf->UpperBound(from_probe) : leaf->LowerBound(from_probe);
      for (; i < n; ++i) {
        if (bounded && !F::StoredLess(leaf->key(i), end_probe)) {
          done = true;
          break;
        }
        if (!(leaf->entry_flags(i) & entry_flags::kDirty)) continue;
        h.positions.push_back(i);
        AppendEntry(leaf, i, &batch);
      }
      NodeT* next = leaf->next();
      if (done || next == nullptr) {
        done = true;
        break;
      }
      if (batch.size() >= kBatch) break;  // continue after this leaf's last key
      leaf = next;
      // Only this thread releases, and the leaf before holds its next pointer still.
      if (!leaf->lock().LockLive(&locked_at)) break;
    }
    // 2. The cold store takes them; then they are clean and in Y, and tombstones leave.
    Status s = batch.empty() ? Status::Ok() : sink.Write(batch);
    std::string last;
    if (!held.empty() && held.back().leaf->count() > 0) {
      uint64_t k[F::kKeyWords];
      held.back().leaf->CopyKey(held.back().leaf->count() - 1, k);
      F::Append(k, &last);
    }
    for (Held& h : held) {
      bool changed = false;
      if (s.ok()) {
        for (auto p = h.positions.rbegin(); p != h.positions.rend(); ++p) {
          const uint8_t f = h.leaf->entry_flags(*p);
          changed = true;
          if (!(f & entry_flags::kTombstone)) {
            h.leaf->set_entry_flags(*p, static_cast<uint8_t>((f & ~entry_flags::kDirty) | entry_flags::kInY));
            continue;
          }
          sink.BeforeUnlink();
          uint64_t k[F::kKeyWords];
          h.leaf->CopyKey(*p, k);
          const typename Base::StoredValue old{h.leaf->value(*p), h.leaf->boxed(*p)};
          h.leaf->RemoveEntry(*p);
          this->RetireKey(w, k);
          this->RetireValue(w, old);
          entries_.fetch_sub(1, std::memory_order_relaxed);
        }
      }
      if (changed) h.leaf->lock().Unlock();
      else h.leaf->lock().Abandon(h.version);
    }
    if (!s.ok()) return s;
    written += batch.size();
    if (done || last.empty()) return written;
    from = last;
    from_set = true;
    after = true;
  }
}

template <class F>
Result<TieredReleased> TieredTree<F>::Release(Worker& w, std::string_view id, uint16_t level, ColdSink& sink) {
  typename Base::OpScope scope(w, true);
  std::string low;
  const bool has_low = LowOf(id, &low);
  RetryBudget budget(retry_limits::kLocalTreeRestarts, "tiered release");
  for (;;) {
    Path path;
    NodeT* unit;
    uint64_t v;
    uint64_t locked_at;
    if (!FindAtLevel(has_low ? &low : nullptr, level, &path, &unit, &v) || !unit->lock().LockLive(&locked_at)) {
      if (!budget.Spend()) return budget.Exhausted("of a unit");
      continue;
    }
    // 1. Lock the subtree top-down, listing its nodes and its leaves in key order.
    LockedNodes nodes{{unit, locked_at}};
    std::vector<NodeT*> leaves;
    LockSubtree(unit, &nodes, &leaves);
    // 2. Y takes the dirty entries while nothing can change.
    std::vector<ColdEntry> batch;
    uint64_t released = 0;
    for (NodeT* leaf : leaves)
      for (uint32_t i = 0; i < leaf->count(); ++i, ++released) {
        if (leaf->entry_flags(i) & entry_flags::kDirty) AppendEntry(leaf, i, &batch);
      }
    if (!batch.empty()) {
      Status s = sink.Write(batch);
      if (!s.ok()) {
        for (auto& [n, version] : nodes) n->lock().Abandon(version);
        return s;
      }
    }
    sink.BeforeUnlink();
    // 3. Prune to the leftmost path: its leaf, emptied and mounted, covers the whole range.
    TieredReleased r;
    r.entries = released;
    r.written = batch.size();
    RetireReleased(w, leaves, nodes, &r);
    PruneToLeftmost(w, unit, leaves.back()->next(), nodes, &r);
    entries_.fetch_sub(static_cast<int64_t>(released), std::memory_order_relaxed);
    for (uint32_t i = 0; i < path.count; ++i)
      path.nodes[i]->counters().entries.fetch_sub(static_cast<int64_t>(released), std::memory_order_relaxed);
    return r;
  }
}

template <class F>
void TieredTree<F>::LockSubtree(NodeT* node, LockedNodes* nodes, std::vector<NodeT*>* leaves) {
  if (node->is_leaf()) {
    leaves->push_back(node);
    return;
  }
  // Only foreground writers hold these locks, and they never wait on one.
  for (uint32_t i = 0; i <= node->count(); ++i) {
    NodeT* c = node->child(i);
    uint64_t cv = 0;
    const bool live = c->lock().LockLive(&cv);  // its parent is locked: it cannot leave
    (void)live;
    nodes->emplace_back(c, cv);
    LockSubtree(c, nodes, leaves);
  }
}

template <class F>
void TieredTree<F>::RetireReleased(Worker& w, const std::vector<NodeT*>& leaves, const LockedNodes& nodes,
                                   TieredReleased* r) {
  for (NodeT* leaf : leaves)
    for (uint32_t i = 0; i < leaf->count(); ++i) {
      uint64_t k[F::kKeyWords];
      leaf->CopyKey(i, k);
      const typename Base::StoredValue old{leaf->value(i), leaf->boxed(i)};
      if (const Blob* b = F::KeyBlob(k)) r->bytes += Blob::BytesFor(b->size());
      if (old.boxed && value_word::IsBlob(old.word)) r->bytes += Blob::BytesFor(value_word::BlobOf(old.word)->size());
      this->RetireKey(w, k);
      this->RetireValue(w, old);
    }
  // The inner nodes' separators own blobs too (long keys): the spine drops them (count 0)
  // and the other inner nodes leave, so retire them here or they leak.
  for (const auto& [n, version] : nodes) {
    if (n->is_leaf()) continue;
    for (uint32_t i = 0; i < n->count(); ++i) {
      uint64_t k[F::kKeyWords];
      n->CopyKey(i, k);
      if (const Blob* b = F::KeyBlob(k)) r->bytes += Blob::BytesFor(b->size());
      this->RetireKey(w, k);
    }
  }
}

template <class F>
void TieredTree<F>::PruneToLeftmost(Worker& w, NodeT* unit, NodeT* after, const LockedNodes& nodes,
                                    TieredReleased* r) {
  NodeT* first = unit;
  std::vector<NodeT*> spine;
  while (!first->is_leaf()) {
    spine.push_back(first);
    first = first->child(0);
  }
  for (uint32_t i = 0; i < first->count(); ++i) first->ClearEntry(i);
  first->set_count(0);
  first->set_next(after);
  first->SetBits(node_bits::kMounted);
  for (NodeT* n : spine) {
    n->set_count(0);
    n->counters().entries.store(0, std::memory_order_relaxed);
  }
  for (const auto& [n, version] : nodes) {
    const bool keep = n == first || std::find(spine.begin(), spine.end(), n) != spine.end();
    if (keep) {
      n->lock().Unlock();
      continue;
    }
    n->lock().UnlockObsolete();
    RetireNode(w, n);
    r->bytes += this->node_bytes_;
  }
}

// The members defined here, for both formats (the header declares the class's instantiation
// extern; tiered_tree.cc instantiates the rest).
#define DMX_TIERED_RELEASE_MEMBERS(F)                                                                          \
  template Result<uint64_t> TieredTree<F>::Clean(Worker&, std::string_view, std::string_view, ColdSink&);     \
  template Result<TieredReleased> TieredTree<F>::Release(Worker&, std::string_view, uint16_t, ColdSink&);     \
  template void TieredTree<F>::LockSubtree(NodeT*, LockedNodes*, std::vector<NodeT*>*);                     \
  template void TieredTree<F>::RetireReleased(Worker&, const std::vector<NodeT*>&, const LockedNodes&,        \
                                              TieredReleased*);                                               \
  template void TieredTree<F>::PruneToLeftmost(Worker&, NodeT*, NodeT*, const LockedNodes&, TieredReleased*);
DMX_TIERED_RELEASE_MEMBERS(Tiered<U64Keys>)
DMX_TIERED_RELEASE_MEMBERS(Tiered<ByteKeys>)
#undef DMX_TIERED_RELEASE_MEMBERS

}  // namespace dmindex::designs::local
