// What an index is opened with (IndexOptions) and how it is read (ReadOptions).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "dmindex/status.h"
#include "dmindex/types.h"

namespace dmindex {

// The largest IndexOptions::node_bytes (one limit for every design and tool).
inline constexpr uint32_t kMaxNodeBytes = 64 * 1024;
// IndexOptions::node_bytes: size the nodes from the key limits.
inline constexpr uint32_t kAutoNodeBytes = 0;

struct IndexOptions {
  // The index design: Index::Designs() lists them (local, naive, sherman, rftree, dex, xstore;
  // with dmindex::baselines linked also the baseline absl, indexy, rocksdb, lmdb, btree-disk);
  // docs/API.md says where each lives.
  std::string design = "sherman";
  // The index's name: its catalog entry on the cluster (designs in the cluster's pool), so
  // several processes can open one index, or its folder under `directory` (rocksdb, lmdb).
  std::string name = "default";
  // Create the index if there is none of this name (as RocksDB's option). Off: an absent
  // index is NotFound, e.g. one lost when its memory server restarted (pools are volatile),
  // instead of a new empty index. A design whose index cannot outlive its Index object
  // (local, absl, indexy, btree-disk; rocksdb and lmdb without a directory) refuses it with
  // InvalidArgument: there is never one to reopen.
  bool create_if_missing = true;
  // Where rocksdb and lmdb keep the index: the folder <directory>/<name>, created if missing
  // and reopened by name with its data (and the key format it was created with). Empty: a
  // fresh temporary folder removed at Close. The other designs keep their data in the
  // cluster's pool or in this process's memory and refuse a directory (InvalidArgument).
  std::string directory;
  // Keys: bytes (1 .. max_key_bytes of any bytes: the default, what an ordered store's user
  // expects) or u64 (8-byte big-endian integers, the fixed-size fast path of the papers'
  // figures); types.h. Stored with the index: a second opener must ask for the same format
  // and limits (InvalidArgument naming the stored ones otherwise).
  KeyFormat key_format = KeyFormat::kBytes;
  uint32_t max_key_bytes = 255;  // bytes format: 1 .. kMaxKeyBytes; u64: always 8
  // Values of up to inline_value_bytes live in the leaf (a lookup is one READ with the inner
  // nodes cached); larger ones, up to max_value_bytes, out of line in the pool (one READ
  // more). The u64 format's slots hold 8 value bytes inline.
  uint32_t inline_value_bytes = 128;
  uint32_t max_value_bytes = 1u << 20;
  // Tree node size; fan-out follows from it. A multiple of 64 (a cache line) up to
  // kMaxNodeBytes, and room for a few entries (each design names its minimum when refusing).
  // kAutoNodeBytes (the default): sized from the key limits when the index is opened - 1024
  // bytes, or the smallest node that holds a few of the longest keys and inline values if
  // that is more (2304 bytes for the default 255-byte keys and 128-byte inline values);
  // Index::options() shows the size chosen.
  uint32_t node_bytes = kAutoNodeBytes;
  uint64_t cache_bytes = 64ull << 20;  // per compute node, for designs that cache
  uint32_t compute_nodes = 1;          // logical compute nodes hosted by this process
  double bulk_fill = 0.8;              // leaf fill factor of BulkLoad
  // Design-specific switches by name, e.g. {"hocl","off"}, so benchmarks can ablate
  // techniques without recompiling. Unknown knobs are InvalidArgument.
  std::map<std::string, std::string> knobs;
};

// Options from a string, "design=sherman;node_bytes=2048;hocl=off": `name=value` items
// separated by ';' applied on top of *options. The names are IndexOptions' fields (design,
// name, create_if_missing, directory, key_format, max_key_bytes, inline_value_bytes,
// max_value_bytes, node_bytes, cache_bytes, compute_nodes, bulk_fill; numbers in bytes),
// read by the parser of the command line's flags and of the C API's dmindex_options_set; any
// other name is a design knob, checked by the design when the index is opened.
// InvalidArgument naming the bad item; *options is unchanged then.
Status ParseIndexOptions(std::string_view text, IndexOptions* options);

// How Index::Drop treats the other handles of the index (docs/OPERATIONS.md, "Drop").
struct DropOptions {
  // false: any other handle of the index - another process's, or another in this one -
  // makes the drop Busy, naming the processes. true: handles whose process stopped renewing
  // its lease for the lease's length and a quarter (dead, or stalled) are fenced - their
  // lease revoked, so they never write again - and the drop goes on; it waits that long at
  // most. Handles of live processes still make it Busy. (`dmindex indexes --drop --force`.)
  bool force = false;
};

struct ReadOptions {
  // Iteration stops before this key: the range is [Seek target, upper_bound), half-open as
  // RocksDB's iterate_upper_bound. Designs do not read past it.
  std::optional<std::string> upper_bound;
  // Iteration stops at this key going backwards (it is included), as RocksDB's
  // iterate_lower_bound: SeekToFirst starts here, Prev and SeekForPrev do not go below it.
  std::optional<std::string> lower_bound;
  // Prefix mode (RocksDB's prefix_same_as_start with a fixed-length prefix extractor): with
  // prefix_bytes > 0, a Seek or SeekForPrev to a target confines the iteration to the keys
  // that share the target's first prefix_bytes bytes (within the bounds above). The iterator
  // reads no key outside the prefix. SeekToFirst and SeekToLast are not confined.
  uint32_t prefix_bytes = 0;
  // How many entries the caller expects to read: designs that can fetch several leaves in
  // one round trip fetch enough for this many (0: one leaf at a time).
  size_t readahead = 0;
};

}  // namespace dmindex
