#include "designs/dex/node_pages.h"

#include <algorithm>
#include <utility>

#include "common/pool_memory.h"
#include "common/retry_status.h"
#include "tree/slotted_header.h"
#include "tree/value_store.h"

namespace dmindex::designs::dex {
namespace {

// Both formats keep level (8) | flags (8) | count (16) in the low half of the meta word.
constexpr uint32_t kMetaOff = 16;
static_assert(tree::SlottedLayout::kMetaOff == kMetaOff && tree::FixedLayout<U64Format>::kMetaOff == kMetaOff);
static_assert(tree::SlottedLayout::kLeftmostOff == tree::FixedLayout<U64Format>::kLeftmostOff);

}  // namespace

template <tree::KeyValueTraits KV>
uint32_t NodePageLayout<KV>::SlotsOff(const std::byte* page) const {
  const uint64_t meta = LoadPageWord(page, kMetaOff);
  const uint32_t off = tree::SlottedLayout::SlotsOffset((meta >> 32) & 0xffff, meta >> 48);
  return std::min(off, l_.node_bytes);
}

template <tree::KeyValueTraits KV>
bool NodePageLayout<KV>::IsLeaf(const std::byte* page) const {
  return (LoadPageWord(page, kMetaOff) & 0xFF) == 0;
}

template <tree::KeyValueTraits KV>
size_t NodePageLayout<KV>::ChildCount(const std::byte* page) const {
  if (IsLeaf(page)) return 0;
  const uint64_t count = (LoadPageWord(page, kMetaOff) >> 16) & 0xFFFF;
  if constexpr (kSlotted<KV>) {
    const uint64_t room = (l_.node_bytes - SlotsOff(page)) / tree::SlottedLayout::kSlotBytes;
    return std::min(count, room) + 1;  // + leftmost
  } else {
    return std::min<uint64_t>(count, l_.internal_capacity) + 1;
  }
}

template <tree::KeyValueTraits KV>
uint64_t* NodePageLayout<KV>::SlottedChildSlot(std::byte* page, size_t i) const {
  // The child word of slot i - 1 (i >= 1). A page read while its writer changes it may claim
  // a slot array past the node: such a page fails its latch's validation, but must not send
  // this outside the page first.
  const uint64_t off = SlotsOff(page) + (i - 1) * tree::SlottedLayout::kSlotBytes + 8;
  if (off + 8 > l_.node_bytes) return reinterpret_cast<uint64_t*>(page + Layout::kLeftmostOff);
  return reinterpret_cast<uint64_t*>(page + off);
}

template <tree::KeyValueTraits KV>
void NodePageLayout<KV>::CopySlottedHeader(const std::byte* page, std::byte* out) const {
  if constexpr (kSlotted<KV>) {
    constexpr uint32_t kFixed = tree::SlottedLayout::kFencesOff;
    CopyPage(page, out, kFixed);
    const uint64_t meta = LoadPageWord(out, kMetaOff);
    const uint32_t end = std::min(tree::SlottedLayout::SlotsOffset((meta >> 32) & 0xffff, meta >> 48), l_.node_bytes);
    CopyPage(page + kFixed, out + kFixed, end - kFixed);
  }
}

template <tree::KeyValueTraits KV>
uint32_t NodePageLayout<KV>::LeafBytes(const Header& h) const {
  if constexpr (kSlotted<KV>) return l_.node_bytes;  // records are in the heap at the end
  else return l_.SlotOffset(std::min<uint32_t>(h.count, l_.leaf_capacity));
}

template <tree::KeyValueTraits KV>
uint32_t NodePageLayout<KV>::InternalBytes(const Header& h) const {
  if constexpr (kSlotted<KV>) return l_.node_bytes;  // separators are in the heap at the end
  else return l_.EntryOffset(std::min<uint32_t>(h.count, l_.internal_capacity));
}

template <tree::KeyValueTraits KV>
void NodePageLayout<KV>::BuildMeta(std::byte* page) const {
  Header h;
  h.level = kMetaLevel;
  if constexpr (kSlotted<KV>) {
    h.heap_off = l_.node_bytes;  // no separators: an empty heap
    tree::SlottedHeaderCodec::Place(&h);
  }
  KV::HeaderCodec::Write(h, page);
}

template <tree::KeyValueTraits KV>
Status NodePages<KV>::Load(GlobalAddress addr, std::byte* page) {
  tree::NodeHeader<KV> h;
  const Key low = std::exchange(expect_low_, KV::kNegInf), high = std::exchange(expect_high_, KV::kPosInf);
  const bool busy_here = std::exchange(busy_here_, false);
  Status read = reader_.Read(ctx_, addr, page, &h);
  if (IsRetry(read)) {
    // No lock holder, no write landing, and the image does not validate (TreeReader::Read).
    // Only the owner of a node writes it without its lock: this compute node, which may be
    // at it only if another of its operations holds the node.
    if (busy_here) return read;
    if ((*map_)->Owns(compute_node_, low, high))
      return Status::Corruption(read.message() + "; it lies in compute node " + std::to_string(compute_node_) +
                                "'s range, which is not writing it back: a write cut short by a crash");
    stale_ = true;  // another compute node's node, being written back: this path is stale
    return read;
  }
  DMX_RETURN_IF_ERROR(read);
  // Read after this node was registered (Load) or while another operation holds it (a
  // private READ): no batch of its page is in flight, but one that failed may have landed.
  if (h.is_leaf()) DMX_RETURN_IF_ERROR(landed_->CheckPoolImage(addr.raw()));
  auto owner = (*map_)->ExclusiveOwner(h.low, h.high);
  if (h.dead() || (owner.has_value() && *owner != compute_node_)) {
    stale_ = true;
    return RetryStatus("node of another compute node: stale path");
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
bool NodePages<KV>::Admissible(const std::byte* page) {
  tree::NodeHeader<KV> h;
  t_.validator.ReadHeader(page, &h);  // just loaded and validated
  return !h.is_leaf() || (*map_)->Owns(compute_node_, h.low, h.high);
}

template <tree::KeyValueTraits KV>
Status NodePages<KV>::Encode(const std::byte* page, std::byte* out) {
  tree::NodeHeader<KV> h;
  if (!t_.validator.ReadHeader(page, &h)) return Status::Corruption("dex: a cached page's header does not decode");
  h.version = ctx_.NewVersion(h.version);
  if constexpr (!kSlotted<KV>) {
    // A fixed-format leaf keeps its slots where Build puts them: only the check words change.
    if (h.is_leaf()) {
      CopyPage(page, out, t_.layout.node_bytes);
      t_.validator.leaf().Restamp(out, h, h.version);
      return Status::Ok();
    }
  }
  bool built;
  if (h.is_leaf()) {
    leaf_entries_.clear();
    t_.validator.leaf().Collect(page, h, &leaf_entries_);
    built = t_.validator.leaf().Build(out, h, leaf_entries_, /*unsorted=*/false);
  } else {
    internal_entries_.clear();
    t_.validator.internal().Collect(page, h, &internal_entries_);
    built = t_.validator.internal().Build(out, h, internal_entries_);
  }
  return built ? Status::Ok() : Status::Corruption("dex: a cached page's entries do not fit a node");
}

template <tree::KeyValueTraits KV>
Status NodePages<KV>::WriteBack(GlobalAddress addr, const std::byte* page) {
  return WriteBackWith(addr, page, {});
}

template <tree::KeyValueTraits KV>
Status NodePages<KV>::WriteBackWith(GlobalAddress addr, const std::byte* page, std::span<const fabric::Verb> after) {
  encoded_.resize(t_.layout.node_bytes);
  DMX_RETURN_IF_ERROR(Encode(page, encoded_.data()));
  // The page first: the batch's verbs land in order on the in-process fabric, so a test that
  // holds a record riding here finds the page already in the pool (the window readers of the
  // pool image must respect: DexTree::CheckPoolImage).
  batch_.assign(1, fabric::Verb::Write(addr, encoded_.data(), t_.layout.node_bytes));
  batch_.insert(batch_.end(), after.begin(), after.end());
  DMX_RETURN_IF_ERROR(guard_ != nullptr ? ctx_.ep.Post(batch_, fabric::Ordering::kUnordered, *guard_)
                                        : ctx_.ep.Post(batch_, fabric::Ordering::kUnordered));
  RetirePending(addr);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
void NodePages<KV>::RetirePending(GlobalAddress leaf) {
  retiring_.clear();
  pending_->TakeFor(leaf, &retiring_);
  for (const tree::ValueBlockRef& ref : retiring_)
    ctx_.cn.retired.Retire(ref.addr, tree::ValueStore<KV>::BlockBytes(ref));
}

template class NodePageLayout<U64Format>;
template class NodePageLayout<BytesFormat>;
template class NodePages<U64Format>;
template class NodePages<BytesFormat>;

}  // namespace dmindex::designs::dex
