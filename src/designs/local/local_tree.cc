#include "designs/local/local_tree.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/retry.h"

namespace dmindex::designs::local {

LocalTree::LocalTree(uint32_t node_bytes) : node_bytes_(node_bytes) {
  root_.store(NewNode(0), std::memory_order_release);
}

LocalTree::~LocalTree() {
  // No node is ever unlinked (no merges; a grown root keeps the old one as a child), so a
  // walk from the root reaches every node.
  std::vector<Node*> level{root_.load(std::memory_order_relaxed)};
  while (!level.empty()) {
    std::vector<Node*> below;
    for (Node* n : level) {
      if (!n->is_leaf())
        for (uint32_t i = 0; i <= n->count(); ++i) below.push_back(n->child(i));
      Node::Destroy(n);
    }
    level.swap(below);
  }
}

Node* LocalTree::NewNode(uint16_t level) {
  node_count_.fetch_add(1, std::memory_order_relaxed);
  return Node::Create(node_bytes_, level);
}

class LocalTree::Restarts {
 public:
  Restarts(LocalTree& tree, const char* operation, Key key)
      : tree_(tree), budget_(retry_limits::kLocalTreeRestarts, operation), key_(key) {}
  Status Next() {
    tree_.restarts_.fetch_add(1, std::memory_order_relaxed);
    if (!budget_.Spend()) return budget_.Exhausted("of key " + std::to_string(key_));
    // Whoever made us restart may be descheduled while holding a lock; on few cores give
    // it the CPU rather than spinning.
    backoff_.Pause();
    return Status::Ok();
  }

 private:
  LocalTree& tree_;
  RetryBudget budget_;
  Backoff backoff_{backoff::kRestart};
  const Key key_;
};

bool LocalTree::FindLeaf(Key key, Node** leaf, uint64_t* version) const {
  Node* node = root_.load(std::memory_order_acquire);
  uint64_t v = node->lock().ReadLock();
  // A root split publishes the new root before releasing the old one: if we locked the old
  // root after that split, we must not descend from it (it lost its right half).
  if (node != root_.load(std::memory_order_acquire)) return false;
  while (!node->is_leaf()) {
    Node* child = node->child(node->ChildIndex(key));
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

template <typename Attempt>
Status LocalTree::WithRestarts(const char* operation, Key key, Attempt attempt) {
  Restarts restarts(*this, operation, key);
  for (;;) {
    if (std::optional<Status> done = attempt()) return *done;
    DMX_RETURN_IF_ERROR(restarts.Next());
  }
}

Status LocalTree::Lookup(Key key, Value* value) {
  return WithRestarts("lookup", key, [&]() -> std::optional<Status> {
    Node* leaf;
    uint64_t v;
    if (!FindLeaf(key, &leaf, &v)) return std::nullopt;
    uint32_t pos;
    const bool found = leaf->Find(key, &pos);
    const Value seen = found ? leaf->value(pos) : 0;
    if (!leaf->lock().Validate(v)) return std::nullopt;
    if (!found) return Status::NotFound();
    *value = seen;
    return Status::Ok();
  });
}

template <typename Change>
Status LocalTree::ChangeExisting(const char* operation, Key key, Change change) {
  return WithRestarts(operation, key, [&]() -> std::optional<Status> {
    Node* leaf;
    uint64_t v;
    if (!FindLeaf(key, &leaf, &v)) return std::nullopt;
    uint32_t pos;
    if (!leaf->Find(key, &pos)) {
      if (leaf->lock().Validate(v)) return Status::NotFound();  // absent in a consistent leaf
      return std::nullopt;
    }
    if (!leaf->lock().Upgrade(v)) return std::nullopt;  // success also validates what we read
    change(leaf, pos);
    leaf->lock().Unlock();
    return Status::Ok();
  });
}

Status LocalTree::Update(Key key, Value value) {
  return ChangeExisting("update", key, [value](Node* leaf, uint32_t pos) { leaf->set_value(pos, value); });
}

Status LocalTree::Delete(Key key) {
  return ChangeExisting("delete", key, [](Node* leaf, uint32_t pos) { leaf->RemoveEntry(pos); });
}

Status LocalTree::Upsert(Key key, Value value) {
  return WithRestarts("insert", key, [&]() -> std::optional<Status> {
    if (!TryUpsert(key, value)) return std::nullopt;
    return Status::Ok();
  });
}

bool LocalTree::TryUpsert(Key key, Value value) {
  Node* node = root_.load(std::memory_order_acquire);
  uint64_t v = node->lock().ReadLock();
  if (node != root_.load(std::memory_order_acquire)) return false;
  Node* parent = nullptr;
  uint64_t parent_version = 0;
  while (!node->is_leaf()) {
    // Eager split: a full inner node on the path is split now, while we can lock its parent,
    // which is known not to be full (we would have split it before descending).
    if (node->full()) {
      SplitLocked(parent, parent_version, node, v);
      return false;
    }
    Node* child = node->child(node->ChildIndex(key));
    if (!node->lock().Validate(v)) return false;
    uint64_t child_version = child->lock().ReadLock();
    if (!node->lock().Validate(v)) return false;
    parent = node;
    parent_version = v;
    node = child;
    v = child_version;
  }
  uint32_t pos;
  const bool present = node->Find(key, &pos);
  if (!present && node->full()) {
    SplitLocked(parent, parent_version, node, v);
    return false;
  }
  if (!node->lock().Upgrade(v)) return false;
  if (present)
    node->set_value(pos, value);
  else
    node->InsertEntry(pos, key, value);
  node->lock().Unlock();
  return true;
}

void LocalTree::SplitLocked(Node* parent, uint64_t parent_version, Node* node, uint64_t version) {
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
  Key separator;
  Node* right = SplitOff(node, &separator);
  if (parent != nullptr) {
    parent->InsertChild(separator, right);
  } else {
    Node* root = NewNode(node->level() + 1);
    root->set_key(0, separator);
    root->set_child(0, node);
    root->set_child(1, right);
    root->set_count(1);
    root_.store(root, std::memory_order_release);  // before the old root is unlocked
  }
  node->lock().Unlock();
  if (parent != nullptr) parent->lock().Unlock();
}

Node* LocalTree::SplitOff(Node* node, Key* separator) {
  Node* right = NewNode(node->level());
  const uint32_t n = node->count();
  const uint32_t mid = n / 2;
  if (node->is_leaf()) {
    for (uint32_t i = mid; i < n; ++i) {
      right->set_key(i - mid, node->key(i));
      right->set_value(i - mid, node->value(i));
    }
    right->set_count(n - mid);
    right->set_next(node->next());
    *separator = node->key(mid);
    node->set_next(right);  // after `right` is complete: scans may follow it at once
    node->set_count(mid);
  } else {
    // Separator key(mid) moves up; right gets keys after it and the children around them.
    for (uint32_t i = mid + 1; i < n; ++i) right->set_key(i - mid - 1, node->key(i));
    for (uint32_t i = mid + 1; i <= n; ++i) right->set_child(i - mid - 1, node->child(i));
    right->set_count(n - mid - 1);
    *separator = node->key(mid);
    node->set_count(mid);
  }
  return right;
}

Status LocalTree::Scan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) {
  out->clear();
  Node* leaf;
  uint64_t v;
  Restarts restarts(*this, "scan", range.start);
  while (!FindLeaf(range.start, &leaf, &v)) DMX_RETURN_IF_ERROR(restarts.Next());
  // Resume point: the first key of a leaf to take is the first one after `from` (or at it,
  // for an inclusive start).
  Key from = range.start;
  bool after = range.after_start;
  while (leaf != nullptr && out->size() < count) {
    const size_t mark = out->size();
    const uint32_t n = leaf->count();
    bool ended = false;
    for (uint32_t i = after ? leaf->UpperBound(from) : leaf->LowerBound(from);
         i < n && out->size() < count; ++i) {
      if (range.end && leaf->key(i) >= *range.end) {
        ended = true;
        break;
      }
      out->push_back({leaf->key(i), leaf->value(i)});
    }
    Node* next = leaf->next();
    if (!leaf->lock().Validate(v)) {
      // Re-read the same leaf: keys only move right, into siblings we have yet to visit.
      out->resize(mark);
      v = leaf->lock().ReadLock();
      DMX_RETURN_IF_ERROR(restarts.Next());
      continue;
    }
    if (ended) break;
    if (out->size() > mark) {
      from = out->back().key;
      after = true;
    }
    leaf = next;
    if (leaf != nullptr) v = leaf->lock().ReadLock();
  }
  return Status::Ok();
}

Status LocalTree::BulkLoad(std::span<const KeyValue> sorted, double fill) {
  Node* old_root = root_.load(std::memory_order_acquire);
  if (!old_root->is_leaf() || old_root->count() != 0)
    return Status::InvalidArgument("BulkLoad needs an empty index");
  if (sorted.empty()) return Status::Ok();
  const uint32_t leaf_capacity = Node::LeafCapacity(node_bytes_);
  const auto per_leaf =
      std::clamp<uint32_t>(static_cast<uint32_t>(std::floor(leaf_capacity * fill)), 1, leaf_capacity);
  std::vector<Node*> nodes;
  std::vector<Key> min_keys;
  for (size_t at = 0; at < sorted.size(); at += per_leaf) {
    Node* leaf = NewNode(0);
    const size_t n = std::min<size_t>(per_leaf, sorted.size() - at);
    for (size_t i = 0; i < n; ++i) {
      leaf->set_key(i, sorted[at + i].key);
      leaf->set_value(i, sorted[at + i].value);
    }
    leaf->set_count(n);
    if (!nodes.empty()) nodes.back()->set_next(leaf);
    nodes.push_back(leaf);
    min_keys.push_back(sorted[at].key);
  }
  while (nodes.size() > 1) BuildParents(&nodes, &min_keys, fill);
  root_.store(nodes.front(), std::memory_order_release);
  Node::Destroy(old_root);
  node_count_.fetch_sub(1, std::memory_order_relaxed);
  return Status::Ok();
}

void LocalTree::BuildParents(std::vector<Node*>* children, std::vector<Key>* min_keys, double fill) {
  const uint32_t max_children = Node::InnerCapacity(node_bytes_) + 1;
  // At least three children per parent keeps an even split of the level free of parents
  // with a single child; MinNodeBytes() guarantees max_children >= 5.
  const auto per_parent = std::clamp<uint32_t>(
      static_cast<uint32_t>(std::floor(max_children * fill)), 3, max_children);
  const size_t n = children->size();
  const size_t parents = (n + per_parent - 1) / per_parent;
  std::vector<Node*> level;
  std::vector<Key> level_min;
  size_t at = 0;
  for (size_t p = 0; p < parents; ++p) {
    // Spread children evenly so the last parent is not nearly empty.
    const size_t take = n / parents + (p < n % parents ? 1 : 0);
    Node* parent = NewNode((*children)[at]->level() + 1);
    for (size_t i = 0; i < take; ++i) {
      parent->set_child(i, (*children)[at + i]);
      if (i > 0) parent->set_key(i - 1, (*min_keys)[at + i]);
    }
    parent->set_count(take - 1);
    level.push_back(parent);
    level_min.push_back((*min_keys)[at]);
    at += take;
  }
  children->swap(level);
  min_keys->swap(level_min);
}

}  // namespace dmindex::designs::local
