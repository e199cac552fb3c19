// Two-sided RPC to a memory node: opcodes and the handler registry served by memory servers.
// Memory servers have one or two weak cores, so RPC is used sparingly: pool allocation
// here, DEX's offloaded traversals and XStore's server-side writes later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "dmindex/status.h"

namespace dmindex::fabric {

using RpcOpcode = uint16_t;

// Opcodes are allocated here, in one place, so designs cannot collide.
namespace rpc_op {
inline constexpr RpcOpcode kPing = 1;        // empty -> empty
// kAllocChunk's request is empty (an unowned chunk) or the u64 owner tag of the index the
// chunk is for (memory_node.h: FreeOwnedChunks); the reply is the offset and the bytes the
// caller may use: the chunk past its header (pool_layout.h, kChunkHeaderBytes).
inline constexpr RpcOpcode kAllocChunk = 2;  // [u64 owner] -> u64 offset, u64 bytes
inline constexpr RpcOpcode kFreeChunk = 3;   // u64 offset (as handed out) -> empty
inline constexpr RpcOpcode kPoolInfo = 4;    // empty -> PoolInfo
inline constexpr RpcOpcode kFreeOwnedChunks = 5;  // u64 owner -> u64 chunks freed
// 16..: designs' memory-side handlers, registered through their registry entries
// (designs/registry.cc). One line per opcode, so two designs can never collide.
inline constexpr RpcOpcode kDexOffload = 16;  // designs/dex/offload.h: OffloadWire -> OffloadResult
// designs/xstore/wire.h: a partition's memory server runs its writes, lookups that fall back,
// scans' first leaf, its bulk load and training, waits for its background training, stores
// the index's records (descriptors, superblock) in its pool, and reads a node for a client
// that found it torn twice alike.
inline constexpr RpcOpcode kXStoreWrite = 17;
inline constexpr RpcOpcode kXStoreLookup = 18;
inline constexpr RpcOpcode kXStoreLocate = 19;
inline constexpr RpcOpcode kXStoreLoad = 20;
inline constexpr RpcOpcode kXStoreQuiesce = 21;
inline constexpr RpcOpcode kXStoreStore = 22;
inline constexpr RpcOpcode kXStoreReadNode = 23;
// Tests register handlers of their own from here on; no design uses these.
inline constexpr RpcOpcode kFirstTestOpcode = 1000;
}  // namespace rpc_op

using RpcRequest = std::span<const std::byte>;
using RpcReply = std::vector<std::byte>;
using RpcHandler = std::function<Status(RpcRequest request, RpcReply* reply)>;

// Opcode -> handler. Filled before the memory node starts serving, read-only afterwards,
// so lookups need no lock.
class RpcRegistry {
 public:
  // Registering an opcode twice is a programming error and returns InvalidArgument.
  Status Register(RpcOpcode op, std::string name, RpcHandler handler);
  // Runs the handler; an unknown opcode is InvalidArgument (a client speaking garbage).
  Status Dispatch(RpcOpcode op, RpcRequest request, RpcReply* reply) const;
  bool Has(RpcOpcode op) const;

 private:
  struct Entry {
    std::string name;
    RpcHandler handler;
  };
  std::vector<Entry> table_;  // indexed by opcode
};

// Little helpers to pack fixed-size values into RPC payloads.
template <typename T>
void AppendPod(RpcReply* out, const T& v) {
  // resize + copy, not insert: GCC 12 warns (-Wnonnull) on insert into an empty vector once
  // it is inlined deep enough, a false positive that -Werror turns into a build failure.
  const size_t at = out->size();
  out->resize(at + sizeof(T));
  __builtin_memcpy(out->data() + at, &v, sizeof(T));
}
template <typename T>
bool ReadPod(std::span<const std::byte> in, size_t at, T* v) {
  if (in.size() < at + sizeof(T)) return false;
  __builtin_memcpy(v, in.data() + at, sizeof(T));
  return true;
}

}  // namespace dmindex::fabric
