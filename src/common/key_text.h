// Keys (and values) as messages, histories and reports print them: readable whatever bytes
// they hold. Printable ASCII stays text, other bytes are \xHH, and a long key is cut in the
// middle with its length said, so a message stays one line. A u64-format key prints as its
// integer.
#pragma once

#include <string>

#include "dmindex/types.h"

namespace dmindex {

// A bytes key in quotes, e.g. "user1234" or "ab\x00\xff"; a u64-format key as its integer, 42.
std::string KeyText(Slice key, KeyFormat format = KeyFormat::kBytes);
// Bytes as above, without the u64 reading (values, raw keys).
std::string BytesText(Slice bytes);
// Bytes of an input file in a message, escaped as above but neither quoted nor cut: what a
// user typed stays as it was, a binary byte cannot garble the terminal.
std::string EscapedText(Slice bytes);

}  // namespace dmindex
