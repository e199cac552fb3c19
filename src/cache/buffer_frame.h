// BufferFrame: one cached remote node. A frame is a node-sized page plus the metadata the
// buffer manager needs: its latch, its state in the replacement cycle, whether the page
// differs from remote memory, which remote node it holds and which cached parent has it
// swizzled.
//
//   kFree ──claim──> kLoading ──publish──> kHot <──reheat── kCooling ──evict──> kFree
//                        │                  └──────cool──────^
//                        └── (not admitted) kTransient: a thread-private copy that is
//                            registered in the mapping table only to keep other threads off
//
// Every state change happens under the frame's exclusive latch. Frames are never returned
// to the system while the cache lives, so a stale pointer to a frame is always safe to
// dereference; the latch version tells a reader it is stale.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/version_lock.h"
#include "dmindex/global_address.h"

namespace dmindex::cache {

enum class FrameState : uint8_t {
  kFree,       // in a free set; holds nothing
  kLoading,    // registered in the mapping table, the READ (or an offloaded op) is running
  kHot,        // cached; swizzled in `parent` (or an orphan: parent is null)
  kCooling,    // cached, unswizzled, clean, listed in the cooling map: an eviction candidate
  kTransient,  // a non-admitted page used by one thread for one operation
};

const char* FrameStateName(FrameState s);

struct alignas(64) BufferFrame {
  VersionLock latch;  // optimistic, shared or exclusive (common/version_lock.h)
  std::atomic<FrameState> state{FrameState::kFree};
  std::atomic<bool> dirty{false};
  // Set (with dirty) when the page changed in a way that its parent's current remote image must
  // not be written before this page's own new image is: a split moved part of its range to a
  // new node that the cached parent now points to. Every write-back of a page first writes its
  // children that carry the mark (BufferManager::WriteBack); writing a page clears its mark.
  // A marked page is always swizzled in its parent, so the parent finds it.
  std::atomic<bool> precedes_parent{false};
  // Pinned frames are never chosen for cooling (DEX pins the parent of an offloaded subtree).
  std::atomic<uint32_t> pins{0};
  // The node this frame caches; readable racily by samplers, changed under the latch.
  std::atomic<uint64_t> remote_raw{0};
  // The cached parent whose page holds a swizzled pointer to this frame, or null (an orphan:
  // cached but reachable only through the mapping table). Changed only by a thread holding
  // the exclusive latch of the current parent or, if there is none, of this frame.
  std::atomic<BufferFrame*> parent{nullptr};
  // The owner's redo-log position after the record of the last change made to this page
  // (0: none). Set under the exclusive latch; whoever answers from the page waits until the
  // log is durable up to it (DEX: designs/dex/log_watermark.h). Never lowered while the
  // frame holds its node: a stale larger value only makes a reader check again.
  std::atomic<uint64_t> redo_end{0};
  std::byte* page = nullptr;  // node_bytes, owned by the buffer manager

  GlobalAddress remote() const {
    return GlobalAddress::FromRaw(remote_raw.load(std::memory_order_acquire));
  }
  void set_remote(GlobalAddress a) { remote_raw.store(a.raw(), std::memory_order_release); }
  FrameState load_state() const { return state.load(std::memory_order_acquire); }
  void set_state(FrameState s) { state.store(s, std::memory_order_release); }
};

}  // namespace dmindex::cache
