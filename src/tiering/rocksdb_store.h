// RocksDbStore: an LSM tree as the cold store (IndeXY's "ART-LSM" Y and the RocksDB baseline),
// configured as the paper's code configures it (digest §10): WAL off, no syncs, no
// compression, universal compaction, bloom filters, every file kept open; memtable, block
// cache and row cache sizes are options. RocksDB's headers stay in the .cc file, so only this
// layer's target sees them.
#pragma once

#include <memory>
#include <string>

#include "tiering/cold_store.h"
#include "tiering/cold_store_options.h"
#include "tiering/store_counters.h"
#include "tiering/store_dir.h"

namespace dmindex::tiering {

class RocksDbStore final : public ColdStore {
 public:
  static Result<std::unique_ptr<ColdStore>> Open(const ColdStoreOptions& options);
  ~RocksDbStore() override;

  std::string_view kind() const override { return "rocksdb"; }
  Status Get(std::string_view key, std::string* value) override;
  Status Write(const ColdBatch& batch) override;
  Result<std::unique_ptr<ColdIterator>> NewIterator() override;
  ColdStoreUsage Usage() override;
  ColdStoreCounters Counters() const override { return counters_.Snapshot(); }
  Status Close() override;

 private:
  struct Db;  // RocksDB's objects
  RocksDbStore(StoreDir dir, std::unique_ptr<Db> db);

  StoreDir dir_;
  std::unique_ptr<Db> db_;
  StoreCounters counters_;
};

}  // namespace dmindex::tiering
