// The inner nodes of the adaptive radix tree (Leis, Kemper, Neumann, ICDE'13): four sizes for
// 4, 16, 48 and 256 children, chosen by how many a node has, so sparse nodes stay small.
// A node consumes one key byte per child slot after its compressed path: `prefix` holds every
// byte the node's subtree has in common below its parent's slot, stored whole (pessimistic
// path compression; keys are compared exactly on the way down, so a scan or a subtree release
// knows each node's range without loading a leaf). A key that ends exactly at a node (another
// key extends it) lives in the node's `terminal` slot, so byte strings that are prefixes of
// each other need no terminator byte.
//
// Child pointers are tagged: bit 0 set for a Leaf. Every field read by optimistic readers is a
// std::atomic accessed relaxed (acquire for pointers, so a leaf's bytes are visible), and
// changed only under the node's lock (common/version_lock.h); the counters and hot bits are the
// exception: racy by design, changed with relaxed RMWs by anyone passing by.
//
// Per node, for IndeXY (docs/INDEXY.md): sampled access and insert counters and four bits -
// kDirtyBit (an insert or update passed since the cleaner last looked: the paper's D bit),
// kCandidateBit (the paper's C bit), kAccessedBit (the clock policy's second chance) and
// kMountedBit (keys of this node's range may be in Y while absent from X: the mount point).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "art/leaf.h"
#include "common/version_lock.h"

namespace dmindex::art {

enum class NodeType : uint8_t { kN4, kN16, kN48, kN256 };

using ChildRef = uintptr_t;  // 0: none; bit 0: a Leaf*; else a Node*
inline bool IsLeaf(ChildRef c) { return (c & 1) != 0; }
inline Leaf* AsLeaf(ChildRef c) { return reinterpret_cast<Leaf*>(c & ~ChildRef{1}); }
inline ChildRef FromLeaf(const Leaf* l) { return reinterpret_cast<ChildRef>(l) | 1; }
class Node;
inline Node* AsNode(ChildRef c) { return reinterpret_cast<Node*>(c); }
inline ChildRef FromNode(const Node* n) { return reinterpret_cast<ChildRef>(n); }

namespace node_bits {
inline constexpr uint8_t kDirtyBit = 1;
inline constexpr uint8_t kCandidateBit = 2;
inline constexpr uint8_t kAccessedBit = 4;
inline constexpr uint8_t kMountedBit = 8;
}  // namespace node_bits

// A node's children in key order, read from one snapshot.
struct ChildList {
  uint16_t count = 0;
  uint8_t bytes[256];
  ChildRef refs[256];
};

class Node {
 public:
  // A new empty node of `type` with room for `prefix_capacity` prefix bytes.
  static Node* Create(NodeType type, uint32_t prefix_capacity);
  static void Destroy(Node* node);
  static size_t SizeFor(NodeType type, uint32_t prefix_capacity);
  static uint32_t Capacity(NodeType type);

  VersionLock& lock() { return lock_; }
  const VersionLock& lock() const { return lock_; }
  NodeType type() const { return type_; }
  size_t bytes() const { return SizeFor(type_, prefix_capacity_); }
  uint32_t count() const { return count_.load(std::memory_order_relaxed); }
  bool full() const { return count() >= Capacity(type_); }
  // Too few children for its size (shrink with hysteresis: N16 <= 3, N48 <= 12, N256 <= 37).
  bool underfull() const;

  uint32_t prefix_length() const { return prefix_length_.load(std::memory_order_relaxed); }
  uint8_t prefix(uint32_t i) const { return prefix_bytes()[i].load(std::memory_order_relaxed); }
  // The prefix as a string (a reader validates afterwards).
  std::string PrefixString() const;
  // Sets the prefix (length <= capacity); under the lock or before publication.
  void SetPrefix(std::string_view p);
  // Drops the first `n` prefix bytes (a new node above took them, plus one slot byte).
  void DropPrefixFront(uint32_t n);

  ChildRef terminal() const { return terminal_.load(std::memory_order_acquire); }
  void set_terminal(ChildRef leaf) { terminal_.store(leaf, std::memory_order_release); }

  ChildRef FindChild(uint8_t byte) const;
  // Requires !full() and no child at `byte`.
  void AddChild(uint8_t byte, ChildRef child);
  // Requires a child at `byte`.
  void ReplaceChild(uint8_t byte, ChildRef child);
  void RemoveChild(uint8_t byte);
  // The children with byte >= `from`, in order.
  void Children(uint8_t from, ChildList* out) const;
  // The number of children (count) from a snapshot: the same as count() under the lock.

  // A copy of this node (prefix, terminal, children, counters and bits) as `type`, which must
  // hold every child. The caller holds this node's lock.
  Node* CopyAs(NodeType type) const;

  // ---- IndeXY's per-subtree state (racy by design) ----
  uint8_t hot_bits() const { return bits_.load(std::memory_order_relaxed); }
  void SetBits(uint8_t b) {
    if ((bits_.load(std::memory_order_relaxed) & b) != b) bits_.fetch_or(b, std::memory_order_relaxed);
  }
  void ClearBits(uint8_t b) {
    if (bits_.load(std::memory_order_relaxed) & b) bits_.fetch_and(static_cast<uint8_t>(~b), std::memory_order_relaxed);
  }
  // The mount bit is read by validated readers and set under the lock; never cleared.
  bool mounted() const { return (bits_.load(std::memory_order_acquire) & node_bits::kMountedBit) != 0; }
  void SetMounted() { bits_.fetch_or(node_bits::kMountedBit, std::memory_order_release); }

  uint32_t accesses() const { return accesses_.load(std::memory_order_relaxed); }
  int64_t inserts() const { return inserts_.load(std::memory_order_relaxed); }
  void AddAccesses(uint32_t n) { accesses_.fetch_add(n, std::memory_order_relaxed); }
  void AddInserts(int64_t n) { inserts_.fetch_add(n, std::memory_order_relaxed); }
  // Halves the access counter (ageing between releases).
  void DecayAccesses() { accesses_.store(accesses() / 2, std::memory_order_relaxed); }

 private:
  Node(NodeType type, uint32_t prefix_capacity) : type_(type), prefix_capacity_(prefix_capacity) {}
  std::atomic<uint8_t>* prefix_bytes() const;
  // Type-specific arrays, right after the header.
  std::atomic<uint8_t>* keys() const;          // N4, N16: sorted bytes; N48: the 256-entry index
  std::atomic<ChildRef>* children() const;     // N4/N16: by position; N48: 48 slots; N256: by byte
  int Position(uint8_t byte) const;            // N4/N16: index of `byte`, or -1

  VersionLock lock_;
  const NodeType type_;
  std::atomic<uint8_t> bits_{0};
  std::atomic<uint16_t> count_{0};
  std::atomic<uint32_t> prefix_length_{0};
  const uint32_t prefix_capacity_;
  std::atomic<uint32_t> accesses_{0};
  std::atomic<int64_t> inserts_{0};
  std::atomic<ChildRef> terminal_{0};
};

static_assert(sizeof(Node) == 40, "the ART node header is 40 bytes");

}  // namespace dmindex::art
