#include "tree/tree_index.h"

#include "alloc/catalog.h"
#include "tree/tree_index_adapter.h"

namespace dmindex::tree {
namespace {

template <KeyValueTraits KV>
Result<std::unique_ptr<Index>> Open(fabric::Fabric& fabric, const std::string& design,
                                    const IndexOptions& options, const TreeOptions& resolved) {
  auto layout = NodeLayout<KV>::For(resolved);
  if (!layout.ok()) return layout.status();
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  bool created = false;
  auto entry = alloc::Catalog::OpenOrCreate(
      **ep, options.name, {design, options.node_bytes, alloc::KeySchema::Of(options), fabric.memory_nodes()}, &created,
      options.create_if_missing);
  if (!entry.ok()) return entry.status();
  TreeOptions owned = resolved;
  owned.chunk_owner = entry->owner;
  auto tree = RemoteTree<KV>::Create(fabric, owned, entry->root_word);
  if (!tree.ok()) return tree.status();
  auto hold = HoldIndex(fabric, *entry, (*tree)->shared().lease.get());
  if (!hold.ok()) return hold.status();
  return std::unique_ptr<Index>(new TreeIndex<RemoteTree<KV>>(design, options, std::move(tree).value(), fabric,
                                                              entry->owner, std::move(hold).value()));
}

}  // namespace

Result<std::unique_ptr<Index>> OpenTreeIndex(fabric::Fabric& fabric, const std::string& design,
                                             const IndexOptions& options,
                                             const TreeOptions& defaults) {
  auto resolved = ResolveTreeOptions(options, defaults);
  if (!resolved.ok()) return resolved.status();
  if (options.key_format == KeyFormat::kU64) return Open<U64BytesKV>(fabric, design, options, *resolved);
  return Open<BytesKV>(fabric, design, options, *resolved);
}

}  // namespace dmindex::tree
