#include "designs/kvstore/store_index.h"

#include <filesystem>
#include <functional>
#include <mutex>
#include <system_error>

#include "common/knobs.h"
#include "common/option_checks.h"
#include "designs/kvstore/store_hold.h"
#include "designs/kvstore/store_home.h"
#include "tiering/cold_store_options.h"

namespace dmindex::designs {
namespace {

// Update and Delete read the key and then write it; two of them on one key must not
// interleave (an update after a concurrent delete would bring the key back), so they hold the
// key's stripe. Inserts and lookups are single store calls, atomic by themselves.
class KeyStripes {
 public:
  runtime::Mutex& For(Slice key) { return stripes_[std::hash<std::string_view>{}(key) % kStripes]; }

 private:
  static constexpr size_t kStripes = 256;
  runtime::Mutex stripes_[kStripes];
};

class StoreSession final : public Session {
 public:
  StoreSession(tiering::ColdStore& store, KeyStripes& stripes) : store_(store), stripes_(stripes) {}

 private:
  Status DoLookup(Slice key, std::string* value) override { return store_.Get(key, value); }
  Status DoInsert(Slice key, Slice value) override {
    batch_.Clear();
    batch_.Put(key, value);
    return store_.Write(batch_);
  }
  Status DoUpdate(Slice key, Slice value) override {
    std::lock_guard lock(stripes_.For(key));
    DMX_RETURN_IF_ERROR(store_.Get(key, &scratch_));
    batch_.Clear();
    batch_.Put(key, value);
    return store_.Write(batch_);
  }
  Status DoDelete(Slice key) override {
    std::lock_guard lock(stripes_.For(key));
    DMX_RETURN_IF_ERROR(store_.Get(key, &scratch_));
    batch_.Clear();
    batch_.Delete(key);
    return store_.Write(batch_);
  }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    auto it = store_.NewIterator();
    if (!it.ok()) return it.status();
    tiering::ColdIterator& i = **it;
    for (i.Seek(range.start); i.Valid() && out->size() < count; i.Next()) {
      if (range.after_start && i.key() == range.start) continue;
      if (range.end && i.key() >= std::string_view(*range.end)) break;
      out->push_back({std::string(i.key()), std::string(i.value())});
    }
    return i.status();
  }

  tiering::ColdStore& store_;
  KeyStripes& stripes_;
  tiering::ColdBatch batch_;
  std::string scratch_;
};

class StoreIndex final : public Index {
 public:
  // `home`: the folder of an index under IndexOptions::directory (empty: a temporary store),
  // held by `hold` while this handle is open.
  StoreIndex(const IndexOptions& options, std::unique_ptr<tiering::ColdStore> store, StoreHome home,
             StoreHold hold)
      : Index(options.design, options),
        store_(std::move(store)),
        home_(std::move(home.path)),
        instance_(std::move(home.instance)),
        hold_(std::move(hold)) {}
  ~StoreIndex() override { CloseForDestructor(); }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    if (loaded_ || store_->Counters().writes != 0) return Status::InvalidArgument("BulkLoad needs an empty index");
    loaded_ = true;
    tiering::ColdBatch batch;
    for (size_t i = 0; i < sorted.size(); ++i) {
      batch.Put(sorted[i].key, sorted[i].value);
      if (batch.size() == 4096 || i + 1 == sorted.size()) {
        DMX_RETURN_IF_ERROR(store_->Write(batch));
        batch.Clear();
      }
    }
    return Status::Ok();
  }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    (void)compute_node;
    return std::unique_ptr<Session>(std::make_unique<StoreSession>(*store_, stripes_));
  }
  IndexStats DoStats() const override {
    IndexStats s;
    s.cache_bytes = store_->Usage().memory_bytes;
    return s;
  }
  void AddProperties(Properties* out) const override {
    const tiering::ColdStoreUsage u = store_->Usage();
    const tiering::ColdStoreCounters c = store_->Counters();
    const std::string p = "dmindex." + design() + ".";
    out->emplace_back(p + "disk-bytes", u.disk_bytes);
    out->emplace_back(p + "memory-bytes", u.memory_bytes);
    out->emplace_back(p + "gets", c.gets);
    out->emplace_back(p + "writes", c.writes);
    out->emplace_back(p + "seeks", c.seeks);
  }
  // Busy while another handle holds the folder (StoreHold); the exclusive hold lasts until
  // the folder is gone. DropOptions::force changes nothing: a dead process holds nothing
  // here (the kernel drops its lock), and a live one cannot be fenced from its own files.
  Status DoPrepareDrop(const DropOptions&) override { return home_.empty() ? Status::Ok() : hold_.MakeExclusive(); }
  Status DoClose() override {
    Status closed = store_->Close();
    if (!hold_.exclusive()) hold_.Release();  // else a drop is under way: DoDrop releases it
    return closed;
  }
  // After Close: the folder goes (a temporary store's went with Close).
  Status DoDrop(const DropOptions&) override {
    if (home_.empty()) return Status::Ok();
    if (!hold_.exclusive()) {  // Close came before Drop: hold the folder again, if it is still ours
      auto again = StoreHold::Take(home_);
      auto instance = again.ok() ? StoreInstance(home_) : Result<std::string>(again.status());
      if (!instance.ok() || *instance != instance_)
        return Status::NotFound("Drop: the index this handle opened in " + home_ + " was dropped since");
      hold_ = std::move(again).value();
      DMX_RETURN_IF_ERROR(hold_.MakeExclusive());
    }
    return hold_.RemoveFolder();
  }

  std::unique_ptr<tiering::ColdStore> store_;
  std::string home_;
  std::string instance_;  // StoreHome::instance
  StoreHold hold_;
  KeyStripes stripes_;
  bool loaded_ = false;
};

using Table = KnobTable<tiering::ColdStoreOptions>;

// limit_mb splits one budget; the y_* knobs, applied after it (knobs go in name order), override its parts.
Table::Row LimitKnob() {
  return Table::Custom({"limit_mb", KnobKind::kReal, 0, 0, {1.0 / 16, 1 << 20}, "", "",
                        "memory budget, MiB: RocksDB two memtables of 1/8, 1/2 row cache, 1/4 block cache; LMDB has no cache"},
                       [](const KnobValue& v, tiering::ColdStoreOptions& so) {
                         const auto bytes = static_cast<uint64_t>(v.real * (1 << 20));
                         so.write_buffer_bytes = std::max<uint64_t>(bytes / 8, 64 << 10);
                         so.row_cache_bytes = bytes / 2;
                         so.block_cache_bytes = bytes / 4;
                         return Status::Ok();
                       },
                       [](const tiering::ColdStoreOptions&) { return std::string("the y_* defaults"); });
}

const Table& StoreKnobs() {
  static const Table table = [] {
    std::vector<Table::Row> rows = {LimitKnob()};
    for (const Table::Row& row : tiering::ColdStoreKnobs().rows()) rows.push_back(row);
    return Table(std::move(rows));
  }();
  return table;
}

// The index's home, found and held (StoreHold). A drop that removed the folder between the
// look-up and the hold is seen by the hold (Aborted): look again, which finds no index, or
// makes a new one if the options say so. Each turn follows a drop that completed.
Result<StoreHome> HoldStoreHome(const IndexOptions& options, std::string_view kind, StoreHold* hold) {
  for (;;) {
    auto found = FindStoreHome(options, kind);
    if (!found.ok()) return found.status();
    std::error_code error;
    if (!found->exists) std::filesystem::create_directories(found->path, error);
    if (error) return Status::IoError("cannot create " + found->path + ": " + error.message());
    auto taken = StoreHold::Take(found->path);
    if (taken.status().IsAborted()) continue;
    if (!taken.ok()) return taken.status();
    // Held now, the folder cannot go; look once more, as it may have been dropped and made
    // anew (as another design, say) between the first look and the hold.
    auto held = FindStoreHome(options, kind);
    if (!held.ok()) return held.status();
    *hold = std::move(taken).value();
    return held;
  }
}

Result<std::unique_ptr<Index>> MakeStoreIndex(const IndexOptions& options, std::string_view kind) {
  tiering::ColdStoreOptions so;
  so.kind = std::string(kind);
  DMX_RETURN_IF_ERROR(StoreKnobs().ApplyAll(options.knobs, &options, &so));
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, 64, StoreKnobs().Names()));
  StoreHome home;
  StoreHold hold;
  if (!options.directory.empty()) {
    if (!so.parent_dir.empty() || so.keep)
      return Status::InvalidArgument(std::string(kind) + ": the knobs y_dir and y_keep place a temporary store; "
                                     "IndexOptions::directory names the index's own folder: set one or the other");
    auto found = HoldStoreHome(options, kind, &hold);
    if (!found.ok()) return found.status();
    home = std::move(found).value();
    so.dir = home.path;
  }
  auto store = tiering::OpenColdStore(so);
  if (!store.ok()) return store.status();
  if (options.key_format == KeyFormat::kBytes && options.max_key_bytes > (*store)->max_key_bytes()) {
    const std::string why = std::string(kind) + " takes keys of at most " + std::to_string((*store)->max_key_bytes()) +
                            " bytes, the index allows " + std::to_string(options.max_key_bytes) +
                            " (IndexOptions::max_key_bytes)";
    Status closed = (*store)->Close();
    (void)closed;
    if (!home.path.empty() && !home.exists) {
      std::error_code ignored;  // the folder this call created: nothing of the user's is in it
      std::filesystem::remove_all(home.path, ignored);
    }
    return Status::NotSupported(why);
  }
  if (!home.path.empty() && !home.exists) DMX_RETURN_IF_ERROR(DescribeStoreHome(&home, options, kind));
  return std::unique_ptr<Index>(
      std::make_unique<StoreIndex>(options, std::move(store).value(), std::move(home), std::move(hold)));
}

}  // namespace

std::vector<KnobDoc> StoreKnobDocs() { return StoreKnobs().Describe(tiering::ColdStoreOptions{}); }

Result<std::unique_ptr<Index>> MakeRocksDbIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  return MakeStoreIndex(options, "rocksdb");
}

Result<std::unique_ptr<Index>> MakeLmdbIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  return MakeStoreIndex(options, "lmdb");
}

}  // namespace dmindex::designs
