#include "alloc/node_allocator.h"

#include <cstring>

#include "fabric/rpc.h"

namespace dmindex::alloc {

NodeAllocator::NodeAllocator(uint16_t memory_nodes, NodeAllocatorOptions options)
    : options_(options), arenas_(memory_nodes) {}

uint32_t NodeAllocator::RoundUp(uint32_t bytes) const {
  const uint32_t a = options_.alignment;
  return (bytes + a - 1) / a * a;
}

bool NodeAllocator::TakeFreeLocked(uint32_t size, int node, GlobalAddress* out) {
  auto it = free_.find(size);
  if (it == free_.end()) return false;
  auto& list = it->second;
  for (size_t i = list.size(); i-- > 0;) {
    if (node >= 0 && list[i].node() != node) continue;
    *out = list[i];
    list[i] = list.back();
    list.pop_back();
    in_use_ += size;
    return true;
  }
  return false;
}

Status NodeAllocator::TooLarge(uint32_t size) const {
  return Status::InvalidArgument("a block of " + std::to_string(size) + " bytes does not fit a chunk of " +
                                 std::to_string(chunk_bytes_));
}

Result<GlobalAddress> NodeAllocator::CutLocked(fabric::Endpoint& ep, uint16_t node, uint32_t size) {
  Arena& arena = arenas_[node];
  if (chunk_bytes_ != 0 && size > chunk_bytes_) return TooLarge(size);
  if (arena.left < size) {
    if (arena.exhausted) return Status::OutOfSpace("memory node " + std::to_string(node) + " is full");
    fabric::RpcReply reply;
    // The owner tag, sized up front: GCC 12 at -O2 with -fsanitize=thread reports a false
    // stringop-overflow for an insert into this empty vector (AppendPod), and -Werror stops.
    fabric::RpcReply request(options_.owner != 0 ? sizeof(options_.owner) : 0);
    if (options_.owner != 0) std::memcpy(request.data(), &options_.owner, sizeof(options_.owner));
    Status s = ep.Call(node, fabric::rpc_op::kAllocChunk, request, &reply);
    if (s.IsOutOfSpace()) arena.exhausted = true;
    DMX_RETURN_IF_ERROR(s);
    uint64_t offset = 0, chunk_bytes = 0;
    if (!fabric::ReadPod(reply, 0, &offset) || !fabric::ReadPod(reply, 8, &chunk_bytes))
      return Status::Corruption("alloc_chunk: short reply from memory node " + std::to_string(node));
    // Keep the old chunk's tail for requests of that size rather than leaking it.
    if (arena.left >= options_.alignment)
      free_[static_cast<uint32_t>(arena.left)].push_back(arena.next);
    arena.next = GlobalAddress(node, offset);
    arena.left = chunk_bytes;
    pool_bytes_ += chunk_bytes;
    chunk_bytes_ = chunk_bytes;
    if (chunk_bytes < size) return TooLarge(size);
  }
  GlobalAddress out = arena.next;
  arena.next = arena.next + size;
  arena.left -= size;
  in_use_ += size;
  if (journal_) journal_(arena.next);
  return out;
}

void NodeAllocator::SetCutJournal(CutJournal journal) {
  std::lock_guard lock(mu_);
  journal_ = std::move(journal);
}

void NodeAllocator::Resume(GlobalAddress next, uint64_t left) {
  std::lock_guard lock(mu_);
  if (next.node() >= arenas_.size() || left < options_.alignment) return;
  arenas_[next.node()].next = next;
  arenas_[next.node()].left = left;
}

Result<GlobalAddress> NodeAllocator::AllocateOn(fabric::Endpoint& ep, uint16_t node, uint32_t bytes) {
  if (node >= arenas_.size()) return Status::InvalidArgument("no memory node " + std::to_string(node));
  if (bytes == 0) return Status::InvalidArgument("allocation of zero bytes");
  const uint32_t size = RoundUp(bytes);
  std::lock_guard lock(mu_);
  GlobalAddress a;
  if (TakeFreeLocked(size, node, &a)) return a;
  return CutLocked(ep, node, size);
}

Result<GlobalAddress> NodeAllocator::Allocate(fabric::Endpoint& ep, uint32_t bytes) {
  if (bytes == 0) return Status::InvalidArgument("allocation of zero bytes");
  const uint32_t size = RoundUp(bytes);
  std::lock_guard lock(mu_);
  GlobalAddress a;
  if (TakeFreeLocked(size, -1, &a)) return a;
  const uint16_t n = static_cast<uint16_t>(arenas_.size());
  // Cut the current chunk until it runs dry, then take the next chunk from the next node.
  if (arenas_[cursor_].left < size) cursor_ = static_cast<uint16_t>((cursor_ + 1) % n);
  Status last;
  for (uint16_t tried = 0; tried < n; ++tried) {
    auto r = CutLocked(ep, cursor_, size);
    if (r.ok() || !r.status().IsOutOfSpace()) return r;
    last = r.status();
    cursor_ = static_cast<uint16_t>((cursor_ + 1) % n);
  }
  return Status::OutOfSpace("memory pool exhausted on all " + std::to_string(n) +
                            " memory nodes (" + last.message() + ")");
}

Result<GlobalAddress> NodeAllocator::AllocateRoundRobin(fabric::Endpoint& ep, uint32_t bytes) {
  if (bytes == 0) return Status::InvalidArgument("allocation of zero bytes");
  const uint32_t size = RoundUp(bytes);
  const uint16_t n = static_cast<uint16_t>(arenas_.size());
  std::lock_guard lock(mu_);
  Status last;
  for (uint16_t tried = 0; tried < n; ++tried) {
    const uint16_t node = spread_;
    spread_ = static_cast<uint16_t>((spread_ + 1) % n);
    GlobalAddress a;
    if (TakeFreeLocked(size, node, &a)) return a;
    auto r = CutLocked(ep, node, size);
    if (r.ok() || !r.status().IsOutOfSpace()) return r;
    last = r.status();
  }
  return Status::OutOfSpace("memory pool exhausted on all " + std::to_string(n) +
                            " memory nodes (" + last.message() + ")");
}

void NodeAllocator::Free(GlobalAddress addr, uint32_t bytes) {
  if (addr.is_null() || bytes == 0) return;
  const uint32_t size = RoundUp(bytes);
  std::lock_guard lock(mu_);
  free_[size].push_back(addr);
  in_use_ -= size;
}

uint64_t NodeAllocator::pool_bytes() const {
  std::lock_guard lock(mu_);
  return pool_bytes_;
}

uint64_t NodeAllocator::bytes_in_use() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

std::shared_ptr<NodeAllocator> OwnedAllocators::For(uint64_t owner) {
  std::lock_guard lock(mu_);
  auto& a = by_owner_[owner];
  if (!a) a = std::make_shared<NodeAllocator>(memory_nodes_, NodeAllocatorOptions{.owner = owner});
  return a;
}

void OwnedAllocators::Forget(uint64_t owner) {
  std::lock_guard lock(mu_);
  by_owner_.erase(owner);
}

}  // namespace dmindex::alloc
