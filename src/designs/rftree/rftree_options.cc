#include "designs/rftree/rftree_options.h"

#include "tree/tree_knobs.h"

namespace dmindex::designs::rftree {

namespace {

using Table = KnobTable<RfTreeOptions>;

Table::Row RefreshHopsKnob() {
  return Table::Custom(
      {"refresh_hops", KnobKind::kCount, 1, uint64_t{1} << 40, {}, "auto|off", "",
       "refresh the search-layer cache after this many extra remote READs; auto: its internal nodes (>= 16)"},
      [](const KnobValue& v, RfTreeOptions& o) {
        o.refresh_auto = v.word == "auto";
        o.refresh_hops = v.word.empty() ? v.count : 0;
        return Status::Ok();
      },
      [](const RfTreeOptions& o) {
        return o.refresh_auto ? std::string("auto") : o.refresh_hops == 0 ? std::string("off") : std::to_string(o.refresh_hops);
      });
}

std::vector<Table::Row> RfTreeRows() {
  std::vector<Table::Row> rows = {
      Table::Switch("slc", &RfTreeOptions::slc, "the search-layer cache; off: every traversal starts at the root"),
      Table::Count("slc_chunk_kb", 1, 1u << 20, &RfTreeOptions::slc_chunk_bytes,
                   "size of each READ of the search-layer log when the cache refreshes, KiB", 10),
      RefreshHopsKnob(),
      Table::Count("refresh_min_us", 0, uint64_t{60} * 1000 * 1000, &RfTreeOptions::refresh_min_us,
                   "at least this long between two refreshes of one compute node"),
      Table::Choice("lock", "inline|table", "inline: the leaf's last 8 bytes are its version lock; table: the core's lock table",
           [](RfTreeOptions& o, std::string_view w) { o.lock = w == "inline" ? LockMode::kInline : LockMode::kTable; },
           [](const RfTreeOptions& o) { return std::string(o.lock == LockMode::kInline ? "inline" : "table"); }),
      Table::Choice("unlock", "after|with_node",
           "lock=inline: after writes leaf then lock word in order; with_node: the paper's single WRITE (trap T1)",
           [](RfTreeOptions& o, std::string_view w) { o.unlock = w == "after" ? UnlockMode::kAfterNode : UnlockMode::kWithNode; },
           [](const RfTreeOptions& o) { return std::string(o.unlock == UnlockMode::kAfterNode ? "after" : "with_node"); }),
      Table::Switch("scan_batch", &RfTreeOptions::scan_batch,
                    "scans READ the leaves a cached level-1 node lists in one batch; off: leaf by leaf along sibling links (the paper's)"),
  };
  for (auto& row : tree::TreeKnobs().Lifted(&RfTreeOptions::tree)) rows.push_back(std::move(row));
  return rows;
}

const Table& RfTreeKnobs() {
  static const Table table(RfTreeRows());
  return table;
}

tree::TreeOptions CoreDefaults() {
  tree::TreeOptions defaults;
  defaults.cache_bytes = 1;  // on: sized by IndexOptions::cache_bytes (the SLC's budget)
  // Internal nodes lock in the core's lock table in both lock modes: their lock + READ and
  // their write-back + unlock each go in one in-order batch (a leaf's inline-lock write is
  // one in-order batch already).
  defaults.combine = true;
  // A separator's last batch goes unwaited, as Sherman's (RfTree::Write reaps it before an
  // inline-lock write; the core's operations reap it themselves).
  defaults.post_separator = true;
  return defaults;
}

}  // namespace

Result<RfTreeOptions> ResolveRfTreeOptions(const IndexOptions& index) {
  RfTreeOptions o;
  IndexOptions core = index;  // the core's checks of the index options; knobs come below
  core.knobs.clear();
  auto resolved = tree::ResolveTreeOptions(core, CoreDefaults());
  if (!resolved.ok()) return resolved.status();
  o.tree = *resolved;
  DMX_RETURN_IF_ERROR(RfTreeKnobs().ApplyAll(index.knobs, &index, &o));
  if (o.tree.cache_bytes == 0) o.slc = false;
  if (o.lock == LockMode::kInline && (o.tree.two_level || o.tree.hocl))
    return Status::InvalidArgument(
        "rftree: two_level and hocl work on the core's lock table; with lock=inline leaves are "
        "sorted, written whole and locked by their own last word (use lock=table)");
  // Leaves carry their lock word (lock=inline) in their last 8 bytes: every node keeps the
  // trailer, so both lock modes have one layout and can be compared on it.
  o.tree.node_trailer = true;
  return o;
}

std::vector<KnobDoc> RfTreeKnobDocs() {
  RfTreeOptions defaults;
  defaults.tree = CoreDefaults();
  return RfTreeKnobs().Describe(defaults);
}

}  // namespace dmindex::designs::rftree
