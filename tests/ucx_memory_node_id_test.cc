// A `dmindex memserver` learns which memory node it is from its clients' handshakes: DEX's
// memory-side offload handler then accepts offloads on every server of the list, not only
// the first; and a client that numbers the servers differently from an earlier one is
// refused with a clear error instead of corrupting data.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "designs/registry.h"
#include "fabric/memory_node.h"
#include "fabric/rpc.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_fabric.h"
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


using std::chrono::milliseconds;

uint64_t ChunksInUse(fabric::Endpoint& ep, uint16_t node) {
  fabric::RpcReply reply;
  Status s = ep.Call(node, fabric::rpc_op::kPoolInfo, {}, &reply);
  EXPECT_TRUE(s.ok()) << s.ToString();
  fabric::PoolInfo info;
  EXPECT_TRUE(fabric::ReadPod(reply, 0, &info));
  return info.chunks_in_use;
}

// The tree spans both memory servers (bulk load places level-2 subtrees round robin); with
// co-location no offload meets a pointer to another server, so none may fall back: before
// servers knew their ids, the second one refused every offload as "foreign".
TEST(UcxMemoryNodeId, SecondServerAcceptsOffloads) {
  auto fabric = testing::MakeTestFabric("ucx-shm", 128ull << 20);
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.name = "dex-ucx-offload";
  o.node_bytes = 512;
  o.compute_nodes = 1;
  o.cache_bytes = 0;  // DEX's floor: 64 nodes, so most misses are offloaded
  o.knobs = {{"offload_level", "2"}, {"cost_factor", "1e12"}, {"durability", "none"}};
  auto index = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const Key n = 60000;
  std::vector<KeyValue> records;
  for (Key k = 1; k <= n; ++k) records.push_back({3 * k, k});
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*(*index), records).ok());
  {
    auto ep = std::move(fabric->Connect()).value();
    EXPECT_GT(ChunksInUse(*ep, 0), 0u);
    EXPECT_GT(ChunksInUse(*ep, 1), 0u) << "the tree must live on both servers";
  }
  auto session = std::move((*index)->OpenSession(0)).value();
  std::map<Key, Value> model;
  for (const KeyValue& r : records) model[r.key] = r.value;
  std::mt19937_64 rng(5);
  auto counter = [&](const char* name) { return (*index)->GetIntProperty(name).value_or(0); };
  const uint64_t offloads_before = counter("dmindex.dex.offloads");
  const uint64_t fallbacks_before = counter("dmindex.dex.offload-fallbacks");
  for (int i = 0; i < 3000; ++i) {
    const Key k = 3 * (1 + rng() % n);
    if (i % 2 == 0) {
      Value v = 0;
      ASSERT_TRUE(session->Lookup(k, &v).ok()) << k;
      ASSERT_EQ(v, model[k]) << k;
    } else {
      ASSERT_TRUE(session->Update(k, i).ok()) << k;
      model[k] = i;
    }
  }
  const uint64_t offloads = counter("dmindex.dex.offloads") - offloads_before;
  EXPECT_GT(offloads, 1000u);
  EXPECT_EQ(counter("dmindex.dex.offload-fallbacks") - fallbacks_before, 0u)
      << offloads << " offloads; a server that does not know its id refuses half of them";
  for (const auto& [k, v] : model) {
    Value got = 0;
    ASSERT_TRUE(session->Lookup(k, &got).ok()) << k;
    ASSERT_EQ(got, v) << k;
  }
}

class ServerPair : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto* s : {&a_, &b_}) {
      auto p = testing::StartShmMemserver(32ull << 20);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      *s = std::move(p).value();
    }
  }
  Result<std::unique_ptr<fabric::ucx::UcxFabric>> Connect(
      std::vector<fabric::ucx::HostPort> servers) {
    fabric::ucx::UcxOptions o;
    o.connect_timeout = milliseconds(2000);
    return fabric::ucx::UcxFabric::Create(std::move(servers), o);
  }
  std::unique_ptr<fabric::ucx::MemserverProcess> a_, b_;
};

TEST_F(ServerPair, ClientsThatNumberServersDifferentlyAreRefused) {
  auto first = Connect({a_->address(), b_->address()});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // The same order again, or a prefix of it, agrees.
  auto same = Connect({a_->address(), b_->address()});
  EXPECT_TRUE(same.ok()) << same.status().ToString();
  auto prefix = Connect({a_->address()});
  EXPECT_TRUE(prefix.ok()) << prefix.status().ToString();
  // Swapped: the first server it reaches (b, as node 0) refuses, naming both positions.
  auto swapped = Connect({b_->address(), a_->address()});
  ASSERT_FALSE(swapped.ok());
  EXPECT_TRUE(swapped.status().IsInvalidArgument()) << swapped.status().ToString();
  const std::string m = swapped.status().message();
  EXPECT_NE(m.find(b_->address().ToString()), std::string::npos) << m;
  EXPECT_NE(m.find("memory node 1"), std::string::npos) << m;
  EXPECT_NE(m.find("position 0"), std::string::npos) << m;
  EXPECT_NE(m.find("same order"), std::string::npos) << m;
  // A server listed twice would be two memory nodes at once.
  auto twice = Connect({a_->address(), a_->address()});
  EXPECT_TRUE(twice.status().IsInvalidArgument()) << twice.status().ToString();
  // The refusals changed nothing for the client that numbered them first.
  auto ep = (*first)->Connect();
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  fabric::RpcReply reply;
  EXPECT_TRUE((*ep)->Call(1, fabric::rpc_op::kPing, {}, &reply).ok());
}

TEST(MemoryNodeId, FirstAssignmentSticks) {
  std::vector<std::byte> pool(fabric::kMinPoolBytes);
  fabric::MemoryNode node(std::nullopt, pool.data(), pool.size(), {});
  EXPECT_FALSE(node.id().has_value());
  EXPECT_TRUE(node.AssignId(3).ok());
  EXPECT_TRUE(node.AssignId(3).ok());
  Status s = node.AssignId(4);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(node.id(), std::optional<uint16_t>(3));
  fabric::MemoryNode known(7, pool.data(), pool.size(), {});
  EXPECT_EQ(known.id(), std::optional<uint16_t>(7));
  EXPECT_FALSE(known.AssignId(0).ok());
}

}  // namespace
}  // namespace dmindex
