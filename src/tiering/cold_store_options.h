// How a ColdStore is opened: which store, where its files go, and each store's settings.
// Defaults follow the IndeXY paper's code (digest §10), scaled to this machine; the design
// and baseline knobs (docs/INDEXY.md) set them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/knob_table.h"
#include "dmindex/status.h"
#include "tiering/cold_store.h"

namespace dmindex::tiering {

// Injected behaviour of the in-memory store (tests and CI without a disk).
struct MemStoreFaults {
  std::chrono::microseconds get_latency{0};
  std::chrono::microseconds write_latency{0};
  std::chrono::microseconds seek_latency{0};
  // Every n-th call (Get, Write or iterator Seek, counted together) fails with IoError and
  // changes nothing; 0: never.
  uint64_t fail_every = 0;
};

struct ColdStoreOptions {
  std::string kind = "rocksdb";  // rocksdb | lmdb | mem
  // Parent of the store's own fresh directory (tiering/store_dir.h); empty: the system's
  // temporary directory. The directory is removed on Close unless `keep`.
  std::string parent_dir;
  bool keep = false;
  // The store's own directory, used as it is (created if missing, its data reopened) and
  // kept; set, it replaces parent_dir and keep.
  std::string dir;

  // RocksDB (paper §III.A, its code's RocksdbY): no WAL, no compression, bloom filters of
  // 10 bits per key, universal compaction, every file kept open.
  uint64_t write_buffer_bytes = 16ull << 20;  // one memtable (the paper's "write buffer")
  uint64_t block_cache_bytes = 16ull << 20;   // LRU block cache (the paper's "read cache")
  uint64_t row_cache_bytes = 0;               // RocksDB baseline: row cache (paper "Row Cache")
  uint32_t block_bytes = 4096;                // data block size (Table II varies it)
  uint32_t bloom_bits_per_key = 10;
  uint32_t background_threads = 2;            // IncreaseParallelism (paper code: 4; 2 cores here)
  bool direct_io = false;                     // direct reads and flush/compaction I/O
  // Index and filter blocks in the block cache (counted in the configured memory, digest trap
  // R8), or held by the table readers beside it (RocksDB's default; counted in Usage's
  // memory_bytes all the same): at small caches the filters of a few million keys no longer
  // fit and every Get reads them from disk.
  bool meta_in_cache = true;

  // The paged B+-tree (designs/btreedisk/paged_store.h, kind "btree"): its page size; its
  // buffer pool is block_cache_bytes.
  uint32_t page_bytes = 4096;

  // LMDB: a sparse map reserved up front, no syncs, no read-ahead; readers per environment.
  uint64_t lmdb_map_bytes = 64ull << 30;
  uint32_t lmdb_max_readers = 512;

  MemStoreFaults mem_faults;
};

// The knobs of a design that opens a store (indexy, the store baselines): `y_dir`, `y_keep`,
// `y_buffer_mb`, `y_cache_mb`, `y_row_cache_mb`, `y_block_kb`, `y_page_kb`, `y_direct`,
// `y_meta_cached` (docs/INDEXY.md); the designs lift them into their own tables.
const KnobTable<ColdStoreOptions>& ColdStoreKnobs();

// Opens a fresh, empty store in a new directory (none for "mem"). InvalidArgument for an
// unknown kind, IoError if the store cannot be created.
Result<std::unique_ptr<ColdStore>> OpenColdStore(const ColdStoreOptions& options);

}  // namespace dmindex::tiering
