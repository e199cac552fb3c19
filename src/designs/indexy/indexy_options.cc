#include "designs/indexy/indexy_options.h"

#include <bit>

#include "common/knobs.h"

namespace dmindex::designs::indexy {

const char* XKindName(XKind x) { return x == XKind::kArt ? "art" : "btree"; }
const char* ReleasePolicyName(ReleasePolicy p) { return p == ReleasePolicy::kDensity ? "density" : "clock"; }

Result<IndexyOptions> ResolveIndexyOptions(const IndexOptions& index) {
  IndexyOptions o;
  o.node_bytes = index.node_bytes;
  for (const auto& [knob, v] : index.knobs) {
    bool store_knob = false;
    DMX_RETURN_IF_ERROR(tiering::ApplyColdStoreKnob(knob, v, &o.y, &store_knob));
    if (store_knob) continue;
    uint64_t n = 0;
    if (knob == "x") {
      if (v == "art") o.x = XKind::kArt;
      else if (v == "btree") o.x = XKind::kBtree;
      else return BadKnob(knob, v, "art or btree");
    } else if (knob == "y") {
      if (v != "rocksdb" && v != "lmdb" && v != "mem" && v != "btree")
        return BadKnob(knob, v, "rocksdb, lmdb, btree or mem");
      o.y.kind = v;
    } else if (knob == "limit_mb") {
      double mb = 0;
      DMX_RETURN_IF_ERROR(KnobReal(knob, v, {1.0 / 1024, 1 << 20}, &mb));
      o.limit_bytes = static_cast<uint64_t>(mb * (1 << 20));
    } else if (knob == "high") {
      DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0.01, 1}, &o.high));
    } else if (knob == "low") {
      DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0.01, 1}, &o.low));
    } else if (knob == "stall") {
      DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0.01, 2}, &o.stall));
    } else if (knob == "stall_ms") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 0, 60'000, &o.stall_ms));
    } else if (knob == "release") {
      if (v == "density") o.release = ReleasePolicy::kDensity;
      else if (v == "clock") o.release = ReleasePolicy::kClock;
      else return BadKnob(knob, v, "density or clock");
    } else if (knob == "clean") {
      DMX_RETURN_IF_ERROR(KnobSwitch(knob, v, &o.clean));
    } else if (knob == "clean_from") {
      DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0, 1}, &o.clean_from));
    } else if (knob == "unit_depth") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 8, &n));
      o.unit_depth = static_cast<uint32_t>(n);
    } else if (knob == "sample") {
      DMX_RETURN_IF_ERROR(KnobCount(knob, v, 1, 65536, &n));
      if (!std::has_single_bit(n)) return BadKnob(knob, v, "a power of two in [1, 65536]");
      o.sample_shift = static_cast<uint32_t>(std::countr_zero(n));
    } else if (knob == "margin") {
      DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0, 10}, &o.margin));
    } else if (knob == "gap") {
      DMX_RETURN_IF_ERROR(KnobReal(knob, v, {0, 10}, &o.gap));
    } else {
      return Status::InvalidArgument("indexy: unknown knob '" + knob +
                                     "' (known: x, y, limit_mb, high, low, stall, stall_ms, release, clean, "
                                     "clean_from, unit_depth, sample, margin, gap, y_dir, y_keep, y_buffer_mb, "
                                     "y_cache_mb, y_row_cache_mb, y_block_kb, y_page_kb, y_direct, y_meta_cached)");
    }
  }
  if (o.low > o.high)
    return Status::InvalidArgument("indexy: knob low (" + std::to_string(o.low) + ") above knob high (" +
                                   std::to_string(o.high) + ")");
  if (o.stall < o.high)
    return Status::InvalidArgument("indexy: knob stall (" + std::to_string(o.stall) +
                                   ") below knob high (" + std::to_string(o.high) +
                                   "): writers would wait before any release starts");
  return o;
}

}  // namespace dmindex::designs::indexy
