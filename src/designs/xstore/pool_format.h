// What XStore keeps in the pool, byte for byte (docs/XSTORE.md, "In the pool"). Everything a
// compute node reads of it one-sidedly is validated by a check word (tree/node_check.h's
// HeaderCheck), so a torn READ, or one of memory since given to another record, is never used.
//
//   superblock (memory node 0; the catalog entry's root word points at it; immutable):
//     the partitions: each one's descriptor and low boundary key
//   descriptor (one per partition p, on memory node p, 128 bytes):
//     +0 the XTree's root word (tree core), +8 the model word (the current model set, a
//     packed reference), +16.. counters the memory server keeps (trainings, retrains,
//     expansions, keys in the current models, pool bytes); +64.. the configuration the
//     server builds its tree and trainer from (immutable, checked)
//   model set (immutable): epoch, the top model (its knots), the byte-key projection (prefix
//     and alphabet: a model and the projection it was trained on are published together),
//     and the directory: one word per sub-model, the packed reference to its current blob
//   sub-model blob (immutable): the page model and its translation table, one 8-byte entry
//     per logical leaf (leaf offset, incarnation at training, entry count at training)
//
// A new sub-model is published by one 8-byte WRITE of its directory word, a new model set by
// one 8-byte WRITE of the model word: no reader sees half of either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dmindex/global_address.h"
#include "dmindex/options.h"
#include "learned/key_projection.h"
#include "learned/page_model.h"
#include "learned/top_model.h"

namespace dmindex::designs::xstore {

// A reference to a record on a known memory node in one word: offset / 64 (36 bits, pools
// of up to 4 TiB) and the record's size in bytes (28 bits), so one READ fetches it.
struct PackedRef {
  GlobalAddress addr;
  uint32_t bytes = 0;

  static uint64_t Pack(GlobalAddress a, uint32_t bytes) { return (a.offset() >> 6) | (uint64_t{bytes} << 36); }
  static PackedRef Unpack(uint64_t word, uint16_t node) {
    return {GlobalAddress(node, (word & ((uint64_t{1} << 36) - 1)) << 6), static_cast<uint32_t>(word >> 36)};
  }
};

// One translation-table entry: a leaf's address (its offset; the node is the partition's),
// its incarnation and entry count when the sub-model was trained.
struct TableEntry {
  static constexpr uint64_t kIncarnationMask = (1u << 20) - 1;
  uint64_t offset = 0;
  uint32_t incarnation = 0;  // low 20 bits
  uint32_t count = 0;        // saturates at 255

  static uint64_t Pack(GlobalAddress leaf, uint64_t incarnation, uint32_t count);
  static TableEntry Unpack(uint64_t word);
  static bool SameIncarnation(uint32_t packed, uint64_t incarnation) {
    return packed == (incarnation & kIncarnationMask);
  }
};

// The configuration a memory server builds a partition's tree and trainer from.
struct PartitionConfig {
  KeyFormat format = KeyFormat::kU64;
  uint16_t partition = 0;
  uint32_t node_bytes = 0;
  uint32_t max_key_bytes = 0;
  uint32_t inline_value_bytes = 0;
  uint32_t max_value_bytes = 0;
  uint32_t keys_per_model = 32;
  uint32_t expand_at = 48;
  uint32_t train_threads = 1;
  uint32_t top_segments = 16;
  bool retrain = true;
  bool validate = true;
};

namespace descriptor {
inline constexpr uint32_t kBytes = 128;
inline constexpr uint32_t kRootWord = 0;
inline constexpr uint32_t kModelWord = 8;
inline constexpr uint32_t kTrainings = 16;   // full trainings published (initial + expansions)
inline constexpr uint32_t kRetrains = 24;    // sub-models retrained and published
inline constexpr uint32_t kExpansions = 32;  // model sets published with more sub-models
inline constexpr uint32_t kKeys = 40;        // keys the current models were fitted on
inline constexpr uint32_t kPoolBytes = 48;   // bytes of the partition's nodes, value blocks, models
inline constexpr uint32_t kConfigOff = 64;
void EncodeConfig(const PartitionConfig& c, std::byte* descriptor);
// False if the configuration's check word does not match (torn, or no descriptor).
bool DecodeConfig(const std::byte* descriptor, PartitionConfig* c);
}  // namespace descriptor

// The superblock: where each partition's descriptor is and the lowest key it holds
// (partition 0's: empty, below every key). Keys in the public API's bytes (u64: 8 big-endian).
struct Superblock {
  struct Partition {
    GlobalAddress descriptor;
    std::string low;
  };
  std::vector<Partition> partitions;

  std::vector<std::byte> Encode() const;
  // Bytes to READ first: the fixed head says how long the whole record is.
  static constexpr uint32_t kHeadBytes = 24;
  static uint32_t TotalBytes(const std::byte* head);
  static bool Decode(const std::byte* image, uint32_t bytes, Superblock* out);
};

// A model set: what routes a key to a sub-model.
struct ModelSetRecord {
  uint64_t epoch = 0;
  learned::TopModel top;
  std::string prefix;        // the byte-key projection's (bytes format)
  learned::BytesProjection::Alphabet alphabet = learned::BytesProjection::kAllBytes;  // likewise
  GlobalAddress directory;   // `top.models()` words, on the partition's node
  uint64_t keys = 0;         // keys fitted at training

  std::vector<std::byte> Encode() const;
  static bool Decode(const std::byte* image, uint32_t bytes, ModelSetRecord* out);
};

// A sub-model: its page model and translation table.
struct SubModelRecord {
  uint64_t epoch = 0;
  uint32_t id = 0;
  uint64_t generation = 0;  // 1 at a full training, +1 per retraining
  uint64_t keys = 0;        // keys fitted
  learned::PageModel model;
  std::vector<uint64_t> table;  // TableEntry words, one per page

  static constexpr uint32_t kHeadBytes = 96;
  uint32_t Bytes() const { return kHeadBytes + 8 * static_cast<uint32_t>(table.size()); }
  std::vector<std::byte> Encode() const;
  static bool Decode(const std::byte* image, uint32_t bytes, SubModelRecord* out);
};

}  // namespace dmindex::designs::xstore
