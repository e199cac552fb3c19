#include "designs/local/local_tree.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/retry.h"

namespace dmindex::designs::local {

static_assert(sizeof(Node<U64Keys>) <= Node<U64Keys>::kHeaderBytes, "node header must fit kHeaderBytes");
static_assert(sizeof(Node<ByteKeys>) <= Node<ByteKeys>::kHeaderBytes, "node header must fit kHeaderBytes");
static_assert(sizeof(Node<Tiered<U64Keys>>) <= Node<Tiered<U64Keys>>::kHeaderBytes, "node header must fit kHeaderBytes");
static_assert(sizeof(Node<Tiered<ByteKeys>>) <= Node<Tiered<ByteKeys>>::kHeaderBytes, "node header must fit kHeaderBytes");

// --- Memory: nodes, values, blobs and their retirement ---

template <class F>
LocalTree<F>::LocalTree(uint32_t node_bytes)
    : node_bytes_(node_bytes),
      search_lines_(NodeT::SearchLines(node_bytes)),
      leaf_lines_(std::min((node_bytes + 63) / 64, NodeT::kMaxPrefetchLines)) {
  root_.store(NewNode(0), std::memory_order_release);
}

template <class F>
template <typename Visit>
void LocalTree<F>::ForEachNode(Visit visit) const {
  // No node is ever unlinked (no merges; a grown root keeps the old one as a child), so a
  // walk from the root reaches every node.
  std::vector<NodeT*> level{root_.load(std::memory_order_acquire)};
  while (!level.empty()) {
    std::vector<NodeT*> below;
    for (NodeT* n : level)
      if (!n->is_leaf())
        for (uint32_t i = 0; i <= n->count(); ++i) below.push_back(n->child(i));
    for (NodeT* n : level) visit(n);  // after its children are collected: visit may free it
    level.swap(below);
  }
}

template <class F>
LocalTree<F>::~LocalTree() {
  // Each blob belongs to exactly one entry below its node's count (splits and removals clear
  // or leave behind only copies beyond the count).
  ForEachNode([this](NodeT* n) {
    for (uint32_t i = 0; i < n->count(); ++i) {
      uint64_t k[kKeyWords];
      n->CopyKey(i, k);
      F::Free(k, &bytes_);
      if (n->is_leaf()) FreeUnpublished(StoredValue{n->value(i), n->boxed(i)});
    }
    bytes_.fetch_sub(node_bytes_, std::memory_order_relaxed);
    NodeT::Destroy(n);
  });
}

template <class F>
uint64_t LocalTree<F>::ReachableBytes() const {
  uint64_t total = 0;
  ForEachNode([&](NodeT* n) {
    total += node_bytes_;
    for (uint32_t i = 0; i < n->count(); ++i) {
      uint64_t k[kKeyWords];
      n->CopyKey(i, k);
      if (const Blob* b = F::KeyBlob(k)) total += Blob::BytesFor(b->size());
      if (!n->is_leaf() || !n->boxed(i)) continue;
      if (const uint64_t v = n->value(i); value_word::IsBlob(v)) total += Blob::BytesFor(value_word::BlobOf(v)->size());
    }
  });
  return total;
}

template <class F>
typename LocalTree<F>::NodeT* LocalTree<F>::NewNode(uint16_t level) {
  node_count_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(node_bytes_, std::memory_order_relaxed);
  return NodeT::Create(node_bytes_, level);
}

template <class F>
typename LocalTree<F>::StoredValue LocalTree<F>::MakeValue(Slice value) {
  if constexpr (F::kRawValues)
    if (value.size() == 8) return StoredValue{U64Keys::Decode(value.data()), false};
  return StoredValue{value_word::Make(value, &bytes_), true};
}

template <class F>
void LocalTree<F>::FreeUnpublished(const StoredValue& v) {
  if (v.boxed) value_word::FreeUnpublished(v.word, &bytes_);
}

template <class F>
void LocalTree<F>::RetireBlob(Worker& w, const Blob* blob) {
  const uint64_t size = Blob::BytesFor(blob->size());
  // Orders the unlink (the leaf's lock and the store that replaced the pointer) before the
  // epoch Retire reads: a reader whose announcement came before that read either sees the
  // unlink through the leaf's version or announced an epoch the retirement waits for.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  w.epoch().Retire(
      const_cast<Blob*>(blob),
      [](void* object, void* held) { Blob::Free(static_cast<Blob*>(object), static_cast<ByteCount*>(held)); },
      &bytes_, size);
  w.retired_since_reclaim_ += size;
}

template <class F>
void LocalTree<F>::RetireValue(Worker& w, const StoredValue& v) {
  if (v.boxed && value_word::IsBlob(v.word)) RetireBlob(w, value_word::BlobOf(v.word));
}

template <class F>
void LocalTree<F>::RetireKey(Worker& w, const uint64_t* words) {
  if (const Blob* b = F::KeyBlob(words)) RetireBlob(w, b);
}

// --- Restarts and the optimistic descent ---

template <class F>
bool LocalTree<F>::FindLeaf(const Probe& key, NodeT** leaf, uint64_t* version) const {
  NodeT* node = root_.load(std::memory_order_acquire);
  uint64_t v = node->lock().ReadLock();
  // A root split publishes the new root before releasing the old one: if we locked the old
  // root after that split, we must not descend from it (it lost its right half).
  if (node != root_.load(std::memory_order_acquire)) return false;
  while (!node->is_leaf()) {
    NodeT* child = node->child(node->ChildIndex(key));
    PrefetchChild(node, child);
    if (!node->lock().Validate(v)) return false;  // child pointer may be garbage
    uint64_t child_version = child->lock().ReadLock();
    // Validating the parent again after locking the child proves the child was still
    // responsible for `key` at that moment (a split of the child changes the parent).
    if (!node->lock().Validate(v)) return false;
    node = child;
    v = child_version;
  }
  *leaf = node;
  *version = v;
  return true;
}

// --- Point operations ---

template <class F>
Status LocalTree<F>::Lookup(Worker& w, Slice key_bytes, std::string* value) {
  const Probe key = F::ProbeOf(key_bytes);
  OpScope scope(w, F::kEpochPerOp);
  return WithRestarts("lookup", key, [&]() -> Outcome {
    NodeT* leaf;
    uint64_t v;
    if (!FindLeaf(key, &leaf, &v)) return Outcome::kRestart;
    uint32_t pos;
    const bool found = leaf->Find(key, &pos);
    StoredValue seen;
    if (found) seen = StoredValue{leaf->value(pos), leaf->boxed(pos)};
    if (!leaf->lock().Validate(v)) return Outcome::kRestart;
    if (!found) return Outcome::kNotFound;
    if constexpr (!F::kEpochPerOp)
      if (seen.boxed && value_word::IsBlob(seen.word)) return ReadBlobLate(w, leaf, v, seen.word, value);
    ReadValue(seen, value);
    return Outcome::kOk;
  });
}

template <class F>
typename LocalTree<F>::Outcome LocalTree<F>::ReadBlobLate(Worker& w, NodeT* leaf, uint64_t version, uint64_t word,
                                                 std::string* value) {
  // The blob was linked when the leaf was read at `version`; announcing an epoch and finding
  // the leaf still at `version` afterwards proves it was still linked after the announcement,
  // so it is not freed before the guard ends. (The fence orders the announcement, a store,
  // before the version check, a load.)
  EpochGuard guard(w.epoch());
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!leaf->lock().Validate(version)) return Outcome::kRestart;
  value_word::Read(word, value);
  return Outcome::kOk;
}

template <class F>
Status LocalTree<F>::Upsert(Worker& w, Slice key_bytes, Slice value) {
  const Probe key = F::ProbeOf(key_bytes);
  // Allocated and copied before the epoch and any lock: a long copy would hold back both.
  const StoredValue stored = MakeValue(value);
  OpScope scope(w, F::kEpochPerOp);
  NewKey new_key;
  std::optional<StoredValue> old;
  Status s = WithRestarts("insert", key, [&]() -> Outcome {
    return TryUpsert(key, stored, &new_key, &old) ? Outcome::kOk : Outcome::kRestart;
  });
  // The key's words are used only if the successful attempt inserted it.
  if (new_key.made && (old || !s.ok())) F::Free(new_key.words, &bytes_);
  if (!s.ok()) FreeUnpublished(stored);
  if (old) RetireValue(w, *old);
  return s;
}

template <class F>
bool LocalTree<F>::TryUpsert(const Probe& key, const StoredValue& value, NewKey* new_key,
                             std::optional<StoredValue>* old) {
  NodeT* node = root_.load(std::memory_order_acquire);
  uint64_t v = node->lock().ReadLock();
  if (node != root_.load(std::memory_order_acquire)) return false;
  NodeT* parent = nullptr;
  uint64_t parent_version = 0;
  uint32_t child_pos = 0;
  while (!node->is_leaf()) {
    // Eager split: a full inner node on the path is split now, while we can lock its parent,
    // which is known not to be full (we would have split it before descending).
    if (node->full()) {
      SplitLocked(parent, parent_version, child_pos, node, v);
      return false;
    }
    const uint32_t pos = node->ChildIndex(key);
    NodeT* child = node->child(pos);
    PrefetchChild(node, child);
    if (!node->lock().Validate(v)) return false;
    uint64_t child_version = child->lock().ReadLock();
    if (!node->lock().Validate(v)) return false;
    parent = node;
    parent_version = v;
    child_pos = pos;
    node = child;
    v = child_version;
  }
  uint32_t pos;
  const bool present = node->Find(key, &pos);
  if (!present && node->full()) {
    SplitLocked(parent, parent_version, child_pos, node, v);
    return false;
  }
  if (!present && !new_key->made) {  // a long key's blob, allocated before the lock
    F::Store(key, new_key->words, &bytes_);
    new_key->made = true;
  }
  if (!node->lock().Upgrade(v)) return false;
  if (present) {
    *old = StoredValue{node->value(pos), node->boxed(pos)};
    node->set_value(pos, value.word);
    node->set_boxed(pos, value.boxed);
  } else {
    old->reset();
    node->InsertEntry(pos, new_key->words, value.word, value.boxed);
  }
  node->lock().Unlock();
  return true;
}

template <class F>
template <typename Change>
Status LocalTree<F>::ChangeExisting(const char* operation, const Probe& key, Change change) {
  return WithRestarts(operation, key, [&]() -> Outcome {
    NodeT* leaf;
    uint64_t v;
    if (!FindLeaf(key, &leaf, &v)) return Outcome::kRestart;
    uint32_t pos;
    if (!leaf->Find(key, &pos)) {
      if (leaf->lock().Validate(v)) return Outcome::kNotFound;  // absent in a consistent leaf
      return Outcome::kRestart;
    }
    if (!leaf->lock().Upgrade(v)) return Outcome::kRestart;  // success also validates what we read
    change(leaf, pos);
    leaf->lock().Unlock();
    return Outcome::kOk;
  });
}

template <class F>
Status LocalTree<F>::Update(Worker& w, Slice key_bytes, Slice value) {
  const Probe key = F::ProbeOf(key_bytes);
  const StoredValue stored = MakeValue(value);  // outside the epoch, as in Upsert
  OpScope scope(w, F::kEpochPerOp);
  StoredValue old;
  Status s = ChangeExisting("update", key, [&](NodeT* leaf, uint32_t pos) {
    old = StoredValue{leaf->value(pos), leaf->boxed(pos)};
    leaf->set_value(pos, stored.word);
    leaf->set_boxed(pos, stored.boxed);
  });
  if (!s.ok()) {
    FreeUnpublished(stored);
    return s;
  }
  RetireValue(w, old);
  return s;
}

template <class F>
Status LocalTree<F>::Delete(Worker& w, Slice key_bytes) {
  const Probe key = F::ProbeOf(key_bytes);
  OpScope scope(w, F::kEpochPerOp);
  uint64_t key_words[kKeyWords];
  StoredValue old;
  Status s = ChangeExisting("delete", key, [&](NodeT* leaf, uint32_t pos) {
    leaf->CopyKey(pos, key_words);
    old = StoredValue{leaf->value(pos), leaf->boxed(pos)};
    leaf->RemoveEntry(pos);
  });
  if (!s.ok()) return s;
  RetireKey(w, key_words);
  RetireValue(w, old);
  return s;
}

// --- Splits ---

template <class F>
void LocalTree<F>::SplitLocked(NodeT* parent, uint64_t parent_version, uint32_t child_pos, NodeT* node,
                               uint64_t version) {
  // Top-down lock order (parent, then node) and no waiting while holding a lock: no deadlock.
  if (parent != nullptr && !parent->lock().Upgrade(parent_version)) return;
  if (!node->lock().Upgrade(version)) {
    if (parent != nullptr) parent->lock().Unlock();
    return;
  }
  if (parent == nullptr && node != root_.load(std::memory_order_acquire)) {
    node->lock().Unlock();  // the tree grew a level meanwhile; the caller restarts
    return;
  }
  uint64_t separator[kKeyWords];
  NodeT* right = SplitOff(node, separator);
  if (parent != nullptr) {
    // The parent is unchanged since the descent read child_pos from it (its Upgrade).
    parent->InsertChild(child_pos, separator, right);
  } else {
    NodeT* root = NewNode(node->level() + 1);
    if constexpr (F::kTiered) {
      root->counters().accesses.store(node->counters().accesses.load(std::memory_order_relaxed) +
                                          right->counters().accesses.load(std::memory_order_relaxed),
                                      std::memory_order_relaxed);
      root->counters().entries.store(node->counters().entries.load(std::memory_order_relaxed) +
                                         right->counters().entries.load(std::memory_order_relaxed),
                                     std::memory_order_relaxed);
    }
    root->SetKey(0, separator);
    root->set_child(0, node);
    root->set_child(1, right);
    root->set_count(1);
    root_.store(root, std::memory_order_release);  // before the old root is unlocked
  }
  node->lock().Unlock();
  if (parent != nullptr) parent->lock().Unlock();
}

template <class F>
typename LocalTree<F>::NodeT* LocalTree<F>::SplitOff(NodeT* node, uint64_t* separator) {
  NodeT* right = NewNode(node->level());
  const uint32_t n = node->count();
  const uint32_t mid = n / 2;
  if constexpr (F::kTiered) {
    // The halves inherit the node's bits (a leaf's mount bit: the right half's keys may be
    // in the cold store as much as the left's) and half its counters each.
    right->SetBits(node->bits());
    TieredCounters& c = node->counters();
    const uint64_t a = c.accesses.load(std::memory_order_relaxed) / 2;
    const int64_t e = c.entries.load(std::memory_order_relaxed) / 2;
    c.accesses.fetch_sub(a, std::memory_order_relaxed);
    c.entries.fetch_sub(e, std::memory_order_relaxed);
    right->counters().accesses.store(a, std::memory_order_relaxed);
    right->counters().entries.store(e, std::memory_order_relaxed);
  }
  if (node->is_leaf()) {
    const bool bits = node->has_boxed();
    for (uint32_t i = mid; i < n; ++i) right->CopyEntry(*node, i, i - mid, bits);
    right->set_count(n - mid);
    right->set_next(node->next());
    uint64_t left_last[kKeyWords], right_first[kKeyWords];
    node->CopyKey(mid - 1, left_last);
    node->CopyKey(mid, right_first);
    F::Separator(left_last, right_first, separator, &bytes_);  // a new key of the inner node
    node->set_next(right);  // after `right` is complete: scans may follow it at once
    node->set_count(mid);
    for (uint32_t i = mid; i < n; ++i) node->ClearEntry(i);  // `right` owns them now
  } else {
    // Separator key(mid) moves up; right gets keys after it and the children around them.
    for (uint32_t i = mid + 1; i < n; ++i) {
      uint64_t k[kKeyWords];
      node->CopyKey(i, k);
      right->SetKey(i - mid - 1, k);
    }
    for (uint32_t i = mid + 1; i <= n; ++i) right->set_child(i - mid - 1, node->child(i));
    right->set_count(n - mid - 1);
    node->CopyKey(mid, separator);
    node->set_count(mid);
  }
  return right;
}

// --- Scans ---

template <class F>
Status LocalTree<F>::Scan(Worker& w, const KeyRange& range, size_t count, std::vector<KeyValue>* out) {
  out->clear();
  // The whole scan runs in one epoch: the blobs of a leaf are copied after its version is
  // validated, so the copy needs them alive past the read.
  OpScope scope(w, true);
  std::string from = range.start;  // where the next leaf's pairs begin
  bool after = range.after_start;
  std::optional<Probe> end;
  if (range.end) end = F::ProbeOf(*range.end);
  const Probe start = F::ProbeOf(range.start);
  Restarts restarts(*this, "scan", start);
  NodeT* leaf;
  uint64_t v;
  while (!FindLeaf(start, &leaf, &v)) DMX_RETURN_IF_ERROR(restarts.Next());
  struct Seen {
    uint64_t key[kKeyWords];
    StoredValue value;
  };
  std::vector<Seen> seen;
  while (leaf != nullptr && out->size() < count) {
    // The words first; bytes only from a validated leaf (a raw u64 value word with a torn
    // boxed bit must never be followed as a pointer).
    const Probe resume = F::ProbeOf(from);
    seen.clear();
    const uint32_t n = leaf->count();
    bool ended = false;
    for (uint32_t i = after ? leaf->UpperBound(resume) : leaf->LowerBound(resume);
         i < n && out->size() + seen.size() < count; ++i) {
      if (end && !F::StoredLess(leaf->key(i), *end)) {
        ended = true;
        break;
      }
      Seen& s = seen.emplace_back();
      leaf->CopyKey(i, s.key);
      s.value = StoredValue{leaf->value(i), leaf->boxed(i)};
    }
    NodeT* next = leaf->next();
    if (!leaf->lock().Validate(v)) {
      // Re-read the same leaf: keys only move right, into siblings we have yet to visit.
      v = leaf->lock().ReadLock();
      DMX_RETURN_IF_ERROR(restarts.Next());
      continue;
    }
    for (const Seen& s : seen) {
      KeyValue& kv = out->emplace_back();
      F::Append(s.key, &kv.key);
      ReadValue(s.value, &kv.value);
    }
    if (ended) break;
    if (!seen.empty()) {
      from = out->back().key;
      after = true;
    }
    leaf = next;
    if (leaf != nullptr) v = leaf->lock().ReadLock();
  }
  return Status::Ok();
}

// --- Bulk load ---

template <class F>
Status LocalTree<F>::BulkLoad(std::span<const KeyValue> sorted, double fill) {
  NodeT* old_root = root_.load(std::memory_order_acquire);
  if (!old_root->is_leaf() || old_root->count() != 0) return Status::InvalidArgument("BulkLoad needs an empty index");
  if (sorted.empty()) return Status::Ok();
  const uint32_t leaf_capacity = NodeT::LeafCapacity(node_bytes_);
  const auto per_leaf =
      std::clamp<uint32_t>(static_cast<uint32_t>(std::floor(leaf_capacity * fill)), 1, leaf_capacity);
  std::vector<NodeT*> nodes;
  std::vector<KeyWords> first, last;
  for (size_t at = 0; at < sorted.size(); at += per_leaf) {
    NodeT* leaf = NewNode(0);
    const size_t n = std::min<size_t>(per_leaf, sorted.size() - at);
    for (size_t i = 0; i < n; ++i) {
      uint64_t k[kKeyWords];
      F::Store(F::ProbeOf(sorted[at + i].key), k, &bytes_);
      const StoredValue v = MakeValue(sorted[at + i].value);
      leaf->SetKey(i, k);
      leaf->set_value(i, v.word);
      leaf->set_boxed(i, v.boxed);
    }
    leaf->set_count(n);
    if (!nodes.empty()) nodes.back()->set_next(leaf);
    nodes.push_back(leaf);
    leaf->CopyKey(0, first.emplace_back().data());
    leaf->CopyKey(n - 1, last.emplace_back().data());
  }
  while (nodes.size() > 1) BuildParents(&nodes, &first, &last, fill);
  root_.store(nodes.front(), std::memory_order_release);
  NodeT::Destroy(old_root);
  node_count_.fetch_sub(1, std::memory_order_relaxed);
  bytes_.fetch_sub(node_bytes_, std::memory_order_relaxed);
  return Status::Ok();
}

template <class F>
void LocalTree<F>::BuildParents(std::vector<NodeT*>* children, std::vector<KeyWords>* first,
                                std::vector<KeyWords>* last, double fill) {
  const uint32_t max_children = NodeT::InnerCapacity(node_bytes_) + 1;
  // At least three children per parent keeps an even split of the level free of parents
  // with a single child; MinNodeBytes() guarantees max_children >= 5.
  const auto per_parent =
      std::clamp<uint32_t>(static_cast<uint32_t>(std::floor(max_children * fill)), 3, max_children);
  const size_t n = children->size();
  const size_t parents = (n + per_parent - 1) / per_parent;
  std::vector<NodeT*> level;
  std::vector<KeyWords> level_first, level_last;
  size_t at = 0;
  for (size_t p = 0; p < parents; ++p) {
    // Spread children evenly so the last parent is not nearly empty.
    const size_t take = n / parents + (p < n % parents ? 1 : 0);
    NodeT* parent = NewNode((*children)[at]->level() + 1);
    for (size_t i = 0; i < take; ++i) {
      parent->set_child(i, (*children)[at + i]);
      if (i == 0) continue;
      uint64_t separator[kKeyWords];
      F::Separator((*last)[at + i - 1].data(), (*first)[at + i].data(), separator, &bytes_);
      parent->SetKey(i - 1, separator);
    }
    parent->set_count(take - 1);
    level.push_back(parent);
    level_first.push_back((*first)[at]);
    level_last.push_back((*last)[at + take - 1]);
    at += take;
  }
  children->swap(level);
  first->swap(level_first);
  last->swap(level_last);
}

template class LocalTree<U64Keys>;
template class LocalTree<ByteKeys>;
template class LocalTree<Tiered<U64Keys>>;
template class LocalTree<Tiered<ByteKeys>>;

}  // namespace dmindex::designs::local
