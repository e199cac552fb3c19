// X = the local B+-tree (designs/local/tiered_tree.h; the paper's B+-* systems), in either key
// format. Entries live in its leaves with their flags; a cleaner locks the leaves it cleans;
// units are the inner nodes `unit_depth - 1` levels above the leaves, named by their lowest
// key; a release prunes a unit to its leftmost path, whose leaf (emptied, mounted) then covers
// the unit's range.
#pragma once

#include <memory>

#include "designs/indexy/indexy_options.h"
#include "designs/indexy/x_index.h"
#include "dmindex/types.h"

namespace dmindex::designs::indexy {

class BtreeX {
 public:
  // The tree of the index's key format with IndexOptions::node_bytes nodes.
  static Result<std::unique_ptr<XTree>> Make(KeyFormat format, const IndexyOptions& options);
  static uint32_t MinNodeBytes(KeyFormat format);
};

}  // namespace dmindex::designs::indexy
