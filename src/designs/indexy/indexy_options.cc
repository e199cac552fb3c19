#include "designs/indexy/indexy_options.h"

#include <bit>

#include "common/knobs.h"

namespace dmindex::designs::indexy {

const char* XKindName(XKind x) { return x == XKind::kArt ? "art" : "btree"; }
const char* ReleasePolicyName(ReleasePolicy p) { return p == ReleasePolicy::kDensity ? "density" : "clock"; }

namespace {

using Table = KnobTable<IndexyOptions>;

Table::Row LimitKnob() {
  return Table::Custom({"limit_mb", KnobKind::kReal, 0, 0, {1.0 / 1024, 1 << 20}, "", "",
                        "X's memory limit, MiB (X's own bytes, not RSS); 0.25 = 256 KiB"},
                       [](const KnobValue& v, IndexyOptions& o) {
                         o.limit_bytes = static_cast<uint64_t>(v.real * (1 << 20));
                         return Status::Ok();
                       },
                       [](const IndexyOptions& o) { return FormatNumber(static_cast<double>(o.limit_bytes) / (1 << 20)); });
}

Table::Row SampleKnob() {
  return Table::Custom({"sample", KnobKind::kCount, 1, 65536, {}, "", "",
                        "one in `sample` operations updates the counters (a power of two)"},
                       [](const KnobValue& v, IndexyOptions& o) {
                         if (!std::has_single_bit(v.count)) return BadKnob(v.name, v.text, "a power of two in [1, 65536]");
                         o.sample_shift = static_cast<uint32_t>(std::countr_zero(v.count));
                         return Status::Ok();
                       },
                       [](const IndexyOptions& o) { return std::to_string(uint64_t{1} << o.sample_shift); });
}

std::vector<Table::Row> IndexyRows() {
  std::vector<Table::Row> rows = {
      Table::Choice("x", "art|btree", "the in-memory index X (adaptive radix tree, or the local B+-tree)",
                    [](IndexyOptions& o, std::string_view w) { o.x = w == "art" ? XKind::kArt : XKind::kBtree; },
                    [](const IndexyOptions& o) { return std::string(XKindName(o.x)); }),
      Table::Choice("y", "rocksdb|lmdb|btree|mem", "the on-disk index Y (btree: btree-disk's paged B+-tree; mem: for tests)",
                    [](IndexyOptions& o, std::string_view w) { o.y.kind = std::string(w); },
                    [](const IndexyOptions& o) { return o.y.kind; }),
      LimitKnob(),
      Table::Real("high", {0.01, 1}, &IndexyOptions::high, "release starts when X reaches this fraction of the limit"),
      Table::Real("low", {0.01, 1}, &IndexyOptions::low, "release frees X down to this fraction of the limit"),
      Table::Real("stall", {0.01, 2}, &IndexyOptions::stall, "writers wait while X is at this fraction of the limit"),
      Table::Count("stall_ms", 0, 60'000, &IndexyOptions::stall_ms, "the longest a writer waits for room"),
      Table::Choice("release", "density|clock", "the paper's Algorithm 1, or the authors' code's second-chance walk",
                    [](IndexyOptions& o, std::string_view w) {
                      o.release = w == "density" ? ReleasePolicy::kDensity : ReleasePolicy::kClock;
                    },
                    [](const IndexyOptions& o) { return std::string(ReleasePolicyName(o.release)); }),
      Table::Switch("clean", &IndexyOptions::clean, "pre-cleaning of dirty units by the background thread"),
      Table::Real("clean_from", {0, 1}, &IndexyOptions::clean_from, "pre-cleaning starts once X reached this fraction of the limit"),
      Table::Count("unit_depth", 1, 8, &IndexyOptions::unit_depth, "depth of the units cleaned and released"),
      SampleKnob(),
      Table::Real("margin", {0, 10}, &IndexyOptions::margin, "Algorithm 1's release margin (fraction of the target)"),
      Table::Real("gap", {0, 10}, &IndexyOptions::gap,
                  "Algorithm 1's density-variation threshold (fraction of the parent's density)"),
  };
  for (auto& row : tiering::ColdStoreKnobs().Lifted(&IndexyOptions::y)) rows.push_back(std::move(row));
  return rows;
}

const Table& IndexyKnobs() {
  static const Table table(IndexyRows());
  return table;
}

}  // namespace

Result<IndexyOptions> ResolveIndexyOptions(const IndexOptions& index) {
  IndexyOptions o;
  o.node_bytes = index.node_bytes;
  DMX_RETURN_IF_ERROR(IndexyKnobs().ApplyAll(index.knobs, &index, &o));
  if (o.low > o.high)
    return Status::InvalidArgument("indexy: knob low (" + std::to_string(o.low) + ") above knob high (" +
                                   std::to_string(o.high) + ")");
  if (o.stall < o.high)
    return Status::InvalidArgument("indexy: knob stall (" + std::to_string(o.stall) +
                                   ") below knob high (" + std::to_string(o.high) +
                                   "): writers would wait before any release starts");
  return o;
}

std::vector<KnobDoc> IndexyKnobDocs() { return IndexyKnobs().Describe(IndexyOptions{}); }

}  // namespace dmindex::designs::indexy
