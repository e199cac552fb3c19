// Out-of-line values: a value longer than the leaf's inline limit lives in a block of its own
// in the pool, and the leaf holds a reference to it (docs/SYNCHRONIZATION.md, "Out-of-line
// values").
//
//   +0   check   XXH3 of the value bytes, seeded by (owner, length)
//   +8   owner   hash of the key the value belongs to
//   +16  length  value bytes
//   +24  value
//
// A block is written whole before a leaf points at it and never changed while it is
// referenced; the writer that replaces or deletes the value retires the block, and it is
// reused only after a grace period no reader's lookup outlasts (ValueLease). The check and
// owner words let a reader also detect a block that does not hold what its reference
// promised (a reader past its lease, a torn READ, a foreign block): it reads the leaf again.
//
// Blocks come in size classes (64-byte steps up to 960 bytes, then four per doubling, up to
// 4 MiB), so freed blocks are reused by values of similar size and a reference can name its
// block's size in 6 bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dmindex/global_address.h"

namespace dmindex::tree {

// Where an out-of-line value lives: the block and how many bytes to READ (its size class's
// bytes, or exactly header + value when the reference knows the length). Null: inline.
struct ValueBlockRef {
  GlobalAddress addr;
  uint32_t read_bytes = 0;
  bool exact = false;  // read_bytes is header + value length (else the block's class size)
  bool is_null() const { return addr.is_null(); }
  // The value's length if the reference knows it, else -1.
  int64_t length() const { return exact ? int64_t{read_bytes} - kHeaderBytesOfRef : -1; }
  static constexpr int64_t kHeaderBytesOfRef = 24;
};

namespace value_block {

inline constexpr uint32_t kHeaderBytes = 24;
static_assert(kHeaderBytes == ValueBlockRef::kHeaderBytesOfRef);
inline constexpr uint32_t kClasses = 64;
inline constexpr uint32_t kClassMask = kClasses - 1;  // classes fit the 6 low bits of an address

// Bytes of size class c (< kClasses), and the smallest class holding `bytes` (kClasses if
// none does).
uint32_t ClassBytes(uint32_t c);
uint32_t ClassFor(uint64_t bytes);
// The longest value a block can hold.
uint64_t MaxValueBytes();

// The owner word of a key's blocks.
uint64_t OwnerOf(uint64_t key);
uint64_t OwnerOf(std::string_view key);

// Writes the block of `value` owned by `owner` into block[0, kHeaderBytes + value.size()).
void Encode(std::byte* block, uint64_t owner, std::string_view value);
// The value of a block image of `bytes` bytes: false unless its header is owner's, its
// length fits and (if expect_length >= 0) is that, and its check matches the bytes.
bool Decode(const std::byte* block, uint32_t bytes, uint64_t owner, int64_t expect_length,
            std::string* value);

}  // namespace value_block
}  // namespace dmindex::tree
