// The public Iterator and MultiGet, on every design through Index::Open: ranges, bounds,
// batch continuation (no key arithmetic), empty ranges, argument errors; and the verbs
// MultiGet saves on the tree designs.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "dmindex/index.h"
#include "fabric/fabric.h"

namespace dmindex {
namespace {

class ApiIteratorTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    IndexOptions o;
    o.design = GetParam();
    o.node_bytes = 256;  // small leaves: iterations cross many of them
    EmbeddedCluster ec;
    ec.pool_bytes = 256ull << 20;
    auto cluster = Cluster::Open(ec);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    auto index = Index::Open(o, *cluster);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(index).value();
    auto session = index_->OpenSession();
    ASSERT_TRUE(session.ok());
    session_ = std::move(session).value();
    // Keys 10, 20, ..., 5000: gaps to seek into.
    for (Key k = 10; k <= 5000; k += 10) {
      ASSERT_TRUE(session_->Insert(k, k * 3).ok());
      model_[k] = k * 3;
    }
  }
  void TearDown() override {
    session_.reset();
    if (index_) {
      EXPECT_TRUE(index_->Close().ok());
    }
  }

  // The pairs an iterator yields from `start`, at most `limit` of them.
  std::vector<KeyValue> Iterate(const ReadOptions& ro, Key start, size_t limit = SIZE_MAX,
                                Status* status = nullptr) {
    std::vector<KeyValue> got;
    Iterator it = session_->NewIterator(ro);
    for (it.Seek(start); it.Valid() && got.size() < limit; it.Next()) got.push_back({it.key(), it.value()});
    if (status != nullptr) {
      *status = it.status();
    } else {
      EXPECT_TRUE(it.status().ok()) << it.status().ToString();
    }
    return got;
  }
  std::vector<KeyValue> Expected(Key start, std::optional<Key> end, size_t limit = SIZE_MAX) {
    std::vector<KeyValue> want;
    for (auto it = model_.lower_bound(start); it != model_.end() && want.size() < limit; ++it) {
      if (end && it->first >= *end) break;
      want.push_back({it->first, it->second});
    }
    return want;
  }

  std::unique_ptr<Index> index_;
  std::unique_ptr<Session> session_;
  std::map<Key, Value> model_;
};

TEST_P(ApiIteratorTest, IteratesEveryKeyInOrderWhateverTheBatchSize) {
  for (size_t readahead : {0, 1, 2, 7, 64, 1000}) {
    ReadOptions ro;
    ro.readahead = readahead;
    EXPECT_EQ(Iterate(ro, kMinKey), Expected(kMinKey, std::nullopt)) << "readahead " << readahead;
  }
}

TEST_P(ApiIteratorTest, SeeksIntoGapsAndStopsBeforeTheUpperBound) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    ReadOptions ro;
    ro.readahead = rng() % 5;  // 0: growing batches; else tiny ones, continued many times
    const Key start = 1 + rng() % 5200;
    if (i % 2 == 0) ro.upper_bound = start + rng() % 400;
    EXPECT_EQ(Iterate(ro, start), Expected(start, ro.upper_bound))
        << "start " << start << " bound " << ro.upper_bound.value_or(0);
  }
}

TEST_P(ApiIteratorTest, EmptyRangesAndTheEndAreNotErrors) {
  ReadOptions ro;
  EXPECT_TRUE(Iterate(ro, 5001).empty());       // past the last key
  ro.upper_bound = 20;
  EXPECT_TRUE(Iterate(ro, 20).empty());         // bound at the start
  EXPECT_TRUE(Iterate(ro, 30).empty());         // bound before the start
  ro.upper_bound = 21;
  EXPECT_EQ(Iterate(ro, 11), (std::vector<KeyValue>{{20, 60}}));
  ro.upper_bound = kMaxKey + 1;                 // the end of the key space: everything
  EXPECT_EQ(Iterate(ro, 4990).size(), 2u);

  Iterator it = session_->NewIterator();
  EXPECT_FALSE(it.Valid());                     // not positioned before a Seek
  it.Seek(5000);
  ASSERT_TRUE(it.Valid());
  it.Next();
  EXPECT_FALSE(it.Valid());
  it.Next();                                    // past the end: stays there
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().ok());
  it.SeekToFirst();                             // an iterator can be repositioned
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), 10u);
}

TEST_P(ApiIteratorTest, ReservedKeysAreInvalidArguments) {
  Status s;
  ReadOptions ro;
  EXPECT_TRUE(Iterate(ro, 0, SIZE_MAX, &s).empty());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ro.upper_bound = 0;
  EXPECT_TRUE(Iterate(ro, 10, SIZE_MAX, &s).empty());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
}

TEST_P(ApiIteratorTest, IterationSeesWritesBehindAndAheadOfItsBatches) {
  ReadOptions ro;
  ro.readahead = 4;
  Iterator it = session_->NewIterator(ro);
  std::vector<Key> got;
  it.Seek(kMinKey);
  ASSERT_TRUE(it.Valid());
  got.push_back(it.key());
  // Keys ahead of the current batch appear; deleted ones disappear; keys behind the
  // position are not revisited.
  ASSERT_TRUE(session_->Insert(2505, 1).ok());
  ASSERT_TRUE(session_->Delete(2510).ok());
  ASSERT_TRUE(session_->Insert(5, 1).ok());
  for (it.Next(); it.Valid(); it.Next()) got.push_back(it.key());
  ASSERT_TRUE(it.status().ok());
  EXPECT_EQ(std::count(got.begin(), got.end(), 2505), 1);
  EXPECT_EQ(std::count(got.begin(), got.end(), 2510), 0);
  EXPECT_EQ(std::count(got.begin(), got.end(), 5), 0);
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
  EXPECT_EQ(got.size(), model_.size());  // 500 - 2510 + 2505
}

TEST_P(ApiIteratorTest, MultiGetAnswersEveryKey) {
  std::vector<Key> keys = {10, 15, 5000, 0, 20, 20, 4990, 5010, kMaxKey + 1, 2500};
  std::vector<Value> values;
  const std::vector<Status> st = session_->MultiGet(keys, &values);
  ASSERT_EQ(st.size(), keys.size());
  ASSERT_EQ(values.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!IsValidKey(keys[i])) {
      EXPECT_TRUE(st[i].IsInvalidArgument()) << i;
    } else if (model_.count(keys[i])) {
      EXPECT_TRUE(st[i].ok()) << i << ": " << st[i].ToString();
      EXPECT_EQ(values[i], model_[keys[i]]) << i;
    } else {
      EXPECT_TRUE(st[i].IsNotFound()) << i << ": " << st[i].ToString();
    }
  }
  EXPECT_TRUE(session_->MultiGet({}, &values).empty());
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, ApiIteratorTest, ::testing::ValuesIn(Index::Designs()),
                         [](const auto& info) { return info.param; });

// Round trips of one MultiGet over `keys` keys spread over the whole tree.
uint64_t MultiGetRoundTrips(const std::string& design, size_t keys, bool warm, uint64_t* reads) {
  IndexOptions o;
  o.design = design;
  auto cluster = Cluster::Open(EmbeddedCluster{});
  auto index = Index::Open(o, *cluster);
  EXPECT_TRUE(index.ok());
  std::vector<KeyValue> data;
  for (Key k = 1; k <= 100000; ++k) data.push_back({2 * k, k});
  EXPECT_TRUE((*index)->BulkLoad(data).ok());
  auto session = (*index)->OpenSession();
  Value v;
  if (warm) {
    for (Key k = 1; k <= 100000; k += 16) EXPECT_TRUE((*session)->Lookup(2 * k, &v).ok());
  }
  std::vector<Key> batch;
  for (size_t i = 0; i < keys; ++i) batch.push_back(2 * (1 + i * (100000 / keys)));
  fabric::Fabric& f = (*cluster)->fabric();
  const fabric::VerbCounts before = f.TotalCounts();
  std::vector<Value> values;
  for (const Status& s : (*session)->MultiGet(batch, &values)) EXPECT_TRUE(s.ok()) << s.ToString();
  const fabric::VerbCounts c = f.TotalCounts() - before;
  for (size_t i = 0; i < keys; ++i) EXPECT_EQ(values[i], batch[i] / 2);
  *reads = c.reads;
  return c.round_trips;
}

TEST(MultiGetVerbs, ShermanWithAWarmCacheReadsEveryLeafInOneRoundTrip) {
  uint64_t reads = 0;
  EXPECT_EQ(MultiGetRoundTrips("sherman", 32, true, &reads), 1u);
  EXPECT_EQ(reads, 32u);  // 32 keys in 32 distinct leaves, each read once
}

TEST(IteratorVerbs, AnUpperBoundKeepsShermanFromReadingLeavesPastIt) {
  IndexOptions o;
  o.design = "sherman";
  auto cluster = Cluster::Open(EmbeddedCluster{});
  auto index = Index::Open(o, *cluster);
  ASSERT_TRUE(index.ok());
  std::vector<KeyValue> data;
  for (Key k = 1; k <= 20000; ++k) data.push_back({k, k});
  ASSERT_TRUE((*index)->BulkLoad(data).ok());
  auto session = (*index)->OpenSession();
  Value v;
  for (Key k = 1; k <= 20000; k += 16) ASSERT_TRUE((*session)->Lookup(k, &v).ok());
  fabric::Fabric& f = (*cluster)->fabric();
  for (const bool bounded : {false, true}) {
    ReadOptions ro;
    if (bounded) ro.upper_bound = 1003;
    const fabric::VerbCounts before = f.TotalCounts();
    Iterator it = (*session)->NewIterator(ro);
    it.Seek(1001);  // 1001, 1002: both in one leaf
    ASSERT_TRUE(it.Valid());
    const fabric::VerbCounts c = f.TotalCounts() - before;
    EXPECT_EQ(c.round_trips, 1u);
    // Unbounded, the first batch (16 pairs at 32 per leaf) may need the next leaf too, so
    // both are read in the batch; bounded, only the leaf holding the range.
    EXPECT_EQ(c.reads, bounded ? 1u : 2u);
  }
}

TEST(MultiGetVerbs, NaivePaysOneRoundTripPerLevelNotPerKey) {
  uint64_t reads = 0;
  // 100k keys of 1 KB nodes: a tree of 4 levels; 32 lookups alone would take 128 round trips.
  EXPECT_EQ(MultiGetRoundTrips("naive", 32, false, &reads), 4u);
  EXPECT_LT(reads, 32u * 4);  // the root and upper levels are read once for all keys
}

}  // namespace
}  // namespace dmindex
