// The cold stores (src/tiering): each of rocksdb, lmdb and mem against the same contract -
// point reads, batched writes applied in order and atomically, ordered iteration by unsigned
// bytes, exact counters, a directory of its own removed on Close - plus the in-memory store's
// injected latency and failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "tiering/cold_store_options.h"
#include "tiering/key_codec.h"
#include "tiering/mem_store.h"

namespace dmindex::tiering {
namespace {

namespace fs = std::filesystem;

class ColdStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    parent_ = fs::temp_directory_path() / ("dmindex-cold-store-test-" + std::to_string(::getpid()));
    fs::create_directories(parent_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(parent_, ec);
  }
  ColdStoreOptions Options() const {
    ColdStoreOptions o;
    o.kind = GetParam();
    o.parent_dir = parent_.string();
    o.write_buffer_bytes = 1 << 20;
    o.block_cache_bytes = 1 << 20;
    o.lmdb_map_bytes = 1ull << 30;
    return o;
  }
  std::unique_ptr<ColdStore> Open() {
    auto s = OpenColdStore(Options());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  size_t EntriesInParent() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(parent_), fs::directory_iterator()));
  }
  static std::vector<std::pair<std::string, std::string>> ScanAll(ColdStore& store, std::string_view from = "") {
    auto it = store.NewIterator();
    EXPECT_TRUE(it.ok());
    std::vector<std::pair<std::string, std::string>> out;
    for ((*it)->Seek(from); (*it)->Valid(); (*it)->Next())
      out.emplace_back(std::string((*it)->key()), std::string((*it)->value()));
    EXPECT_TRUE((*it)->status().ok()) << (*it)->status().ToString();
    return out;
  }

  fs::path parent_;
};

TEST_P(ColdStoreTest, PutGetDeleteInBatchOrder) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::string v;
  EXPECT_TRUE(store->Get("a", &v).IsNotFound());
  ColdBatch b;
  b.Put("a", "1");
  b.Put("b", "2");
  b.Put("a", "3");  // later operations of a batch win
  b.Delete("b");
  b.Delete("never-there");
  b.Put("c", std::string(1000, 'x'));
  ASSERT_TRUE(store->Write(b).ok());
  ASSERT_TRUE(store->Get("a", &v).ok());
  EXPECT_EQ(v, "3");
  EXPECT_TRUE(store->Get("b", &v).IsNotFound());
  ASSERT_TRUE(store->Get("c", &v).ok());
  EXPECT_EQ(v, std::string(1000, 'x'));
  const ColdStoreCounters c = store->Counters();
  EXPECT_EQ(c.gets, 4u);
  EXPECT_EQ(c.get_hits, 2u);
  EXPECT_EQ(c.writes, 1u);
  EXPECT_EQ(c.written_ops, 6u);
  EXPECT_EQ(c.written_bytes, b.bytes());
  ASSERT_TRUE(store->Close().ok());
}

TEST_P(ColdStoreTest, IteratesInUnsignedByteOrder) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  // Bytes >= 0x80 sort after ASCII (unsigned), a key sorts right before its extensions, and
  // big-endian integers sort numerically.
  std::map<std::string, std::string> model;
  ColdBatch b;
  for (std::string k : {std::string("ab"), std::string("abc"), std::string("a"), std::string("\xff"),
                        std::string("\x80x"), std::string("b"), std::string("ab\x01")}) {
    b.Put(k, "v" + k);
    model[k] = "v" + k;
  }
  for (uint64_t n : {uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{1} << 40, ~uint64_t{0} - 1}) {
    b.Put(EncodeU64(n), "n");
    model[EncodeU64(n)] = "n";
  }
  ASSERT_TRUE(store->Write(b).ok());
  std::vector<std::pair<std::string, std::string>> want(model.begin(), model.end());
  // std::map<std::string> compares by char_traits<char>::compare, which is unsigned (memcmp).
  EXPECT_EQ(ScanAll(*store), want);
  // Seek lands on the first key >= target.
  auto from_ab = ScanAll(*store, std::string("ab\0", 3));
  ASSERT_FALSE(from_ab.empty());
  EXPECT_EQ(from_ab.front().first, "ab\x01");
  EXPECT_TRUE(ScanAll(*store, std::string(9, '\xff')).empty());
  EXPECT_EQ(DecodeU64(EncodeU64(0x0102030405060708ull)), 0x0102030405060708ull);
}

TEST_P(ColdStoreTest, IteratorSeesWritesBeforeItsCreation) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ColdBatch b;
  for (uint64_t i = 1; i <= 2000; ++i) b.Put(EncodeU64(i), EncodeU64(i * 7));
  ASSERT_TRUE(store->Write(b).ok());
  auto all = ScanAll(*store);
  ASSERT_EQ(all.size(), 2000u);
  for (uint64_t i = 1; i <= 2000; ++i) {
    ASSERT_EQ(DecodeU64(all[i - 1].first), i);
    ASSERT_EQ(DecodeU64(all[i - 1].second), i * 7);
  }
  ColdBatch del;
  for (uint64_t i = 1; i <= 2000; i += 2) del.Delete(EncodeU64(i));
  ASSERT_TRUE(store->Write(del).ok());
  all = ScanAll(*store, EncodeU64(1000));
  ASSERT_EQ(all.size(), 501u);
  EXPECT_EQ(DecodeU64(all.front().first), 1000u);
}

TEST_P(ColdStoreTest, UsageGrowsWithData) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const ColdStoreUsage before = store->Usage();
  for (int round = 0; round < 8; ++round) {
    ColdBatch b;
    for (uint64_t i = 0; i < 4096; ++i) b.Put(EncodeU64(round * 4096 + i), std::string(100, 'v'));
    ASSERT_TRUE(store->Write(b).ok());
  }
  const ColdStoreUsage after = store->Usage();
  // 32768 pairs of 108 bytes: 3.5 MB in memtables (rocksdb, flushed past 1 MB), pages (lmdb)
  // or the map (mem).
  EXPECT_GT(after.disk_bytes + after.memory_bytes, before.disk_bytes + before.memory_bytes + (1u << 20));
}

TEST_P(ColdStoreTest, OwnDirectoryRemovedOnCloseUnlessKept) {
  const size_t before = EntriesInParent();
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ColdBatch b;
    b.Put("k", "v");
    ASSERT_TRUE(store->Write(b).ok());
    EXPECT_EQ(EntriesInParent(), before + (GetParam() == "mem" ? 0 : 1));
    ASSERT_TRUE(store->Close().ok());
    EXPECT_TRUE(store->Close().ok());  // a second Close is OK
    EXPECT_EQ(EntriesInParent(), before);
  }
  {
    auto store = Open();  // not closed: the destructor closes it
    ASSERT_NE(store, nullptr);
  }
  EXPECT_EQ(EntriesInParent(), before);
  if (GetParam() == "mem") return;
  ColdStoreOptions keep = Options();
  keep.keep = true;
  auto kept = OpenColdStore(keep);
  ASSERT_TRUE(kept.ok());
  ASSERT_TRUE((*kept)->Close().ok());
  EXPECT_EQ(EntriesInParent(), before + 1);
}

// Writers of disjoint key ranges and readers at once: every batch is seen whole or not at all
// (a batch writes one value to all its keys).
TEST_P(ColdStoreTest, RacingWritersAndReadersSeeWholeBatches) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kWriters = 2, kKeys = 64, kRounds = 150;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> torn{0}, reads{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      for (int r = 1; r <= kRounds; ++r) {
        ColdBatch b;
        for (int k = 0; k < kKeys; ++k) b.Put(EncodeU64(w * 1000 + k), EncodeU64(r));
        ASSERT_TRUE(store->Write(b).ok());
      }
    });
  threads.emplace_back([&] {
    do {
      auto it = store->NewIterator();
      ASSERT_TRUE(it.ok());
      std::map<uint64_t, std::set<uint64_t>> rounds_seen;  // writer -> values
      for ((*it)->Seek(""); (*it)->Valid(); (*it)->Next())
        rounds_seen[DecodeU64((*it)->key()) / 1000].insert(DecodeU64((*it)->value()));
      ASSERT_TRUE((*it)->status().ok());
      // rocksdb and lmdb iterators are snapshots; the mem store's chunks are too (64 keys
      // per writer fit one chunk).
      for (auto& [w, values] : rounds_seen)
        if (values.size() != 1) torn.fetch_add(1);
      reads.fetch_add(1);
    } while (!stop.load());
  });
  for (int i = 0; i < kWriters; ++i) threads[i].join();
  stop.store(true);
  threads.back().join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  std::string v;
  ASSERT_TRUE(store->Get(EncodeU64(1000 + 5), &v).ok());
  EXPECT_EQ(DecodeU64(v), static_cast<uint64_t>(kRounds));
}

INSTANTIATE_TEST_SUITE_P(Stores, ColdStoreTest, ::testing::Values("mem", "rocksdb", "lmdb"),
                         [](const auto& info) { return info.param; });

TEST(ColdStoreOptionsTest, BadKindAndLimitsAreClearErrors) {
  ColdStoreOptions o;
  o.kind = "leveldb";
  auto s = OpenColdStore(o);
  ASSERT_TRUE(s.status().IsInvalidArgument());
  EXPECT_NE(s.status().message().find("rocksdb, lmdb, mem"), std::string::npos);
  o.kind = "rocksdb";
  o.write_buffer_bytes = 10;
  EXPECT_TRUE(OpenColdStore(o).status().IsInvalidArgument());
  o.kind = "lmdb";
  o.parent_dir = (fs::temp_directory_path() / ("dmindex-lmdb-key-" + std::to_string(::getpid()))).string();
  o.lmdb_map_bytes = 1 << 26;
  auto lmdb = OpenColdStore(o);
  ASSERT_TRUE(lmdb.ok()) << lmdb.status().ToString();
  ColdBatch b;
  b.Put(std::string(600, 'k'), "v");
  Status st = (*lmdb)->Write(b);
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("511"), std::string::npos) << st.ToString();
  ASSERT_TRUE((*lmdb)->Close().ok());
  std::error_code ec;
  fs::remove_all(o.parent_dir, ec);
}

TEST(MemStoreTest, InjectedFailuresChangeNothingAndNameTheCall) {
  MemStore store;
  ColdBatch b;
  b.Put("k", "v1");
  ASSERT_TRUE(store.Write(b).ok());
  MemStoreFaults f;
  f.fail_every = 2;
  store.SetFaults(f);
  std::string v;
  int failures = 0;
  for (int i = 0; i < 10; ++i) {
    ColdBatch w;
    w.Put("k", "v" + std::to_string(i + 2));
    Status st = store.Write(w);
    if (!st.ok()) {
      ++failures;
      EXPECT_TRUE(st.IsIoError());
      EXPECT_NE(st.message().find("injected failure of write"), std::string::npos);
    }
  }
  EXPECT_EQ(failures, 5);
  store.SetFaults({});
  ASSERT_TRUE(store.Get("k", &v).ok());
  EXPECT_EQ(v, "v11");  // calls 2, 4, .., 10 failed (i even); i = 9 wrote v11
}

TEST(MemStoreTest, InjectedLatencyDelaysCalls) {
  MemStoreFaults f;
  f.get_latency = std::chrono::milliseconds(20);
  MemStore store(f);
  std::string v;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(store.Get("x", &v).IsNotFound());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
}

}  // namespace
}  // namespace dmindex::tiering
