#include "designs/indexy/indexy_index.h"

#include "common/option_checks.h"
#include "designs/btreedisk/paged_store.h"
#include "designs/indexy/tier_worker.h"
#include "designs/indexy/tiers.h"
#include "designs/indexy/x_art.h"
#include "designs/indexy/x_btree.h"

namespace dmindex::designs {
namespace {

using indexy::Tiers;
using indexy::XWorker;

class IndexySession final : public Session {
 public:
  explicit IndexySession(Tiers& tiers) : tiers_(tiers), w_(tiers.x().NewWorker()) {}

 private:
  Status DoLookup(Slice key, std::string* value) override { return tiers_.Lookup(*w_, key, value); }
  Status DoInsert(Slice key, Slice value) override { return tiers_.Insert(*w_, key, value); }
  Status DoUpdate(Slice key, Slice value) override { return tiers_.Update(*w_, key, value); }
  Status DoDelete(Slice key) override { return tiers_.Delete(*w_, key); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    return tiers_.Scan(*w_, range, count, out);
  }

  Tiers& tiers_;
  std::unique_ptr<XWorker> w_;
};

class IndexyIndex final : public Index {
 public:
  IndexyIndex(const IndexOptions& options, const indexy::IndexyOptions& o, std::unique_ptr<indexy::XTree> x,
              std::unique_ptr<tiering::ColdStore> y)
      : Index("indexy", options), tiers_(o, std::move(x), std::move(y)), background_(tiers_) {}
  ~IndexyIndex() override { CloseForDestructor(); }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    std::unique_ptr<XWorker> w = tiers_.x().NewWorker();
    return tiers_.BulkLoad(*w, sorted);
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    (void)compute_node;  // one index for all compute nodes of this process
    return std::unique_ptr<Session>(std::make_unique<IndexySession>(tiers_));
  }

  IndexStats DoStats() const override {
    const indexy::TierCounters c = tiers_.Counters();
    IndexStats s;
    s.cache_hits = c.x_answers;
    s.cache_misses = c.y_reads;
    s.cache_bytes = tiers_.x().Bytes().total;
    s.retries = tiers_.x().restarts() + c.tier_retries;
    return s;
  }

  void AddProperties(Properties* out) const override {
    const indexy::TierCounters c = tiers_.Counters();
    const indexy::BackgroundCounters b = background_.Counters();
    const indexy::BudgetStats m = tiers_.budget().Stats();
    const indexy::XBytes xb = tiers_.x().Bytes();
    const tiering::ColdStoreUsage yu = const_cast<Tiers&>(tiers_).y().Usage();  // Usage() asks the store
    const std::pair<const char*, uint64_t> all[] = {
        {"x-bytes", xb.total},
        {"x-retired-bytes", xb.retired},
        {"x-entries", tiers_.x().entries()},
        {"x-peak-bytes", m.peak_bytes},
        {"limit-bytes", tiers_.options().limit_bytes},
        {"y-reads", c.y_reads},
        {"y-hits", c.y_hits},
        {"y-scans", c.y_scans},
        {"y-writes", c.y_writes},
        {"y-written-entries", c.y_written_entries},
        {"y-written-bytes", c.y_written_bytes},
        {"y-disk-bytes", yu.disk_bytes},
        {"y-memory-bytes", yu.memory_bytes},
        {"admissions", c.admissions},
        {"admissions-skipped", c.admissions_skipped},
        {"removals", c.removals},
        {"tier-retries", c.tier_retries},
        {"release-rounds", b.release_rounds},
        {"released-units", b.released_units},
        {"released-entries", b.released_entries},
        {"released-bytes", b.released_bytes},
        {"release-written", b.release_written},
        {"released-single-units", b.released_single_units},
        {"released-unaccessed-units", b.released_unaccessed_units},
        {"ranked-candidates", b.ranked_candidates},
        {"ranked-single-candidates", b.ranked_single_candidates},
        {"cleaned-units", b.cleaned_units},
        {"cleaned-entries", b.cleaned_entries},
        {"clean-passes", b.clean_passes},
        {"stalls", m.stalls},
        {"stall-timeouts", m.stall_timeouts},
        {"stall-us", m.stall_us},
        {"refused-writes", m.refused},
        {"over-limit-writes", m.over_limit},
        {"background-errors", b.errors},
    };
    for (const auto& [name, v] : all) out->emplace_back(std::string("dmindex.indexy.") + name, v);
  }

  Status DoClose() override {
    background_.Stop();
    return tiers_.y().Close();
  }

  Tiers tiers_;
  indexy::TierWorker background_;  // after tiers_: stopped before it goes
};

std::vector<std::string> KnobNames(const IndexOptions& options) {
  std::vector<std::string> names;
  for (const auto& [name, value] : options.knobs) names.push_back(name);
  return names;
}

}  // namespace

Result<std::unique_ptr<Index>> MakeIndexyIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  auto o = indexy::ResolveIndexyOptions(options);  // refuses unknown knobs, naming the known ones
  if (!o.ok()) return o.status();
  const uint32_t min_node_bytes = o->x == indexy::XKind::kBtree ? indexy::BtreeX::MinNodeBytes(options.key_format) : 64;
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, min_node_bytes, KnobNames(options)));
  auto y = o->y.kind == "btree"
               ? btreedisk::PagedStore::Open(o->y, options.key_format == KeyFormat::kU64 ? 8 : options.max_key_bytes,
                                             options.inline_value_bytes)
               : tiering::OpenColdStore(o->y);
  if (!y.ok()) return y.status();
  if (options.key_format == KeyFormat::kBytes && options.max_key_bytes > (*y)->max_key_bytes()) {
    const std::string why = "indexy with y=" + o->y.kind + ": the store takes keys of at most " +
                            std::to_string((*y)->max_key_bytes()) + " bytes, the index allows " +
                            std::to_string(options.max_key_bytes) + " (IndexOptions::max_key_bytes)";
    Status closed = (*y)->Close();
    (void)closed;
    return Status::NotSupported(why);
  }
  std::unique_ptr<indexy::XTree> x;
  if (o->x == indexy::XKind::kArt) {
    x = std::make_unique<indexy::ArtX>(o->unit_depth, o->sample_shift, o->reclaim_bytes());
  } else {
    auto b = indexy::BtreeX::Make(options.key_format, *o);
    if (!b.ok()) return b.status();
    x = std::move(b).value();
  }
  return std::unique_ptr<Index>(std::make_unique<IndexyIndex>(options, *o, std::move(x), std::move(y).value()));
}

}  // namespace dmindex::designs
