#include "designs/dex/node_pages.h"

#include <algorithm>
#include <utility>

#include "common/pool_memory.h"
#include "common/retry_status.h"

namespace dmindex::designs::dex {
namespace {

uint64_t LoadWord(const std::byte* page, uint32_t offset) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(page) + offset))
      .load(std::memory_order_relaxed);
}

}  // namespace

bool NodePageLayout::IsLeaf(const std::byte* page) const {
  return (LoadWord(page, Layout::kMetaOff) & 0xFF) == 0;
}

size_t NodePageLayout::ChildCount(const std::byte* page) const {
  if (IsLeaf(page)) return 0;
  const uint64_t count = (LoadWord(page, Layout::kMetaOff) >> 16) & 0xFFFF;
  return std::min<uint64_t>(count, l_.internal_capacity) + 1;  // + leftmost
}

uint64_t* NodePageLayout::ChildSlot(std::byte* page, size_t i) const {
  const uint32_t offset = i == 0 ? Layout::kLeftmostOff
                                 : l_.EntryOffset(static_cast<uint32_t>(i - 1)) + Layout::kKeyBytes;
  return reinterpret_cast<uint64_t*>(page + offset);
}

void CopyPage(const std::byte* page, std::byte* out, uint32_t len) {
  CopyFromPool(out, page, len);
}

Header DecodeHeader(const std::byte* copy) {
  Header h;
  tree::HeaderCodec<KV>::Read(copy, &h, /*validate=*/false);
  return h;
}

Status NodePages::Load(GlobalAddress addr, std::byte* page) {
  Header h;
  const Key low = std::exchange(expect_low_, KV::kNegInf), high = std::exchange(expect_high_, KV::kPosInf);
  Status read = reader_.Read(ctx_, addr, page, &h);
  if (IsRetry(read)) {
    // No lock holder, no write landing, and the image does not validate (TreeReader::Read).
    // Only the owner of a node writes it without its lock.
    if ((*map_)->Owns(compute_node_, low, high))
      return Status::Corruption(read.message() + "; it lies in compute node " + std::to_string(compute_node_) +
                                "'s range, which is not writing it back: a write cut short by a crash");
    stale_ = true;  // another compute node's node, being written back: this path is stale
    return read;
  }
  DMX_RETURN_IF_ERROR(read);
  auto owner = (*map_)->ExclusiveOwner(h.low, h.high);
  if (h.dead() || (owner.has_value() && *owner != compute_node_)) {
    stale_ = true;
    return RetryStatus("node of another compute node: stale path");
  }
  return Status::Ok();
}

bool NodePages::Admissible(const std::byte* page) {
  const Header h = DecodeHeader(page);
  return !h.is_leaf() || (*map_)->Owns(compute_node_, h.low, h.high);
}

void NodePages::Encode(const std::byte* page, std::byte* out) {
  Header h = DecodeHeader(page);
  h.version = ctx_.NewVersion(h.version);
  if (h.is_leaf()) {
    leaf_entries_.clear();
    t_.validator.leaf().Collect(page, h, &leaf_entries_);
    t_.validator.leaf().Build(out, h, leaf_entries_, /*unsorted=*/false);
  } else {
    internal_entries_.clear();
    t_.validator.internal().Collect(page, h, &internal_entries_);
    t_.validator.internal().Build(out, h, internal_entries_);
  }
}

Status NodePages::WriteBack(GlobalAddress addr, const std::byte* page) {
  encoded_.resize(t_.layout.node_bytes);
  Encode(page, encoded_.data());
  return ctx_.ep.Write(addr, encoded_.data(), t_.layout.node_bytes);
}

}  // namespace dmindex::designs::dex
