// Byte sizes as people type them on command lines: "4096", "64K", "32M", "4G" (binary
// multiples, case-insensitive, optional trailing "B" or "iB").
#pragma once

#include <cstdint>
#include <string_view>

#include "dmindex/status.h"

namespace dmindex {

// InvalidArgument with the offending text on anything else (empty, negative, fractions,
// unknown suffixes, overflow of 64 bits).
Result<uint64_t> ParseByteSize(std::string_view text);

}  // namespace dmindex
