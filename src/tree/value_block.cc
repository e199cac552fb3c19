#include "tree/value_block.h"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dmindex::tree::value_block {
namespace {

constexpr uint64_t kOwnerSeed = 0x4f776e65724b6579ull;
constexpr uint64_t kBlockSeed = 0x56616c7565426c6bull;
constexpr uint32_t kLinearClasses = 15;  // 64, 128, ..., 960

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9E3779B97F4A7C15ull + b;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Load(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void Store(std::byte* p, uint64_t v) { std::memcpy(p, &v, 8); }

}  // namespace

uint32_t ClassBytes(uint32_t c) {
  if (c < kLinearClasses) return 64 * (c + 1);
  const uint32_t k = c - kLinearClasses;  // 1024 * (4 + k % 4) / 4 * 2^(k / 4)
  return (4 + k % 4) << (k / 4 + 8);
}

uint32_t ClassFor(uint64_t bytes) {
  for (uint32_t c = 0; c < kClasses; ++c)
    if (ClassBytes(c) >= bytes) return c;
  return kClasses;
}

uint64_t MaxValueBytes() { return ClassBytes(kClasses - 1) - kHeaderBytes; }

uint64_t OwnerOf(uint64_t key) { return Mix(kOwnerSeed, key); }
uint64_t OwnerOf(std::string_view key) { return XXH3_64bits_withSeed(key.data(), key.size(), kOwnerSeed); }

void Encode(std::byte* block, uint64_t owner, std::string_view value) {
  Store(block + 8, owner);
  Store(block + 16, value.size());
  std::memcpy(block + kHeaderBytes, value.data(), value.size());
  Store(block, XXH3_64bits_withSeed(value.data(), value.size(), Mix(Mix(kBlockSeed, owner), value.size())));
}

bool Decode(const std::byte* block, uint32_t bytes, uint64_t owner, int64_t expect_length,
            std::string* value) {
  if (bytes < kHeaderBytes || Load(block + 8) != owner) return false;
  const uint64_t length = Load(block + 16);
  if (length > bytes - kHeaderBytes || (expect_length >= 0 && length != static_cast<uint64_t>(expect_length)))
    return false;
  const std::byte* v = block + kHeaderBytes;
  if (Load(block) != XXH3_64bits_withSeed(v, length, Mix(Mix(kBlockSeed, owner), length))) return false;
  value->assign(reinterpret_cast<const char*>(v), length);
  return true;
}

}  // namespace dmindex::tree::value_block
