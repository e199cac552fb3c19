#include "designs/rftree/rftree_index.h"

#include "alloc/catalog.h"
#include "designs/rftree/rftree.h"
#include "tree/tree_index_adapter.h"

namespace dmindex::designs {
namespace {

// The catalog's aux words of an rftree index.
constexpr int kLogWord = 0;   // the search-layer log's directory address
constexpr int kLockWord = 1;  // 1 + the lock mode it was created with

// Leaves are written under one lock protocol by every process: the first opener stores its
// lock mode, later ones must use the same.
Status AgreeOnLockMode(fabric::Endpoint& ep, GlobalAddress word, rftree::LockMode mode) {
  const uint64_t mine = 1 + static_cast<uint64_t>(mode);
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(word, 0, mine, &old));
  if (old == 0 || old == mine) return Status::Ok();
  auto name = [](uint64_t m) { return m == 1 ? "inline" : "table"; };
  return Status::InvalidArgument("rftree index was created with lock=" + std::string(name(old)) +
                                 "; it cannot be opened with lock=" + name(mine));
}

// An RF-tree of traits KV (the index's key format) over the catalog entry's words.
template <tree::KeyValueTraits KV>
Result<std::unique_ptr<Index>> Open(fabric::Fabric& fabric, const IndexOptions& options,
                                    const rftree::RfTreeOptions& resolved) {
  using Tree = rftree::RfTree<KV>;
  auto layout = tree::NodeLayout<KV>::For(resolved.tree);  // node size against key and value limits
  if (!layout.ok()) return layout.status();
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  bool created = false;
  auto entry = alloc::Catalog::OpenOrCreate(
      **ep, options.name, {"rftree", options.node_bytes, alloc::KeySchema::Of(options), fabric.memory_nodes()}, &created,
      options.create_if_missing);
  if (!entry.ok()) return entry.status();
  DMX_RETURN_IF_ERROR(AgreeOnLockMode(**ep, entry->aux_word(kLockWord), resolved.lock));
  rftree::RfTreeOptions owned = resolved;
  owned.tree.chunk_owner = entry->owner;
  auto tree = Tree::Open(fabric, owned, entry->root_word, entry->aux_word(kLogWord));
  if (!tree.ok()) return tree.status();
  auto hold = tree::HoldIndex(fabric, *entry, (*tree)->lock_lease());
  if (!hold.ok()) return hold.status();
  return std::unique_ptr<Index>(new tree::TreeIndex<Tree>("rftree", options, std::move(tree).value(), fabric,
                                                          entry->owner, std::move(hold).value()));
}

}  // namespace

Result<std::unique_ptr<Index>> MakeRfTree(fabric::Fabric& fabric, const IndexOptions& options) {
  auto resolved = rftree::ResolveRfTreeOptions(options);
  if (!resolved.ok()) return resolved.status();
  if (options.key_format == KeyFormat::kU64) return Open<tree::U64BytesKV>(fabric, options, *resolved);
  return Open<tree::BytesKV>(fabric, options, *resolved);
}

}  // namespace dmindex::designs
