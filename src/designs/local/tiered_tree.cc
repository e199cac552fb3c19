// TieredTree: point operations and scans, then units (cleaning and release: tiered_release.cc).
#include "designs/local/tiered_tree.h"

#include <algorithm>
#include <array>
#include <functional>

#include "common/retry.h"

namespace dmindex::designs::local {

template <class F>
TieredTree<F>::TieredTree(uint32_t node_bytes, uint32_t unit_level, uint32_t sample_shift, uint64_t reclaim_bytes)
    : Base(node_bytes), unit_level_(unit_level < 1 ? 1 : unit_level), sample_shift_(sample_shift) {
  this->epochs_.set_reclaim_bytes(reclaim_bytes);
}

template <class F>
void TieredTree<F>::AppendEntry(NodeT* leaf, uint32_t i, std::vector<ColdEntry>* batch) {
  ColdEntry& e = batch->emplace_back();
  uint64_t k[F::kKeyWords];
  leaf->CopyKey(i, k);
  F::Append(k, &e.key);
  Base::ReadValue(typename Base::StoredValue{leaf->value(i), leaf->boxed(i)}, &e.value);
  e.tombstone = (leaf->entry_flags(i) & entry_flags::kTombstone) != 0;
}

template <class F>
bool TieredTree<F>::Descend(const Probe& key, bool split_full, Path* path, NodeT** leaf, uint64_t* version,
                            NodeT** parent_out, uint64_t* parent_version, uint32_t* child_pos) {
  return Walk(&key, 0, split_full, path, leaf, version, parent_out, parent_version, child_pos);
}

template <class F>
bool TieredTree<F>::Walk(const Probe* key, uint16_t level, bool split_full, Path* path, NodeT** out,
                         uint64_t* version, NodeT** parent_out, uint64_t* parent_version, uint32_t* child_pos) {
  path->count = 0;
  NodeT* node = this->root_.load(std::memory_order_acquire);
  uint64_t v = node->lock().ReadLock();
  if (VersionLock::IsObsolete(v) || node != this->root_.load(std::memory_order_acquire)) return false;
  NodeT* parent = nullptr;
  uint64_t pv = 0;
  uint32_t cpos = 0;
  while (node->level() > level) {
    // Eager split of a full inner node, while its parent (not full) can be locked.
    if (split_full && node->full()) {
      this->SplitLocked(parent, pv, cpos, node, v);
      return false;
    }
    const uint32_t pos = key != nullptr ? node->ChildIndex(*key) : 0;
    NodeT* child = node->child(pos);
    if (!node->lock().Validate(v)) return false;
    const uint64_t cv = child->lock().ReadLock();
    // A child released meanwhile is obsolete; one released after this validation is still
    // readable (the epochs), and its obsolete version fails the next validation.
    if (!node->lock().Validate(v) || VersionLock::IsObsolete(cv)) return false;
    if (path->count < kMaxHeight) path->nodes[path->count++] = node;
    parent = node;
    pv = v;
    cpos = pos;
    node = child;
    v = cv;
  }
  *out = node;
  *version = v;
  if (parent_out != nullptr) {
    *parent_out = parent;
    *parent_version = pv;
    *child_pos = cpos;
  }
  return true;
}

template <class F>
void TieredTree<F>::Track(Worker& w, const Path& path, int64_t entries_delta, bool dirty) {
  const uint8_t bits = node_bits::kAccessed | (dirty ? node_bits::kDirty : 0);
  const bool sampled = w.Sample(sample_shift_);
  const int64_t scale = int64_t{1} << sample_shift_;
  for (uint32_t i = 0; i < path.count; ++i) {
    NodeT* n = path.nodes[i];
    if (n->level() < unit_level_) continue;
    n->SetBits(bits);
    if (!sampled) continue;
    n->counters().accesses.fetch_add(static_cast<uint64_t>(scale), std::memory_order_relaxed);
    if (entries_delta != 0) n->counters().entries.fetch_add(entries_delta * scale, std::memory_order_relaxed);
  }
}

template <class F>
Status TieredTree<F>::Read(Worker& w, Slice key_bytes, TieredEntry* out) {
  const Probe key = F::ProbeOf(key_bytes);
  typename Base::OpScope scope(w, true);
  Path path;
  return this->WithRestarts("read", key, [&]() -> typename Base::Outcome {
    NodeT* leaf;
    uint64_t v;
    if (!Descend(key, false, &path, &leaf, &v, nullptr, nullptr, nullptr)) return Base::Outcome::kRestart;
    uint32_t pos;
    const bool found = leaf->Find(key, &pos);
    typename Base::StoredValue seen;
    uint8_t flags = 0;
    if (found) {
      seen = typename Base::StoredValue{leaf->value(pos), leaf->boxed(pos)};
      flags = leaf->entry_flags(pos);
    }
    const bool mounted = leaf->mounted();
    if (!leaf->lock().Validate(v)) return Base::Outcome::kRestart;
    out->present = found;
    out->flags = flags;
    out->mounted = mounted;
    out->value.clear();
    if (found) Base::ReadValue(seen, &out->value);  // inside the epoch: a blob is still allocated
    Track(w, path, 0, false);
    return Base::Outcome::kOk;
  });
}

template <class F>
typename TieredTree<F>::Outcome TieredTree<F>::TryModify(Worker& w, const Probe& key, Slice key_bytes,
                                                         FunctionRef<TieredDecision(const TieredEntry&)>& decide) {
  Path path;
  NodeT* leaf;
  NodeT* parent;
  uint64_t v, pv;
  uint32_t cpos;
  if (!Descend(key, true, &path, &leaf, &v, &parent, &pv, &cpos)) return Outcome::kRestart;
  if (!leaf->lock().Upgrade(v)) return Outcome::kRestart;
  uint32_t pos;
  TieredEntry cur;
  cur.present = leaf->Find(key, &pos);
  cur.mounted = leaf->mounted();
  if (cur.present) {
    cur.flags = leaf->entry_flags(pos);
    Base::ReadValue(typename Base::StoredValue{leaf->value(pos), leaf->boxed(pos)}, &cur.value);
  }
  const TieredDecision d = decide(cur);
  const bool dirty = (d.flags & entry_flags::kDirty) != 0;
  if (d.kind == TieredDecision::Kind::kKeep || (d.kind == TieredDecision::Kind::kRemove && !cur.present)) {
    leaf->lock().Abandon(v);
    Track(w, path, 0, false);
    return Outcome::kOk;
  }
  if (d.kind == TieredDecision::Kind::kPut && !cur.present && leaf->full()) {
    leaf->lock().Abandon(v);  // unchanged: the split below upgrades from v
    this->SplitLocked(parent, pv, cpos, leaf, v);
    return Outcome::kRestart;
  }
  if (d.kind == TieredDecision::Kind::kPut) {
    const typename Base::StoredValue stored = this->MakeValue(d.value);
    if (cur.present) {
      const typename Base::StoredValue old{leaf->value(pos), leaf->boxed(pos)};
      leaf->set_value(pos, stored.word);
      leaf->set_boxed(pos, stored.boxed);
      leaf->set_entry_flags(pos, d.flags);
      leaf->lock().Unlock();
      this->RetireValue(w, old);
      Track(w, path, 0, dirty);
      return Outcome::kOk;
    }
    uint64_t words[F::kKeyWords];
    F::Store(key, words, &this->bytes_);
    leaf->InsertEntry(pos, words, stored.word, stored.boxed);
    leaf->set_entry_flags(pos, d.flags);
    leaf->lock().Unlock();
    entries_.fetch_add(1, std::memory_order_relaxed);
    Track(w, path, 1, dirty);
    return Outcome::kOk;
  }
  uint64_t words[F::kKeyWords];
  leaf->CopyKey(pos, words);
  const typename Base::StoredValue old{leaf->value(pos), leaf->boxed(pos)};
  leaf->RemoveEntry(pos);
  leaf->lock().Unlock();
  this->RetireKey(w, words);
  this->RetireValue(w, old);
  entries_.fetch_sub(1, std::memory_order_relaxed);
  Track(w, path, -1, false);
  (void)key_bytes;
  return Outcome::kOk;
}

template <class F>
Status TieredTree<F>::Modify(Worker& w, Slice key_bytes, FunctionRef<TieredDecision(const TieredEntry&)> decide) {
  const Probe key = F::ProbeOf(key_bytes);
  typename Base::OpScope scope(w, true);
  return this->WithRestarts("modify", key, [&]() -> typename Base::Outcome {
    switch (TryModify(w, key, key_bytes, decide)) {
      case Outcome::kOk: return Base::Outcome::kOk;
      case Outcome::kNotFound: return Base::Outcome::kNotFound;
      case Outcome::kRestart: break;
    }
    return Base::Outcome::kRestart;
  });
}

template <class F>
Status TieredTree<F>::ScanEntries(Worker& w, Slice from_bytes, bool inclusive,
                                  FunctionRef<bool(std::string_view, std::string_view, uint8_t)> visit) {
  typename Base::OpScope scope(w, true);
  std::string from(from_bytes);  // where the next leaf's entries begin
  bool after = !inclusive;
  typename Base::Restarts restarts(*this, "scan", F::ProbeOf(from_bytes));
  NodeT* leaf;
  uint64_t v;
  Path path;
  // The leaf for `from`, read-locked (again after meeting a leaf that left the tree).
  auto find = [&]() -> Status {
    while (!Descend(F::ProbeOf(from), false, &path, &leaf, &v, nullptr, nullptr, nullptr))
      DMX_RETURN_IF_ERROR(restarts.Next());
    return Status::Ok();
  };
  DMX_RETURN_IF_ERROR(find());
  struct Seen {
    uint64_t key[F::kKeyWords];
    typename Base::StoredValue value;
    uint8_t flags;
  };
  std::vector<Seen> seen;
  std::string key, value;
  while (leaf != nullptr) {
    const Probe resume = F::ProbeOf(from);
    seen.clear();
    const uint32_t n = leaf->count();
    for (uint32_t i = after ? leaf->UpperBound(resume) : leaf->LowerBound(resume); i < n; ++i) {
      Seen& s = seen.emplace_back();
      leaf->CopyKey(i, s.key);
      s.value = typename Base::StoredValue{leaf->value(i), leaf->boxed(i)};
      s.flags = leaf->entry_flags(i);
    }
    NodeT* next = leaf->next();
    if (!leaf->lock().Validate(v)) {
      // Re-read the same leaf (keys only move right, or out of the tree); a leaf that left
      // the tree sends us back to the root.
      DMX_RETURN_IF_ERROR(restarts.Next());
      v = leaf->lock().ReadLock();
      if (VersionLock::IsObsolete(v)) DMX_RETURN_IF_ERROR(find());
      continue;
    }
    for (const Seen& s : seen) {
      key.clear();
      F::Append(s.key, &key);
      Base::ReadValue(s.value, &value);
      if (!visit(key, value, s.flags)) return Status::Ok();
    }
    if (!seen.empty()) {
      from = key;
      after = true;
    }
    leaf = next;
    if (leaf == nullptr) break;
    v = leaf->lock().ReadLock();
    if (VersionLock::IsObsolete(v)) DMX_RETURN_IF_ERROR(find());
  }
  return Status::Ok();
}

template <class F>
void TieredTree<F>::RetireNode(Worker& w, NodeT* node) {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // as RetireBlob: the unlink first
  w.epoch().Retire(
      node,
      [](void* object, void* context) {
        auto* tree = static_cast<TieredTree*>(context);
        tree->bytes_.fetch_sub(tree->node_bytes_, std::memory_order_relaxed);
        tree->node_count_.fetch_sub(1, std::memory_order_relaxed);
        NodeT::Destroy(static_cast<NodeT*>(object));
      },
      this, this->node_bytes_);
  w.retired_since_reclaim_ += this->node_bytes_;
}

// ---- units ----

template <class F>
bool TieredTree<F>::LowOf(std::string_view id, std::string* low) {
  if (id.empty() || id[0] == '\0') return false;
  low->assign(id.substr(1));
  return true;
}

template <class F>
TieredUnit TieredTree<F>::UnitOf(NodeT* node, std::string id, std::string end, uint32_t depth) const {
  TieredUnit u;
  u.id = std::move(id);
  u.end = std::move(end);
  u.level = node->level();
  u.depth = depth;
  u.bottom = node->level() <= unit_level_;
  u.bits = node->bits() & (node_bits::kDirty | node_bits::kCandidate | node_bits::kAccessed);
  u.accesses = node->counters().accesses.load(std::memory_order_relaxed);
  u.entries = static_cast<uint64_t>(std::max<int64_t>(node->counters().entries.load(std::memory_order_relaxed), 0));
  u.node = node;
  return u;
}

template <class F>
bool TieredTree<F>::FindAtLevel(const std::string* low, uint16_t level, Path* path, NodeT** out, uint64_t* version) {
  const Probe probe = low != nullptr ? F::ProbeOf(*low) : Probe{};
  return Walk(low != nullptr ? &probe : nullptr, level, false, path, out, version, nullptr, nullptr, nullptr);
}

namespace {

// An inner node's children and separators, copied from one validated snapshot.
template <class F, class NodeT>
bool ReadInner(NodeT* node, uint64_t v, std::vector<NodeT*>* children, std::vector<std::string>* separators) {
  const uint32_t n = node->count();
  std::vector<std::array<uint64_t, F::kKeyWords>> words(n);
  children->resize(n + 1);
  for (uint32_t i = 0; i <= n; ++i) (*children)[i] = node->child(i);
  for (uint32_t i = 0; i < n; ++i) node->CopyKey(i, words[i].data());
  if (!node->lock().Validate(v)) return false;
  separators->assign(n, {});
  for (uint32_t i = 0; i < n; ++i) F::Append(words[i].data(), &(*separators)[i]);  // blobs: inside the epoch
  return true;
}

}  // namespace

template <class F>
Status TieredTree<F>::ForEachUnit(Worker& w, std::string_view after_id, FunctionRef<bool(TieredUnit&)> visit) {
  typename Base::OpScope scope(w, true);
  enum class Walk { kContinue, kStop, kRestart };
  std::string after(after_id);
  // Visits the units in `node`'s range (lowest key `id`, the next range's id `end`).
  std::function<Walk(NodeT*, uint64_t, const std::string&, const std::string&, uint32_t)> walk =
      [&](NodeT* node, uint64_t v, const std::string& id, const std::string& end, uint32_t depth) -> Walk {
    if (node->level() <= unit_level_) {
      if (!after.empty() && id <= after) return Walk::kContinue;
      TieredUnit u = UnitOf(node, id, end, depth);
      if (!node->lock().Validate(v)) return Walk::kRestart;
      after = id;
      return visit(u) ? Walk::kContinue : Walk::kStop;
    }
    std::vector<NodeT*> children;
    std::vector<std::string> seps;
    if (!ReadInner<F>(node, v, &children, &seps)) return Walk::kRestart;
    for (size_t i = 0; i < children.size(); ++i) {
      const std::string child_id = i == 0 ? id : IdOf(&seps[i - 1]);
      const std::string child_end = i < seps.size() ? IdOf(&seps[i]) : end;
      if (!after.empty() && !child_end.empty() && child_end <= after) continue;  // wholly before the cursor
      const uint64_t cv = children[i]->lock().ReadLock();
      if (VersionLock::IsObsolete(cv) || !node->lock().Validate(v)) return Walk::kRestart;
      const Walk r = walk(children[i], cv, child_id, child_end, depth + 1);
      if (r != Walk::kContinue) return r;
    }
    return Walk::kContinue;
  };
  RetryBudget budget(retry_limits::kLocalTreeRestarts, "tiered unit walk");
  Backoff backoff(backoff::kRestart);
  for (;;) {
    NodeT* root = this->root_.load(std::memory_order_acquire);
    const uint64_t v = root->lock().ReadLock();
    if (root == this->root_.load(std::memory_order_acquire) && walk(root, v, IdOf(nullptr), "", 0) != Walk::kRestart)
      return Status::Ok();
    this->restarts_.fetch_add(1, std::memory_order_relaxed);
    if (!budget.Spend()) return budget.Exhausted("of the units");
    backoff.Pause();
  }
}

template <class F>
Status TieredTree<F>::Children(Worker& w, const TieredUnit& unit, std::vector<TieredUnit>* out) {
  typename Base::OpScope scope(w, true);
  RetryBudget budget(retry_limits::kLocalTreeRestarts, "tiered child units");
  Backoff backoff(backoff::kRestart);
  for (;; backoff.Pause()) {
    out->clear();
    NodeT* node;
    uint64_t v;
    Path path;
    std::string low;
    const bool has_low = LowOf(unit.id, &low);
    if (unit.id.empty()) {
      // X's root: itself, if no higher than the unit level; else its children.
      node = this->root_.load(std::memory_order_acquire);
      v = node->lock().ReadLock();
      if (node->level() <= unit_level_) {
        out->push_back(UnitOf(node, IdOf(nullptr), "", 0));
        if (node->lock().Validate(v)) return Status::Ok();
        continue;
      }
    } else if (unit.bottom) {
      return Status::Ok();
    } else if (!FindAtLevel(has_low ? &low : nullptr, unit.level, &path, &node, &v)) {
      if (!budget.Spend()) return budget.Exhausted("of a unit");
      continue;
    }
    if (node->is_leaf()) return Status::Ok();
    std::vector<NodeT*> children;
    std::vector<std::string> seps;
    if (!ReadInner<F>(node, v, &children, &seps)) {
      if (!budget.Spend()) return budget.Exhausted("of a unit");
      continue;
    }
    const std::string id = unit.id.empty() ? IdOf(nullptr) : unit.id;
    for (size_t i = 0; i < children.size(); ++i)
      out->push_back(UnitOf(children[i], i == 0 ? id : IdOf(&seps[i - 1]), i < seps.size() ? IdOf(&seps[i]) : unit.end,
                            unit.depth + 1));
    for (TieredUnit& u : *out) u.node = nullptr;  // no longer valid after this call
    return Status::Ok();
  }
}

template <class F>
void TieredTree<F>::DecayAccesses(Worker& w) {
  typename Base::OpScope scope(w, true);
  // Unvalidated snapshots are skipped with their subtrees: the counters are estimates.
  std::function<void(NodeT*)> decay = [&](NodeT* n) {
    const uint64_t v = n->lock().ReadLock();
    if (VersionLock::IsObsolete(v) || n->level() < unit_level_) return;
    n->counters().accesses.store(n->counters().accesses.load(std::memory_order_relaxed) / 2, std::memory_order_relaxed);
    if (n->level() == unit_level_) return;
    std::vector<NodeT*> children;
    std::vector<std::string> seps;
    if (!ReadInner<F>(n, v, &children, &seps)) return;
    for (NodeT* c : children) decay(c);
  };
  decay(this->root_.load(std::memory_order_acquire));
}

template <class F>
void TieredTree<F>::MountAll() {
  NodeT* n = this->root_.load(std::memory_order_acquire);
  while (!n->is_leaf()) n = n->child(0);
  for (; n != nullptr; n = n->next()) n->SetBits(node_bits::kMounted);
}

template class TieredTree<Tiered<U64Keys>>;
template class TieredTree<Tiered<ByteKeys>>;

}  // namespace dmindex::designs::local
