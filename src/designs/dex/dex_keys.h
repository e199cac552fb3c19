// DEX stores the u64 key format (8-byte integer keys and values: its pages, partition map,
// offload requests and host leases all carry integers); the adapter (dex_index.cc) converts
// the public byte strings at the boundary.
#pragma once

#include <cstdint>
#include <optional>

#include "common/u64.h"

namespace dmindex::designs::dex {

using u64::Key;
using u64::Value;
using u64::KeyValue;
using u64::kMinKey;
using u64::kMaxKey;
using u64::IsValidKey;

// Partitioning::RouteKey's answer in DEX's integers.
struct KeyRoute {
  uint32_t compute_node = 0;
  Key begin = kMinKey;
  std::optional<Key> end;
  bool hosted = true;
};

}  // namespace dmindex::designs::dex
