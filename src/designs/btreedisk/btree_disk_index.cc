#include "designs/btreedisk/btree_disk_index.h"

#include <atomic>

#include "common/knob_table.h"
#include "common/option_checks.h"
#include "designs/btreedisk/paged_tree.h"
#include "tiering/cold_store_options.h"

namespace dmindex::designs {
namespace {

using btreedisk::PagedTree;

class BtreeDiskSession final : public Session {
 public:
  explicit BtreeDiskSession(PagedTree& tree) : tree_(tree), w_(tree) {}

 private:
  Status DoLookup(Slice key, std::string* value) override { return tree_.Lookup(w_, key, value); }
  Status DoInsert(Slice key, Slice value) override { return tree_.Put(w_, key, value, PagedTree::PutMode::kUpsert); }
  Status DoUpdate(Slice key, Slice value) override { return tree_.Put(w_, key, value, PagedTree::PutMode::kUpdate); }
  Status DoDelete(Slice key) override { return tree_.Delete(w_, key); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    return tree_.Scan(w_, range, count, out);
  }

  PagedTree& tree_;
  PagedTree::Worker w_;
};

class BtreeDiskIndex final : public Index {
 public:
  BtreeDiskIndex(const IndexOptions& options, std::unique_ptr<PagedTree> tree)
      : Index("btree-disk", options), tree_(std::move(tree)) {}
  ~BtreeDiskIndex() override { CloseForDestructor(); }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    if (inserted_.load(std::memory_order_relaxed) || loaded_.exchange(true, std::memory_order_relaxed))
      return Status::InvalidArgument("BulkLoad needs an empty index");
    PagedTree::Worker w(*tree_);
    for (const KeyValue& kv : sorted) DMX_RETURN_IF_ERROR(tree_->Put(w, kv.key, kv.value, PagedTree::PutMode::kUpsert));
    return Status::Ok();
  }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    (void)compute_node;
    inserted_.store(true, std::memory_order_relaxed);  // conservatively: a session may write
    return std::unique_ptr<Session>(std::make_unique<BtreeDiskSession>(*tree_));
  }
  IndexStats DoStats() const override {
    const cache::CacheStats c = tree_->CacheStatsNow();
    IndexStats s;
    s.cache_hits = c.hits;
    s.cache_misses = c.misses;
    s.cache_bytes = tree_->options().cache_bytes;  // allocated up front
    s.retries = tree_->restarts();
    return s;
  }
  void AddProperties(Properties* out) const override {
    const cache::CacheStats c = tree_->CacheStatsNow();
    const btreedisk::PageFileCounters f = tree_->file().Counters();
    out->emplace_back("dmindex.btree-disk.page-reads", f.page_reads);
    out->emplace_back("dmindex.btree-disk.page-writes", f.page_writes);
    out->emplace_back("dmindex.btree-disk.value-log-bytes", f.log_bytes);
    out->emplace_back("dmindex.btree-disk.file-bytes", tree_->file().file_bytes());
    out->emplace_back("dmindex.btree-disk.frames-used", c.frames_used);
    out->emplace_back("dmindex.btree-disk.page-bytes", tree_->options().page_bytes);
  }
  Status DoClose() override { return tree_->file().Close(); }

  std::unique_ptr<PagedTree> tree_;
  // Sessions open from many threads at once (the harness's workers): atomics, not plain bools.
  std::atomic<bool> loaded_{false}, inserted_{false};
};

// What the knobs set: the tree's options, where its file goes (y_dir, y_keep as the cold
// stores'), and O_DIRECT.
struct BtreeDiskSettings {
  btreedisk::PagedTreeOptions tree;
  tiering::ColdStoreOptions file;
  bool direct = false;
};

using Table = KnobTable<BtreeDiskSettings>;

const Table& BtreeDiskKnobs() {
  static const Table table = [] {
    std::vector<Table::Row> rows = {
        Table::Custom({"limit_mb", KnobKind::kReal, 0, 0, {1.0 / 16, 1 << 20}, "", "",
                       "the buffer pool, MiB, allocated up front (at least 64 pages)"},
                      [](const KnobValue& v, BtreeDiskSettings& o) {
                        o.tree.cache_bytes = static_cast<uint64_t>(v.real * (1 << 20));
                        return Status::Ok();
                      },
                      [](const BtreeDiskSettings& o) { return FormatNumber(static_cast<double>(o.tree.cache_bytes) / (1 << 20)); }),
        Table::Custom({"page_kb", KnobKind::kCount, 1, 1024, {}, "", "", "the page size, KiB (default: 4, or what four of the longest entries need)"},
                      [](const KnobValue& v, BtreeDiskSettings& o) {
                        o.tree.page_bytes = static_cast<uint32_t>(v.count << 10);
                        return Status::Ok();
                      },
                      [](const BtreeDiskSettings&) { return std::string("4 or more"); }),
        Table::Switch("direct", &BtreeDiskSettings::direct, "O_DIRECT: the buffer pool is the tree's only cache"),
    };
    for (auto& row : tiering::ColdStoreKnobs().Lifted(&BtreeDiskSettings::file)) {
      if (row.spec.name == "y_dir" || row.spec.name == "y_keep") rows.push_back(std::move(row));
    }
    return Table(std::move(rows));
  }();
  return table;
}

}  // namespace

std::vector<KnobDoc> BtreeDiskKnobDocs() {
  BtreeDiskSettings defaults;
  defaults.tree.cache_bytes = IndexOptions{}.cache_bytes;
  return BtreeDiskKnobs().Describe(defaults);
}

Result<std::unique_ptr<Index>> MakeBtreeDiskIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  BtreeDiskSettings k;
  btreedisk::PagedTreeOptions& o = k.tree;
  o.cache_bytes = options.cache_bytes;
  o.max_key_bytes = options.key_format == KeyFormat::kU64 ? 8 : options.max_key_bytes;
  DMX_RETURN_IF_ERROR(BtreeDiskKnobs().ApplyAll(options.knobs, &options, &k));
  const bool page_given = options.knobs.count("page_kb") != 0;
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, 64, BtreeDiskKnobs().Names()));
  // Values longer than the index's inline limit go to the value log. Pages: 4 KiB (the
  // paper's), or as many 4 KiB as the longest keys need.
  o.inline_value_bytes = options.inline_value_bytes;
  if (!page_given) {
    const uint32_t need = PagedTree::MinPageBytes(o.max_key_bytes, o.inline_value_bytes);
    o.page_bytes = std::max<uint32_t>(4096, (need + 4095) / 4096 * 4096);
  }
  // A buffer pool of at least 64 pages: a few paths and the cooling map.
  o.cache_bytes = std::max<uint64_t>(o.cache_bytes, 64ull * o.page_bytes);
  auto file = btreedisk::PageFile::Open(k.file.parent_dir, k.file.keep, o.page_bytes, k.direct);
  if (!file.ok()) return file.status();
  auto tree = PagedTree::Open(o, std::move(file).value());
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<Index>(std::make_unique<BtreeDiskIndex>(options, std::move(tree).value()));
}

}  // namespace dmindex::designs
