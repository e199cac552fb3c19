// A node of the local B+-tree: one allocation of IndexOptions::node_bytes bytes, a 32-byte
// header followed by 8-byte slots. A leaf holds `capacity` sorted keys, then their values; an
// inner node holds `capacity` sorted separator keys, then capacity+1 child pointers, where
// child i holds the keys in [key(i-1), key(i)).
//
// Every mutable word is a std::atomic accessed with relaxed ordering: optimistic readers read
// while a writer may be changing the node, and validate with the node's OptLock afterwards.
// The mutators below must only be called with the lock held.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>

#include "designs/local/opt_lock.h"
#include "common/u64.h"
#include "dmindex/index.h"

namespace dmindex::designs::local {

// The local tree stores the u64 key format (8-byte integer keys and values in atomic slots);
// its adapter (local_index.cc) converts the public byte strings.
using u64::Key;
using u64::Value;
using u64::KeyValue;
using u64::kMinKey;
using u64::kMaxKey;

// A range of integer keys, as the adapter converts a public KeyRange.
struct KeyRange {
  Key start = kMinKey;
  bool after_start = false;
  std::optional<Key> end;  // exclusive
};

class Node {
 public:
  static constexpr uint32_t kHeaderBytes = 32;
  static constexpr uint32_t LeafCapacity(uint32_t node_bytes) { return (node_bytes - kHeaderBytes) / 16; }
  static constexpr uint32_t InnerCapacity(uint32_t node_bytes) {
    return (node_bytes - kHeaderBytes - 8) / 16;
  }

  // level 0 is a leaf. The node starts empty and unlocked.
  static Node* Create(uint32_t node_bytes, uint16_t level) {
    void* memory = ::operator new(node_bytes, std::align_val_t{64});
    const uint32_t capacity = level == 0 ? LeafCapacity(node_bytes) : InnerCapacity(node_bytes);
    Node* node = new (memory) Node(level, capacity);
    const uint32_t slots = level == 0 ? 2 * capacity : 2 * capacity + 1;
    for (uint32_t i = 0; i < slots; ++i) new (node->raw_slot(i)) std::atomic<uint64_t>(0);
    return node;
  }
  static void Destroy(Node* node) {
    node->~Node();
    ::operator delete(node, std::align_val_t{64});
  }

  OptLock& lock() { return lock_; }
  bool is_leaf() const { return level_ == 0; }
  uint16_t level() const { return level_; }
  uint32_t capacity() const { return capacity_; }
  uint32_t count() const { return count_.load(std::memory_order_relaxed); }
  bool full() const { return count() >= capacity_; }

  Key key(uint32_t i) const { return slot(i).load(std::memory_order_relaxed); }
  Value value(uint32_t i) const { return slot(capacity_ + i).load(std::memory_order_relaxed); }
  Node* child(uint32_t i) const {
    return reinterpret_cast<Node*>(slot(capacity_ + i).load(std::memory_order_relaxed));
  }
  Node* next() const { return next_.load(std::memory_order_relaxed); }

  // Index of the first key >= k (count() if none). Bounded by capacity even if an optimistic
  // reader sees keys mid-shift; the result is only trusted after validation.
  uint32_t LowerBound(Key k) const {
    uint32_t lo = 0, hi = count() < capacity_ ? count() : capacity_;
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      if (key(mid) < k) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  // Index of the first key > k.
  uint32_t UpperBound(Key k) const {
    uint32_t lo = 0, hi = count() < capacity_ ? count() : capacity_;
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      if (!(k < key(mid))) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  // Leaf: true if k is present, at *pos (else *pos is where it would go).
  bool Find(Key k, uint32_t* pos) const {
    *pos = LowerBound(k);
    return *pos < count() && key(*pos) == k;
  }
  // The child of an inner node responsible for k: the number of separators <= k.
  uint32_t ChildIndex(Key k) const { return UpperBound(k); }

  // --- Mutators (lock held, or the node not yet published) ---
  void set_count(uint32_t n) { count_.store(n, std::memory_order_relaxed); }
  void set_key(uint32_t i, Key k) { slot(i).store(k, std::memory_order_relaxed); }
  void set_value(uint32_t i, Value v) { slot(capacity_ + i).store(v, std::memory_order_relaxed); }
  void set_child(uint32_t i, Node* c) {
    slot(capacity_ + i).store(reinterpret_cast<uint64_t>(c), std::memory_order_relaxed);
  }
  void set_next(Node* n) { next_.store(n, std::memory_order_relaxed); }

  // Leaf: puts (k, v) at position pos, shifting the tail right. Requires !full().
  void InsertEntry(uint32_t pos, Key k, Value v) {
    for (uint32_t i = count(); i > pos; --i) {
      set_key(i, key(i - 1));
      set_value(i, value(i - 1));
    }
    set_key(pos, k);
    set_value(pos, v);
    set_count(count() + 1);
  }
  // Leaf: removes the entry at pos, shifting the tail left.
  void RemoveEntry(uint32_t pos) {
    for (uint32_t i = pos; i + 1 < count(); ++i) {
      set_key(i, key(i + 1));
      set_value(i, value(i + 1));
    }
    set_count(count() - 1);
  }
  // Inner: adds separator `sep` with `right` as the child for keys >= sep. Requires !full().
  void InsertChild(Key sep, Node* right) {
    const uint32_t pos = LowerBound(sep);
    for (uint32_t i = count(); i > pos; --i) {
      set_key(i, key(i - 1));
      set_child(i + 1, child(i));
    }
    set_key(pos, sep);
    set_child(pos + 1, right);
    set_count(count() + 1);
  }

 private:
  Node(uint16_t level, uint32_t capacity) : capacity_(capacity), level_(level) {}

  void* raw_slot(uint32_t i) { return reinterpret_cast<std::byte*>(this) + kHeaderBytes + 8 * i; }
  std::atomic<uint64_t>& slot(uint32_t i) const {
    auto* self = const_cast<Node*>(this);
    return *std::launder(reinterpret_cast<std::atomic<uint64_t>*>(self->raw_slot(i)));
  }

  OptLock lock_;
  std::atomic<uint32_t> count_{0};
  const uint32_t capacity_;
  const uint16_t level_;
  std::atomic<Node*> next_{nullptr};  // leaves: right sibling, for scans
};

static_assert(sizeof(Node) <= Node::kHeaderBytes, "node header must fit kHeaderBytes");

}  // namespace dmindex::designs::local
