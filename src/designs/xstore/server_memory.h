// What XStore's memory server keeps in its pool about its own allocations for one index, so
// that dropping the index frees them (docs/OPERATIONS.md, "Drop") and a server restarted on a
// persistent pool (memserver --data-dir) finds them again instead of leaking them at every
// restart (docs/LOCK_TAKEOVER.md, "What a restart leaves behind").
//
// The server allocates for each index it serves from an allocator of that index (tree nodes,
// model records, index records, redo blocks), whose chunks carry the index's owner tag like
// every chunk taken for it (fabric/pool_layout.h), so the drop's kFreeOwnedChunks frees them
// with the rest. What the server must find again after a restart lives in the headers of
// those chunks (a chunk's first 64 bytes are the memory server's while it is handed out; words
// 0 and 1 are its magic and owner tag):
//
//  * The chunk being cut (header word kChunkCutWord / 8). After every block the allocator cuts
//    from a chunk, before the block is handed out, the chunk's cut word says where the next
//    block starts (alloc::NodeAllocator::SetCutJournal); a chunk it moved on from says its end.
//    The next incarnation carries on cutting the chunk whose word lies inside it. A block is
//    never handed out twice: the word only moves forward inside its chunk, and a block cut
//    before a kill lies below what it says. A non-zero cut word also marks the chunk as the
//    server's (compute processes' chunks of the index have none).
//  * The redo blocks of the server's sessions (their lock words name them). A registry block
//    (made with the first: a server that never writes for the index takes no memory for it),
//    named by header word kChunkRegistryWord / 8 of the chunk that holds it, lists every one
//    handed out, each entered before its session can name it in a lock word. The next
//    incarnation starts after it replayed and freed every word of its predecessor
//    (tree::FreeLocksOfEarlierIncarnations), so no word names a listed block any more, and
//    hands them out again.
//
// Only the node's own server writes these words.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "alloc/node_allocator.h"
#include "common/runtime.h"
#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "fabric/memory_node.h"

namespace dmindex::designs::xstore {

inline constexpr uint64_t kChunkCutWord = 16;       // header offset of the chunk-cut journal word
inline constexpr uint64_t kChunkRegistryWord = 24;  // header offset of the redo registry's address
inline constexpr uint32_t kRedoRegistryBytes = 4096;  // count, then one word per redo block

class ServerMemory {
 public:
  // The owner tags (indexes) whose chunks on `node` the server cut or keeps a registry in: the
  // ones an earlier incarnation worked for, whose memory the start opens.
  static std::vector<uint64_t> OwnersIn(const fabric::MemoryNode& node);

  // For index `owner`, after every lock word of an earlier incarnation was freed: resumes
  // `allocator` (the index's on the node) on the chunk an earlier incarnation was cutting and
  // journals it from now on, and reads the index's registry, if there is one. `ep` reaches the
  // node, whose id is known. Allocates nothing.
  static Result<std::unique_ptr<ServerMemory>> Open(fabric::MemoryNode& node, fabric::Endpoint& ep,
                                                    alloc::NodeAllocator& allocator, uint64_t owner);

  // A redo block of `bytes` on the node: one the registry lists that no session holds (an
  // earlier incarnation's, or an ended session's), else a new one, entered in the registry
  // before it is returned (a full registry: not entered, so a kill leaks it until the drop).
  Result<GlobalAddress> TakeRedoBlock(fabric::Endpoint& ep, uint32_t bytes);
  // A block TakeRedoBlock gave, no longer named by any lock word: for another session.
  void GiveBack(GlobalAddress block, uint32_t bytes);

  struct Counts {
    uint64_t listed = 0;   // redo blocks the registry lists
    uint64_t reused = 0;   // of them handed out again, that an earlier incarnation had
    bool resumed = false;  // the chunk of an earlier incarnation is being cut on
    Counts& operator+=(const Counts& o);
  };
  Counts counts() const;

 private:
  ServerMemory(fabric::MemoryNode& node, alloc::NodeAllocator& allocator) : node_(node), allocator_(allocator) {}
  Status Enter(fabric::Endpoint& ep, GlobalAddress block, uint32_t bytes);
  uint64_t* HeaderWord(uint64_t chunk, uint64_t word) const;
  uint64_t ChunkOf(uint64_t offset) const;

  fabric::MemoryNode& node_;
  alloc::NodeAllocator& allocator_;
  mutable runtime::Mutex mu_;
  GlobalAddress registry_;  // offset 0: none yet (made with the first redo block)
  // By size, held by no session: blocks an earlier incarnation had, and blocks of this one's
  // ended sessions.
  std::multimap<uint32_t, GlobalAddress> inherited_, spare_;
  uint64_t listed_ = 0;
  Counts counts_;
};

}  // namespace dmindex::designs::xstore
