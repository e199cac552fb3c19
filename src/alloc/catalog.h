// Catalog: the table of named indexes in the superblock at a fixed address on memory node 0,
// so several compute processes can open the same index. Each entry records the design and
// node size it was created with, the 8-byte root pointer word (designs change it with CAS)
// and a few design-specific words (DEX's partition map, XStore's model, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dmindex/global_address.h"
#include "dmindex/options.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "lease/lease_table.h"

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
  // The tag of the chunks this index's allocators take (NodeAllocatorOptions::owner), which
  // its drop frees on every memory node: the slot and how many indexes were created in it,
  // so never another index's. 0 for an entry created before tags (nothing to free by tag).
  uint64_t owner = 0;
  GlobalAddress root_word;  // remote 8-byte word holding the root node's GlobalAddress
  GlobalAddress aux_word(int i) const { return root_word + 8 * (1 + i); }
};

// How Catalog::Drop treats the index's holders: the public DropOptions (dmindex/options.h).
using DropOptions = ::dmindex::DropOptions;

// An index being dropped (Catalog::MarkDropping): its slot, and the slot's generation.
struct DropMark {
  uint32_t slot = 0;
  uint64_t generation = 0;
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
  // Drops index `name`: MarkDropping, CommitDrop, FinishDrop. Busy, naming them, while other
  // processes (or other handles of this one) hold it open (alloc/index_hold.h): the index
  // stays as it was. Otherwise every chunk taken under its owner tag goes back to its memory
  // server, then the slot is free for a new index. NotFound if absent; an error from a memory
  // node leaves the entry marked, for the next Drop or opener of the name to finish.
  // `owner` not 0: only the index of that owner tag (an opener dropping what it opened, not
  // an index created anew under the name since: NotFound then).
  static Status Drop(fabric::Endpoint& ep, std::string_view name, uint16_t memory_nodes, uint64_t owner = 0,
                     DropOptions options = {});
  // The same over a connection of its own to `fabric`'s memory nodes (Index::Drop).
  static Status Drop(fabric::Fabric& fabric, std::string_view name, uint64_t owner, DropOptions options = {});
  // Index::Drop's first step, taken while the dropping handle is still open: MarkDropping,
  // then CommitDrop not counting `self`, the handle's own registration (none: leases off).
  // Busy (the entry back to ready) leaves the handle as it was, working; Ok commits the
  // drop - no one can open or hold the index any more - and the handle closes, then Drop
  // finishes it.
  static Status PrepareDrop(fabric::Fabric& fabric, std::string_view name, uint64_t owner,
                            DropOptions options, std::optional<lease::HolderId> self);

  // The steps, public so that a test can stop between them as a crash would.
  // Marks the entry: from then on Open and List do not see it, and openers that registered as
  // holders meanwhile back off (NotFound). An entry already marked is returned as is.
  static Result<DropMark> MarkDropping(fabric::Endpoint& ep, std::string_view name, uint64_t owner = 0);
  // A marked entry with holders goes back to ready: Busy naming them. Without, it is committed
  // to the drop (and nobody can hold it any more). Ok if committed or finished already.
  // `self`: a holder that does not count (the dropping handle's own registration: it closes
  // once the drop is committed).
  static Status CommitDrop(fabric::Endpoint& ep, DropMark mark, DropOptions options = {},
                           std::optional<lease::HolderId> self = std::nullopt);
  // Frees the chunks of the committed index on memory nodes 0..memory_nodes-1, then its slot.
  // Ok if it is not committed (finished already).
  static Status FinishDrop(fabric::Endpoint& ep, DropMark mark, uint16_t memory_nodes);
  // CommitDrop, then FinishDrop: what the next Drop or opener does with a marked entry.
  static Status Settle(fabric::Endpoint& ep, DropMark mark, uint16_t memory_nodes, DropOptions options = {});

  // Ok if `entry` is still ready in the generation it was opened in; NotFound if it is being
  // dropped or was dropped (IndexHold: an opener checks after registering).
  static Status CheckStillReady(fabric::Endpoint& ep, const CatalogEntry& entry);
};

}  // namespace dmindex::alloc
