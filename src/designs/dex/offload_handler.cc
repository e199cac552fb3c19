// The memory-server half of offloading: finishes an operation inside one memory node, through
// the same node codec and verbs as the compute side (a LocalEndpoint over this node's pool),
// and splits a full leaf there instead of giving the insert back. Both key formats: the
// request names the format and the layout (offload_wire.h).
//
// Why the handler may write without locks: for a write, the compute node claimed the subtree
// root as busy in its mapping table under a pinned parent (DexTree::Offload), and it owns the
// subtree alone (its partition), so nobody else reads or writes these nodes until the reply.
// A lookup claims nothing: the compute node may load, change and write back the subtree's
// nodes meanwhile. It only reads, and every image it accepts validated; a torn, dead or
// foreign one sends it back (docs/SYNCHRONIZATION.md, "DEX's offloaded lookups").
//
// A split follows DEX's rule for what may reach the pool (docs/DEX.md): the new right leaf is
// written before the left one that links it, and the separator goes into the parent only
// after both. If the leaf is the subtree root, its parent is in the compute node's cache: the
// leaf is left half-split (a B-link node with a sibling beyond its high fence, which every
// reader follows) and the reply names separator and sibling, so the compute node inserts them
// into its cached parent. A leaf further down gets its separator here, if its parent has
// room; otherwise the insert falls back to the compute node.
//
// Value blocks are the compute node's (offload.h): a write links the block the request names
// and answers the one it unlinked, which the compute node retires once the reply is in - the
// leaf write that unlinked it has landed by then.
#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/runtime.h"
#include "alloc/node_allocator.h"
#include "designs/dex/fill_policy.h"
#include "designs/dex/offload.h"
#include "designs/dex/offload_wire.h"
#include "fabric/local_endpoint.h"
#include "tree/entry_ops.h"
#include "tree/node_check.h"
#include "tree/node_validation.h"

namespace dmindex::designs::dex {
namespace {

constexpr int kMaxDepth = 64;

class OffloadHandler {
 public:
  explicit OffloadHandler(fabric::MemoryNode& node) : node_(node) {}

  Status Serve(fabric::RpcRequest request, fabric::RpcReply* reply) {
    auto q = DecodeRequest(request);
    if (!q.ok()) return q.status();
    return q->bytes_format ? Run<BytesFormat>(*q, reply) : Run<U64Format>(*q, reply);
  }

  // A dropped index's allocator goes (MemoryNode::OnOwnerFreed).
  void Forget(uint64_t owner) {
    std::lock_guard lock(allocator_mu_);
    if (allocators_) allocators_->Forget(owner);
  }

 private:
  // A node read on the way down.
  template <typename KV>
  struct Seen {
    GlobalAddress addr;
    tree::NodeHeader<KV> h;
    std::vector<std::byte> image;
  };

  template <typename KV>
  static typename KV::KeyRef KeyOf(const WireRequest& q) {
    if constexpr (kSlotted<KV>) return q.key;
    else return q.w.key;
  }

  template <typename KV>
  Status Run(const WireRequest& q, fabric::RpcReply* reply) {
    using Header = tree::NodeHeader<KV>;
    auto layout = tree::NodeLayout<KV>::For(q.layout);
    if (!layout.ok()) return layout.status();
    const tree::NodeValidator<KV> validator(*layout, true);
    const typename KV::KeyRef key = KeyOf<KV>(q);
    fabric::LocalEndpoint ep(node_);
    const uint32_t nb = layout->node_bytes;
    OffloadResult r;  // kFallback until proven otherwise
    auto answer = [&](std::string_view separator = {}, std::string_view value = {}) {
      EncodeReply(r, q.bytes_format, separator, value, reply);
      return Status::Ok();
    };
    Seen<KV> parent, at;
    bool has_parent = false;
    at.addr = GlobalAddress::FromRaw(q.w.start);
    at.image.resize(nb);
    int expect = q.w.level;
    const auto op = static_cast<OffloadOp>(q.w.op);
    for (int depth = 0;; ++depth) {
      if (depth >= kMaxDepth) return answer();
      // The subtree must be local: a pointer to another memory server ends the offload.
      if (!Local(at.addr, nb)) return answer();
      DMX_RETURN_IF_ERROR(ep.Read(at.addr, at.image.data(), nb));
      if (!validator.DecodeHeader(at.image.data(), &at.h) || at.h.dead() || at.h.level != expect || key < at.h.low)
        return answer();  // torn, stale or foreign: the compute node knows better
      if (at.h.BeyondHigh(key)) {  // a half split: move right (B-link)
        if (at.h.sibling.is_null()) return answer();
        at.addr = at.h.sibling;
        continue;
      }
      // A lookup's leaf validates only the slots its search reads (Leaf::FindValidated): on a
      // memory server's few cores, hashing every slot of every offloaded leaf was most of a
      // lookup's handler time.
      if (at.h.is_leaf() && op == OffloadOp::kLookup) break;
      if (!validator.ValidBody(at.image.data(), at.h)) return answer();
      if (at.h.is_leaf()) break;
      std::swap(parent, at);  // no copy of the image: `at` reuses the old parent's buffer
      at.image.resize(nb);
      has_parent = true;
      at.addr = validator.internal().ChildFor(parent.image.data(), parent.h, key);
      --expect;
    }
    const auto& leaf = validator.leaf();
    int slot = -1;
    if (op == OffloadOp::kLookup) {
      if (!leaf.FindValidated(at.image.data(), at.h, key, validator.validating(), &slot)) return answer();
    } else {
      slot = leaf.Find(at.image.data(), at.h, key);
    }
    const tree::ValueBlockRef old = slot >= 0 ? leaf.BlockAt(at.image.data(), at.h, static_cast<uint32_t>(slot))
                                              : tree::ValueBlockRef{};
    if (op == OffloadOp::kLookup) {
      // Named in the reply: the compute node checks that no write of its own to this leaf
      // is still being logged (DexTree::CheckPoolImage).
      r.written = at.addr.raw();
      if (slot < 0) {
        r.outcome = OffloadResult::kNotFound;
        return answer();
      }
      r.outcome = OffloadResult::kDone;
      if (!old.is_null()) {  // out of line: the compute node READs the block
        SetBlock(&r, OffloadResult::kValueInBlock, old);
        return answer();
      }
      const std::string value = leaf.ValueAt(at.image.data(), at.h, static_cast<uint32_t>(slot));
      return answer({}, value);
    }
    if (q.block.is_null() && op != OffloadOp::kDelete && q.value.size() > leaf.InlineLimit())
      return Status::InvalidArgument("dex offload: an inline value over the leaf's limit");
    std::vector<tree::LeafEntry<KV>> entries;
    leaf.Collect(at.image.data(), at.h, &entries);
    if (tree::ApplyToSorted<KV>(entries, ToWriteOp(op), key, q.value, q.block).IsNotFound()) {
      r.outcome = OffloadResult::kNotFound;
      return answer();
    }
    std::vector<std::byte> out(nb);
    if (leaf.Fits(at.h, entries)) {
      Header h = at.h;
      h.version = Stamp(at.h.version, at.addr);
      if (!leaf.Build(out.data(), h, entries, /*unsorted=*/false))
        return Status::Corruption("dex offload: a leaf that fits its entries cannot be built");
      DMX_RETURN_IF_ERROR(ep.Write(at.addr, out.data(), nb));
      validator.ReadHeader(out.data(), &h);
      r.outcome = OffloadResult::kDone;
      r.remaining = static_cast<uint32_t>(entries.size());
      if (Underfull(leaf.Used(out.data(), h), leaf.Capacity(h))) r.flags |= OffloadResult::kUnderfull;
      r.written = at.addr.raw();
      SetBlock(&r, OffloadResult::kOldBlock, old);
      return answer();
    }
    // The leaf overflows. Below a parent of the subtree that is full, give it back.
    if (has_parent && !validator.internal().HasRoom(parent.h)) return answer();
    // From the allocator of the leaf's index: the new leaf is freed with it when it is dropped.
    auto right = Allocators().For(node_.OwnerOf(at.addr.offset()))->AllocateOn(ep, at.addr.node(), nb);
    if (right.status().IsOutOfSpace()) return answer();  // the compute node may allocate elsewhere
    if (!right.ok()) return right.status();
    const auto split = leaf.Split(at.h, entries);
    Header rh;
    rh.version = Stamp(0, *right);
    rh.level = 0;
    rh.low = split.separator;
    rh.high = at.h.high;
    rh.sibling = at.h.sibling;
    Header lh = at.h;
    lh.version = Stamp(at.h.version, at.addr);
    lh.high = split.separator;
    lh.sibling = *right;
    std::vector<std::byte> left(nb);
    if (!leaf.Build(out.data(), rh, split.right, false) || !leaf.Build(left.data(), lh, split.left, false))
      return Status::Corruption("dex offload: a split half does not fit its node");
    DMX_RETURN_IF_ERROR(ep.Write(*right, out.data(), nb));  // first: nothing links it yet
    DMX_RETURN_IF_ERROR(ep.Write(at.addr, left.data(), nb));
    r.outcome = OffloadResult::kDone;
    r.remaining = static_cast<uint32_t>(split.left.size());
    r.written = at.addr.raw();
    SetBlock(&r, OffloadResult::kOldBlock, old);
    if (!has_parent) {  // the compute node links the sibling into its cached parent
      r.split_sibling = right->raw();
      if constexpr (kSlotted<KV>) {
        return answer(split.separator);
      } else {
        r.separator = split.separator;
        return answer();
      }
    }
    const auto& internal = validator.internal();
    std::vector<tree::InternalEntry<KV>> seps;
    internal.Collect(parent.image.data(), parent.h, &seps);
    if (!tree::InsertSeparator<KV>(seps, split.separator, *right))
      return Status::Corruption("dex offload: the separator of a fresh split is in its parent already");
    parent.h.version = Stamp(parent.h.version, parent.addr);
    if (!internal.Build(out.data(), parent.h, seps))
      return Status::Corruption("dex offload: a parent with room cannot take a separator");
    DMX_RETURN_IF_ERROR(ep.Write(parent.addr, out.data(), nb));
    r.parent_written = parent.addr.raw();
    r.split_here = 1;  // linked here: nothing left for the compute node to do
    return answer();
  }

  static void SetBlock(OffloadResult* r, uint8_t flag, const tree::ValueBlockRef& ref) {
    if (ref.is_null()) return;
    r->flags |= flag;
    r->value = ref.addr.raw();
    r->block_bytes = ref.read_bytes;
    r->block_exact = ref.exact ? 1 : 0;
  }

  bool Local(GlobalAddress a, uint32_t nb) const {
    return a.node() == node_.id() && node_.Contains(a.offset(), nb);
  }

  // A fresh stamp (node_check.h): a hash of a per-server counter, seeded by the old one.
  uint64_t Stamp(uint64_t old, GlobalAddress at) {
    const uint64_t n = counter_.fetch_add(1, std::memory_order_relaxed) ^ at.raw();
    return tree::BodyCheck(reinterpret_cast<const std::byte*>(&n), sizeof n, old);
  }

  // Blocks for new leaves, cut from chunks of this node, per index. Made at the first split: a
  // memory server learns its id (and so the size of the allocators' tables) from its first
  // client.
  alloc::OwnedAllocators& Allocators() {
    std::lock_guard lock(allocator_mu_);
    if (!allocators_) allocators_ = std::make_unique<alloc::OwnedAllocators>(static_cast<uint16_t>(*node_.id() + 1));
    return *allocators_;
  }

  fabric::MemoryNode& node_;
  std::atomic<uint64_t> counter_{1};
  runtime::Mutex allocator_mu_;
  std::unique_ptr<alloc::OwnedAllocators> allocators_;
};

}  // namespace

Status RegisterOffloadHandler(fabric::MemoryNode& node) {
  // Registration must precede serving; a second DEX index on the fabric reuses it.
  if (node.rpc().Has(kOffloadOpcode)) return Status::Ok();
  auto handler = std::make_shared<OffloadHandler>(node);
  node.OnOwnerFreed([handler](uint64_t owner) { handler->Forget(owner); });
  return node.rpc().Register(
      kOffloadOpcode, "dex.offload",
      [handler](fabric::RpcRequest req, fabric::RpcReply* reply) { return handler->Serve(req, reply); });
}

}  // namespace dmindex::designs::dex
