// Layout of every memory node's pool. Fixed offsets, so any compute process can find the
// catalog and the lock table without asking the server.
//
//   [0, 64)                 never handed out: keeps GlobalAddress{n, 0} unambiguous with null.
//                           No verb reaches it (MemoryNode::Contains): the memory server's own
//                           words. Word 0: how many servers have started on this pool
//                           (MemoryNode::incarnation), kept by a persistent one
//   [64, 4032)              node 0: the catalog superblock (catalog.h); other nodes: unused
//   [4032, 4096)            every node: the pool's identity and chunk allocator state
//                           (pool_identity.h), written by MemoryNode when the pool is created:
//                           new on every start of a volatile pool's server, kept by a
//                           persistent one (memserver --data-dir)
//   [4096, 4096+kLockBytes) lock table: stands in for the NIC's on-chip memory that Sherman's
//                           global lock table lives in (RDMA CAS on it never touches host DRAM)
//   [kLeaseTableOffset, +kLeaseTableBytes) node 0: the lease table (lease/lease_table.h), one
//                           64-byte slot per compute process; other nodes: reserved
//   [kChunkAreaOffset, end) chunks handed out by RPC (kAllocChunk) and sub-allocated by
//                           compute processes into index nodes. Each chunk's first
//                           kChunkHeaderBytes are the server's while it is handed out: the
//                           word kChunkMagic ^ offset, then the owner tag of the index it was
//                           handed to (0: none), so that dropping an index frees exactly its
//                           chunks (MemoryNode::FreeOwnedChunks); the caller gets the rest.
#pragma once

#include <cstdint>

namespace dmindex::fabric {

inline constexpr uint64_t kIncarnationOffset = 0;
inline constexpr uint64_t kSuperblockOffset = 64;
inline constexpr uint64_t kPoolIdentityOffset = 4096 - 64;
inline constexpr uint64_t kPoolIdentityBytes = 64;
inline constexpr uint64_t kSuperblockBytes = kPoolIdentityOffset - kSuperblockOffset;
inline constexpr uint64_t kLockTableOffset = 4096;
inline constexpr uint64_t kLockTableBytes = 256 * 1024;  // 32 K eight-byte lock words
inline constexpr uint64_t kLeaseTableOffset = kLockTableOffset + kLockTableBytes;
inline constexpr uint64_t kLeaseTableBytes = 64 * 1024;  // 1024 slots of 64 bytes
inline constexpr uint64_t kChunkAreaOffset = kLeaseTableOffset + kLeaseTableBytes;
inline constexpr uint64_t kChunkHeaderBytes = 64;
inline constexpr uint64_t kChunkMagic = 0x4b4e4843584d4400ull;  // "\0DMXCHNK", xor the offset
inline constexpr uint64_t kDefaultChunkBytes = 32ull << 20;
inline constexpr uint64_t kMinPoolBytes = kChunkAreaOffset + (1ull << 20);

}  // namespace dmindex::fabric
