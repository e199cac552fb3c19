#include "designs/absl/absl_index.h"

#include <absl/container/btree_map.h>

#include <bit>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "common/option_checks.h"
#include "common/runtime.h"

namespace dmindex::designs {
namespace {

// Counts what the map asks the heap for (its nodes), into a counter the index owns.
template <class T>
class CountingAllocator {
 public:
  using value_type = T;
  explicit CountingAllocator(uint64_t* bytes) : bytes_(bytes) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& other) : bytes_(other.bytes_) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    *bytes_ += n * sizeof(T);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    *bytes_ -= n * sizeof(T);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const CountingAllocator<U>& other) const { return bytes_ == other.bytes_; }

 private:
  template <class>
  friend class CountingAllocator;
  uint64_t* bytes_;
};

// A std::string's heap bytes: none while it fits the string object itself (small-string
// optimisation), else its capacity and the terminator.
uint64_t StringHeapBytes(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

// A stored value in 16 bytes: an 8-byte value (the u64 format's usual one) in place, any
// other size in a string of its own. (A std::string in the slot took 32 bytes: abseil's
// 256-byte nodes then held 6 entries of the u64 format instead of 10, a deeper tree.)
class MapValue {
 public:
  void Set(Slice value) {
    if (value.size() == 8) {
      std::memcpy(&raw_, value.data(), 8);
      other_.reset();
    } else if (other_) {
      other_->assign(value.data(), value.size());
    } else {
      other_ = std::make_unique<std::string>(value);
    }
  }
  void Read(std::string* out) const {
    if (other_) *out = *other_;
    else out->assign(reinterpret_cast<const char*>(&raw_), 8);
  }
  uint64_t HeapBytes() const { return other_ ? sizeof(std::string) + StringHeapBytes(*other_) : 0; }

 private:
  uint64_t raw_ = 0;  // the value's 8 bytes as they came (no byte order: never compared)
  std::unique_ptr<std::string> other_;
};

// The map's key for each format: the integer (numeric order is the order of its 8 big-endian
// bytes), or the bytes themselves.
struct U64MapKey {
  using Type = uint64_t;
  static Type From(Slice key) {
    uint64_t v;
    std::memcpy(&v, key.data(), 8);
    return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
  }
  static std::string Bytes(Type k) { return ::dmindex::U64Key(k).str(); }
  static uint64_t HeapBytes(Type) { return 0; }
};
struct ByteMapKey {
  using Type = std::string;
  static Type From(Slice key) { return std::string(key); }
  static std::string Bytes(const Type& k) { return k; }
  static uint64_t HeapBytes(const Type& k) { return StringHeapBytes(k); }
};

// The map and its byte count, guarded by one mutex: shared for reads, exclusive for writes.
template <class K>
class LockedMap {
 public:
  using Key = typename K::Type;
  using Slot = std::pair<const Key, MapValue>;
  using Map = absl::btree_map<Key, MapValue, std::less<Key>, CountingAllocator<Slot>>;

  LockedMap() : map_(CountingAllocator<Slot>(&node_bytes_)) {}

  Status Lookup(Slice key, std::string* value) const {
    std::shared_lock lock(mu_);
    auto it = map_.find(K::From(key));
    if (it == map_.end()) return Status::NotFound();
    it->second.Read(value);
    return Status::Ok();
  }
  Status Insert(Slice key, Slice value) {
    std::unique_lock lock(mu_);
    auto [it, inserted] = map_.try_emplace(K::From(key));
    if (inserted) data_bytes_ += K::HeapBytes(it->first);
    Assign(it->second, value);
    return Status::Ok();
  }
  Status Update(Slice key, Slice value) {
    std::unique_lock lock(mu_);
    auto it = map_.find(K::From(key));
    if (it == map_.end()) return Status::NotFound();
    Assign(it->second, value);
    return Status::Ok();
  }
  Status Delete(Slice key) {
    std::unique_lock lock(mu_);
    auto it = map_.find(K::From(key));
    if (it == map_.end()) return Status::NotFound();
    data_bytes_ -= K::HeapBytes(it->first) + it->second.HeapBytes();
    map_.erase(it);
    return Status::Ok();
  }
  Status Scan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) const {
    std::shared_lock lock(mu_);
    const Key start = K::From(range.start);
    auto it = range.after_start ? map_.upper_bound(start) : map_.lower_bound(start);
    for (; it != map_.end() && out->size() < count; ++it) {
      std::string key = K::Bytes(it->first);
      if (range.end && Slice(key) >= Slice(*range.end)) break;
      out->push_back({std::move(key), ""});
      it->second.Read(&out->back().value);
    }
    return Status::Ok();
  }
  // The map's own reverse path: from the end of `range` down (no windows, as the generic
  // reverse scan needs).
  Status ScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) const {
    std::shared_lock lock(mu_);
    auto it = !range.end ? map_.end()
              : range.end_inclusive ? map_.upper_bound(K::From(*range.end))
                                    : map_.lower_bound(K::From(*range.end));
    while (it != map_.begin() && out->size() < count) {
      --it;
      std::string key = K::Bytes(it->first);
      if (Slice(key) < Slice(range.start)) break;
      out->push_back({std::move(key), ""});
      it->second.Read(&out->back().value);
    }
    return Status::Ok();
  }
  Status BulkLoad(std::span<const KeyValue> sorted) {
    std::unique_lock lock(mu_);
    if (!map_.empty()) return Status::InvalidArgument("BulkLoad needs an empty index");
    for (const KeyValue& kv : sorted) {
      auto it = map_.emplace_hint(map_.end(), K::From(kv.key), MapValue());
      Assign(it->second, kv.value);
      data_bytes_ += K::HeapBytes(it->first);
    }
    return Status::Ok();
  }
  uint64_t bytes() const {
    std::shared_lock lock(mu_);
    return node_bytes_ + data_bytes_;
  }
  uint64_t size() const {
    std::shared_lock lock(mu_);
    return map_.size();
  }

 private:
  void Assign(MapValue& stored, Slice value) {
    data_bytes_ -= stored.HeapBytes();
    stored.Set(value);
    data_bytes_ += stored.HeapBytes();
  }

  mutable runtime::SharedMutex mu_;
  uint64_t node_bytes_ = 0;  // the map's nodes (CountingAllocator)
  uint64_t data_bytes_ = 0;  // keys' and values' heap bytes
  Map map_;                  // declared after the counters its allocator writes to
};

template <class K>
class AbslSession final : public Session {
 public:
  explicit AbslSession(LockedMap<K>& map) : map_(map) {}

 private:
  Status DoLookup(Slice key, std::string* value) override { return map_.Lookup(key, value); }
  Status DoInsert(Slice key, Slice value) override { return map_.Insert(key, value); }
  Status DoUpdate(Slice key, Slice value) override { return map_.Update(key, value); }
  Status DoDelete(Slice key) override { return map_.Delete(key); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    return map_.Scan(range, count, out);
  }
  Status DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) override {
    return map_.ScanReverse(range, count, out);
  }

  LockedMap<K>& map_;
};

template <class K>
class AbslIndex final : public Index {
 public:
  explicit AbslIndex(const IndexOptions& options) : Index("absl", options) {}

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override { return map_.BulkLoad(sorted); }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    (void)compute_node;  // one map for all compute nodes
    return std::unique_ptr<Session>(std::make_unique<AbslSession<K>>(map_));
  }
  IndexStats DoStats() const override {
    IndexStats s;
    s.cache_bytes = map_.bytes();  // the whole map is local
    return s;
  }
  void AddProperties(Properties* out) const override { out->emplace_back("dmindex.absl.entries", map_.size()); }

  LockedMap<K> map_;
};

}  // namespace

Result<std::unique_ptr<Index>> MakeAbslIndex(fabric::Fabric& fabric, const IndexOptions& options) {
  (void)fabric;
  DMX_RETURN_IF_ERROR(CheckIndexOptions(options, 0, {}));
  if (options.key_format == KeyFormat::kU64) return std::unique_ptr<Index>(std::make_unique<AbslIndex<U64MapKey>>(options));
  return std::unique_ptr<Index>(std::make_unique<AbslIndex<ByteMapKey>>(options));
}

}  // namespace dmindex::designs
