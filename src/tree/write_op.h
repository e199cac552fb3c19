// The point writes, and what a leaf codec answers when asked to apply one to a single entry
// (Sherman's entry-level write-back, two_level): which bytes of the node to WRITE, in order.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace dmindex::tree {

// Upsert inserts or overwrites; Update and Delete need the key.
enum class WriteOp { kUpsert, kUpdate, kDelete };

// CompareAndSwap's condition on a kUpdate: the key's value must be `expected`, compared
// under the leaf's lock (TreeWriter::Write), so no write lands between compare and swap.
struct CompareValue {
  std::string_view expected;
  bool* swapped = nullptr;         // set: the update was applied
  std::string* current = nullptr;  // the value found when it was not `expected`
};

struct EntryWrite {
  enum class Outcome {
    kNotFound,  // an Update or Delete of an absent key: nothing changed
    kWhole,     // cannot be done in place (sorted leaf, no free slot or space): rewrite or split
    kWritten,   // the image changed; WRITE `regions` in this order (a later one may only
                // land after the earlier ones: a record before the slot that points at it)
  };
  struct Region {
    uint32_t offset = 0;
    uint32_t length = 0;
  };
  Outcome outcome = Outcome::kWhole;
  uint32_t count = 0;
  std::array<Region, 2> regions{};

  void Add(uint32_t offset, uint32_t length) { regions[count++] = {offset, length}; }
};

}  // namespace dmindex::tree
