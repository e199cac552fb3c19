// IndeXY's options, set by its knobs (IndexOptions::knobs, e.g.
// `indexy:x=art:y=rocksdb:limit_mb=64`). Defaults follow the paper and its code (digest §10),
// scaled to this machine. The knobs are declared once, in the table of indexy_options.cc
// (`dmindex knobs indexy`; docs/INDEXY.md includes it, with the reasons).
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
