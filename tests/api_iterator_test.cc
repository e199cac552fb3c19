// The public Iterator and MultiGet, on every design through Index::Open: ranges, bounds,
// batch continuation (no key arithmetic), empty ranges, argument errors; and the verbs
// MultiGet saves on the tree designs.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "api/cluster_access.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "test_fabrics.h"
#include "u64_api.h"

namespace dmindex {
namespace {

// The designs all take the u64 format: integers here, U64Key at the API.
using Key = uint64_t;
using Value = uint64_t;
using Pair = testing::U64Pair;
using u64::kMinKey;
using u64::kMaxKey;
using u64::IsValidKey;

ReadOptions Bounded(std::optional<Key> upper, size_t readahead = 0) {
  ReadOptions ro;
  if (upper) ro.upper_bound = U64Key(*upper).str();
  ro.readahead = readahead;
  return ro;
}

class ApiIteratorTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
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
  std::vector<Pair> Iterate(const ReadOptions& ro, Key start, size_t limit = SIZE_MAX,
                            Status* status = nullptr) {
    std::vector<Pair> got;
    Iterator it = session_->NewIterator(ro);
    for (it.Seek(U64Key(start)); it.Valid() && got.size() < limit; it.Next())
      got.push_back({u64::Decode(it.key()), u64::Decode(it.value())});
    if (status != nullptr) {
      *status = it.status();
    } else {
      EXPECT_TRUE(it.status().ok()) << it.status().ToString();
    }
    return got;
  }
  std::vector<Pair> Expected(Key start, std::optional<Key> end, size_t limit = SIZE_MAX) {
    std::vector<Pair> want;
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
    EXPECT_EQ(Iterate(Bounded(std::nullopt, readahead), kMinKey), Expected(kMinKey, std::nullopt))
        << "readahead " << readahead;
  }
}

TEST_P(ApiIteratorTest, SeeksIntoGapsAndStopsBeforeTheUpperBound) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    const size_t readahead = rng() % 5;  // 0: growing batches; else tiny ones, continued many times
    const Key start = 1 + rng() % 5200;
    std::optional<Key> bound;
    if (i % 2 == 0) bound = start + rng() % 400;
    EXPECT_EQ(Iterate(Bounded(bound, readahead), start), Expected(start, bound))
        << "start " << start << " bound " << bound.value_or(0);
  }
}

TEST_P(ApiIteratorTest, EmptyRangesAndTheEndAreNotErrors) {
  EXPECT_TRUE(Iterate(Bounded(std::nullopt), 5001).empty());  // past the last key
  EXPECT_TRUE(Iterate(Bounded(20), 20).empty());              // bound at the start
  EXPECT_TRUE(Iterate(Bounded(20), 30).empty());              // bound before the start
  EXPECT_EQ(Iterate(Bounded(21), 11), (std::vector<Pair>{{20, 60}}));
  EXPECT_EQ(Iterate(Bounded(kMaxKey + 1), 4990).size(), 2u);  // the end of the key space

  Iterator it = session_->NewIterator();
  EXPECT_FALSE(it.Valid());                     // not positioned before a Seek
  it.Seek(U64Key(5000));
  ASSERT_TRUE(it.Valid());
  it.Next();
  EXPECT_FALSE(it.Valid());
  it.Next();                                    // past the end: stays there
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().ok());
  it.SeekToFirst();                             // an iterator can be repositioned
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(u64::Decode(it.key()), 10u);
}

TEST_P(ApiIteratorTest, PositionsOfTheWrongSizeAreInvalidArguments) {
  // Reserved integers are fine as positions: nothing is stored there.
  Status s;
  EXPECT_EQ(Iterate(Bounded(std::nullopt), 0, 1, &s).size(), 1u);
  EXPECT_TRUE(s.ok()) << s.ToString();
  Iterator it = session_->NewIterator();
  it.Seek("short");
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsInvalidArgument()) << it.status().ToString();
  ReadOptions ro;
  ro.upper_bound = "too long for a u64 key";
  Iterator bounded = session_->NewIterator(ro);
  bounded.SeekToFirst();
  EXPECT_TRUE(bounded.status().IsInvalidArgument()) << bounded.status().ToString();
}

TEST_P(ApiIteratorTest, IterationSeesWritesBehindAndAheadOfItsBatches) {
  ReadOptions ro;
  ro.readahead = 4;
  Iterator it = session_->NewIterator(ro);
  std::vector<Key> got;
  it.Seek(U64Key(kMinKey));
  ASSERT_TRUE(it.Valid());
  got.push_back(u64::Decode(it.key()));
  // Keys ahead of the current batch appear; deleted ones disappear; keys behind the
  // position are not revisited.
  ASSERT_TRUE(session_->Insert(2505, 1).ok());
  ASSERT_TRUE(session_->Delete(2510).ok());
  ASSERT_TRUE(session_->Insert(5, 1).ok());
  for (it.Next(); it.Valid(); it.Next()) got.push_back(u64::Decode(it.key()));
  ASSERT_TRUE(it.status().ok());
  EXPECT_EQ(std::count(got.begin(), got.end(), 2505), 1);
  EXPECT_EQ(std::count(got.begin(), got.end(), 2510), 0);
  EXPECT_EQ(std::count(got.begin(), got.end(), 5), 0);
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
  EXPECT_EQ(got.size(), model_.size());  // 500 - 2510 + 2505
}

TEST_P(ApiIteratorTest, MultiGetAnswersEveryKey) {
  std::vector<Key> keys = {10, 15, 5000, 0, 20, 20, 4990, 5010, kMaxKey + 1, 2500};
  std::vector<std::string> encoded;
  for (Key k : keys) encoded.push_back(U64Key(k).str());
  encoded.push_back("short");  // not a u64 key
  keys.push_back(0);
  const std::vector<Slice> slices(encoded.begin(), encoded.end());
  std::vector<std::string> values;
  const std::vector<Status> st = session_->MultiGet(slices, &values);
  ASSERT_EQ(st.size(), keys.size());
  ASSERT_EQ(values.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!IsValidKey(keys[i])) {
      EXPECT_TRUE(st[i].IsInvalidArgument()) << i;
    } else if (model_.count(keys[i])) {
      EXPECT_TRUE(st[i].ok()) << i << ": " << st[i].ToString();
      EXPECT_EQ(u64::Decode(values[i]), model_[keys[i]]) << i;
    } else {
      EXPECT_TRUE(st[i].IsNotFound()) << i << ": " << st[i].ToString();
    }
  }
  EXPECT_TRUE(session_->MultiGet({}, &values).empty());
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, ApiIteratorTest, ::testing::ValuesIn(Index::Designs()),
                         testing::FabricParamName());

// Round trips of one MultiGet over `keys` keys spread over the whole tree.
uint64_t MultiGetRoundTrips(const std::string& design, size_t keys, bool warm, uint64_t* reads) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.design = design;
  auto cluster = Cluster::Open(EmbeddedCluster{});
  auto index = Index::Open(o, *cluster);
  EXPECT_TRUE(index.ok());
  std::vector<Pair> data;
  for (Key k = 1; k <= 100000; ++k) data.push_back({2 * k, k});
  EXPECT_TRUE(testing::BulkLoadU64(**index, data).ok());
  auto session = (*index)->OpenSession();
  uint64_t v;
  if (warm) {
    for (Key k = 1; k <= 100000; k += 16) EXPECT_TRUE((*session)->Lookup(2 * k, &v).ok());
  }
  std::vector<Key> batch;
  std::vector<std::string> encoded;
  for (size_t i = 0; i < keys; ++i) {
    batch.push_back(2 * (1 + i * (100000 / keys)));
    encoded.push_back(U64Key(batch.back()).str());
  }
  const std::vector<Slice> slices(encoded.begin(), encoded.end());
  fabric::Fabric& f = FabricOf(**cluster);
  const fabric::VerbCounts before = f.TotalCounts();
  std::vector<std::string> values;
  for (const Status& s : (*session)->MultiGet(slices, &values)) EXPECT_TRUE(s.ok()) << s.ToString();
  const fabric::VerbCounts c = f.TotalCounts() - before;
  for (size_t i = 0; i < keys; ++i) EXPECT_EQ(u64::Decode(values[i]), batch[i] / 2);
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
  o.key_format = KeyFormat::kU64;
  o.design = "sherman";
  auto cluster = Cluster::Open(EmbeddedCluster{});
  auto index = Index::Open(o, *cluster);
  ASSERT_TRUE(index.ok());
  std::vector<Pair> data;
  for (Key k = 1; k <= 20000; ++k) data.push_back({k, k});
  ASSERT_TRUE(testing::BulkLoadU64(**index, data).ok());
  auto session = (*index)->OpenSession();
  uint64_t v;
  for (Key k = 1; k <= 20000; k += 16) ASSERT_TRUE((*session)->Lookup(k, &v).ok());
  fabric::Fabric& f = FabricOf(**cluster);
  for (const bool bounded : {false, true}) {
    const ReadOptions ro = Bounded(bounded ? std::optional<Key>(1003) : std::nullopt);
    const fabric::VerbCounts before = f.TotalCounts();
    Iterator it = (*session)->NewIterator(ro);
    it.Seek(U64Key(1001));  // 1001, 1002: both in one leaf
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
