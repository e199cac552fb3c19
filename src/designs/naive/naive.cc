#include "designs/naive/naive.h"

#include "tree/tree_index.h"

namespace dmindex::designs {

Result<std::unique_ptr<Index>> MakeNaive(fabric::Fabric& fabric, const IndexOptions& options) {
  return tree::OpenTreeIndex(fabric, "naive", options, tree::TreeOptions{});
}

}  // namespace dmindex::designs
