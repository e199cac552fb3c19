// Misuse of object lifetimes through the public API, on every design: each answers a clear
// Status and never touches freed memory (CI runs this under ASan): Stats and properties after
// Close, an iterator used after its session (and index) went, a session used after its
// Index was destroyed, and a moved-from iterator.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dmindex/index.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

class ApiLifetimeTest : public ::testing::TestWithParam<std::string> {
 protected:
  // An index of the design holding keys k000 .. k099, and a session on it.
  void SetUp() override {
    EmbeddedCluster e;
    e.pool_bytes = 128ull << 20;
    IndexOptions o;
    o.design = GetParam();
    auto cluster = Cluster::Open(e);
    ASSERT_TRUE(cluster.ok());
    auto index = Index::Open(o, *cluster);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(index).value();
    auto session = index_->OpenSession();
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(session_->Insert(KeyOf(i), "value").ok());
  }

  static std::string KeyOf(int i) {
    std::string k = "k000";
    k[1] = static_cast<char>('0' + i / 100);
    k[2] = static_cast<char>('0' + i / 10 % 10);
    k[3] = static_cast<char>('0' + i % 10);
    return k;
  }

  static void ExpectRefused(const Status& s, const char* call) {
    EXPECT_TRUE(s.IsInvalidArgument()) << call << ": " << s.ToString();
    EXPECT_NE(s.message().find("destroyed"), std::string::npos) << call << ": " << s.ToString();
  }

  std::unique_ptr<Index> index_;
  std::unique_ptr<Session> session_;
};

TEST_P(ApiLifetimeTest, StatsAndPropertiesAfterCloseAreTheLastValues) {
  session_.reset();
  const std::vector<std::string> names = index_->PropertyNames();
  ASSERT_TRUE(index_->Close().ok());
  const IndexStats closed = index_->Stats();
  const IndexStats again = index_->Stats();
  EXPECT_EQ(closed.cache_bytes, again.cache_bytes);
  EXPECT_EQ(closed.pool_bytes, again.pool_bytes);
  EXPECT_EQ(index_->PropertyNames(), names);
  for (const std::string& name : names) EXPECT_TRUE(index_->GetIntProperty(name).has_value()) << name;
  EXPECT_EQ(index_->GetIntProperty("dmindex.pool.bytes"), closed.pool_bytes);
}

TEST_P(ApiLifetimeTest, AnIteratorOutlivingItsSessionAndIndexReadsNothing) {
  ReadOptions ro;
  ro.readahead = 4;  // batches of 4: Next must read more after the fourth key
  Iterator it = session_->NewIterator(ro);
  it.Seek(KeyOf(10));
  ASSERT_TRUE(it.Valid()) << it.status().ToString();
  EXPECT_EQ(it.key(), KeyOf(10));
  session_.reset();
  ASSERT_TRUE(index_->Close().ok());
  it.Next();
  EXPECT_FALSE(it.Valid());
  ExpectRefused(it.status(), "Next");
  it.Seek(KeyOf(0));
  EXPECT_FALSE(it.Valid());
  ExpectRefused(it.status(), "Seek");
  index_.reset();
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  ExpectRefused(it.status(), "SeekToFirst");
}

TEST_P(ApiLifetimeTest, ASessionOutlivingItsIndexAnswersInvalidArgument) {
  Iterator it = session_->NewIterator();
  it.Seek(KeyOf(0));
  ASSERT_TRUE(it.Valid());
  index_.reset();  // with the session still open: allowed, the session is cut off
  std::string v;
  ExpectRefused(session_->Lookup(KeyOf(1), &v), "Lookup");
  ExpectRefused(session_->Insert(KeyOf(1), "v"), "Insert");
  ExpectRefused(session_->Update(KeyOf(1), "v"), "Update");
  ExpectRefused(session_->Delete(KeyOf(1)), "Delete");
  std::vector<KeyValue> out;
  ExpectRefused(session_->Scan(KeyOf(0), 10, &out), "Scan");
  EXPECT_TRUE(out.empty());
  const std::vector<Slice> keys = {KeyOf(1), KeyOf(2)};
  std::vector<std::string> values;
  for (const Status& s : session_->MultiGet(keys, &values)) ExpectRefused(s, "MultiGet");
  Iterator late = session_->NewIterator();
  late.SeekToFirst();
  EXPECT_FALSE(late.Valid());
  ExpectRefused(late.status(), "a new iterator");
  for (int i = 0; i < 200 && it.Valid(); ++i) it.Next();  // past its batch: reads again
  EXPECT_FALSE(it.Valid());
  ExpectRefused(it.status(), "an old iterator");
  // Bad arguments are still answered first, as on a live session.
  EXPECT_TRUE(session_->Insert("", "v").IsInvalidArgument());
  session_.reset();  // and the session goes quietly
}

TEST_P(ApiLifetimeTest, AMovedFromIteratorReadsNothing) {
  Iterator it = session_->NewIterator();
  Iterator moved = std::move(it);
  moved.Seek(KeyOf(5));
  EXPECT_TRUE(moved.Valid());
  it.Seek(KeyOf(5));  // NOLINT(bugprone-use-after-move): the misuse under test
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().IsInvalidArgument()) << it.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Designs, ApiLifetimeTest, ::testing::ValuesIn(Index::Designs()),
                         testing::FabricParamName());

}  // namespace
}  // namespace dmindex
