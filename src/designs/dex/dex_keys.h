// The key formats DEX is built for. Its tree, cache pages, partition map and offload wire are
// templates over the tree core's key/value traits (tree/key_traits.h), instantiated twice:
//   U64Format   u64 keys in the fixed format's 24-byte slots, byte-string values (up to 8
//               bytes in the slot, longer ones out of line in value blocks): the fast path,
//               with the layout, verbs and wire sizes DEX had with integer values;
//   BytesFormat byte-string keys in slotted nodes (prefix truncation, shortest separators),
//               values up to the index's inline limit in the leaf, longer ones out of line.
// The public byte strings are converted at the index's boundary (tree/public_keys.h); the
// partition map in the pool holds boundaries as the public strings (partition_store.h).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "tree/key_traits.h"
#include "tree/public_keys.h"

namespace dmindex::designs::dex {

using U64Format = tree::U64BytesKV;
using BytesFormat = tree::BytesKV;

// Whether KV's nodes are slotted (byte-string keys: variable-length headers and entries).
template <typename KV>
inline constexpr bool kSlotted = std::is_same_v<typename KV::Layout, tree::SlottedLayout>;

// Partitioning::RouteKey's answer in a format's keys.
template <typename Keys>
struct KeyRoute {
  uint32_t compute_node = 0;
  typename Keys::Key begin = tree::PublicKeys<Keys>::Lowest();
  std::optional<typename Keys::Key> end;
  bool hosted = true;
};

}  // namespace dmindex::designs::dex
