// How DEX's cache sees the shared tree core's nodes (tree/node_layout.h): an internal node's
// child pointers are its header's leftmost word and the child word of each entry, all 8-byte
// aligned, so they hold swips in cached pages. Also the loader (validated READ) and writer
// (re-encode and WRITE) the cache calls with one session's endpoint.
//
// A cached page is the remote image with swizzled child pointers: its check words no longer
// match, so cached pages are decoded without validation, and a page going back to remote
// memory is re-encoded with a fresh version.
#pragma once

#include <vector>

#include "cache/page_io.h"
#include "designs/dex/partition_map.h"
#include "tree/tree_reader.h"

namespace dmindex::designs::dex {

using KV = tree::U64KV;
using Layout = tree::NodeLayout<KV>;
using Header = tree::NodeHeader<KV>;

// Level of the meta page above the root (a page the cache treats as an internal node with
// only a leftmost child: the root).
inline constexpr uint8_t kMetaLevel = 255;

class NodePageLayout final : public cache::PageLayout {
 public:
  explicit NodePageLayout(const Layout& l) : l_(l) {}
  bool IsLeaf(const std::byte* page) const override;
  size_t ChildCount(const std::byte* page) const override;
  uint64_t* ChildSlot(std::byte* page, size_t i) const override;
  using cache::PageLayout::ChildSlot;

  // The slot of the child covering `key`, from a validated private copy of the page.
  static size_t SlotIndex(int child_index) { return static_cast<size_t>(child_index + 1); }

 private:
  Layout l_;
};

// Copies a cached page (or its first `len` bytes) word by word into private memory.
void CopyPage(const std::byte* page, std::byte* out, uint32_t len);
// Decodes a private copy of a cached page (no validation: swizzled pointers break checks).
Header DecodeHeader(const std::byte* copy);

// One session's remote node I/O on behalf of one compute node.
class NodePages final : public cache::PageLoader, public cache::PageWriter {
 public:
  NodePages(const tree::TreeShared<KV>& tree, const tree::TreeReader<KV>& reader,
            tree::TreeContext<KV>& ctx, uint32_t compute_node, const PartitionMap* const* map)
      : t_(tree), reader_(reader), ctx_(ctx), compute_node_(compute_node), map_(map) {}

  // A validated image. Leaves shared with other compute nodes are not admitted: they stay
  // remote (and are re-read) because only owned nodes may be cached dirty.
  // Retry (and stale() true) if the node belongs to another compute node: the path to it
  // went through a stale shared node.
  Status Load(GlobalAddress addr, std::byte* page) override;
  // The range the next Load's node covers according to the parent it is reached from (the
  // whole key space if unknown). If this compute node owns that range, nobody else writes the
  // node, and it is not writing it back itself (the node is not cached here: it is being
  // loaded), so an image that does not validate and that no writer is changing is corrupt.
  void Expect(Key low, Key high) {
    expect_low_ = low;
    expect_high_ = high;
  }
  bool stale() {
    const bool s = stale_;
    stale_ = false;
    return s;
  }
  bool Admissible(const std::byte* page) override;
  // Re-encodes an unswizzled page with a fresh version and WRITEs it.
  Status WriteBack(GlobalAddress addr, const std::byte* page) override;
  // Encodes an image for remote memory (fresh version, valid check words) into `out`.
  void Encode(const std::byte* page, std::byte* out);

 private:
  const tree::TreeShared<KV>& t_;
  const tree::TreeReader<KV>& reader_;
  tree::TreeContext<KV>& ctx_;
  const uint32_t compute_node_;
  const PartitionMap* const* map_;  // the index's current map (swapped by repartitioning)
  bool stale_ = false;
  Key expect_low_ = KV::kNegInf, expect_high_ = KV::kPosInf;
  std::vector<std::byte> encoded_;
  std::vector<tree::LeafEntry<KV>> leaf_entries_;
  std::vector<tree::InternalEntry<KV>> internal_entries_;
};

}  // namespace dmindex::designs::dex
