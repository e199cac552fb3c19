#include "tree/node_check.h"

// Header-only use of the packaged xxHash (libxxhash-dev): XXH3 is a strong 64-bit hash and
// fast on the few hundred bytes hashed per node.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dmindex::tree {
namespace {

// Distinct seeds per kind of check, so a header can never validate as a slot or body.
constexpr uint64_t kHeaderSeed = 0x6d78696e64657848ull;  // "Hxednixm"
constexpr uint64_t kSlotSeed = 0x53686572536c6f74ull;
constexpr uint64_t kBodySeed = 0x426f647943686b21ull;
constexpr uint64_t kRecordSeed = 0x5265636f72644b56ull;
constexpr uint64_t kSlottedBodySeed = 0x536c6f7474656442ull;

// Folds a 64-bit word into a seed (splitmix64 finaliser): every bit of the input changes the
// seed, so different (version, slot) pairs give independent XXH3 functions.
uint64_t Mix(uint64_t seed, uint64_t word) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull + word;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t HeaderCheck(const std::byte* header_after_check, size_t len) {
  return XXH3_64bits_withSeed(header_after_check, len, kHeaderSeed);
}

SlotSeed SlotSeedFor(uint64_t version) { return {Mix(kSlotSeed, version)}; }

uint64_t SlotCheck(const std::byte* key_and_value, size_t len, SlotSeed seed, uint32_t slot, bool tomb) {
  const uint64_t position = (uint64_t{slot} << 1) | (tomb ? 1 : 0);
  return XXH3_64bits_withSeed(key_and_value, len, Mix(seed.mixed, position));
}

uint64_t SlotCheckWithFlags(const std::byte* key_and_value, size_t len, SlotSeed seed, uint32_t slot,
                            uint64_t flags) {
  const uint64_t position = (uint64_t{slot} << 8) | flags | (uint64_t{1} << 7);
  return XXH3_64bits_withSeed(key_and_value, len, Mix(seed.mixed, position));
}

uint64_t BodyCheck(const std::byte* entries, size_t len, uint64_t version) {
  return XXH3_64bits_withSeed(entries, len, Mix(kBodySeed, version));
}

uint64_t RecordCheck(uint64_t slot_word, const std::byte* record, size_t len, uint64_t version,
                     uint32_t slot, bool tomb) {
  const uint64_t position = (uint64_t{slot} << 1) | (tomb ? 1 : 0);
  return XXH3_64bits_withSeed(record, len, Mix(Mix(Mix(kRecordSeed, version), position), slot_word));
}

uint64_t SlottedBodyCheck(const std::byte* slots, size_t slots_len, const std::byte* heap,
                          size_t heap_len, uint64_t version) {
  const uint64_t of_slots = XXH3_64bits_withSeed(slots, slots_len, Mix(kSlottedBodySeed, version));
  return XXH3_64bits_withSeed(heap, heap_len, Mix(of_slots, heap_len));
}

}  // namespace dmindex::tree
