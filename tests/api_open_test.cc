// The public entry points (include/dmindex/): opening an index by name on an embedded cluster
// or on memory servers, Close and what it promises, properties, partitioning, and the
// argument checks the Session and Index bases do once for every design.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/retry_status.h"
#include "designs/registry.h"
#include "dmindex/index.h"
#include "test_fabrics.h"
#include "u64_api.h"

namespace dmindex {
namespace {

// This file's tests speak the u64 key format in integers (u64_api.h).
using Key = uint64_t;
using Value = uint64_t;
using KeyValue = ::dmindex::testing::U64Pair;
using ::dmindex::u64::kMinKey;
using ::dmindex::u64::kMaxKey;
using ::dmindex::u64::IsValidKey;


IndexOptions Named(const std::string& design, const std::string& name) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.design = design;
  o.name = name;
  o.node_bytes = 512;
  return o;
}

class ApiOpenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ApiOpenTest, OpensWritesReadsAndClosesOnItsOwnEmbeddedCluster) {
  auto index = Index::Open(Named(GetParam(), "quick"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->design(), GetParam());
  ASSERT_NE((*index)->cluster(), nullptr);
  EXPECT_EQ((*index)->cluster()->backend(), "inproc");
  {
    auto session = (*index)->OpenSession();
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    for (Key k = 1; k <= 2000; ++k) ASSERT_TRUE((*session)->Insert(k, k * 10).ok()) << k;
    Value v = 0;
    ASSERT_TRUE((*session)->Lookup(1234, &v).ok());
    EXPECT_EQ(v, 12340u);
    EXPECT_TRUE((*session)->Lookup(5000, &v).IsNotFound());
    std::vector<KeyValue> out;
    ASSERT_TRUE(::dmindex::testing::ScanU64(*(*session), 1998, 10, &out).ok());
    EXPECT_EQ(out, (std::vector<KeyValue>{{1998, 19980}, {1999, 19990}, {2000, 20000}}));
    // Close refuses while a session is open, and the index stays usable.
    Status early = (*index)->Close();
    EXPECT_TRUE(early.IsInvalidArgument()) << early.ToString();
    EXPECT_NE(early.message().find("1 session"), std::string::npos) << early.ToString();
    ASSERT_TRUE((*session)->Lookup(1, &v).ok());
  }
  ASSERT_TRUE((*index)->Close().ok());
  EXPECT_TRUE((*index)->Close().ok()) << "a second Close is harmless";
  EXPECT_TRUE((*index)->OpenSession().status().IsInvalidArgument());
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*(*index), std::vector<KeyValue>{{1, 1}}).IsInvalidArgument());
}

TEST_P(ApiOpenTest, PropertiesAreListedAndReadByName) {
  auto index = Index::Open(Named(GetParam(), "props"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const std::vector<std::string> names = (*index)->PropertyNames();
  for (const char* generic : {"dmindex.cache.hits", "dmindex.cache.misses", "dmindex.cache.bytes",
                              "dmindex.pool.bytes", "dmindex.retries"})
    EXPECT_NE(std::find(names.begin(), names.end(), generic), names.end()) << generic;
  for (const std::string& name : names) EXPECT_TRUE((*index)->GetIntProperty(name).has_value()) << name;
  EXPECT_FALSE((*index)->GetIntProperty("dmindex.no-such-counter").has_value());
  const bool dex = GetParam() == "dex";
  EXPECT_EQ((*index)->GetIntProperty("dmindex.dex.offloads").has_value(), dex);
  EXPECT_EQ((*index)->GetIntProperty("dmindex.dex.merges").has_value(), dex);

  // The cluster counts the verbs of everything on it.
  const Cluster& cluster = *(*index)->cluster();
  const uint64_t trips = cluster.GetIntProperty("dmindex.fabric.round-trips").value_or(0);
  auto session = (*index)->OpenSession();
  ASSERT_TRUE(session.ok());
  for (Key k = 1; k <= 100; ++k) ASSERT_TRUE((*session)->Insert(k, k).ok());
  const uint64_t after = cluster.GetIntProperty("dmindex.fabric.round-trips").value_or(0);
  // Designs that live in the opening process (local, indexy, the store baselines,
  // btree-disk) issue no verbs; those in the pool do.
  if (!designs::SharedAcrossProcesses(GetParam()).ok()) EXPECT_EQ(after, trips) << GetParam() << " issues no verbs";
  else EXPECT_GT(after, trips);
  EXPECT_EQ(cluster.PropertyNames().size(), 6u);
  EXPECT_FALSE(cluster.GetIntProperty("dmindex.cache.hits").has_value());
}

TEST_P(ApiOpenTest, ReservedKeysAndComputeNodesAreCheckedOnceForEveryDesign) {
  IndexOptions o = Named(GetParam(), "checks");
  o.compute_nodes = 2;
  auto index = Index::Open(o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_TRUE((*index)->OpenSession(2).status().IsInvalidArgument());
  auto session = (*index)->OpenSession(1);
  ASSERT_TRUE(session.ok());
  Value v = 0;
  std::vector<KeyValue> out;
  for (Key bad : {Key{0}, ~Key{0}}) {
    EXPECT_TRUE((*session)->Lookup(bad, &v).IsInvalidArgument());
    EXPECT_TRUE((*session)->Insert(bad, 1).IsInvalidArgument());
  }
  // A scan may start anywhere, reserved positions included; a position of the wrong size
  // for the u64 format is refused.
  std::vector<dmindex::KeyValue> pairs;
  EXPECT_TRUE((*session)->Scan(U64Key(0), 5, &pairs).ok());
  EXPECT_TRUE((*session)->Scan("1234567", 5, &pairs).IsInvalidArgument());
  EXPECT_TRUE((*session)->Insert("1234567", "12345678").IsInvalidArgument());
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*(*index), std::vector<KeyValue>{{4, 1}, {2, 1}}).IsInvalidArgument());
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, ApiOpenTest, ::testing::ValuesIn(Index::Designs()),
                         testing::FabricParamName());

TEST(ApiOpen, UnknownDesignsAndBadClustersAreRefusedClearly) {
  auto unknown = Index::Open(Named("btree-of-dreams", "x"));
  EXPECT_TRUE(unknown.status().IsInvalidArgument());
  EXPECT_NE(unknown.status().message().find("sherman"), std::string::npos) << "lists the known ones";
  EXPECT_TRUE(Cluster::Open(EmbeddedCluster{0}).status().IsInvalidArgument());
  EmbeddedCluster tiny;
  tiny.pool_bytes = 4096;
  EXPECT_TRUE(Cluster::Open(tiny).status().IsInvalidArgument());
  EXPECT_TRUE(Cluster::Open(MemoryServers{}).status().IsInvalidArgument()) << "no servers";
  MemoryServers portless;
  portless.addresses = {"no-port"};
  EXPECT_TRUE(Cluster::Open(portless).status().IsInvalidArgument());
}

// Several indexes share one cluster by name; a second opener of a name finds the first one's
// data; DEX's Close writes its cached pages back and gives its compute nodes up, so a later
// opener of the same name (another process, in real life) can host them and read everything.
TEST(ApiOpen, CloseHandsDexDataAndComputeNodesToTheNextOpener) {
  auto cluster = Cluster::Open();
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  IndexOptions o = Named("dex", "handed-over");
  o.knobs["admission"] = "1";  // every missed leaf is cached: writes stay dirty in the cache
  {
    auto first = Index::Open(o, *cluster);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto session = (*first)->OpenSession();
    ASSERT_TRUE(session.ok());
    for (Key k = 1; k <= 3000; ++k) ASSERT_TRUE((*session)->Insert(k, k + 1).ok());
    session->reset();
    auto meanwhile = Index::Open(o, *cluster);
    EXPECT_FALSE(meanwhile.ok()) << "the one compute node is still hosted by the first opener";
    ASSERT_TRUE((*first)->Close().ok());
  }
  auto second = Index::Open(o, *cluster);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto session = (*second)->OpenSession();
  ASSERT_TRUE(session.ok());
  for (Key k = 1; k <= 3000; ++k) {
    Value v = 0;
    ASSERT_TRUE((*session)->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, k + 1);
  }
  // A sherman index beside it, on the same cluster.
  auto other = Index::Open(Named("sherman", "beside"), *cluster);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto s2 = (*other)->OpenSession();
  ASSERT_TRUE(s2.ok());
  Value v = 0;
  EXPECT_TRUE((*s2)->Lookup(5, &v).IsNotFound());
}

TEST(ApiOpen, OpensAnIndexOnTwoMemoryServers) {
  auto a = testing::StartShmMemserver(), b = testing::StartShmMemserver();
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
  MemoryServers servers;
  servers.addresses = {(*a)->address().ToString(), (*b)->address().ToString()};
  auto cluster = Cluster::Open(servers);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ((*cluster)->memory_nodes(), 2u);
  EXPECT_EQ((*cluster)->backend(), "ucx-shm");
  auto index = Index::Open(Named("sherman", "remote"), *cluster);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  {
    auto session = (*index)->OpenSession();
    ASSERT_TRUE(session.ok());
    for (Key k = 1; k <= 500; ++k) ASSERT_TRUE((*session)->Insert(k, k).ok());
    std::vector<KeyValue> out;
    ASSERT_TRUE(::dmindex::testing::ScanU64(*(*session), 1, 1000, &out).ok());
    EXPECT_EQ(out.size(), 500u);
  }
  EXPECT_GT((*cluster)->GetIntProperty("dmindex.fabric.rpcs").value_or(0), 0u) << "chunks by RPC";
  ASSERT_TRUE((*index)->Close().ok());
}

// A design whose session lets the internal restart signal out: the public call reports a
// bug instead of handing the caller a code it cannot know.
class LeakyIndex final : public Index {
 public:
  LeakyIndex() : Index("leaky", ::dmindex::testing::U64Options()) {}

 private:
  class LeakySession final : public Session {
    Status DoLookup(Slice, std::string*) override { return RetryStatus("stale path"); }
    Status DoInsert(Slice, Slice) override { return RetryStatus(); }
    Status DoUpdate(Slice, Slice) override { return Status::Ok(); }
    Status DoDelete(Slice) override { return Status::NotFound(); }
    Status DoScan(const KeyRange&, size_t, std::vector<dmindex::KeyValue>*) override { return RetryStatus(); }
  };
  Status DoBulkLoad(std::span<const dmindex::KeyValue>) override { return RetryStatus(); }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t) override {
    return std::unique_ptr<Session>(std::make_unique<LeakySession>());
  }
  IndexStats DoStats() const override { return {}; }
};

TEST(ApiOpen, TheInternalRetryNeverLeavesAPublicCall) {
  LeakyIndex index;
  auto session = index.OpenSession();
  ASSERT_TRUE(session.ok());
  Value v = 0;
  std::vector<KeyValue> out;
  for (Status s : {(*session)->Lookup(1, &v), (*session)->Insert(1, 1), ::dmindex::testing::ScanU64(*(*session), 1, 3, &out),
                   ::dmindex::testing::BulkLoadU64(index, std::vector<KeyValue>{{1, 1}})}) {
    EXPECT_FALSE(IsRetry(s));
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find("restart signal escaped"), std::string::npos) << s.ToString();
  }
  EXPECT_TRUE((*session)->Update(1, 1).ok());
  EXPECT_TRUE((*session)->Delete(1).IsNotFound());
}

}  // namespace
}  // namespace dmindex
