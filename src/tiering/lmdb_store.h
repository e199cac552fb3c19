// LmdbStore: a copy-on-write B+-tree as the cold store (IndeXY's "B+ as Y" and the LMDB
// baseline), configured as digest trap R10 says: a sparse map reserved up front, no syncs,
// no read-ahead, reader slots tied to transactions rather than threads (MDB_NOTLS: a thread
// may hold an iterator and Get at once). LMDB admits one writer at a time, so each Write is
// one write transaction; readers never block. Its pages are the OS page cache's, which
// LMDB does not bound (docs/INDEXY.md). Keys are limited to mdb_env_get_maxkeysize bytes
// (511); a longer key is InvalidArgument naming the limit.
#pragma once

#include <memory>
#include <string>

#include "tiering/cold_store.h"
#include "tiering/cold_store_options.h"
#include "tiering/store_counters.h"
#include "tiering/store_dir.h"

namespace dmindex::tiering {

class LmdbStore final : public ColdStore {
 public:
  static Result<std::unique_ptr<ColdStore>> Open(const ColdStoreOptions& options);
  ~LmdbStore() override;

  std::string_view kind() const override { return "lmdb"; }
  Status Get(std::string_view key, std::string* value) override;
  Status Write(const ColdBatch& batch) override;
  Result<std::unique_ptr<ColdIterator>> NewIterator() override;
  ColdStoreUsage Usage() override;
  ColdStoreCounters Counters() const override { return counters_.Snapshot(); }
  Status Close() override;

  size_t max_key_bytes() const override { return max_key_bytes_; }

 private:
  struct Env;  // LMDB's handles
  LmdbStore(StoreDir dir, std::unique_ptr<Env> env);
  Status CheckKey(std::string_view key) const;

  StoreDir dir_;
  std::unique_ptr<Env> env_;
  size_t max_key_bytes_ = 0;
  StoreCounters counters_;
};

}  // namespace dmindex::tiering
