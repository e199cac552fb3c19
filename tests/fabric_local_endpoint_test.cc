// LocalEndpoint (fabric/local_endpoint.h): the endpoint of code running inside a memory node.
// Its verbs act on the node's own pool and nowhere else, its atomics are atomic with remote
// verbs on the same words, and an RPC it sends to its own node runs at once - from inside a
// handler that holds the node's only RPC thread, where waiting for a thread would hang.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

#include "fabric/inproc/inproc_fabric.h"
#include "fabric/local_endpoint.h"
#include "fabric/pool_layout.h"

namespace dmindex::fabric {
namespace {

std::unique_ptr<InProcFabric> TwoNodes(uint32_t rpc_threads = 1) {
  InProcOptions o;
  o.memory_nodes = 2;
  o.pool_bytes = 64ull << 20;
  o.node.rpc_threads = rpc_threads;
  return std::move(InProcFabric::Create(o)).value();
}

TEST(LocalEndpoint, VerbsActOnItsOwnPoolOnly) {
  auto f = TwoNodes();
  LocalEndpoint local(f->node(1));
  const GlobalAddress a(1, kChunkAreaOffset);
  uint64_t words[2] = {7, 9}, back[2] = {};
  ASSERT_TRUE(local.Write(a, words, sizeof words).ok());
  auto ep = std::move(f->Connect()).value();
  ASSERT_TRUE(ep->Read(a, back, sizeof back).ok());  // a compute node sees the local write
  EXPECT_EQ(back[1], 9u);
  uint64_t old = 0;
  ASSERT_TRUE(local.Cas(a, 7, 8, &old).ok());
  EXPECT_EQ(old, 7u);
  ASSERT_TRUE(local.Faa(a, 2, &old).ok());
  EXPECT_EQ(old, 8u);
  ASSERT_TRUE(ep->Read(a, back, 8).ok());
  EXPECT_EQ(back[0], 10u);
  // Another node's memory is out of reach, and nothing outside the pool is touched.
  const Status foreign = local.Read(GlobalAddress(0, kChunkAreaOffset), back, 8);
  EXPECT_TRUE(foreign.IsNotSupported()) << foreign.ToString();
  EXPECT_NE(foreign.message().find("only its own pool"), std::string::npos) << foreign.ToString();
  EXPECT_TRUE(local.Read(GlobalAddress(1, (64ull << 20) - 8), back, 16).IsInvalidArgument());
  // Counted like any endpoint's verbs, as posted: the two refused READs too.
  EXPECT_EQ(local.counts().reads, 2u);
  EXPECT_EQ(local.counts().writes, 1u);
}

TEST(LocalEndpoint, ItsAtomicsAreAtomicWithRemoteVerbs) {
  auto f = TwoNodes();
  const GlobalAddress word(0, kChunkAreaOffset);
  constexpr int kAdds = 100000;
  std::thread remote([&] {
    auto ep = std::move(f->Connect()).value();
    uint64_t old = 0;
    for (int i = 0; i < kAdds; ++i) ASSERT_TRUE(ep->Faa(word, 1, &old).ok());
  });
  LocalEndpoint local(f->node(0));
  uint64_t old = 0;
  for (int i = 0; i < kAdds; ++i) {
    // Alternate FAA and a CAS loop: both must see every remote add.
    if (i % 2 == 0) {
      ASSERT_TRUE(local.Faa(word, 1, &old).ok());
    } else {
      uint64_t seen = 0;
      ASSERT_TRUE(local.Read(word, &seen, 8).ok());
      for (;;) {
        ASSERT_TRUE(local.Cas(word, seen, seen + 1, &old).ok());
        if (old == seen) break;
        seen = old;
      }
    }
  }
  remote.join();
  uint64_t total = 0;
  ASSERT_TRUE(local.Read(word, &total, 8).ok());
  EXPECT_EQ(total, 2u * kAdds);
}

TEST(LocalEndpoint, ARpcToItsOwnNodeRunsInsideAHandlerWithoutAFreeThread) {
  auto f = TwoNodes(/*rpc_threads=*/1);
  MemoryNode& node = f->node(0);
  constexpr RpcOpcode kAllocInside = rpc_op::kFirstTestOpcode;
  ASSERT_TRUE(node.rpc()
                  .Register(kAllocInside, "test.alloc-inside",
                            [&node](RpcRequest, RpcReply* reply) {
                              // Holds the node's only RPC thread; Serve would wait for it forever.
                              LocalEndpoint local(node);
                              Status s = local.Call(0, rpc_op::kAllocChunk, {}, reply);
                              if (!s.ok()) return s;
                              // And the other node is not reachable from here.
                              RpcReply other;
                              return local.Call(1, rpc_op::kPing, {}, &other).IsNotSupported()
                                         ? Status::Ok()
                                         : Status::Corruption("reached another memory node");
                            })
                  .ok());
  auto ep = std::move(f->Connect()).value();
  RpcReply reply;
  ASSERT_TRUE(ep->Call(0, kAllocInside, {}, &reply).ok());
  uint64_t offset = 0;
  ASSERT_TRUE(ReadPod(reply, 0, &offset));
  EXPECT_GE(offset, kChunkAreaOffset);
  EXPECT_EQ(node.Info().chunks_in_use, 1u);
}

}  // namespace
}  // namespace dmindex::fabric
