#include "tree/tree_index.h"

#include "alloc/catalog.h"
#include "tree/u64_tree_index.h"

namespace dmindex::tree {
namespace {

using Tree = RemoteTree<U64KV>;

}  // namespace

Result<std::unique_ptr<Index>> OpenTreeIndex(fabric::Fabric& fabric, const std::string& design,
                                             const IndexOptions& options,
                                             const TreeOptions& defaults) {
  if (options.key_format != KeyFormat::kU64)
    return Status::NotSupported("design " + design + " takes u64 keys for now: the tree core's "
                                "byte-key layout is not built yet (key_format = bytes)");
  auto resolved = ResolveTreeOptions(options, defaults);
  if (!resolved.ok()) return resolved.status();
  auto layout = NodeLayout<U64KV>::For(resolved->node_bytes);
  if (!layout.ok()) return layout.status();
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  bool created = false;
  auto entry = alloc::Catalog::OpenOrCreate(
      **ep, options.name, {design, options.node_bytes, alloc::KeySchema::Of(options)}, &created,
      options.create_if_missing);
  if (!entry.ok()) return entry.status();
  auto tree = Tree::Create(fabric, *resolved, entry->root_word);
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(new U64TreeIndex<Tree>(design, options, std::move(tree).value()));
}

}  // namespace dmindex::tree
