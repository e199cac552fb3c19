#include "tiering/lmdb_store.h"

#include <lmdb.h>

namespace dmindex::tiering {
namespace {

Status FromMdb(int rc, const std::string& what) {
  if (rc == MDB_SUCCESS) return Status::Ok();
  if (rc == MDB_NOTFOUND) return Status::NotFound();
  if (rc == MDB_MAP_FULL) return Status::OutOfSpace("lmdb " + what + ": the map is full (option lmdb_map_bytes)");
  if (rc == MDB_BAD_VALSIZE) return Status::InvalidArgument("lmdb " + what + ": " + mdb_strerror(rc));
  return Status::IoError("lmdb " + what + ": " + mdb_strerror(rc));
}

MDB_val ToVal(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }
std::string_view FromVal(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

}  // namespace

struct LmdbStore::Env {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  ~Env() {
    if (env != nullptr) mdb_env_close(env);
  }
};

namespace {

// A read transaction and a cursor: a snapshot of the store as of its creation.
class LmdbIterator final : public ColdIterator {
 public:
  LmdbIterator(MDB_txn* txn, MDB_cursor* cursor, StoreCounters& counters)
      : txn_(txn), cursor_(cursor), counters_(counters) {}
  ~LmdbIterator() override {
    mdb_cursor_close(cursor_);
    mdb_txn_abort(txn_);
  }
  void Seek(std::string_view target) override {
    counters_.CountSeek();
    key_ = ToVal(target);
    // An empty target (LMDB refuses empty keys) is the start of the store.
    Position(mdb_cursor_get(cursor_, &key_, &value_, target.empty() ? MDB_FIRST : MDB_SET_RANGE));
  }
  bool Valid() const override { return valid_; }
  void Next() override {
    if (valid_) Position(mdb_cursor_get(cursor_, &key_, &value_, MDB_NEXT));
  }
  std::string_view key() const override { return FromVal(key_); }
  std::string_view value() const override { return FromVal(value_); }
  Status status() const override { return status_; }

 private:
  void Position(int rc) {
    valid_ = rc == MDB_SUCCESS;
    status_ = rc == MDB_SUCCESS || rc == MDB_NOTFOUND ? Status::Ok() : FromMdb(rc, "cursor");
  }

  MDB_txn* txn_;
  MDB_cursor* cursor_;
  StoreCounters& counters_;
  MDB_val key_{}, value_{};
  bool valid_ = false;
  Status status_;
};

}  // namespace

Result<std::unique_ptr<ColdStore>> LmdbStore::Open(const ColdStoreOptions& o) {
  auto dir = o.dir.empty() ? StoreDir::Create(o.parent_dir, "dmindex-lmdb", o.keep) : StoreDir::Use(o.dir);
  if (!dir.ok()) return dir.status();
  auto env = std::make_unique<Env>();
  DMX_RETURN_IF_ERROR(FromMdb(mdb_env_create(&env->env), "env create"));
  DMX_RETURN_IF_ERROR(FromMdb(mdb_env_set_mapsize(env->env, o.lmdb_map_bytes), "set map size"));
  DMX_RETURN_IF_ERROR(FromMdb(mdb_env_set_maxreaders(env->env, o.lmdb_max_readers), "set max readers"));
  const unsigned flags = MDB_NOSYNC | MDB_NOMETASYNC | MDB_NORDAHEAD | MDB_NOTLS;
  DMX_RETURN_IF_ERROR(FromMdb(mdb_env_open(env->env, dir->path().c_str(), flags, 0644), "open " + dir->path()));
  MDB_txn* txn = nullptr;
  DMX_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env->env, nullptr, 0, &txn), "begin"));
  int rc = mdb_dbi_open(txn, nullptr, 0, &env->dbi);
  if (rc != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    return FromMdb(rc, "open database");
  }
  DMX_RETURN_IF_ERROR(FromMdb(mdb_txn_commit(txn), "commit"));
  const size_t max_key = static_cast<size_t>(mdb_env_get_maxkeysize(env->env));
  auto store = std::unique_ptr<LmdbStore>(new LmdbStore(std::move(dir).value(), std::move(env)));
  store->max_key_bytes_ = max_key;
  return std::unique_ptr<ColdStore>(std::move(store));
}

LmdbStore::LmdbStore(StoreDir dir, std::unique_ptr<Env> env) : dir_(std::move(dir)), env_(std::move(env)) {}

LmdbStore::~LmdbStore() {
  Status ignored = Close();
  (void)ignored;
}

Status LmdbStore::Close() {
  if (env_ == nullptr) return Status::Ok();
  env_.reset();
  return dir_.Remove();
}

Status LmdbStore::CheckKey(std::string_view key) const {
  if (key.empty() || key.size() > max_key_bytes_)
    return Status::InvalidArgument("lmdb: a key of " + std::to_string(key.size()) + " bytes (LMDB takes 1.." +
                                   std::to_string(max_key_bytes_) + ")");
  return Status::Ok();
}

Status LmdbStore::Get(std::string_view key, std::string* value) {
  DMX_RETURN_IF_ERROR(CheckKey(key));
  MDB_txn* txn = nullptr;
  DMX_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &txn), "begin read"));
  MDB_val k = ToVal(key), v{};
  const int rc = mdb_get(txn, env_->dbi, &k, &v);
  if (rc == MDB_SUCCESS) value->assign(static_cast<const char*>(v.mv_data), v.mv_size);
  mdb_txn_abort(txn);
  counters_.CountGet(rc == MDB_SUCCESS);
  return FromMdb(rc, "get");
}

Status LmdbStore::Write(const ColdBatch& batch) {
  for (const ColdBatch::Op& op : batch.ops()) DMX_RETURN_IF_ERROR(CheckKey(op.key));
  MDB_txn* txn = nullptr;
  DMX_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_->env, nullptr, 0, &txn), "begin write"));
  for (const ColdBatch::Op& op : batch.ops()) {
    MDB_val k = ToVal(op.key);
    int rc;
    if (op.is_delete) {
      rc = mdb_del(txn, env_->dbi, &k, nullptr);
      if (rc == MDB_NOTFOUND) rc = MDB_SUCCESS;  // deleting an absent key changes nothing
    } else {
      MDB_val v = ToVal(op.value);
      rc = mdb_put(txn, env_->dbi, &k, &v, 0);
    }
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      return FromMdb(rc, op.is_delete ? "delete" : "put");
    }
  }
  DMX_RETURN_IF_ERROR(FromMdb(mdb_txn_commit(txn), "commit"));
  counters_.CountWrite(batch);
  return Status::Ok();
}

Result<std::unique_ptr<ColdIterator>> LmdbStore::NewIterator() {
  MDB_txn* txn = nullptr;
  DMX_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &txn), "begin read"));
  MDB_cursor* cursor = nullptr;
  const int rc = mdb_cursor_open(txn, env_->dbi, &cursor);
  if (rc != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    return FromMdb(rc, "cursor open");
  }
  return std::unique_ptr<ColdIterator>(std::make_unique<LmdbIterator>(txn, cursor, counters_));
}

ColdStoreUsage LmdbStore::Usage() {
  MDB_envinfo info{};
  MDB_stat stat{};
  ColdStoreUsage u;
  if (mdb_env_info(env_->env, &info) == MDB_SUCCESS && mdb_env_stat(env_->env, &stat) == MDB_SUCCESS)
    u.disk_bytes = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  return u;
}

}  // namespace dmindex::tiering
