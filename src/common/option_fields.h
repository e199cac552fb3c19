// IndexOptions' fields by name, set from text: one table behind ParseIndexOptions
// ("design=sherman;node_bytes=2048") and the C API's dmindex_options_set. Numbers are read by
// common/parse_values.h, as the command line's flags read them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dmindex/options.h"

namespace dmindex {

// Sets field `name` from `value`: NotFound if no field has that name (a design knob, for
// ParseIndexOptions); InvalidArgument "option <name>: why" for a bad value, *o unchanged.
Status SetIndexOptionField(IndexOptions* o, std::string_view name, std::string_view value);
// The fields' names, in IndexOptions' order.
std::vector<std::string> IndexOptionFieldNames();

}  // namespace dmindex
