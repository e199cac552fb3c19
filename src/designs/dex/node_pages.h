// How DEX's cache sees the shared tree core's nodes (tree/node_layout.h, tree/slotted_layout.h):
// an internal node's child pointers are its header's leftmost word and the child word of each
// entry (fixed format) or slot (slotted format), all 8-byte aligned, so they hold swips in
// cached pages. Also the loader (validated READ) and writer (re-encode and WRITE) the cache
// calls with one session's endpoint.
//
// A cached page is the remote image with swizzled child pointers: its check words no longer
// match, so cached pages are decoded without validation, and a page going back to remote
// memory is re-encoded with a fresh version. A cached page is only ever written whole by a
// latch holder with an image a codec built, so a copy that its optimistic latch validates
// is a well-formed node; the slotted format's variable parts (fences, slot array) are copied
// by what the page's own header says, clamped to the node.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <span>
#include <vector>

#include "cache/page_io.h"
#include "common/pool_memory.h"
#include "designs/dex/dex_keys.h"
#include "designs/dex/log_watermark.h"
#include "designs/dex/partition_map.h"
#include "designs/dex/pending_blocks.h"
#include "tree/tree_reader.h"

namespace dmindex::designs::dex {

// Level of the meta page above the root (a page the cache treats as an internal node with
// only a leftmost child: the root).
inline constexpr uint8_t kMetaLevel = 255;

template <tree::KeyValueTraits KV>
class NodePageLayout final : public cache::PageLayout {
 public:
  using Layout = tree::NodeLayout<KV>;
  using Header = tree::NodeHeader<KV>;

  explicit NodePageLayout(const Layout& l) : l_(l) {}
  bool IsLeaf(const std::byte* page) const override;
  size_t ChildCount(const std::byte* page) const override;
  // Inline (the descent takes one per level); the slotted format's is in node_pages.cc.
  uint64_t* ChildSlot(std::byte* page, size_t i) const override {
    if (i == 0) return reinterpret_cast<uint64_t*>(page + Layout::kLeftmostOff);
    if constexpr (kSlotted<KV>) return SlottedChildSlot(page, i);
    else return reinterpret_cast<uint64_t*>(page + l_.EntryOffset(static_cast<uint32_t>(i - 1)) + Layout::kKeyBytes);
  }
  using cache::PageLayout::ChildSlot;

  // The slot of the child covering `key`, from a validated private copy of the page.
  static size_t SlotIndex(int child_index) { return static_cast<size_t>(child_index + 1); }

  // Copies a cached page's header - fences included - into private memory (to be validated
  // against the page's latch before it is decoded). Inline for the fixed format: the descent
  // copies one header per level.
  void CopyHeader(const std::byte* page, std::byte* out) const {
    if constexpr (kSlotted<KV>) CopySlottedHeader(page, out);
    else CopyFromPool(out, page, Layout::kHeaderBytes);
  }
  // Fixed format: a cached page's header decoded straight from its words (at fixed offsets
  // in the page's first line), without the private copy the slotted format needs. The
  // fields may be torn (each word is whole): like the searches below, the caller validates
  // the page's latch before it acts on any of them.
  void HeaderInPlace(const std::byte* page, Header* h) const
    requires(!kSlotted<KV>)
  {
    static_assert(sizeof(typename KV::Key) == 8);
    const auto word = [page](uint32_t off) { return LoadPageWord(page, off); };
    tree::HeaderCodec<KV>::Decode(word, word, h);
  }
  // The leading bytes of a page with header h that hold what a reader of its entries needs.
  uint32_t LeafBytes(const Header& h) const;
  uint32_t InternalBytes(const Header& h) const;
  // Writes the meta page's image: no separators, no fences, the root as its leftmost child.
  void BuildMeta(std::byte* page) const;

  // Fixed format only: searches of a cached page in place (the hit path copies no page),
  // word by word with atomic loads, since a latch holder may be rewriting the page. `count`
  // comes from a validated header copy; every index is bounded by the node's capacity
  // whatever the page holds, so a torn page sends no read outside the node, and the caller
  // validates the page's latch before it acts on an answer (docs/SYNCHRONIZATION.md, "DEX's
  // cached pages").
  // Defined here, not in node_pages.cc: they are the hit path's inner loops, and a call per
  // probe (the descent is in another file) cost more than the search.
  // The index of the child covering `key` (last separator <= key; -1: the leftmost child).
  int ChildIndexInPlace(const std::byte* page, uint32_t count, typename KV::KeyRef key) const
    requires(!kSlotted<KV>)
  {
    uint32_t lo = 0, hi = std::min(count, l_.internal_capacity);
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (key < SeparatorInPlace(page, mid)) hi = mid; else lo = mid + 1;
    }
    return static_cast<int>(lo) - 1;
  }
  // Separator i of an internal page (i below the node's capacity).
  typename KV::Key SeparatorInPlace(const std::byte* page, uint32_t i) const
    requires(!kSlotted<KV>)
  {
    static_assert(sizeof(typename KV::Key) == 8 && Layout::kKeyBytes == 8);
    return LoadPageWord(page, l_.EntryOffset(std::min(i, l_.internal_capacity - 1)));
  }
  // The slot holding `key` in a sorted leaf page (count: its entries), or -1.
  int FindInPlace(const std::byte* page, uint32_t count, typename KV::KeyRef key) const
    requires(!kSlotted<KV>)
  {
    const uint32_t n = std::min(count, l_.leaf_capacity);
    uint32_t lo = 0, hi = n;  // the first slot whose key is not below `key`
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (LoadPageWord(page, l_.SlotOffset(mid)) < key) lo = mid + 1; else hi = mid;
    }
    return lo < n && LoadPageWord(page, l_.SlotOffset(lo)) == key ? static_cast<int>(lo) : -1;
  }

 private:
  // Slotted format: where a page's slot array starts, by its meta word (within the node).
  uint32_t SlotsOff(const std::byte* page) const;
  void CopySlottedHeader(const std::byte* page, std::byte* out) const;
  uint64_t* SlottedChildSlot(std::byte* page, size_t i) const;
  // One word of a cached page, whole (a latch holder may be storing it).
  static uint64_t LoadPageWord(const std::byte* page, uint32_t offset) {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(page) + offset))
        .load(std::memory_order_relaxed);
  }

  Layout l_;
};

// Copies a cached page (or its first `len` bytes) word by word into private memory.
inline void CopyPage(const std::byte* page, std::byte* out, uint32_t len) { CopyFromPool(out, page, len); }

// One session's remote node I/O on behalf of one compute node.
template <tree::KeyValueTraits KV>
class NodePages final : public cache::PageLoader, public cache::PageWriter {
 public:
  using Key = typename KV::Key;
  using Map = PartitionMap<typename KV::Keys>;

  NodePages(const tree::TreeShared<KV>& tree, const tree::TreeReader<KV>& reader,
            tree::TreeContext<KV>& ctx, uint32_t compute_node, const Map* const* map,
            PendingBlocks* pending, LogWatermark* landed)
      : t_(tree), reader_(reader), ctx_(ctx), compute_node_(compute_node), map_(map), pending_(pending),
        landed_(landed) {}
  // Every write-back goes out only while `lease` (this process's, null: none) is live at
  // the instant it is posted (fabric::PostGuard): a process whose lease may have been taken
  // over writes nothing more to the pool, not even after a wait of the fabric's own.
  void SetGuard(fabric::PostGuard* lease) { guard_ = lease; }

  // A validated image. Leaves shared with other compute nodes are not admitted: they stay
  // remote (and are re-read) because only owned nodes may be cached dirty.
  // Retry (and stale() true) if the node belongs to another compute node: the path to it
  // went through a stale shared node. Unavailable for a leaf whose image may hold a change
  // whose record failed (LogWatermark::FailedInPool), until a checkpoint.
  Status Load(GlobalAddress addr, std::byte* page) override;
  // The range the next Load's node covers according to the parent it is reached from (the
  // whole key space if unknown). If this compute node owns that range, nobody else writes the
  // node, and it is not writing it back itself (the node is not cached here: it is being
  // loaded), so an image that does not validate and that no writer is changing is corrupt -
  // unless `busy_here`: the node is another operation's of this compute node right now (a
  // private read of a busy leaf), which may be writing it back: then such an image is Retry.
  void Expect(Key low, Key high, bool busy_here = false) {
    expect_low_ = std::move(low);
    expect_high_ = std::move(high);
    busy_here_ = busy_here;
  }
  bool stale() {
    const bool s = stale_;
    stale_ = false;
    return s;
  }
  bool Admissible(const std::byte* page) override;
  // Re-encodes an unswizzled page with a fresh version and WRITEs it; then the value blocks
  // the page's changes unlinked (PendingBlocks) are retired.
  Status WriteBack(GlobalAddress addr, const std::byte* page) override;
  // The same, with `after` in the page's batch after the page (a non-admitted leaf's redo
  // record: one round trip for both, dex_durability.cc).
  Status WriteBackWith(GlobalAddress addr, const std::byte* page, std::span<const fabric::Verb> after);
  // Encodes an image for remote memory (fresh version, valid check words) into `out`.
  Status Encode(const std::byte* page, std::byte* out);
  // Retires the value blocks waiting for `leaf` (just written back, or dead).
  void RetirePending(GlobalAddress leaf);

 private:
  const tree::TreeShared<KV>& t_;
  const tree::TreeReader<KV>& reader_;
  tree::TreeContext<KV>& ctx_;
  const uint32_t compute_node_;
  const Map* const* map_;  // the index's current map (swapped by repartitioning)
  PendingBlocks* const pending_;
  LogWatermark* const landed_;
  bool stale_ = false;
  bool busy_here_ = false;
  Key expect_low_ = KV::kNegInf, expect_high_ = KV::kPosInf;
  std::vector<std::byte> encoded_;
  std::vector<fabric::Verb> batch_;  // WriteBackWith
  std::vector<tree::LeafEntry<KV>> leaf_entries_;
  std::vector<tree::InternalEntry<KV>> internal_entries_;
  std::vector<tree::ValueBlockRef> retiring_;
  fabric::PostGuard* guard_ = nullptr;
};

}  // namespace dmindex::designs::dex
