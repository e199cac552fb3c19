// The memory-server half of offloading: finishes a traversal inside one memory node.
#include <algorithm>
#include <memory>
#include <vector>

#include "designs/dex/node_pages.h"
#include "designs/dex/offload.h"
#include "tree/node_check.h"
#include "fabric/pool_memory.h"

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
    OffloadResult r = Run(w, *layout);
    fabric::AppendPod(reply, r);
    return Status::Ok();
  }

 private:
  OffloadResult Run(const OffloadWire& w, const Layout& layout) {
    const tree::NodeValidator<KV> validator(layout, true);
    const uint32_t nb = layout.node_bytes;
    std::vector<std::byte> image(nb), out(nb);
    OffloadResult r;  // kFallback until proven otherwise
    GlobalAddress addr = GlobalAddress::FromRaw(w.start);
    int expect = w.level;
    for (int depth = 0; depth < kMaxDepth; ++depth) {
      // The subtree must be local: a pointer to another memory server ends the offload.
      if (addr.node() != node_.id() || !node_.Contains(addr.offset(), nb)) return r;
      std::byte* at = node_.base() + addr.offset();
      fabric::CopyFromPool(image.data(), at, nb);
      Header h;
      if (!validator.Decode(image.data(), &h) || h.dead() || h.level != expect || !h.Covers(w.key))
        return r;  // torn, stale or foreign: the compute node knows better
      if (!h.is_leaf()) {
        addr = validator.internal().ChildFor(image.data(), h, w.key);
        --expect;
        continue;
      }
      std::vector<tree::LeafEntry<KV>> entries;
      validator.leaf().Collect(image.data(), h, &entries);
      auto pos = std::lower_bound(entries.begin(), entries.end(), w.key,
                                  [](const tree::LeafEntry<KV>& e, Key k) { return e.key < k; });
      const bool found = pos != entries.end() && pos->key == w.key;
      const auto op = static_cast<OffloadOp>(w.op);
      if (op == OffloadOp::kLookup) {
        r.outcome = found ? OffloadResult::kDone : OffloadResult::kNotFound;
        r.value = found ? pos->value : 0;
        return r;
      }
      if (!found && op != OffloadOp::kUpsert) {
        r.outcome = OffloadResult::kNotFound;
        return r;
      }
      if (op == OffloadOp::kDelete) entries.erase(pos);
      else if (found) pos->value = w.value;
      else if (entries.size() >= validator.leaf().capacity()) return r;  // would split: SMO
      else entries.insert(pos, {w.key, w.value});
      // A fresh stamp (node_check.h): a hash of a per-server counter, seeded by the old one.
      const uint64_t n = counter_.fetch_add(1, std::memory_order_relaxed) ^ addr.raw();
      h.version = tree::BodyCheck(reinterpret_cast<const std::byte*>(&n), sizeof n, h.version);
      validator.leaf().Build(out.data(), h, entries, /*unsorted=*/false);
      fabric::CopyToPool(at, out.data(), nb);
      r.outcome = OffloadResult::kDone;
      r.remaining = static_cast<uint32_t>(entries.size());
      r.written = addr.raw();
      return r;
    }
    return r;
  }

  fabric::MemoryNode& node_;
  std::atomic<uint64_t> counter_{1};
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
