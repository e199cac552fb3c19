// Wire formats of an offloaded operation (offload.h). A request names the subtree root, the
// operation, the node layout to decode with, the key and a write's value; a reply the outcome
// and what the compute node needs to bring its cache up to date.
//
// The u64 format with a value of up to 8 bytes - the fast path - is DEX's 32-byte request
// and 56-byte reply, key and value in their words, so its bytes per operation did not change
// with byte strings. Everything else follows the fixed part:
//
//   request:  OffloadWire [BytesWire key bytes] [value bytes | WireBlock]
//             (BytesWire and the key in the bytes format; a WireBlock when kValueBlock: the
//             value is already in its block, u64 format included)
//   reply:    OffloadResult [separator bytes] [value bytes]
//             (bytes format: a split's separator and a lookup's inline value; the u64
//             format carries both in the result's words)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "designs/dex/dex_keys.h"
#include "designs/dex/offload.h"
#include "dmindex/global_address.h"
#include "fabric/rpc.h"
#include "tree/tree_options.h"

namespace dmindex::designs::dex {

struct OffloadWire {
  static constexpr uint8_t kBytesFormat = 1;       // byte-string keys, slotted nodes
  static constexpr uint8_t kValueBlock = 2;        // the value is in a block: a WireBlock follows
  static constexpr uint8_t kSuffixTruncation = 4;  // bytes format: TreeOptions::suffix_truncation
  static constexpr uint8_t kValueRefs = 8;         // bytes format: leaves may hold block references

  uint64_t start = 0;       // GlobalAddress of the subtree root (on the serving memory node)
  uint64_t key = 0;         // u64 format: the key
  uint64_t value = 0;       // u64 format: an inline value's bytes (value_len of them)
  uint32_t node_bytes = 0;
  uint8_t op = 0;
  uint8_t level = 0;        // expected level of `start`
  uint8_t value_len = 0;    // u64 format: bytes of `value` in use (at most 8)
  uint8_t flags = 0;
};
static_assert(sizeof(OffloadWire) == 32);

// Bytes format: the slotted layout's limits and the lengths of key and inline value.
struct BytesWire {
  uint16_t max_key_bytes = 0;
  uint16_t inline_value_bytes = 0;
  uint16_t key_len = 0;
  uint16_t value_len = 0;
};
static_assert(sizeof(BytesWire) == 8);

// A value block reference (tree/value_block.h).
struct WireBlock {
  uint64_t addr = 0;
  uint32_t read_bytes = 0;
  uint8_t exact = 0;
  uint8_t pad[3] = {};
};
static_assert(sizeof(WireBlock) == 16);

struct OffloadResult {
  enum Outcome : uint8_t {
    kDone,      // applied; a lookup's value is in the reply
    kNotFound,  // lookup, update or delete of an absent key
    kFallback,  // refused (structure change, foreign pointer, stale path): take the normal path
  };
  static constexpr uint8_t kValueInBlock = 1;  // lookup: the value is in the block `value` names
  static constexpr uint8_t kOldBlock = 2;      // write: it unlinked the block `value` names
  static constexpr uint8_t kUnderfull = 4;     // delete: the leaf is underfull (the compute node may merge)

  Outcome outcome = kFallback;
  uint8_t flags = 0;
  uint16_t value_len = 0;       // a lookup's inline value: in `value` (u64 format) or the tail
  uint32_t remaining = 0;       // entries left in the written leaf
  uint64_t value = 0;           // u64 format: inline value bytes; or a block's address (flags)
  uint64_t written = 0;         // GlobalAddress of the leaf written back, or a lookup answered from
  // An insert that split the leaf: the new right sibling, when the compute node must still
  // link it into the leaf's parent (which it caches), and the separator (its low fence).
  uint64_t split_sibling = 0;
  uint64_t separator = 0;       // u64 format; the bytes format's follows in the tail
  uint64_t parent_written = 0;  // the leaf's parent in the subtree, if the handler linked it
  uint8_t split_here = 0;       // 1: the handler split the leaf and linked the sibling itself
  uint8_t block_exact = 0;      // the block reference's exact flag
  uint16_t separator_len = 0;   // bytes format: separator bytes in the tail
  uint32_t block_bytes = 0;     // the block reference's read_bytes
};
static_assert(sizeof(OffloadResult) == 56);

// ---- compute side ----------------------------------------------------------------------

// The request to finish `req` at the subtree root `start` (level `level`) of a tree with
// options `o`.
template <typename KV>
void EncodeRequest(const OffloadRequest<KV>& req, const tree::TreeOptions& o, GlobalAddress start,
                   uint8_t level, std::vector<std::byte>* out);

template <typename KV>
struct OffloadReply {
  OffloadResult r;
  typename KV::Key separator{};  // of a split the compute node links (r.split_sibling)
  std::string value;             // a lookup's inline value
  tree::ValueBlockRef block;     // the value's block (lookup) or the one unlinked (write)
};
template <typename KV>
Status DecodeReply(std::span<const std::byte> reply, OffloadReply<KV>* out);

// ---- memory side -----------------------------------------------------------------------

struct WireRequest {
  OffloadWire w;
  bool bytes_format = false;
  tree::TreeOptions layout;   // what the handler's codecs need: node size, key and value limits
  std::string_view key;       // bytes format
  std::string_view value;     // an inline value (both formats)
  tree::ValueBlockRef block;  // kValueBlock
};
// InvalidArgument for a request that is short, names another operation or lengths over the
// limits it names.
Result<WireRequest> DecodeRequest(fabric::RpcRequest request);
// Appends `r` and, in the bytes format, `separator` (if r names a sibling to link) and the
// inline `value`; in the u64 format both go into r's words.
void EncodeReply(OffloadResult r, bool bytes_format, std::string_view separator, std::string_view value,
                 fabric::RpcReply* out);

}  // namespace dmindex::designs::dex
