// ColdStore: IndeXY's on-disk index Y (and the baselines' whole store) behind one small
// interface: point reads, batched writes, an ordered iterator and the bytes it uses.
// Keys and values are byte strings; a store orders keys by unsigned byte comparison (the
// default order of RocksDB and LMDB), so callers encode keys whose byte order is their
// order (tiering/key_codec.h for 8-byte integers: big-endian).
//
// Every store is safe for concurrent use by any number of threads. A Write's effect on each
// key is atomic and visible to every Get and every iterator created after it returns; RocksDB,
// LMDB and the in-memory store apply the whole batch atomically (readers see all of it or none
// of it), the paged B+-tree of designs/btreedisk key by key. IndeXY needs no more than per-key
// atomicity: the keys of a batch it writes stay in X, which answers for them, until the
// batch is written. Each pair an iterator returns, and each key it
// skips, reflects the store at some instant between the iterator's creation and the call that
// moved it there (RocksDB and LMDB are stronger: a snapshot taken at creation; the in-memory
// store copies chunks). IndeXY's merged scan needs no more than that (docs/INDEXY.md).
//
// Durability is not promised: an index on a volatile memory pool does not need it, so the
// stores run without a write-ahead log or syncs (docs/INDEXY.md).
#pragma once

#include <cstdint>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dmindex/status.h"

namespace dmindex::tiering {

// Puts and deletes applied in order by one ColdStore::Write.
class ColdBatch {
 public:
  struct Op {
    bool is_delete = false;
    std::string key;
    std::string value;  // empty for a delete
  };

  void Put(std::string_view key, std::string_view value) {
    bytes_ += key.size() + value.size();
    ops_.push_back(Op{false, std::string(key), std::string(value)});
  }
  void Delete(std::string_view key) {
    bytes_ += key.size();
    ops_.push_back(Op{true, std::string(key), {}});
  }
  void Clear() {
    ops_.clear();
    bytes_ = 0;
  }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  // Key and value bytes of all operations (what the store is asked to write).
  uint64_t bytes() const { return bytes_; }
  const std::vector<Op>& ops() const { return ops_; }

 private:
  std::vector<Op> ops_;
  uint64_t bytes_ = 0;
};

// Forward iteration over a store in key order. Not thread-safe (one per thread); the store
// must outlive it. After an error, Valid() is false and status() says why.
class ColdIterator {
 public:
  virtual ~ColdIterator() = default;
  // Positions at the first key >= target.
  virtual void Seek(std::string_view target) = 0;
  virtual bool Valid() const = 0;
  virtual void Next() = 0;
  // The current pair; valid until the next Seek/Next.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual Status status() const = 0;
};

// What a store occupies. `disk_bytes`: its files (RocksDB: SST files and memtables not yet
// flushed are counted where they are; LMDB: the pages of its map in use). `memory_bytes`:
// memory the store itself holds beyond the OS page cache (memtables, block and row caches;
// LMDB has none of its own: it reads through the page cache, which is unbounded unless the
// host limits it - docs/INDEXY.md says what a "memory limit" includes).
struct ColdStoreUsage {
  uint64_t disk_bytes = 0;
  uint64_t memory_bytes = 0;
};

// Counters of the calls a store served (exact; reads and writes of the interface, not of
// the device).
struct ColdStoreCounters {
  uint64_t gets = 0;
  uint64_t get_hits = 0;
  uint64_t writes = 0;         // Write calls
  uint64_t written_ops = 0;    // puts and deletes in them
  uint64_t written_bytes = 0;  // key and value bytes in them
  uint64_t seeks = 0;          // iterator Seek calls
};

class ColdStore {
 public:
  virtual ~ColdStore() = default;
  // "rocksdb", "lmdb", "mem".
  virtual std::string_view kind() const = 0;
  // NotFound if absent; IoError (or the store's own code) on failure.
  virtual Status Get(std::string_view key, std::string* value) = 0;
  virtual Status Write(const ColdBatch& batch) = 0;
  virtual Result<std::unique_ptr<ColdIterator>> NewIterator() = 0;
  virtual ColdStoreUsage Usage() = 0;
  virtual ColdStoreCounters Counters() const = 0;
  // The longest key the store takes (LMDB: 511 bytes); SIZE_MAX for no limit of its own.
  virtual size_t max_key_bytes() const { return SIZE_MAX; }
  // Flushes, closes files and (unless the store was told to keep it) removes its directory.
  // Iterators must be gone. A second Close is OK; the destructor closes a store not closed.
  virtual Status Close() = 0;
};

}  // namespace dmindex::tiering
