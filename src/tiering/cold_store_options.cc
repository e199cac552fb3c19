#include "tiering/cold_store_options.h"

#include "tiering/lmdb_store.h"
#include "tiering/mem_store.h"
#include "tiering/rocksdb_store.h"

namespace dmindex::tiering {

Result<std::unique_ptr<ColdStore>> OpenColdStore(const ColdStoreOptions& options) {
  if (options.kind == "mem") return std::unique_ptr<ColdStore>(std::make_unique<MemStore>(options.mem_faults));
  if (options.kind == "rocksdb") return RocksDbStore::Open(options);
  if (options.kind == "lmdb") return LmdbStore::Open(options);
  return Status::InvalidArgument("unknown cold store '" + options.kind + "' (known: rocksdb, lmdb, mem)");
}

}  // namespace dmindex::tiering
