// Catalog: the table of named indexes in the superblock at a fixed address on memory node 0,
// so several compute processes can open the same index. Each entry records the design and
// node size it was created with, the 8-byte root pointer word (designs change it with CAS)
// and a few design-specific words (DEX's partition map, XStore's model, ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dmindex/global_address.h"
#include "dmindex/options.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"

namespace dmindex::alloc {

// The key format and limits an index was created with: stored in its entry, so a second
// opener cannot read the index with other rules. u64 indexes store their fixed sizes (8-byte
// keys, 8 value bytes inline), whatever the opener's byte-format fields say.
struct KeySchema {
  KeyFormat format = KeyFormat::kU64;
  uint32_t max_key_bytes = kU64KeyBytes;
  uint32_t inline_value_bytes = 8;
  uint32_t max_value_bytes = 1u << 20;

  static KeySchema Of(const IndexOptions& options);
  std::string ToString() const;  // "u64 keys, values inline up to 8 of at most 1048576 bytes"
  friend bool operator==(const KeySchema&, const KeySchema&) = default;
};

// What an index is created as.
struct CatalogSpec {
  std::string design;
  uint32_t node_bytes = 0;
  KeySchema schema;
  // The fabric's memory nodes: the entry records the identities of the pools of nodes
  // 1..kRecordedPools (node 0's is the catalog's own), so an index whose memory was in a pool
  // that is gone is NotFound, never read as zeroed or foreign memory.
  uint16_t memory_nodes = 1;
};

struct CatalogEntry {
  static constexpr int kAuxWords = 6;

  std::string name;
  std::string design;
  uint32_t node_bytes = 0;
  KeySchema schema;
  uint32_t slot = 0;
  GlobalAddress root_word;  // remote 8-byte word holding the root node's GlobalAddress
  GlobalAddress aux_word(int i) const { return root_word + 8 * (1 + i); }
};

class Catalog {
 public:
  static constexpr uint32_t kFormatVersion = 2;  // 2: entries carry the key schema
  static constexpr size_t kMaxNameBytes = 31;
  static constexpr size_t kMaxDesignBytes = 15;
  static constexpr uint16_t kRecordedPools = 6;  // pools of nodes 1..6 checked on open

  // Opens entry `name`, or creates it (root and aux words zero) if absent. Two processes
  // racing to create one name get one entry: exactly one of them sees *created = true.
  // InvalidArgument if it exists with another design, node size or key schema (naming the
  // stored ones). Without `create_if_missing` an absent entry is NotFound, as from Open. An
  // entry whose memory nodes' pools changed since it was created (a volatile pool's server
  // restarted) is absent: NotFound saying so, or dropped and created anew.
  static Result<CatalogEntry> OpenOrCreate(fabric::Endpoint& ep, std::string_view name,
                                           const CatalogSpec& spec, bool* created,
                                           bool create_if_missing = true);
  // Opens an existing entry; NotFound if there is none, saying when memory node 0's pool
  // was created (a memory server that restarted lost every index it held), or if a pool it
  // had memory in is gone.
  static Result<CatalogEntry> Open(fabric::Endpoint& ep, std::string_view name);
  // Every ready entry, in slot order.
  static Result<std::vector<CatalogEntry>> List(fabric::Endpoint& ep);
  // Frees the slot of entry `name` for a new index. Its nodes stay in the pool (chunks are
  // not tracked per index); no process may still have it open. NotFound if absent.
  static Status Drop(fabric::Endpoint& ep, std::string_view name);
};

}  // namespace dmindex::alloc
