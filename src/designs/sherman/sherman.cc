#include "designs/sherman/sherman.h"

#include "tree/tree_index.h"

namespace dmindex::designs {

tree::TreeOptions ShermanDefaults() {
  tree::TreeOptions o;
  o.cache_bytes = 1;  // on: ResolveTreeOptions sizes it from IndexOptions::cache_bytes
  o.hocl = true;
  o.combine = true;
  o.two_level = true;
  o.post_separator = true;
  return o;
}

Result<std::unique_ptr<Index>> MakeSherman(fabric::Fabric& fabric, const IndexOptions& options) {
  return tree::OpenTreeIndex(fabric, "sherman", options, ShermanDefaults());
}

}  // namespace dmindex::designs
