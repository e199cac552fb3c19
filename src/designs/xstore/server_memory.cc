#include "designs/xstore/server_memory.h"

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

}  // namespace

Result<std::unique_ptr<ServerMemory>> ServerMemory::Open(fabric::MemoryNode& node, fabric::Endpoint& ep,
                                                         alloc::NodeAllocator& allocator) {
  const uint16_t id = *node.id();
  const std::string where = "xstore: memory node " + std::to_string(id) + "'s ";
  auto* cut = reinterpret_cast<uint64_t*>(node.base() + kCutWord);
  auto* named = reinterpret_cast<uint64_t*>(node.base() + kRedoRegistryWord);
  // The chunk an earlier incarnation was cutting: on from where its journal says.
  Counts counts;
  const uint64_t next = __atomic_load_n(cut, __ATOMIC_ACQUIRE), chunk = node.options().chunk_bytes;
  if (next != 0) {
    if (next <= fabric::kChunkAreaOffset || next > node.size() || chunk == 0)
      return Status::Corruption(where + "chunk journal names offset " + std::to_string(next) + ", outside its chunks");
    const uint64_t into = (next - fabric::kChunkAreaOffset) % chunk;
    if (into != 0) {
      allocator.Resume(GlobalAddress(id, next), chunk - into);
      counts.resumed = true;
    }
  }
  allocator.SetCutJournal([cut, id](GlobalAddress n) {
    if (n.node() == id) __atomic_store_n(cut, n.offset(), __ATOMIC_RELEASE);
  });
  // The registry, if an earlier incarnation made one (made at the first redo block: a server
  // that never writes takes no memory).
  std::unique_ptr<ServerMemory> m(new ServerMemory(node, allocator));
  m->registry_ = GlobalAddress(id, __atomic_load_n(named, __ATOMIC_ACQUIRE));
  std::vector<uint64_t> image(1, 0);
  if (m->registry_.offset() != 0) {
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
        !tree::RedoBlockNameable(block))
      return Status::Corruption(where + "redo registry lists a block at " + block.ToString() + " of " +
                                std::to_string(bytes) + " bytes, not in its chunks");
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
  if (registry_.offset() == 0) {  // the first: a kill between the registry's cut and its word leaks it, once
    const uint16_t id = block.node();
    auto made = allocator_.AllocateOn(ep, id, kRedoRegistryBytes);
    if (!made.ok()) return made.status();
    const uint64_t none = 0;
    DMX_RETURN_IF_ERROR(ep.Write(*made, &none, 8));
    __atomic_store_n(reinterpret_cast<uint64_t*>(node_.base() + kRedoRegistryWord), made->offset(), __ATOMIC_RELEASE);
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
