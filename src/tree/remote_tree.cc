#include "tree/remote_tree.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
RemoteTree<KV>::RemoteTree(fabric::Fabric& fabric, const TreeOptions& options,
                           const NodeLayout<KV>& layout, GlobalAddress root_word,
                           const TreeHooks<KV>& hooks, std::unique_ptr<lease::Lease> lease)
    : shared_(fabric, options, layout, root_word, hooks.placer, hooks.on_leaf_split, std::move(lease),
              hooks.read_from_writer, hooks.lock_area),
      reader_(shared_),
      scanner_(shared_, reader_),
      batch_(shared_, reader_),
      locker_(shared_, reader_),
      smo_(shared_, reader_, locker_),
      writer_(shared_, locker_, smo_),
      loader_(shared_, reader_) {
  for (uint32_t i = 0; i < options.compute_nodes; ++i)
    compute_nodes_.push_back(std::make_unique<ComputeNodeState<KV>>(
        i, fabric.memory_nodes(), options, layout, hooks.make_cache ? hooks.make_cache(i) : nullptr));
}

template <KeyValueTraits KV>
Result<std::unique_ptr<RemoteTree<KV>>> RemoteTree<KV>::Create(fabric::Fabric& fabric,
                                                               const TreeOptions& options,
                                                               GlobalAddress root_word,
                                                               const TreeHooks<KV>& hooks) {
  auto layout = NodeLayout<KV>::For(options);
  if (!layout.ok()) return layout.status();
  if (options.compute_nodes == 0) return Status::InvalidArgument("compute_nodes must be >= 1");
  if (root_word.is_null() || root_word.offset() % 8 != 0)
    return Status::InvalidArgument("root word must be an aligned remote word");
  std::unique_ptr<lease::Lease> lease;
  if (hooks.make_lease) {
    lease = hooks.make_lease();
  } else if (options.lease.count() > 0) {
    lease::LeaseOptions lo;
    lo.length = options.lease;
    auto claimed = lease::Lease::Claim(fabric, lo);
    if (!claimed.ok()) return claimed.status();
    lease = std::move(claimed).value();
  }
  return std::unique_ptr<RemoteTree>(new RemoteTree(fabric, options, *layout, root_word, hooks, std::move(lease)));
}

template <KeyValueTraits KV>
Result<std::unique_ptr<TreeContext<KV>>> RemoteTree<KV>::NewContext(uint32_t compute_node) {
  if (compute_node >= compute_nodes_.size())
    return Status::InvalidArgument("compute node " + std::to_string(compute_node) +
                                   " out of range (the index has " +
                                   std::to_string(compute_nodes_.size()) + ")");
  auto ep = shared_.fabric.Connect();
  if (!ep.ok()) return ep.status();
  return std::make_unique<Ctx>(std::move(ep).value(), compute_nodes_[compute_node].get(),
                               shared_.layout.node_bytes, shared_.lease.get());
}

template <KeyValueTraits KV>
TreeStats RemoteTree<KV>::Stats() const {
  TreeStats s;
  for (const auto& cn : compute_nodes_) {
    if (cn->cache) {
      s.cache_hits += cn->cache->hits();
      s.cache_misses += cn->cache->misses();
      s.cache_bytes += cn->cache->bytes();
    }
    if (cn->local_locks) s.handovers += cn->local_locks->handovers();
    s.pool_bytes += cn->allocator.pool_bytes();
    s.bytes_in_use += cn->allocator.bytes_in_use();
    s.retired_bytes += cn->retired.bytes();
    s.retries += cn->retries.load(std::memory_order_relaxed);
  }
  return s;
}

template class RemoteTree<U64BytesKV>;
template class RemoteTree<U64KV>;
template class RemoteTree<BytesKV>;

}  // namespace dmindex::tree
