// IndeXY's knobs (IndexOptions::knobs, e.g. `indexy:x=art:y=rocksdb:limit_mb=64`). Defaults
// follow the paper and its code (digest §10), scaled to this machine; docs/INDEXY.md lists
// them with the reasons.
//
//   x           art|btree      the in-memory index X (adaptive radix tree; the local B+-tree)
//   y           rocksdb|lmdb|btree|mem  the on-disk index Y (btree: btree-disk's paged B+-tree,
//                              the paper's ART-B+; mem: in memory, for tests)
//   limit_mb    real > 0       X's memory limit in MiB (X's own bytes, not RSS); 0.25 = 256 KiB
//   high, low   (0,1]          watermarks as fractions of the limit (0.95, 0.94): release starts
//                              at high and frees down to low
//   stall       (0,2]          writers wait while X is at this fraction of the limit (0.98)
//   stall_ms    n              the longest a writer waits for room before it goes on (100)
//   release     density|clock  Algorithm 1 of the paper (fixed to terminate), or the authors'
//                              code's second-chance walk
//   clean       on|off         pre-cleaning of dirty units by the background thread
//   clean_from  [0,1]          pre-cleaning starts once X reached this fraction of the limit
//   unit_depth  1..8           depth of the units cleaned and released (counters down to it)
//   sample      1..65536       one in `sample` operations updates the counters (power of 2)
//   margin, gap [0,10]         Algorithm 1's release margin (fraction of the target) and its
//                              density-variation threshold (fraction of the parent's density)
//   y_dir       path           parent of Y's own fresh directory (default: the temp dir)
//   y_keep      on|off         keep Y's directory after Close
//   y_buffer_mb, y_cache_mb    RocksDB memtable and block cache (16 each); y=btree: its buffer pool
//   y_page_kb   n              y=btree: its page size (4)
//   y_block_kb  n              RocksDB data block size (4)
//   y_direct    on|off         RocksDB direct I/O for reads, flushes and compactions (off)
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/knob_table.h"
#include "dmindex/options.h"
#include "dmindex/status.h"
#include "tiering/cold_store_options.h"

namespace dmindex::designs::indexy {

enum class XKind : uint8_t { kArt, kBtree };
enum class ReleasePolicy : uint8_t { kDensity, kClock };

struct IndexyOptions {
  XKind x = XKind::kArt;
  tiering::ColdStoreOptions y;
  uint64_t limit_bytes = 256ull << 20;
  double high = 0.95;
  double low = 0.94;
  double stall = 0.98;
  uint64_t stall_ms = 100;
  ReleasePolicy release = ReleasePolicy::kDensity;
  bool clean = true;
  double clean_from = 0.8;
  uint32_t unit_depth = 2;
  uint32_t sample_shift = 4;  // one in 16, as the authors' code
  double margin = 0.1;
  double gap = 0.2;
  uint32_t node_bytes = 1024;  // X = btree: its node size (IndexOptions::node_bytes)

  uint64_t high_bytes() const { return static_cast<uint64_t>(high * static_cast<double>(limit_bytes)); }
  uint64_t low_bytes() const { return static_cast<uint64_t>(low * static_cast<double>(limit_bytes)); }
  uint64_t stall_bytes() const { return static_cast<uint64_t>(stall * static_cast<double>(limit_bytes)); }
  // A thread frees what it retired every this many bytes (x_art.h): a small share of the limit.
  uint64_t reclaim_bytes() const { return std::clamp<uint64_t>(limit_bytes / 256, 256, 1 << 20); }
  uint64_t clean_bytes() const { return static_cast<uint64_t>(clean_from * static_cast<double>(limit_bytes)); }
};

// InvalidArgument naming the knob for an unknown knob or a bad value (low above high, ...).
Result<IndexyOptions> ResolveIndexyOptions(const IndexOptions& index);
// IndeXY's knobs with their defaults, for `dmindex knobs` and docs/INDEXY.md.
std::vector<KnobDoc> IndexyKnobDocs();

const char* XKindName(XKind x);
const char* ReleasePolicyName(ReleasePolicy p);

}  // namespace dmindex::designs::indexy
