#include "tiering/rocksdb_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

namespace dmindex::tiering {
namespace {

Status FromRocks(const rocksdb::Status& s, const char* what) {
  if (s.ok()) return Status::Ok();
  if (s.IsNotFound()) return Status::NotFound();
  if (s.IsInvalidArgument()) return Status::InvalidArgument(std::string("rocksdb ") + what + ": " + s.ToString());
  return Status::IoError(std::string("rocksdb ") + what + ": " + s.ToString());
}

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

}  // namespace

struct RocksDbStore::Db {
  std::shared_ptr<rocksdb::Cache> block_cache;
  std::shared_ptr<rocksdb::Cache> row_cache;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write_options;
};

namespace {

class RocksIterator final : public ColdIterator {
 public:
  RocksIterator(std::unique_ptr<rocksdb::Iterator> it, StoreCounters& counters)
      : it_(std::move(it)), counters_(counters) {}
  void Seek(std::string_view target) override {
    counters_.CountSeek();
    it_->Seek(ToSlice(target));
  }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  std::string_view key() const override {
    const rocksdb::Slice k = it_->key();
    return {k.data(), k.size()};
  }
  std::string_view value() const override {
    const rocksdb::Slice v = it_->value();
    return {v.data(), v.size()};
  }
  Status status() const override { return FromRocks(it_->status(), "iterator"); }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;  // holds the implicit snapshot of its creation
  StoreCounters& counters_;
};

}  // namespace

Result<std::unique_ptr<ColdStore>> RocksDbStore::Open(const ColdStoreOptions& o) {
  if (o.write_buffer_bytes < (64u << 10))
    return Status::InvalidArgument("rocksdb write buffer of " + std::to_string(o.write_buffer_bytes) +
                                   " bytes: at least 64 KiB");
  if (o.block_bytes < 512 || o.block_bytes > (1u << 20))
    return Status::InvalidArgument("rocksdb block size " + std::to_string(o.block_bytes) +
                                   ": expected [512, 1 MiB]");
  auto dir = o.dir.empty() ? StoreDir::Create(o.parent_dir, "dmindex-rocksdb", o.keep) : StoreDir::Use(o.dir);
  if (!dir.ok()) return dir.status();
  auto db = std::make_unique<Db>();

  rocksdb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = o.dir.empty();  // a fresh directory must be empty; a named one is reopened
  // Universal compaction as the paper's code; its memtable budget is then overridden by ours.
  options.OptimizeUniversalStyleCompaction(o.write_buffer_bytes);
  options.IncreaseParallelism(static_cast<int>(o.background_threads));
  options.write_buffer_size = o.write_buffer_bytes;
  options.max_write_buffer_number = 2;  // one filling, one flushing: the memory bound is 2x
  options.compression = rocksdb::kNoCompression;
  options.compression_per_level.clear();
  options.bottommost_compression = rocksdb::kNoCompression;
  options.max_open_files = -1;
  options.use_direct_reads = o.direct_io;
  options.use_direct_io_for_flush_and_compaction = o.direct_io;

  rocksdb::BlockBasedTableOptions table;
  db->block_cache = rocksdb::NewLRUCache(o.block_cache_bytes);
  table.block_cache = db->block_cache;
  table.block_size = o.block_bytes;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(o.bloom_bits_per_key, false));
  table.whole_key_filtering = true;
  // Index and filter blocks count against the block cache, so the configured memory is the
  // memory used (digest trap R8).
  table.cache_index_and_filter_blocks = o.meta_in_cache;
  table.pin_l0_filter_and_index_blocks_in_cache = o.meta_in_cache;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (o.row_cache_bytes > 0) {
    db->row_cache = rocksdb::NewLRUCache(o.row_cache_bytes);
    options.row_cache = db->row_cache;
  }
  // A fresh store is as volatile as the pool (the paper's code runs without a WAL); a store in
  // a directory the user named keeps its writes through a crash of this process (the WAL,
  // unsynced: not through a crash of the machine, as LMDB's MDB_NOSYNC).
  db->write_options.disableWAL = o.dir.empty();
  db->write_options.sync = false;

  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir->path(), &raw);
  if (!s.ok()) return FromRocks(s, ("open " + dir->path()).c_str());
  db->db.reset(raw);
  return std::unique_ptr<ColdStore>(new RocksDbStore(std::move(dir).value(), std::move(db)));
}

RocksDbStore::RocksDbStore(StoreDir dir, std::unique_ptr<Db> db) : dir_(std::move(dir)), db_(std::move(db)) {}

RocksDbStore::~RocksDbStore() {
  Status ignored = Close();
  (void)ignored;
}

Status RocksDbStore::Close() {
  if (db_ == nullptr) return Status::Ok();
  Status closed = FromRocks(db_->db->Close(), "close");
  db_.reset();
  Status removed = dir_.Remove();
  return closed.ok() ? removed : closed;
}

Status RocksDbStore::Get(std::string_view key, std::string* value) {
  rocksdb::Status s = db_->db->Get(rocksdb::ReadOptions(), ToSlice(key), value);
  counters_.CountGet(s.ok());
  return FromRocks(s, "get");
}

Status RocksDbStore::Write(const ColdBatch& batch) {
  rocksdb::WriteBatch wb;
  for (const ColdBatch::Op& op : batch.ops()) {
    rocksdb::Status s = op.is_delete ? wb.Delete(ToSlice(op.key)) : wb.Put(ToSlice(op.key), ToSlice(op.value));
    if (!s.ok()) return FromRocks(s, "batch");
  }
  DMX_RETURN_IF_ERROR(FromRocks(db_->db->Write(db_->write_options, &wb), "write"));
  counters_.CountWrite(batch);
  return Status::Ok();
}

Result<std::unique_ptr<ColdIterator>> RocksDbStore::NewIterator() {
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(rocksdb::ReadOptions()));
  return std::unique_ptr<ColdIterator>(std::make_unique<RocksIterator>(std::move(it), counters_));
}

ColdStoreUsage RocksDbStore::Usage() {
  ColdStoreUsage u;
  uint64_t v = 0;
  if (db_->db->GetIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &v)) u.disk_bytes = v;
  if (db_->db->GetIntProperty(rocksdb::DB::Properties::kSizeAllMemTables, &v)) u.memory_bytes += v;
  // Index and filter blocks held outside the block cache (y_meta_cached off).
  if (db_->db->GetIntProperty(rocksdb::DB::Properties::kEstimateTableReadersMem, &v)) u.memory_bytes += v;
  u.memory_bytes += db_->block_cache->GetUsage();
  if (db_->row_cache != nullptr) u.memory_bytes += db_->row_cache->GetUsage();
  return u;
}

}  // namespace dmindex::tiering
