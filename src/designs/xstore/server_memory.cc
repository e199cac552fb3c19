#include "designs/xstore/server_memory.h"

#include <algorithm>
#include <string>

#include "fabric/pool_layout.h"
#include "tree/lock_word.h"

namespace dmindex::designs::xstore {
namespace {

// A registry entry: the block's offset (48 bits) and its size in 64-byte units (16 bits).
constexpr uint64_t kOffsetBits = 48;
constexpr uint64_t kEntries = kRedoRegistryBytes / 8 - 1;

uint64_t Entry(GlobalAddress block, uint32_t bytes) { return block.offset() | (uint64_t{bytes / 64} << kOffsetBits); }
bool Enterable(GlobalAddress block, uint32_t bytes) {
  return bytes % 64 == 0 && bytes / 64 < (uint64_t{1} << (64 - kOffsetBits)) && block.offset() < (uint64_t{1} << kOffsetBits);
}

uint64_t* Word(std::byte* base, uint64_t chunk, uint64_t word) {
  return reinterpret_cast<uint64_t*>(base + chunk + word);
}

// Calls fn(chunk) for every handed-out chunk of the node whose header names `owner`.
template <typename Fn>
void ForEachChunkOf(const fabric::MemoryNode& node, uint64_t owner, Fn&& fn) {
  const uint64_t chunk = node.options().chunk_bytes, chunks = node.Info().chunks_ever;
  for (uint64_t i = 0; i < chunks; ++i) {
    const uint64_t c = fabric::kChunkAreaOffset + i * chunk;
    if (node.OwnerOf(c) == owner) fn(c);
  }
}

}  // namespace

ServerMemory::Counts& ServerMemory::Counts::operator+=(const Counts& o) {
  listed += o.listed;
  reused += o.reused;
  resumed = resumed || o.resumed;
  return *this;
}

uint64_t* ServerMemory::HeaderWord(uint64_t chunk, uint64_t word) const { return Word(node_.base(), chunk, word); }

uint64_t ServerMemory::ChunkOf(uint64_t offset) const {
  return offset - (offset - fabric::kChunkAreaOffset) % node_.options().chunk_bytes;
}

std::vector<uint64_t> ServerMemory::OwnersIn(const fabric::MemoryNode& node) {
  std::vector<uint64_t> owners;
  const uint64_t chunk = node.options().chunk_bytes, chunks = node.Info().chunks_ever;
  for (uint64_t i = 0; i < chunks; ++i) {
    const uint64_t c = fabric::kChunkAreaOffset + i * chunk, owner = node.OwnerOf(c);
    if (owner == 0) continue;  // untagged (or free): an index of before tags, opened when it is asked for
    const bool servers = __atomic_load_n(Word(node.base(), c, kChunkCutWord), __ATOMIC_ACQUIRE) != 0 ||
                         __atomic_load_n(Word(node.base(), c, kChunkRegistryWord), __ATOMIC_ACQUIRE) != 0;
    if (servers && std::find(owners.begin(), owners.end(), owner) == owners.end()) owners.push_back(owner);
  }
  return owners;
}

Result<std::unique_ptr<ServerMemory>> ServerMemory::Open(fabric::MemoryNode& node, fabric::Endpoint& ep,
                                                         alloc::NodeAllocator& allocator, uint64_t owner) {
  const uint16_t id = *node.id();
  const uint64_t chunk = node.options().chunk_bytes;
  const std::string where =
      "xstore: memory node " + std::to_string(id) + ", index tagged " + std::to_string(owner) + ": chunk ";
  std::unique_ptr<ServerMemory> m(new ServerMemory(node, allocator));
  Counts counts;
  uint64_t cutting = 0, registry = 0;  // the chunk an earlier incarnation was cutting; its registry
  Status bad;
  ForEachChunkOf(node, owner, [&](uint64_t c) {
    const uint64_t next = __atomic_load_n(m->HeaderWord(c, kChunkCutWord), __ATOMIC_ACQUIRE);
    const uint64_t named = __atomic_load_n(m->HeaderWord(c, kChunkRegistryWord), __ATOMIC_ACQUIRE);
    if (next != 0 && (next <= c + fabric::kChunkHeaderBytes || next > c + chunk))
      bad = Status::Corruption(where + std::to_string(c) + "'s cut journal names offset " + std::to_string(next) +
                               ", outside the chunk");
    if (named != 0 && (named < c + fabric::kChunkHeaderBytes || named + kRedoRegistryBytes > c + chunk))
      bad = Status::Corruption(where + std::to_string(c) + " names a redo registry at " + std::to_string(named) +
                               ", outside the chunk");
    if (!bad.ok()) return;
    // Carry on cutting the chunk left partly cut (two, if a kill came between the journal of a
    // new chunk and the closing of the old: either will do, the other's tail waits for the drop).
    if (next != 0 && next < c + chunk && cutting == 0) {
      allocator.Resume(GlobalAddress(id, next), c + chunk - next);
      cutting = c;
      counts.resumed = true;
    }
    if (named != 0 && registry == 0) registry = named;
  });
  DMX_RETURN_IF_ERROR(bad);
  // After every cut, under the allocator's lock: the chunk's word says where the next block
  // starts; the chunk moved on from says its end (its tail is kept in memory only).
  allocator.SetCutJournal([base = node.base(), id, chunk, current = cutting](GlobalAddress n) mutable {
    if (n.node() != id) return;
    const uint64_t c = n.offset() - 1 - (n.offset() - 1 - fabric::kChunkAreaOffset) % chunk;
    __atomic_store_n(Word(base, c, kChunkCutWord), n.offset(), __ATOMIC_RELEASE);
    if (current == c) return;
    if (current != 0) __atomic_store_n(Word(base, current, kChunkCutWord), current + chunk, __ATOMIC_RELEASE);
    current = c;
  });
  m->registry_ = GlobalAddress(id, registry);
  std::vector<uint64_t> image(1, 0);
  if (registry != 0) {
    image.resize(kRedoRegistryBytes / 8);
    DMX_RETURN_IF_ERROR(ep.Read(m->registry_, image.data(), kRedoRegistryBytes));
  }
  if (image[0] > kEntries)
    return Status::Corruption(where + "redo registry at " + m->registry_.ToString() + " says it lists " +
                              std::to_string(image[0]) + " blocks (at most " + std::to_string(kEntries) + ")");
  for (uint64_t i = 1; i <= image[0]; ++i) {
    const GlobalAddress block(id, image[i] & ((uint64_t{1} << kOffsetBits) - 1));
    const uint32_t bytes = static_cast<uint32_t>((image[i] >> kOffsetBits) * 64);
    if (block.offset() < fabric::kChunkAreaOffset || bytes == 0 || !node.Contains(block.offset(), bytes) ||
        !tree::RedoBlockNameable(block) || node.OwnerOf(block.offset()) != owner)
      return Status::Corruption(where + "redo registry lists a block at " + block.ToString() + " of " +
                                std::to_string(bytes) + " bytes, not in the index's chunks");
    m->inherited_.emplace(bytes, block);
  }
  m->listed_ = image[0];
  counts.listed = image[0];
  m->counts_ = counts;
  return m;
}

Result<GlobalAddress> ServerMemory::TakeRedoBlock(fabric::Endpoint& ep, uint32_t bytes) {
  bytes = (bytes + 63) / 64 * 64;
  {
    std::lock_guard lock(mu_);
    for (auto* from : {&spare_, &inherited_}) {
      auto it = from->find(bytes);
      if (it == from->end()) continue;
      const GlobalAddress block = it->second;
      from->erase(it);
      if (from == &inherited_) ++counts_.reused;
      return block;
    }
  }
  auto block = allocator_.AllocateOn(ep, *node_.id(), bytes);
  if (!block.ok()) return block.status();
  DMX_RETURN_IF_ERROR(Enter(ep, *block, bytes));
  return block;
}

// Entered before any lock word can name it: the entry, then the count, in order.
Status ServerMemory::Enter(fabric::Endpoint& ep, GlobalAddress block, uint32_t bytes) {
  std::lock_guard lock(mu_);
  if (listed_ >= kEntries || !Enterable(block, bytes)) return Status::Ok();  // not listed: a kill leaks it
  if (registry_.offset() == 0) {  // the first: a kill between the registry's cut and its word leaks it until the drop
    const uint16_t id = block.node();
    auto made = allocator_.AllocateOn(ep, id, kRedoRegistryBytes);
    if (!made.ok()) return made.status();
    const uint64_t none = 0;
    DMX_RETURN_IF_ERROR(ep.Write(*made, &none, 8));
    __atomic_store_n(HeaderWord(ChunkOf(made->offset()), kChunkRegistryWord), made->offset(), __ATOMIC_RELEASE);
    registry_ = *made;
  }
  const uint64_t entry = Entry(block, bytes), count = listed_ + 1;
  DMX_RETURN_IF_ERROR(ep.Post({fabric::Verb::Write(registry_ + 8 * count, &entry, 8),
                               fabric::Verb::Write(registry_, &count, 8)},
                              fabric::Ordering::kInOrder));
  listed_ = count;
  counts_.listed = count;
  return Status::Ok();
}

void ServerMemory::GiveBack(GlobalAddress block, uint32_t bytes) {
  if (block.is_null()) return;
  std::lock_guard lock(mu_);
  spare_.emplace((bytes + 63) / 64 * 64, block);
}

ServerMemory::Counts ServerMemory::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace dmindex::designs::xstore
