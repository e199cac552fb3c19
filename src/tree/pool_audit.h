// PoolAudit: reads a whole tree from the memory pool alone - what a process that opens the
// index now would find if every compute process holding cached pages died this instant - and
// checks what the pool promises to such a reader (docs/DEX.md, "What may reach the pool"):
//
//  1. every pointer in a reachable image (the root word, child pointers, sibling links) leads
//     to a block holding a valid node image: never to memory that no node was written to;
//  2. each level is one sibling chain whose fences tile the key space (-inf .. +inf, each
//     node's low fence is its left neighbour's high fence), no reachable node is dead;
//  3. every separator of a parent is the low fence of a node of the level below, and the
//     parent points at exactly that node: a parent never knows of a split that the level
//     below does not show. A node no parent points to yet (a split's right half whose
//     separator is not in the parent yet: a "half split") is allowed; readers move right.
//  4. leaf keys lie within their leaf's fences, ascending along the chain.
//
// A B-link reader that follows these images therefore finds each key in exactly one leaf.
// Only meaningful on a quiescent pool (no writer at work): a torn image is reported as such.
#pragma once

#include <cstdint>
#include <vector>

#include "fabric/endpoint.h"
#include "tree/node_layout.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
struct PoolContent {
  std::vector<LeafEntry<KV>> entries;  // every pair on the leaf level, ascending
  uint32_t levels = 0;                 // 0: empty tree
  uint64_t nodes = 0;                  // reachable nodes
  uint64_t half_splits = 0;            // reachable nodes no parent points to yet
};

// OK and *out filled, or Corruption naming the first node that breaks a rule above.
template <KeyValueTraits KV>
Status AuditPool(fabric::Endpoint& ep, const NodeLayout<KV>& layout, GlobalAddress root_word,
                 PoolContent<KV>* out);

}  // namespace dmindex::tree
