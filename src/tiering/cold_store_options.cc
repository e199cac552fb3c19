#include "tiering/cold_store_options.h"

#include "common/knobs.h"
#include "tiering/lmdb_store.h"
#include "tiering/mem_store.h"
#include "tiering/rocksdb_store.h"

namespace dmindex::tiering {

namespace {

using Table = KnobTable<ColdStoreOptions>;

Table::Row DirKnob() {
  return Table::Custom({"y_dir", KnobKind::kText, 0, 0, {}, "", "a directory", "parent of the store's own fresh directory"},
                       [](const KnobValue& v, ColdStoreOptions& o) {
                         if (v.text.empty()) return BadKnob(v.name, v.text, "a directory");
                         o.parent_dir = std::string(v.text);
                         return Status::Ok();
                       },
                       [](const ColdStoreOptions& o) { return o.parent_dir.empty() ? std::string("the temp dir") : o.parent_dir; });
}

}  // namespace

const KnobTable<ColdStoreOptions>& ColdStoreKnobs() {
  static const Table table({
      DirKnob(),
      Table::Switch("y_keep", &ColdStoreOptions::keep, "keep the store's directory after Close"),
      Table::Count("y_buffer_mb", 1, 1u << 20, &ColdStoreOptions::write_buffer_bytes, "RocksDB: one memtable, MiB", 20),
      Table::Count("y_cache_mb", 0, 1u << 20, &ColdStoreOptions::block_cache_bytes,
                   "RocksDB: the block cache, MiB; the paged B+-tree: its buffer pool", 20),
      Table::Count("y_row_cache_mb", 0, 1u << 20, &ColdStoreOptions::row_cache_bytes, "RocksDB: the row cache, MiB", 20),
      Table::Count("y_block_kb", 1, 1024, &ColdStoreOptions::block_bytes, "RocksDB: the data block size, KiB", 10),
      Table::Count("y_page_kb", 1, 1024, &ColdStoreOptions::page_bytes, "the paged B+-tree: its page size, KiB", 10),
      Table::Switch("y_direct", &ColdStoreOptions::direct_io, "RocksDB: direct I/O for reads, flushes and compactions"),
      Table::Switch("y_meta_cached", &ColdStoreOptions::meta_in_cache,
                    "RocksDB: index and filter blocks in the block cache; off: beside it"),
  });
  return table;
}

Result<std::unique_ptr<ColdStore>> OpenColdStore(const ColdStoreOptions& options) {
  if (options.kind == "mem") return std::unique_ptr<ColdStore>(std::make_unique<MemStore>(options.mem_faults));
  if (options.kind == "rocksdb") return RocksDbStore::Open(options);
  if (options.kind == "lmdb") return LmdbStore::Open(options);
  return Status::InvalidArgument("unknown cold store '" + options.kind + "' (known: rocksdb, lmdb, mem)");
}

}  // namespace dmindex::tiering
