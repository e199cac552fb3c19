// Opportunistic offloading (DEX §6): on a cache miss at level L <= M of a node owned by this
// compute node, the rest of the operation can be pushed to the memory server holding the
// node's subtree instead of READing L+1 nodes.
//
// Memory side: OffloadHandler walks the subtree in its own memory (it refuses pointers to
// other memory servers) through a LocalEndpoint, does a lookup, update, upsert or delete on the
// leaf and writes the leaf back; an insert into a full leaf splits it there (offload_handler.cc
// says how the split is published). What it cannot do - a full parent inside the subtree, a
// full memory node - is refused, and the compute node falls back to the normal path. Memory
// nodes bound their handler threads (MemoryNodeOptions::rpc_threads). Both key formats; the
// request and reply formats are offload_wire.h. Value blocks stay the compute node's: a value
// too long for the leaf is written to its block before the request, which carries only the
// reference; a lookup of such a value answers the reference, and the compute node READs the
// block; a write answers the block it unlinked, which the compute node retires.
//
// Compute side: OffloadPolicy compares moving averages of the offload latency l_p with
// (L+1) x (l_o + l_s) x c, l_o the moving average of a node READ (§6.1), and takes the other
// choice with probability q to keep both estimates fresh. That comparison sees one miss; an
// offloaded miss brings nothing into the cache, so a hot node, once offloaded, would miss and
// be offloaded for good (docs/results/simulation.md, cause 1). So the policy also counts the
// misses of each node that left it uncached (offloads; operations that found a leaf another
// operation was fetching or held) in a decayed hashed table, and reads a node in - admitted, even a
// leaf - once those misses cost as much as reading its path would (MissCounts, Hot).
// With the frequency policy (`policy=lfu`, the default) leaves are the cache's to judge
// instead: a sketch of sampled accesses (cache/frequency_sketch.h) says whether a missed leaf
// is worth more than what its frame would evict, and such a leaf is read and admitted, never
// offloaded; MissCounts then decides for inner nodes only.
#pragma once

#include <atomic>
#include <cstdint>
#include <random>
#include <vector>

#include "dmindex/status.h"
#include "fabric/memory_node.h"
#include "fabric/rpc.h"
#include "tree/value_block.h"
#include "tree/write_op.h"

namespace dmindex::designs::dex {

inline constexpr fabric::RpcOpcode kOffloadOpcode = fabric::rpc_op::kDexOffload;

enum class OffloadOp : uint8_t { kLookup, kUpdate, kUpsert, kDelete };

// The write an offloaded operation carries, and back (lookups are not writes).
inline OffloadOp ToOffload(tree::WriteOp op) {
  switch (op) {
    case tree::WriteOp::kUpsert: return OffloadOp::kUpsert;
    case tree::WriteOp::kUpdate: return OffloadOp::kUpdate;
    case tree::WriteOp::kDelete: return OffloadOp::kDelete;
  }
  return OffloadOp::kLookup;
}
inline tree::WriteOp ToWriteOp(OffloadOp op) {
  return op == OffloadOp::kUpdate ? tree::WriteOp::kUpdate
         : op == OffloadOp::kDelete ? tree::WriteOp::kDelete
                                    : tree::WriteOp::kUpsert;
}

// What an operation hands to the memory server: the key, and a write's value - inline, or
// the block it was written to (block non-null, value empty).
template <typename KV>
struct OffloadRequest {
  OffloadOp op = OffloadOp::kLookup;
  typename KV::KeyRef key{};
  typename KV::ValueRef value{};
  tree::ValueBlockRef block;
};

// Registers the handler on one memory node (idempotent), before it serves: DEX's registry
// entry names it, and designs::RegisterMemoryNodeHandlers runs it on every memory node, of a
// memory server process and of the in-process cluster alike. A memory node without it
// answers InvalidArgument, and the compute node stops offloading.
Status RegisterOffloadHandler(fabric::MemoryNode& node);

// How often each node missed lately without being brought into the cache: saturating 8-bit
// counts in a table hashed by node address, all halved each time as many misses as the table
// has slots were counted. The window is then a few times the cache's frames in misses - about
// the time a page stays cached - so a node counted twice in it misses more often than the
// cache turns over. Collisions only add counts: a cold node may be read in early (one READ
// instead of one offload), never kept out. Thread-safe; counts are estimates.
class MissCounts {
 public:
  // `frames`: the cache's frame count; the table has the next power of two >= 4 x frames slots.
  explicit MissCounts(uint64_t frames);
  // Counts one miss of `node`.
  void Count(GlobalAddress node);
  uint32_t Of(GlobalAddress node) const;

 private:
  size_t Slot(GlobalAddress node) const;
  void Halve();

  std::vector<std::atomic<uint8_t>> counts_;
  const uint64_t mask_;
  std::atomic<uint64_t> counted_{0};
};

class OffloadPolicy {
 public:
  // `frames`: the compute node's cache frames (MissCounts' window).
  // `frequency`: the cache's frequency sketch decides which leaves are worth a frame
  // (cache::BufferManager::WorthAdmitting), so Hot answers only for inner nodes.
  OffloadPolicy(bool enabled, uint32_t max_level, double explore, double cost_factor,
                uint64_t local_search_ns, uint64_t frames, bool frequency = false);

  // Whether to offload a miss of `node` at `level` (the caller checked ownership): never a
  // Hot one, else by the cost model.
  bool Decide(uint32_t level, GlobalAddress node, std::mt19937_64& rng) const;
  // Whether `node`'s counted misses (CountMiss) cost as much as reading its path in:
  // n x min(l_p, l_o + l_s) >= (L+1) x (l_o + l_s) x c - renting until the rent paid equals
  // the price of buying (at least two misses). Such a node is read and admitted, even a leaf.
  bool Hot(uint32_t level, GlobalAddress node) const;
  // A miss of `node` that left it uncached: offloaded, read privately, or a write that found
  // it registered by another operation.
  void CountMiss(GlobalAddress node) { misses_.Count(node); }
  // Whether the worker's next miss should be timed (RecordRead, RecordOffload: two clock
  // reads around its verb). The averages need a sample now and then, not every miss: one in
  // kLatencyPeriod per worker, and every miss until both averages have their first sample.
  bool SampleLatency(uint32_t& countdown) const {
    if (--countdown == 0) {
      countdown = kLatencyPeriod;
      return true;
    }
    return offload_ns_.load(std::memory_order_relaxed) == 0.0 || read_ns_.load(std::memory_order_relaxed) == 0.0;
  }
  static constexpr uint32_t kLatencyPeriod = 8;
  void RecordOffload(uint64_t ns) { Record(offload_ns_, ns); }
  void RecordRead(uint64_t ns) { Record(read_ns_, ns); }
  void Disable() { enabled_.store(false, std::memory_order_relaxed); }

  std::atomic<uint64_t> offloads{0}, fallbacks{0};
  std::atomic<uint64_t> splits{0};  // offloaded inserts that split their leaf on the memory server
  // Misses read in because they were Hot; lookups that read a busy leaf privately.
  std::atomic<uint64_t> hot_reads{0}, private_reads{0};

 private:
  // Exponential moving average over ~50 samples (alpha = 2 / 51).
  static void Record(std::atomic<double>& avg, uint64_t ns);

  std::atomic<bool> enabled_;
  const bool frequency_;
  const uint32_t max_level_;
  const double explore_, cost_factor_, local_search_ns_;
  std::atomic<double> offload_ns_{0.0}, read_ns_{0.0};
  MissCounts misses_;
};

}  // namespace dmindex::designs::dex
