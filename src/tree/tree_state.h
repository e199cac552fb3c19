// State of one remote B+-tree as seen from this compute process:
//   TreeShared        immutable: options, layout, validator, lock policy, the root word;
//   ComputeNodeState  per logical compute node: allocator, routing cache of internal nodes,
//                     HOCL local lock table, cached root pointer, counters;
//   TreeContext       per thread (session): endpoint, node buffers, version stamps.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "common/runtime.h"
#include "dmindex/options.h"

#include "alloc/node_allocator.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "lease/lease.h"
#include "tree/internal_cache.h"
#include "tree/local_lock_table.h"
#include "tree/lock_word.h"
#include "tree/node_lock.h"
#include "tree/node_placer.h"
#include "tree/node_validation.h"
#include "tree/redo_log.h"
#include "tree/retired_blocks.h"
#include "tree/tree_options.h"

namespace dmindex::tree {

// Called after a leaf split was written (the leaf's lock released), with the leaf's fences
// before the split and the separator: [low, separator) stayed, [separator, high) moved right.
template <KeyValueTraits KV>
using LeafSplitObserver = std::function<void(const typename KV::Key& low, const typename KV::Key& separator,
                                             const typename KV::Key& high)>;

template <KeyValueTraits KV>
struct TreeContext;
// Reads the node at `addr` into `buf` (node_bytes) as the tree's only writer sees it, for a
// reader that met an image torn the same way twice with the lock free (TreeReader::Read).
// XStore's clients ask their memory server by RPC instead of taking the lock for one READ, so
// that no client ever holds a lock word of the server's tree (docs/SYNCHRONIZATION.md,
// "Readers of an image that does not validate").
template <KeyValueTraits KV>
using NodeReadByWriter = std::function<Status(TreeContext<KV>& c, GlobalAddress addr, std::byte* buf)>;

template <KeyValueTraits KV>
struct TreeShared {
  TreeShared(fabric::Fabric& f, const TreeOptions& o, const NodeLayout<KV>& l, GlobalAddress root,
             std::shared_ptr<NodePlacer> p = nullptr, LeafSplitObserver<KV> split_observer = nullptr,
             std::unique_ptr<lease::Lease> held_under = nullptr, NodeReadByWriter<KV> read_by_writer = nullptr,
             LockArea lock_area = LockArea::kProcesses)
      : fabric(f), options(o), layout(l), validator(l, o.validate), lock(o.combine, nullptr, lock_area),
        root_word(root), placer(std::move(p)), on_leaf_split(std::move(split_observer)),
        lease(std::move(held_under)), read_from_writer(std::move(read_by_writer)) {}

  // A block for a new node at `level` (the placer's choice, else the allocator's chunk).
  Result<GlobalAddress> PlaceNode(fabric::Endpoint& ep, alloc::NodeAllocator& a, uint8_t level) const {
    if (placer) return placer->Place(ep, a, level, layout.node_bytes);
    if (options.home_node >= 0) return a.AllocateOn(ep, static_cast<uint16_t>(options.home_node), layout.node_bytes);
    return a.Allocate(ep, layout.node_bytes);
  }
  // Gives back a node PlaceNode gave that was never published.
  void UnplaceNode(alloc::NodeAllocator& a, GlobalAddress addr, uint8_t level) const {
    if (placer) placer->Unplace(a, addr, level, layout.node_bytes);
    else a.Free(addr, layout.node_bytes);
  }

  fabric::Fabric& fabric;
  const TreeOptions options;
  const NodeLayout<KV> layout;
  const NodeValidator<KV> validator;
  const NodeLock lock;
  const GlobalAddress root_word;  // remote word holding the root node's address (0: empty)
  const std::shared_ptr<NodePlacer> placer;  // null: NodeAllocator::Allocate
  const LeafSplitObserver<KV> on_leaf_split;  // null: nobody asked
  // The lease this process holds the tree's locks under (null: none, options.lease = 0 or a
  // design that does not take them over, e.g. DEX).
  const std::unique_ptr<lease::Lease> lease;
  // Null: a reader takes the node's lock for one READ to judge an image torn twice alike.
  // Set: it asks the writer instead and never writes a lock word (nor takes one over).
  const NodeReadByWriter<KV> read_from_writer;
};

template <KeyValueTraits KV>
struct ComputeNodeState {
  // `routing`: the design's cache of internal nodes; null: an InternalCache if the options
  // ask for one.
  ComputeNodeState(uint32_t id_, uint16_t memory_nodes, const TreeOptions& o,
                   const NodeLayout<KV>& layout, std::unique_ptr<RoutingCache<KV>> routing = nullptr)
      : id(id_), allocator(memory_nodes, {.owner = o.chunk_owner}), retired(2 * o.value_lease), cache(std::move(routing)) {
    if (!cache && o.cache_bytes > 0) cache = std::make_unique<InternalCache<KV>>(o.cache_bytes, layout);
    if (o.hocl) local_locks = std::make_unique<LocalLockTable>(memory_nodes, o.handover_max);
  }

  const uint32_t id;
  alloc::NodeAllocator allocator;
  RetiredBlocks retired;                            // value blocks waiting to be reused
  std::unique_ptr<RoutingCache<KV>> cache;          // null: cache off
  std::unique_ptr<LocalLockTable> local_locks;      // null: hocl off
  std::atomic<uint64_t> root{0};                    // cached root pointer; 0: read the word
  std::atomic<uint64_t> retries{0};                 // torn reads, stale restarts, lock CAS failures
  std::atomic<uint64_t> next_session{0};
};

template <KeyValueTraits KV>
struct TreeContext final : LargeRedoBlocks {
  // `held_under`: the lease the context's locks name (null: none, owner_tag is written).
  TreeContext(std::unique_ptr<fabric::Endpoint> endpoint, ComputeNodeState<KV>* node,
              uint32_t node_bytes, lease::Lease* held_under = nullptr)
      : ep_owner(std::move(endpoint)), ep(*ep_owner), cn(*node),
        rng((uint64_t{node->id} << 32) ^ node->next_session.fetch_add(1) ^ runtime::Entropy()),
        owner_tag((uint64_t{node->id} + 1) << lease::HolderId::kBits | (rng() & 0x3ff) | 1),
        lease(held_under) {
    for (auto& b : buf) b.resize(node_bytes);
    leaf_entries_avg = node_bytes / 64.0;
  }
  ~TreeContext() override {
    // The thread's last posted release lands before it goes: its record is in a redo block
    // freed below, and a failed batch must not leave the word naming a live lease.
    (void)ReapPosted();
    // A revoked holder leaves its blocks: a taker may still read the record in one.
    if (lease == nullptr || !lease->CheckLive().ok()) return;
    for (GlobalAddress b : redo_blocks)
      if (!b.is_null()) cn.allocator.Free(b, RedoBlockBytes(static_cast<uint32_t>(buf[0].size())));
    for (GlobalAddress b : large_redo_blocks)
      if (!b.is_null()) cn.allocator.Free(b, RedoBlockBytes(kMaxNodeBytes));
  }

  // LargeRedoBlocks: one block per memory node for the largest record any index can leave
  // (kMaxNodeBytes of node), allocated at the first takeover that needs it and kept.
  Result<GlobalAddress> Get(uint16_t memory_node, uint32_t payload_bytes) override {
    if (payload_bytes > kMaxNodeBytes)
      return Status::Corruption("a redo record of " + std::to_string(payload_bytes) + " bytes, over the largest node");
    return RedoBlockOn(large_redo_blocks, memory_node, kMaxNodeBytes);
  }

  // Reaps the release this context posted without waiting, if any (NodeLock::Posted): at the
  // start of each operation, before any verb of it, and before the context closes.
  Status ReapPosted() { return posted.in_flight() ? posted.lock->ReapPosted(ep, &posted) : Status::Ok(); }

  // Who this context is when it locks a node on `memory_node`: its lease and its redo block
  // there (allocated the first time).
  Result<LockOwner> LockOwnerOn(uint16_t memory_node) {
    if (lease == nullptr) return LockOwner{nullptr, owner_tag};
    auto block = RedoBlockOn(redo_blocks, memory_node, static_cast<uint32_t>(buf[0].size()));
    if (!block.ok()) return block.status();
    return LockOwner{lease, EncodeLockWord(lease->id(), *block), this};
  }

  // A fresh stamp for a whole-node write: random, so it differs (w.h.p.) from every stamp a
  // node at the same address ever had, also across free and reuse. Even, so that a lock
  // word holding a node's version can mark itself locked in the low bit (RF-tree's inline
  // lock, node_layout.h's trailer).
  uint64_t NewVersion(uint64_t old = 0) {
    uint64_t v;
    do v = rng() & ~uint64_t{1}; while (v == 0 || v == old);
    return v;
  }
  void CountRetry(uint64_t n = 1) { cn.retries.fetch_add(n, std::memory_order_relaxed); }
  // Live entries of the leaves this thread's scans took, as a moving average: how many
  // leaves a scan of n entries needs when the format's leaves hold no fixed number
  // (LeafScanner). Starts at one entry per 64 node bytes.
  void NoteLeafEntries(size_t n) { leaf_entries_avg += (static_cast<double>(n) - leaf_entries_avg) / 8; }
  size_t LeafEntriesEstimate() const { return std::max<size_t>(1, static_cast<size_t>(leaf_entries_avg)); }

  std::byte* node() { return buf[0].data(); }     // the node being read or written
  std::byte* sibling() { return buf[1].data(); }  // a new right sibling, a new root
  std::byte* scratch() { return buf[2].data(); }  // parents read while locating a node

  std::unique_ptr<fabric::Endpoint> ep_owner;
  fabric::Endpoint& ep;
  ComputeNodeState<KV>& cn;
  std::mt19937_64 rng;
  const uint64_t owner_tag;  // written into lock words we hold without a lease (epoch bits 0)
  lease::Lease* const lease;                // null: none
  std::vector<GlobalAddress> redo_blocks;   // per memory node (LockOwnerOn)
  std::vector<GlobalAddress> large_redo_blocks;  // per memory node, for large takeovers (Get)
  std::vector<std::byte> buf[3];
  std::vector<std::byte> scan_buf;          // leaves read in one batch by a scan
  std::vector<LeafEntry<KV>> leaf_entries;  // entries of one leaf, sorted
  std::vector<std::byte> value_buf;         // a value block being written
  std::vector<std::byte> fetch_buf;         // value blocks being read
  double leaf_entries_avg = 0;               // NoteLeafEntries
  NodeLock::Posted posted;                   // a release posted without waiting (ReapPosted)

 private:
  // blocks[memory_node], a redo block for records of up to `payload_bytes` of node on that
  // memory node, allocated the first time; a block a lock word cannot name is given back.
  Result<GlobalAddress> RedoBlockOn(std::vector<GlobalAddress>& blocks, uint16_t memory_node,
                                    uint32_t payload_bytes) {
    if (blocks.size() <= memory_node) blocks.resize(memory_node + 1);
    GlobalAddress& block = blocks[memory_node];
    if (!block.is_null()) return block;
    auto got = cn.allocator.AllocateOn(ep, memory_node, RedoBlockBytes(payload_bytes));
    if (!got.ok()) return got.status();
    if (!RedoBlockNameable(*got)) {
      cn.allocator.Free(*got, RedoBlockBytes(payload_bytes));
      return Status::OutOfSpace("redo block " + got->ToString() + " lies beyond what a lock word can name (32 GiB)");
    }
    block = *got;
    return block;
  }
};

}  // namespace dmindex::tree
