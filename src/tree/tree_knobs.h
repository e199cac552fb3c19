// The tree core's knobs (tree_options.h) as a table (common/knob_table.h): naive and sherman
// take exactly these; rftree, dex and xstore lift them into their own tables.
#pragma once

#include "common/knob_table.h"
#include "tree/tree_options.h"

namespace dmindex::tree {

const KnobTable<TreeOptions>& TreeKnobs();

}  // namespace dmindex::tree
