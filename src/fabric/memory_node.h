// MemoryNode: what a memory server is, independent of transport. It owns (a view of) the
// pool, hands out chunks of it, and serves RPCs from a handler registry. The in-process
// backend holds several of these; the UCX memory server process holds one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "common/runtime.h"
#include "common/sync.h"
#include "dmindex/status.h"
#include "fabric/pool_identity.h"
#include "fabric/pool_layout.h"
#include "fabric/rpc.h"
#include "fabric/verb.h"

namespace dmindex::fabric {

struct PoolInfo {
  uint64_t pool_bytes = 0;
  uint64_t chunk_bytes = 0;
  uint64_t chunks_total = 0;
  uint64_t chunks_in_use = 0;
  // Chunks handed out at least once (the bump pointer's reach): freed chunks are handed out
  // again before it moves, so this stays put while freed memory is reused.
  uint64_t chunks_ever = 0;
};

struct MemoryNodeOptions {
  uint64_t chunk_bytes = kDefaultChunkBytes;
  // Memory servers have one or two weak cores: at most this many RPC handlers run at once;
  // further requests wait for a free memory-side thread.
  uint32_t rpc_threads = 1;
};

class MemoryNode {
 public:
  // `base` must stay valid for the node's lifetime; size >= kMinPoolBytes.
  // `id`: which memory node this is (the node of GlobalAddresses into it), when known at
  // construction; a UCX memory server learns it from its clients (AssignId).
  // `restored`: empty for a new pool, which must be zero-initialised and gets a new
  // identity, written into it; else the identity of a persistent pool that already holds a
  // previous server's bytes (CheckRestoredPool), whose chunk allocator carries on from the
  // state kept in the pool.
  MemoryNode(std::optional<uint16_t> id, std::byte* base, uint64_t size, MemoryNodeOptions options,
             std::optional<PoolIdentity> restored = std::nullopt);
  MemoryNode(const MemoryNode&) = delete;
  MemoryNode& operator=(const MemoryNode&) = delete;
  // Stops the work handlers started on it (OnStop) first, while everything it uses is there.
  ~MemoryNode();

  // Handlers that run work of their own in the background (XStore's retraining threads)
  // say here how to stop it; the node calls every `stop` once, in registration order, when
  // it goes away, before its pool, chunks and handlers do.
  void OnStop(std::function<void()> stop);
  // Calls the `stop`s now (once; the destructor calls those registered later): for a node
  // that goes away while others keep reaching its replacement (InProcFabric::RestartNode).
  void Stop();
  // Handlers that keep state in the pool and must put it right before anyone uses it (XStore's
  // server frees the locks its killed predecessor held) say here how: `start` runs once, when
  // the node knows its id - at once if it does, else inside the first AssignId, before that
  // call returns (so before any client is answered: every client's handshake assigns it).
  void OnIdKnown(std::function<void()> start);

  // Which start of a memory server on this pool this is: 1 for a new pool, one more on every
  // restart of a persistent one (kept in the pool's word kIncarnationOffset). Two servers never
  // serve one pool at once (a live server locks its --data-dir), so a lock word that names an
  // earlier incarnation was left by a dead process.
  uint64_t incarnation() const { return incarnation_; }

  // Nothing until assigned: handlers that must tell local addresses from foreign ones
  // (DEX's offload) then treat every address as foreign.
  std::optional<uint16_t> id() const {
    const int32_t id = id_.load(std::memory_order_acquire);
    return id < 0 ? std::nullopt : std::optional<uint16_t>(static_cast<uint16_t>(id));
  }
  // A client says at which position of its memory-node list it reaches this node. The first
  // assignment sticks and the same one again is Ok; a different one is InvalidArgument: two
  // clients that disagree on which node is which would read each other's addresses on the
  // wrong server and corrupt data silently.
  Status AssignId(uint16_t id);
  const PoolIdentity& identity() const { return identity_; }
  std::byte* base() const { return base_; }
  uint64_t size() const { return size_; }
  const MemoryNodeOptions& options() const { return options_; }
  bool Contains(uint64_t offset, uint64_t len) const {
    return offset >= 64 && len <= size_ && offset <= size_ - len;
  }

  // Handlers of designs are registered here before serving starts.
  RpcRegistry& rpc() { return rpc_; }

  // Serves one RPC, waiting for one of the bounded memory-side threads.
  Status Serve(RpcOpcode op, RpcRequest request, RpcReply* reply);

  // Carries out one verb on this node's pool from inside the memory node (LocalEndpoint, and
  // the in-process fabric's untorn verbs): READ/WRITE word by word, CAS/FAA as locked atomic
  // instructions on the pool word, which is how remote atomics land too (a NIC's, or UCX's
  // over shared memory or in software over TCP), so both kinds interleave atomically.
  // The caller checked that the verb targets this node; the range is checked here.
  Status Execute(const Verb& v);

  // Hands out a chunk (its start; the caller may use it past kChunkHeaderBytes), whose
  // header records `owner`: the tag of the index it is for (alloc/catalog.h), 0 for none.
  // The header is written before the allocator's state moves, so a chunk is never handed
  // out without it.
  Result<uint64_t> AllocChunk(uint64_t owner = 0);
  Status FreeChunk(uint64_t offset);  // a chunk's start
  // Frees every chunk whose header names `owner` (not 0) and returns how many: what dropping
  // an index does on each memory node. Idempotent: a freed chunk's header is cleared, so a
  // second call (a drop finished after its dropper died) frees nothing twice.
  Result<uint64_t> FreeOwnedChunks(uint64_t owner);
  // How many handed-out chunks name `owner`.
  uint64_t ChunksOwnedBy(uint64_t owner) const;
  // The owner tag of the handed-out chunk holding pool offset `offset` (0: none, or not in a
  // chunk): which index a node that a handler works on belongs to, so that what the handler
  // allocates for it is that index's too.
  uint64_t OwnerOf(uint64_t offset) const;
  // Handlers that keep state per index (their allocators, XStore's partitions) say here how
  // to forget an index's: FreeOwnedChunks calls every `forget` with the owner before it frees
  // the chunks, so no handler works on (or allocates from) them once they can be reused.
  void OnOwnerFreed(std::function<void(uint64_t owner)> forget);
  PoolInfo Info() const;

 private:
  void RegisterBuiltins();
  // The allocator's state, written through to the pool's identity record (pool_identity.h)
  // after every change, so a persistent pool's chunks stay handed out across restarts.
  void PersistAllocator();
  // Whether `offset` is the start of a chunk the bump pointer has passed (chunk_mu_ held).
  bool IsHandedOutChunk(uint64_t offset) const;
  // Whether the handed-out chunk at `offset` carries a header naming `owner` (chunk_mu_ held).
  bool OwnedBy(uint64_t offset, uint64_t owner) const;
  void FreeChunkLocked(uint64_t offset);

  std::atomic<int32_t> id_;  // -1: not assigned yet
  const PoolIdentity identity_;
  uint64_t incarnation_ = 1;
  std::byte* const base_;
  const uint64_t size_;
  const MemoryNodeOptions options_;
  RpcRegistry rpc_;
  Semaphore rpc_slots_;  // not std::counting_semaphore: see common/sync.h

  runtime::Mutex stop_mu_;
  std::vector<std::function<void()>> stops_;
  runtime::Mutex start_mu_;  // AssignId's first assignment and the starts it runs
  std::vector<std::function<void()>> starts_;
  runtime::Mutex forget_mu_;
  std::vector<std::function<void(uint64_t)>> forgets_;

  mutable runtime::Mutex chunk_mu_;
  uint64_t next_chunk_;     // bump pointer into the chunk area
  uint64_t free_head_ = 0;  // freed chunks, linked through their word 0; 0 ends the list
  uint64_t chunks_in_use_ = 0;
};

}  // namespace dmindex::fabric
