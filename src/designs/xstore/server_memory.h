// What XStore's memory server keeps in its pool about its own allocations, so that a server
// restarted on a persistent pool (memserver --data-dir) finds them again instead of leaking
// them at every restart (docs/LOCK_TAKEOVER.md, "What a restart leaves behind"):
//
//  * The chunk being cut. The server's allocator (one per memory node: tree nodes, model
//    records, index records, redo blocks) journals where its next block starts into the server
//    word kCutWord, after every cut and before the block is handed out
//    (alloc::NodeAllocator::SetCutJournal); the next incarnation carries on cutting that chunk.
//    A block is never handed out twice: the word only moves forward inside a chunk, and a
//    block cut before a kill lies below what the word says.
//  * The redo blocks of the server's sessions (their lock words name them). A registry block,
//    named by the server word kRedoRegistryWord (made with the first: a server that never
//    writes takes no memory), lists every one handed out, each entered before its session can
//    name it in a lock word. The next incarnation starts after it replayed and
//    freed every word of its predecessor (tree::FreeLocksOfEarlierIncarnations), so no word
//    names a listed block any more, and hands them out again.
//
// The server words are words of the pool's first 64 bytes, which no verb reaches
// (fabric/pool_layout.h: word 0 is the incarnation); only the node's own server writes them.
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

inline constexpr uint64_t kCutWord = 8;             // offset of the chunk-cut journal word
inline constexpr uint64_t kRedoRegistryWord = 16;   // offset of the redo registry's address
inline constexpr uint32_t kRedoRegistryBytes = 4096;  // count, then one word per redo block

class ServerMemory {
 public:
  // At the server's start, after every lock word of an earlier incarnation was freed: resumes
  // `allocator`'s chunk on the node from the journal and journals it from now on, and reads
  // the registry, if there is one. `ep` reaches the node, whose id is known. Allocates nothing.
  static Result<std::unique_ptr<ServerMemory>> Open(fabric::MemoryNode& node, fabric::Endpoint& ep,
                                                    alloc::NodeAllocator& allocator);

  // A redo block of `bytes` on the node: one the registry lists that no session holds (an
  // earlier incarnation's, or an ended session's), else a new one, entered in the registry
  // before it is returned (a full registry: not entered, so a kill leaks it).
  Result<GlobalAddress> TakeRedoBlock(fabric::Endpoint& ep, uint32_t bytes);
  // A block TakeRedoBlock gave, no longer named by any lock word: for another session.
  void GiveBack(GlobalAddress block, uint32_t bytes);

  struct Counts {
    uint64_t listed = 0;   // redo blocks the registry lists
    uint64_t reused = 0;   // of them handed out again, that an earlier incarnation had
    bool resumed = false;  // the chunk of an earlier incarnation is being cut on
  };
  Counts counts() const;

 private:
  ServerMemory(fabric::MemoryNode& node, alloc::NodeAllocator& allocator) : node_(node), allocator_(allocator) {}
  Status Enter(fabric::Endpoint& ep, GlobalAddress block, uint32_t bytes);

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
