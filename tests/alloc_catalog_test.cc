// Remote node allocation and the catalog, on every backend.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "alloc/catalog.h"
#include "alloc/node_allocator.h"
#include "test_fabrics.h"

namespace dmindex::alloc {
namespace {

class AllocCatalogTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { fabric_ = dmindex::testing::MakeTestFabric(GetParam(), 8ull << 20); }
  std::unique_ptr<fabric::Endpoint> Connect() { return std::move(fabric_->Connect()).value(); }
  std::unique_ptr<fabric::Fabric> fabric_;
};

TEST_P(AllocCatalogTest, BlocksAreAlignedDisjointAndSpreadOverNodes) {
  auto ep = Connect();
  NodeAllocator a(fabric_->memory_nodes());
  std::set<uint64_t> seen;
  std::set<uint16_t> nodes;
  for (int i = 0; i < 3000; ++i) {  // > one 1 MiB test chunk of 1 KB nodes
    auto r = a.Allocate(*ep, 1000);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->offset() % 64, 0u);
    EXPECT_TRUE(seen.insert(r->raw()).second) << "handed out twice: " << r->ToString();
    nodes.insert(r->node());
  }
  EXPECT_EQ(nodes.size(), fabric_->memory_nodes());
  // Neighbours never overlap: 1000 bytes round up to 1024.
  for (auto it = seen.begin(); std::next(it) != seen.end(); ++it) {
    auto next = GlobalAddress::FromRaw(*std::next(it)), cur = GlobalAddress::FromRaw(*it);
    if (next.node() == cur.node()) {
      EXPECT_GE(next.offset() - cur.offset(), 1024u);
    }
  }
  EXPECT_EQ(a.bytes_in_use(), 3000u * 1024);
}

TEST_P(AllocCatalogTest, FreedBlocksAreReused) {
  auto ep = Connect();
  NodeAllocator a(fabric_->memory_nodes());
  auto x = a.Allocate(*ep, 1024);
  ASSERT_TRUE(x.ok());
  a.Free(*x, 1024);
  auto y = a.Allocate(*ep, 1024);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(*x, *y);
  auto on1 = a.AllocateOn(*ep, 1, 512);
  ASSERT_TRUE(on1.ok());
  EXPECT_EQ(on1->node(), 1);
}

TEST_P(AllocCatalogTest, ConcurrentAllocationNeverHandsOutABlockTwice) {
  NodeAllocator a(fabric_->memory_nodes());
  std::vector<std::vector<uint64_t>> got(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      auto ep = Connect();
      for (int i = 0; i < 1000; ++i) {
        auto r = a.Allocate(*ep, 256);
        ASSERT_TRUE(r.ok());
        got[t].push_back(r->raw());
        if (i % 3 == 0) {  // free some and let others reuse them
          a.Free(*r, 256);
          got[t].pop_back();
        }
      }
    });
  for (auto& t : ts) t.join();
  std::set<uint64_t> all;
  for (auto& v : got)
    for (uint64_t x : v) EXPECT_TRUE(all.insert(x).second);
}

TEST_P(AllocCatalogTest, ExhaustedPoolIsOutOfSpaceOnEveryNode) {
  auto ep = Connect();
  NodeAllocator a(fabric_->memory_nodes());
  Status last;
  for (int i = 0; i < 100000; ++i) {
    auto r = a.Allocate(*ep, 64 * 1024);
    if (!r.ok()) {
      last = r.status();
      break;
    }
  }
  EXPECT_TRUE(last.IsOutOfSpace()) << last.ToString();
  EXPECT_NE(last.message().find("all 2 memory nodes"), std::string::npos) << last.message();
  EXPECT_TRUE(a.Allocate(*ep, 0).status().IsInvalidArgument());
}

TEST_P(AllocCatalogTest, CatalogCreatesOnceAndReopens) {
  auto ep = Connect();
  bool created = false;
  auto e = Catalog::OpenOrCreate(*ep, "orders", {"sherman", 1024, {}}, &created);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(created);
  uint64_t root = 0x1234, old = 0;
  ASSERT_TRUE(ep->Cas(e->root_word, 0, root, &old).ok());
  auto again = Catalog::OpenOrCreate(*ep, "orders", {"sherman", 1024, {}}, &created);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(created);
  EXPECT_EQ(again->root_word, e->root_word);
  ASSERT_TRUE(ep->Read(again->root_word, &old, 8).ok());
  EXPECT_EQ(old, root);
  auto other = Catalog::OpenOrCreate(*ep, "users", {"dex", 1024, {}}, &created);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->root_word, e->root_word);
  EXPECT_TRUE(Catalog::OpenOrCreate(*ep, "orders", {"dex", 1024, {}}, &created).status().IsInvalidArgument());
  EXPECT_TRUE(Catalog::Open(*ep, "nothing").status().IsNotFound());
  EXPECT_TRUE(Catalog::Open(*ep, std::string(40, 'x')).status().IsInvalidArgument());
}

TEST_P(AllocCatalogTest, RacingCreatorsGetOneEntry) {
  constexpr int kThreads = 6;
  std::atomic<int> creators{0};
  std::vector<uint64_t> roots(kThreads);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      auto ep = Connect();
      bool created = false;
      auto e = Catalog::OpenOrCreate(*ep, "shared", {"sherman", 1024, {}}, &created);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      creators += created;
      roots[t] = e->root_word.raw();
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(creators.load(), 1);
  for (uint64_t r : roots) EXPECT_EQ(r, roots[0]);
}

INSTANTIATE_TEST_SUITE_P(Backends, AllocCatalogTest,
                         ::testing::ValuesIn(dmindex::testing::TestFabricNames()),
                         dmindex::testing::FabricParamName());

}  // namespace
}  // namespace dmindex::alloc
