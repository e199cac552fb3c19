#include "fabric/memory_node.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/activity.h"
#include "common/pool_memory.h"

namespace dmindex::fabric {

namespace {

std::string Describe(std::optional<uint16_t> id) {
  return id ? "memory node " + std::to_string(*id) : std::string("memory node (id not assigned yet)");
}

void WriteChunkHeader(std::byte* chunk, uint64_t offset, uint64_t owner) {
  auto* header = reinterpret_cast<uint64_t*>(chunk);
  __atomic_store_n(header + 1, owner, __ATOMIC_RELAXED);
  __atomic_store_n(header, kChunkMagic ^ offset, __ATOMIC_RELAXED);
}

}  // namespace

MemoryNode::MemoryNode(std::optional<uint16_t> id, std::byte* base, uint64_t size,
                       MemoryNodeOptions options, std::optional<PoolIdentity> restored)
    : id_(id ? int32_t{*id} : -1),
      identity_(restored ? *restored : PoolIdentity::New()),
      base_(base),
      size_(size),
      options_(options),
      rpc_slots_(std::max<uint32_t>(1, options.rpc_threads)),
      next_chunk_(kChunkAreaOffset) {
  auto* record = reinterpret_cast<PoolIdentityRecord*>(base_ + kPoolIdentityOffset);
  auto* incarnation = reinterpret_cast<uint64_t*>(base_ + kIncarnationOffset);
  if (restored) incarnation_ = __atomic_load_n(incarnation, __ATOMIC_RELAXED) + 1;
  __atomic_store_n(incarnation, incarnation_, __ATOMIC_RELAXED);
  if (restored) {
    next_chunk_ = __atomic_load_n(&record->next_chunk, __ATOMIC_RELAXED);
    free_head_ = __atomic_load_n(&record->free_head, __ATOMIC_RELAXED);
    chunks_in_use_ = __atomic_load_n(&record->chunks_in_use, __ATOMIC_RELAXED);
  } else {
    WritePoolIdentity(base_, identity_);
    __atomic_store_n(&record->pool_bytes, size_, __ATOMIC_RELAXED);
    __atomic_store_n(&record->chunk_bytes, options_.chunk_bytes, __ATOMIC_RELAXED);
    PersistAllocator();
  }
  RegisterBuiltins();
}

void MemoryNode::PersistAllocator() {
  // Word stores: clients may READ the record (its identity words) at any time.
  auto* record = reinterpret_cast<PoolIdentityRecord*>(base_ + kPoolIdentityOffset);
  __atomic_store_n(&record->next_chunk, next_chunk_, __ATOMIC_RELAXED);
  __atomic_store_n(&record->free_head, free_head_, __ATOMIC_RELAXED);
  __atomic_store_n(&record->chunks_in_use, chunks_in_use_, __ATOMIC_RELAXED);
}

bool MemoryNode::IsHandedOutChunk(uint64_t offset) const {
  return offset >= kChunkAreaOffset && offset < next_chunk_ &&
         (offset - kChunkAreaOffset) % options_.chunk_bytes == 0;
}

MemoryNode::~MemoryNode() { Stop(); }

void MemoryNode::Stop() {
  std::vector<std::function<void()>> stops;
  {
    std::lock_guard lock(stop_mu_);
    stops.swap(stops_);
  }
  for (auto& stop : stops) stop();
}

void MemoryNode::OnStop(std::function<void()> stop) {
  std::lock_guard lock(stop_mu_);
  stops_.push_back(std::move(stop));
}

void MemoryNode::OnIdKnown(std::function<void()> start) {
  std::unique_lock lock(start_mu_);
  if (!id()) {
    starts_.push_back(std::move(start));
    return;
  }
  lock.unlock();
  start();
}

Status MemoryNode::AssignId(uint16_t id) {
  // Under start_mu_: a second handshake racing the first returns only after the starts ran.
  std::lock_guard lock(start_mu_);
  int32_t current = -1;
  if (id_.compare_exchange_strong(current, id, std::memory_order_acq_rel)) {
    std::vector<std::function<void()>> starts;
    starts.swap(starts_);
    for (auto& start : starts) start();
    return Status::Ok();
  }
  if (current == id) return Status::Ok();
  return Status::InvalidArgument(
      "this memory server is memory node " + std::to_string(current) +
      " (its position in the memory-server list of the client that connected first), but this "
      "client lists it at position " + std::to_string(id) +
      ": every client of a cluster must list the same memory servers in the same order");
}

void MemoryNode::RegisterBuiltins() {
  (void)rpc_.Register(rpc_op::kPing, "ping", [](RpcRequest, RpcReply*) { return Status::Ok(); });
  (void)rpc_.Register(rpc_op::kAllocChunk, "alloc_chunk", [this](RpcRequest req, RpcReply* reply) {
    uint64_t owner = 0;
    if (!req.empty() && !ReadPod(req, 0, &owner)) return Status::InvalidArgument("alloc_chunk: short request");
    auto offset = AllocChunk(owner);
    if (!offset.ok()) return offset.status();
    AppendPod(reply, *offset + kChunkHeaderBytes);
    AppendPod(reply, options_.chunk_bytes - kChunkHeaderBytes);
    return Status::Ok();
  });
  (void)rpc_.Register(rpc_op::kFreeChunk, "free_chunk", [this](RpcRequest req, RpcReply*) {
    uint64_t offset;
    if (!ReadPod(req, 0, &offset)) return Status::InvalidArgument("free_chunk: short request");
    return FreeChunk(offset - kChunkHeaderBytes);
  });
  (void)rpc_.Register(rpc_op::kFreeOwnedChunks, "free_owned_chunks", [this](RpcRequest req, RpcReply* reply) {
    uint64_t owner;
    if (!ReadPod(req, 0, &owner)) return Status::InvalidArgument("free_owned_chunks: short request");
    auto freed = FreeOwnedChunks(owner);
    if (!freed.ok()) return freed.status();
    AppendPod(reply, *freed);
    return Status::Ok();
  });
  (void)rpc_.Register(rpc_op::kPoolInfo, "pool_info", [this](RpcRequest, RpcReply* reply) {
    AppendPod(reply, Info());
    return Status::Ok();
  });
}

Status MemoryNode::Serve(RpcOpcode op, RpcRequest request, RpcReply* reply) {
  if (!rpc_slots_.TryAcquire()) {
    WaitNote note("a free RPC thread of the memory node");
    rpc_slots_.Acquire();
  }
  Status s = rpc_.Dispatch(op, request, reply);
  rpc_slots_.Release();
  return s;
}

Status MemoryNode::Execute(const Verb& v) {
  if (!Contains(v.remote.offset(), v.length))
    return Status::InvalidArgument("verb outside the pool: " + v.remote.ToString() + " +" +
                                   std::to_string(v.length));
  std::byte* target = base_ + v.remote.offset();
  switch (v.kind) {
    case VerbKind::kRead:
      CopyFromPool(v.local, target, v.length);
      break;
    case VerbKind::kWrite:
      CopyToPool(target, v.local, v.length);
      break;
    case VerbKind::kCas:
      *static_cast<uint64_t*>(v.local) = PoolCas(target, v.operand, v.swap);
      break;
    case VerbKind::kFaa:
      *static_cast<uint64_t*>(v.local) = PoolFaa(target, v.operand);
      break;
  }
  return Status::Ok();
}

Result<uint64_t> MemoryNode::AllocChunk(uint64_t owner) {
  std::lock_guard lock(chunk_mu_);
  uint64_t offset;
  if (free_head_ != 0) {
    // A server killed between the steps below leaks the chunk at worst: the list's head
    // moves first, and the chunk is handed out only after its link word is cleared.
    offset = free_head_;
    auto* link = reinterpret_cast<uint64_t*>(base_ + offset);
    const uint64_t next = __atomic_load_n(link, __ATOMIC_RELAXED);
    if (next != 0 && !IsHandedOutChunk(next))
      return Status::Corruption(Describe(id()) + ": the free-chunk list is damaged (chunk " +
                                std::to_string(offset) + " links to " + std::to_string(next) + ")");
    free_head_ = next;
    PersistAllocator();
  } else if (size_ >= options_.chunk_bytes && next_chunk_ <= size_ - options_.chunk_bytes) {
    offset = next_chunk_;
    // The header before the bump pointer moves: a persistent pool never holds a handed-out
    // chunk without one (a server killed in between hands the same chunk out again).
    WriteChunkHeader(base_ + offset, offset, owner);
    next_chunk_ += options_.chunk_bytes;
  } else {
    return Status::OutOfSpace(Describe(id()) + ": pool of " +
                              std::to_string(size_ >> 20) + " MiB exhausted (" +
                              std::to_string(chunks_in_use_) + " chunks of " +
                              std::to_string(options_.chunk_bytes >> 20) + " MiB in use)");
  }
  WriteChunkHeader(base_ + offset, offset, owner);  // over the link word of a reused chunk
  ++chunks_in_use_;
  PersistAllocator();
  return offset;
}

Status MemoryNode::FreeChunk(uint64_t offset) {
  std::lock_guard lock(chunk_mu_);
  if (!IsHandedOutChunk(offset))
    return Status::InvalidArgument("free_chunk: " + std::to_string(offset) + " is not a chunk");
  // Bounded by the chunks handed out, should a damaged link word make the list a cycle.
  uint64_t hops = (next_chunk_ - kChunkAreaOffset) / options_.chunk_bytes;
  for (uint64_t c = free_head_; c != 0 && IsHandedOutChunk(c) && hops-- > 0;
       c = __atomic_load_n(reinterpret_cast<const uint64_t*>(base_ + c), __ATOMIC_RELAXED))
    if (c == offset) return Status::InvalidArgument("free_chunk: chunk freed twice");
  FreeChunkLocked(offset);
  return Status::Ok();
}

bool MemoryNode::OwnedBy(uint64_t offset, uint64_t owner) const {
  const auto* header = reinterpret_cast<const uint64_t*>(base_ + offset);
  // A free chunk's word 0 is a link (a pool offset, far below the magic) or 0: never a header.
  return __atomic_load_n(header, __ATOMIC_RELAXED) == (kChunkMagic ^ offset) &&
         __atomic_load_n(header + 1, __ATOMIC_RELAXED) == owner;
}

void MemoryNode::OnOwnerFreed(std::function<void(uint64_t owner)> forget) {
  std::lock_guard lock(forget_mu_);
  forgets_.push_back(std::move(forget));
}

uint64_t MemoryNode::OwnerOf(uint64_t offset) const {
  std::lock_guard lock(chunk_mu_);
  if (offset < kChunkAreaOffset || offset >= next_chunk_) return 0;
  const uint64_t chunk = offset - (offset - kChunkAreaOffset) % options_.chunk_bytes;
  const auto* header = reinterpret_cast<const uint64_t*>(base_ + chunk);
  if (__atomic_load_n(header, __ATOMIC_RELAXED) != (kChunkMagic ^ chunk)) return 0;
  return __atomic_load_n(header + 1, __ATOMIC_RELAXED);
}

Result<uint64_t> MemoryNode::FreeOwnedChunks(uint64_t owner) {
  if (owner == 0) return Status::InvalidArgument("free_owned_chunks: owner 0 names no index");
  {
    // Outside chunk_mu_: a handler forgetting an index may stop work that allocates.
    std::lock_guard lock(forget_mu_);
    for (auto& forget : forgets_) forget(owner);
  }
  std::lock_guard lock(chunk_mu_);
  uint64_t freed = 0;
  for (uint64_t c = kChunkAreaOffset; c < next_chunk_; c += options_.chunk_bytes)
    if (OwnedBy(c, owner)) {
      FreeChunkLocked(c);  // clears the header: a second call finds nothing
      ++freed;
    }
  return freed;
}

uint64_t MemoryNode::ChunksOwnedBy(uint64_t owner) const {
  std::lock_guard lock(chunk_mu_);
  uint64_t owned = 0;
  for (uint64_t c = kChunkAreaOffset; c < next_chunk_; c += options_.chunk_bytes) owned += OwnedBy(c, owner);
  return owned;
}

void MemoryNode::FreeChunkLocked(uint64_t offset) {
  // Hand-outs are always zeroed (fresh pool memory is), so layers above may rely on it; the
  // link word is overwritten by the header when the chunk is handed out again.
  std::memset(base_ + offset, 0, options_.chunk_bytes);
  __atomic_store_n(reinterpret_cast<uint64_t*>(base_ + offset), free_head_, __ATOMIC_RELAXED);
  free_head_ = offset;
  --chunks_in_use_;
  PersistAllocator();
}

PoolInfo MemoryNode::Info() const {
  std::lock_guard lock(chunk_mu_);
  PoolInfo info;
  info.pool_bytes = size_;
  info.chunk_bytes = options_.chunk_bytes;
  info.chunks_total = size_ > kChunkAreaOffset ? (size_ - kChunkAreaOffset) / options_.chunk_bytes : 0;
  info.chunks_in_use = chunks_in_use_;
  info.chunks_ever = (next_chunk_ - kChunkAreaOffset) / options_.chunk_bytes;
  return info;
}

}  // namespace dmindex::fabric
