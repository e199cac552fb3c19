// The memory-server half of offloading: finishes an operation inside one memory node, through
// the same node codec and verbs as the compute side (a LocalEndpoint over this node's pool),
// and splits a full leaf there instead of giving the insert back.
//
// Why the handler may write without locks: the compute node claimed the subtree root as busy
// in its mapping table under a pinned parent (DexTree::Offload), and it owns the subtree alone
// (its partition), so nobody else reads or writes these nodes until the reply.
//
// A split follows DEX's rule for what may reach the pool (docs/DEX.md): the new right leaf is
// written before the left one that links it, and the separator goes into the parent only
// after both. If the leaf is the subtree root, its parent is in the compute node's cache: the
// leaf is left half-split (a B-link node with a sibling beyond its high fence, which every
// reader follows) and the reply names separator and sibling, so the compute node inserts them
// into its cached parent. A leaf further down gets its separator here, if its parent has
// room; otherwise the insert falls back to the compute node.
#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "common/runtime.h"
#include "alloc/node_allocator.h"
#include "designs/dex/node_pages.h"
#include "designs/dex/offload.h"
#include "fabric/local_endpoint.h"
#include "tree/entry_ops.h"
#include "tree/node_check.h"
#include "tree/split.h"

namespace dmindex::designs::dex {
namespace {

constexpr int kMaxDepth = 64;

class OffloadHandler {
 public:
  explicit OffloadHandler(fabric::MemoryNode& node) : node_(node) {}

  Status Serve(fabric::RpcRequest request, fabric::RpcReply* reply) {
    OffloadWire w;
    if (!fabric::ReadPod(request, 0, &w)) return Status::InvalidArgument("dex offload: short request");
    auto layout = Layout::For(w.node_bytes);
    if (!layout.ok()) return layout.status();
    if (w.op > static_cast<uint8_t>(OffloadOp::kDelete))
      return Status::InvalidArgument("dex offload: bad operation");
    auto r = Run(w, *layout);
    if (!r.ok()) return r.status();
    fabric::AppendPod(reply, *r);
    return Status::Ok();
  }

 private:
  using Entry = tree::LeafEntry<KV>;
  using InnerEntry = tree::InternalEntry<KV>;

  // A node read on the way down.
  struct Seen {
    GlobalAddress addr;
    Header h;
    std::vector<std::byte> image;
  };

  Result<OffloadResult> Run(const OffloadWire& w, const Layout& layout) {
    const tree::NodeValidator<KV> validator(layout, true);
    fabric::LocalEndpoint ep(node_);
    const uint32_t nb = layout.node_bytes;
    OffloadResult r;  // kFallback until proven otherwise
    Seen parent, at;
    bool has_parent = false;
    at.addr = GlobalAddress::FromRaw(w.start);
    at.image.resize(nb);
    int expect = w.level;
    for (int depth = 0;; ++depth) {
      if (depth >= kMaxDepth) return r;
      // The subtree must be local: a pointer to another memory server ends the offload.
      if (!Local(at.addr, nb)) return r;
      DMX_RETURN_IF_ERROR(ep.Read(at.addr, at.image.data(), nb));
      if (!validator.Decode(at.image.data(), &at.h) || at.h.dead() || at.h.level != expect || at.h.low > w.key)
        return r;  // torn, stale or foreign: the compute node knows better
      if (at.h.BeyondHigh(w.key)) {  // a half split: move right (B-link)
        if (at.h.sibling.is_null()) return r;
        at.addr = at.h.sibling;
        continue;
      }
      if (at.h.is_leaf()) break;
      parent = at;
      has_parent = true;
      at.addr = validator.internal().ChildFor(at.image.data(), at.h, w.key);
      --expect;
    }
    const auto& leaf = validator.leaf();
    const auto op = static_cast<OffloadOp>(w.op);
    if (op == OffloadOp::kLookup) {
      const int slot = leaf.Find(at.image.data(), at.h, w.key);
      r.outcome = slot >= 0 ? OffloadResult::kDone : OffloadResult::kNotFound;
      r.value = slot >= 0 ? leaf.ValueAt(at.image.data(), static_cast<uint32_t>(slot)) : 0;
      return r;
    }
    std::vector<Entry> entries;
    leaf.Collect(at.image.data(), at.h, &entries);
    if (tree::ApplyToSorted<KV>(entries, ToWriteOp(op), w.key, w.value).IsNotFound()) {
      r.outcome = OffloadResult::kNotFound;
      return r;
    }
    std::vector<std::byte> out(nb);
    if (entries.size() <= leaf.capacity()) {
      at.h.version = Stamp(at.h.version, at.addr);
      leaf.Build(out.data(), at.h, entries, /*unsorted=*/false);
      DMX_RETURN_IF_ERROR(ep.Write(at.addr, out.data(), nb));
      r.outcome = OffloadResult::kDone;
      r.remaining = static_cast<uint32_t>(entries.size());
      r.written = at.addr.raw();
      return r;
    }
    // The leaf overflows. Below a parent of the subtree that is full, give it back.
    if (has_parent && parent.h.count >= validator.internal().capacity()) return r;
    auto right = Allocator()->AllocateOn(ep, at.addr.node(), nb);
    if (right.status().IsOutOfSpace()) return r;  // the compute node may allocate elsewhere
    if (!right.ok()) return right.status();
    const auto split = tree::SplitLeaf<KV>(entries);
    Header rh;
    rh.version = Stamp(0, *right);
    rh.level = 0;
    rh.low = split.separator;
    rh.high = at.h.high;
    rh.sibling = at.h.sibling;
    leaf.Build(out.data(), rh, split.right, false);
    DMX_RETURN_IF_ERROR(ep.Write(*right, out.data(), nb));  // first: nothing links it yet
    Header lh = at.h;
    lh.version = Stamp(at.h.version, at.addr);
    lh.high = split.separator;
    lh.sibling = *right;
    leaf.Build(out.data(), lh, split.left, false);
    DMX_RETURN_IF_ERROR(ep.Write(at.addr, out.data(), nb));
    r.outcome = OffloadResult::kDone;
    r.remaining = static_cast<uint32_t>(split.left.size());
    r.written = at.addr.raw();
    r.split_sibling = right->raw();
    r.separator = split.separator;
    if (!has_parent) return r;  // the compute node links the sibling into its cached parent
    const auto& internal = validator.internal();
    std::vector<InnerEntry> seps;
    internal.Collect(parent.image.data(), parent.h, &seps);
    if (!tree::InsertSeparator<KV>(seps, split.separator, *right)) return r;  // cannot be: a fresh key
    parent.h.version = Stamp(parent.h.version, parent.addr);
    internal.Build(out.data(), parent.h, seps);
    DMX_RETURN_IF_ERROR(ep.Write(parent.addr, out.data(), nb));
    r.parent_written = parent.addr.raw();
    r.split_sibling = 0;  // linked here: nothing left for the compute node to do
    r.split_here = 1;
    return r;
  }

  bool Local(GlobalAddress a, uint32_t nb) const {
    return a.node() == node_.id() && node_.Contains(a.offset(), nb);
  }

  // A fresh stamp (node_check.h): a hash of a per-server counter, seeded by the old one.
  uint64_t Stamp(uint64_t old, GlobalAddress at) {
    const uint64_t n = counter_.fetch_add(1, std::memory_order_relaxed) ^ at.raw();
    return tree::BodyCheck(reinterpret_cast<const std::byte*>(&n), sizeof n, old);
  }

  // Blocks for new leaves, cut from chunks of this node. Made at the first split: a memory
  // server learns its id (and so the size of the allocator's table) from its first client.
  alloc::NodeAllocator* Allocator() {
    std::lock_guard lock(allocator_mu_);
    if (!allocator_) allocator_ = std::make_unique<alloc::NodeAllocator>(static_cast<uint16_t>(*node_.id() + 1));
    return allocator_.get();
  }

  fabric::MemoryNode& node_;
  std::atomic<uint64_t> counter_{1};
  runtime::Mutex allocator_mu_;
  std::unique_ptr<alloc::NodeAllocator> allocator_;
};

}  // namespace

Status RegisterOffloadHandler(fabric::MemoryNode& node) {
  // Registration must precede serving; a second DEX index on the fabric reuses it.
  if (node.rpc().Has(kOffloadOpcode)) return Status::Ok();
  auto handler = std::make_shared<OffloadHandler>(node);
  return node.rpc().Register(
      kOffloadOpcode, "dex.offload",
      [handler](fabric::RpcRequest req, fabric::RpcReply* reply) { return handler->Serve(req, reply); });
}

}  // namespace dmindex::designs::dex
