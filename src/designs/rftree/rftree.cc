#include "designs/rftree/rftree.h"

namespace dmindex::designs::rftree {

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<RfTree<KV>>> RfTree<KV>::Open(fabric::Fabric& fabric, const RfTreeOptions& options,
                                                     GlobalAddress root_word, GlobalAddress log_word) {
  std::unique_ptr<RfTree> t(new RfTree(options));
  t->log_ = std::make_unique<alloc::AppendLog>(log_word, options.tree.node_bytes, fabric.memory_nodes());
  t->placer_ = std::make_shared<SpreadPlacer>(*t->log_);
  tree::TreeOptions core = options.tree;
  core.trailer_lock = options.lock == LockMode::kInline;
  tree::TreeHooks<KV> hooks;
  hooks.placer = t->placer_;
  if (options.slc) {
    auto layout = tree::NodeLayout<KV>::For(core);
    if (!layout.ok()) return layout.status();
    SlcConfig slc;
    slc.budget_bytes = core.cache_bytes;
    slc.chunk_bytes = options.slc_chunk_bytes;
    slc.refresh_auto = options.refresh_auto;
    slc.refresh_hops = options.refresh_hops;
    slc.min_interval_us = options.refresh_min_us;
    slc.scan_batch = options.scan_batch;
    slc.validate = core.validate;
    RfTree* self = t.get();
    hooks.make_cache = [self, layout = *layout, slc, root_word](uint32_t) {
      auto cache = std::make_unique<SearchLayerCache<KV>>(layout, *self->log_, root_word, slc);
      self->slcs_.push_back(cache.get());
      return std::unique_ptr<tree::RoutingCache<KV>>(std::move(cache));
    };
  } else {
    core.cache_bytes = 0;  // no cache of internal nodes at all
  }
  auto tree = tree::RemoteTree<KV>::Create(fabric, core, root_word, hooks);
  if (!tree.ok()) return tree.status();
  t->tree_ = std::move(tree).value();
  t->log_->HoldUnder(t->tree_->shared().lease.get());  // the lease the tree's locks name
  // The log's directory, found or created by compute node 0's allocator (a context's).
  auto ctx = t->tree_->NewContext(0);
  if (!ctx.ok()) return ctx.status();
  DMX_RETURN_IF_ERROR(t->log_->Open((*ctx)->ep, (*ctx)->cn.allocator));
  if (options.lock == LockMode::kInline)
    t->inline_writer_ = std::make_unique<InlineLockWriter<KV>>(t->tree_->shared(), t->tree_->reader(),
                                                               t->tree_->modifier(), options.unlock);
  return t;
}

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<typename RfTree<KV>::Ctx>> RfTree<KV>::NewContext(uint32_t compute_node) {
  auto inner = tree_->NewContext(compute_node);
  if (!inner.ok()) return inner.status();
  auto c = std::make_unique<Ctx>();
  c->tree = std::move(inner).value();
  if (!slcs_.empty()) {
    c->slc = slcs_[compute_node];
    c->epoch = c->slc->epochs().Join();
  }
  return c;
}

template <tree::KeyValueTraits KV>
Status RfTree<KV>::Write(Ctx& c, tree::WriteOp op, KeyRef key, ValueRef value,
                         const tree::CompareValue* cas) const {
  return Run(c, [&] {
    if (inline_writer_ != nullptr) {
      // The core's operations reap a separator's unwaited batch first; this path is not theirs.
      DMX_RETURN_IF_ERROR(c.tree->ReapPosted());
      return inline_writer_->Write(*c.tree, op, key, value, cas);
    }
    if (cas != nullptr) return tree_->CompareAndSwap(*c.tree, key, value, *cas);
    switch (op) {
      case tree::WriteOp::kUpsert: return tree_->Upsert(*c.tree, key, value);
      case tree::WriteOp::kUpdate: return tree_->Update(*c.tree, key, value);
      case tree::WriteOp::kDelete: return tree_->Delete(*c.tree, key);
    }
    return Status::InvalidArgument("unknown write");
  });
}

template <tree::KeyValueTraits KV>
void RfTree<KV>::MultiLookup(Ctx& c, std::span<const KeyRef> keys, std::span<Value> values,
                             std::span<Status> statuses) const {
  Status s = Run(c, [&] {
    tree_->MultiLookup(*c.tree, keys, values, statuses);
    return Status::Ok();
  });
  if (!s.ok())
    for (Status& st : statuses) st = s;
}

template <tree::KeyValueTraits KV>
void RfTree<KV>::AddProperties(std::vector<std::pair<std::string, uint64_t>>* out) const {
  tree_->AddProperties(out);
  typename SearchLayerCache<KV>::Counters sum;
  for (const SearchLayerCache<KV>* slc : slcs_) {
    const auto c = slc->counters();
    sum.refreshes += c.refreshes;
    sum.skipped += c.skipped;
    sum.stale_reads += c.stale_reads;
    sum.torn_left_out += c.torn_left_out;
    sum.snapshot_nodes += c.snapshot_nodes;
  }
  out->push_back({"dmindex.rftree.refreshes", sum.refreshes});
  out->push_back({"dmindex.rftree.refresh-skipped", sum.skipped});
  out->push_back({"dmindex.rftree.stale-reads", sum.stale_reads});
  out->push_back({"dmindex.rftree.torn-left-out", sum.torn_left_out});
  out->push_back({"dmindex.rftree.slc-nodes", sum.snapshot_nodes});
  out->push_back({"dmindex.rftree.log-garbage-blocks", placer_->garbage_blocks()});
}

template class RfTree<tree::U64BytesKV>;
template class RfTree<tree::BytesKV>;

}  // namespace dmindex::designs::rftree
