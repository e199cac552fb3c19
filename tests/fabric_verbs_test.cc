// The fabric contract, checked on every backend: verbs, batches, atomics under contention,
// RPC, accounting.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <thread>
#include <vector>

#include "fabric/pool_layout.h"
#include "fabric/rpc.h"
#include "test_fabrics.h"

namespace dmindex::fabric {
namespace {

class FabricVerbsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { fabric_ = dmindex::testing::MakeTestFabric(GetParam()); }
  std::unique_ptr<Endpoint> Connect() {
    auto ep = fabric_->Connect();
    EXPECT_TRUE(ep.ok()) << ep.status().ToString();
    return std::move(ep).value();
  }
  // A chunk of node `n`, handed out by RPC, to play in.
  GlobalAddress Chunk(Endpoint& ep, uint16_t n) {
    RpcReply reply;
    Status s = ep.Call(n, rpc_op::kAllocChunk, {}, &reply);
    EXPECT_TRUE(s.ok()) << s.ToString();
    uint64_t offset = 0;
    EXPECT_TRUE(ReadPod(reply, 0, &offset));
    return GlobalAddress(n, offset);
  }
  std::unique_ptr<Fabric> fabric_;
};

TEST_P(FabricVerbsTest, WriteThenReadRoundTrips) {
  auto ep = Connect();
  for (uint16_t n = 0; n < fabric_->memory_nodes(); ++n) {
    GlobalAddress a = Chunk(*ep, n);
    std::vector<uint8_t> out(1024), in(1024, 0);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7 + n);
    ASSERT_TRUE(ep->Write(a + 64, out.data(), 1024).ok());
    ASSERT_TRUE(ep->Read(a + 64, in.data(), 1024).ok());
    EXPECT_EQ(in, out);
    // Unaligned small access works too.
    uint8_t odd[3] = {1, 2, 3}, back[3] = {};
    ASSERT_TRUE(ep->Write(a + 3, odd, 3).ok());
    ASSERT_TRUE(ep->Read(a + 3, back, 3).ok());
    EXPECT_EQ(0, std::memcmp(odd, back, 3));
  }
}

TEST_P(FabricVerbsTest, CasSucceedsOnlyOnExpectedValue) {
  auto ep = Connect();
  GlobalAddress w = Chunk(*ep, 1);
  uint64_t old = 99;
  ASSERT_TRUE(ep->Cas(w, 0, 5, &old).ok());
  EXPECT_EQ(old, 0u);
  ASSERT_TRUE(ep->Cas(w, 0, 7, &old).ok());
  EXPECT_EQ(old, 5u);  // failed: value stays 5
  uint64_t v = 0;
  ASSERT_TRUE(ep->Read(w, &v, 8).ok());
  EXPECT_EQ(v, 5u);
}

TEST_P(FabricVerbsTest, FaaFromManyThreadsSumsExactly) {
  constexpr int kThreads = 8, kPerThread = 2000;
  GlobalAddress w;
  {
    auto ep = Connect();
    w = Chunk(*ep, 0);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto ep = Connect();
      uint64_t old;
      for (int i = 0; i < kPerThread; ++i) {
        const Status s = ep->Faa(w, 1, &old);
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  auto ep = Connect();
  uint64_t v = 0;
  ASSERT_TRUE(ep->Read(w, &v, 8).ok());
  EXPECT_EQ(v, uint64_t{kThreads} * kPerThread);
}

TEST_P(FabricVerbsTest, CasUnderContentionIsMutuallyExclusive) {
  // Threads increment a plain counter protected by a CAS spin lock; no increment may be lost.
  constexpr int kThreads = 6, kPerThread = 300;
  GlobalAddress lock, counter;
  {
    auto ep = Connect();
    lock = Chunk(*ep, 0);
    counter = lock + 64;
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto ep = Connect();
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t old;
        do {
          const Status s = ep->Cas(lock, 0, t + 1, &old);
          ASSERT_TRUE(s.ok()) << s.ToString();
        } while (old != 0);
        uint64_t c;
        ASSERT_TRUE(ep->Read(counter, &c, 8).ok());
        ++c;
        // Command combination: write the counter, then release the lock, in one batch.
        uint64_t zero = 0;
        ASSERT_TRUE(ep->Post({Verb::Write(counter, &c, 8), Verb::Write(lock, &zero, 8)},
                             Ordering::kInOrder)
                        .ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto ep = Connect();
  uint64_t v = 0;
  ASSERT_TRUE(ep->Read(counter, &v, 8).ok());
  EXPECT_EQ(v, uint64_t{kThreads} * kPerThread);
}

TEST_P(FabricVerbsTest, UnorderedBatchReadsDisjointAddressesInOneRoundTrip) {
  auto ep = Connect();
  GlobalAddress a = Chunk(*ep, 0), b = Chunk(*ep, 1);
  std::array<uint64_t, 4> vals = {11, 22, 33, 44}, got = {};
  ASSERT_TRUE(ep->Write(a, &vals[0], 8).ok());
  ASSERT_TRUE(ep->Write(a + 4096, &vals[1], 8).ok());
  ASSERT_TRUE(ep->Write(b, &vals[2], 8).ok());
  ASSERT_TRUE(ep->Write(b + 8192, &vals[3], 8).ok());
  VerbCounts before = ep->counts();
  ASSERT_TRUE(ep->Post({Verb::Read(a, &got[0], 8), Verb::Read(a + 4096, &got[1], 8),
                        Verb::Read(b, &got[2], 8), Verb::Read(b + 8192, &got[3], 8)},
                       Ordering::kUnordered)
                  .ok());
  EXPECT_EQ(got, vals);
  VerbCounts d = ep->counts() - before;
  EXPECT_EQ(d.reads, 4u);
  EXPECT_EQ(d.round_trips, 1u);
  EXPECT_EQ(d.read_bytes, 32u);
}

TEST_P(FabricVerbsTest, InOrderBatchLandsInOrder) {
  // A writer publishes data then a flag in one in-order batch; a reader that sees the flag
  // must see the data of the same round.
  GlobalAddress data, flag;
  {
    auto ep = Connect();
    data = Chunk(*ep, 0);
    flag = data + 4096;
  }
  constexpr uint64_t kRounds = 3000;
  std::atomic<bool> violated{false};
  std::thread writer([&] {
    auto ep = Connect();
    std::array<uint64_t, 64> buf;
    for (uint64_t r = 1; r <= kRounds; ++r) {
      buf.fill(r);
      ASSERT_TRUE(ep->Post({Verb::Write(data, buf.data(), sizeof buf), Verb::Write(flag, &r, 8)},
                           Ordering::kInOrder)
                      .ok());
    }
  });
  std::thread reader([&] {
    auto ep = Connect();
    std::array<uint64_t, 64> buf;
    uint64_t f = 0;
    while (f < kRounds) {
      ASSERT_TRUE(ep->Read(flag, &f, 8).ok());
      ASSERT_TRUE(ep->Read(data, buf.data(), sizeof buf).ok());
      for (uint64_t x : buf)
        if (x < f) violated = true;
    }
  });
  writer.join();
  reader.join();
  EXPECT_FALSE(violated.load());
}

TEST_P(FabricVerbsTest, RpcPingAndUnknownOpcode) {
  auto ep = Connect();
  RpcReply reply;
  EXPECT_TRUE(ep->Call(1, rpc_op::kPing, {}, &reply).ok());
  Status s = ep->Call(0, 999, {}, &reply);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(ep->counts().rpcs, 2u);
}

TEST_P(FabricVerbsTest, BadVerbsAreRejectedNotExecuted) {
  auto ep = Connect();
  uint64_t v = 0;
  EXPECT_TRUE(ep->Read(GlobalAddress::Null(), &v, 8).IsInvalidArgument());
  EXPECT_TRUE(ep->Cas(GlobalAddress(0, kChunkAreaOffset + 4), 0, 1, &v).IsInvalidArgument());
  EXPECT_FALSE(ep->Read(GlobalAddress(7, 4096), &v, 8).ok());  // no such node
  GlobalAddress a = Chunk(*ep, 0), b = Chunk(*ep, 1);
  EXPECT_TRUE(ep->Post({Verb::Write(a, &v, 8), Verb::Write(b, &v, 8)}, Ordering::kInOrder)
                  .IsInvalidArgument());
}

TEST_P(FabricVerbsTest, ExhaustedPoolIsAClearOutOfSpaceError) {
  auto ep = Connect();
  Status last;
  int chunks = 0;
  for (; chunks < 10000; ++chunks) {
    RpcReply reply;
    last = ep->Call(0, rpc_op::kAllocChunk, {}, &reply);
    if (!last.ok()) break;
  }
  EXPECT_TRUE(last.IsOutOfSpace()) << last.ToString();
  EXPECT_GT(chunks, 10);
  EXPECT_NE(last.message().find("exhausted"), std::string::npos);
}

TEST_P(FabricVerbsTest, TotalCountsIncludeClosedEndpoints) {
  VerbCounts before = fabric_->TotalCounts();
  {
    auto ep = Connect();
    GlobalAddress a = Chunk(*ep, 0);
    uint64_t v = 1;
    ASSERT_TRUE(ep->Write(a, &v, 8).ok());
    ASSERT_TRUE(ep->Read(a, &v, 8).ok());
  }
  VerbCounts d = fabric_->TotalCounts() - before;
  EXPECT_EQ(d.reads, 1u);
  EXPECT_EQ(d.writes, 1u);
  EXPECT_EQ(d.rpcs, 1u);
  EXPECT_EQ(d.round_trips, 3u);
}

// An unwaited post (Endpoint::PostUnwaited): its verbs and bytes count, its round trip only
// where the backend waited (UCX; in-process: never); it lands in order, and Reap returns its
// Status. One in flight at a time.
TEST_P(FabricVerbsTest, UnwaitedBatchLandsInOrderAndCountsNoRoundTripWhereNobodyWaits) {
  auto ep = Connect();
  auto other = Connect();
  GlobalAddress a = Chunk(*ep, 0);
  std::array<uint64_t, 4> data = {1, 2, 3, 4};
  const uint64_t flag = 1;
  Verb batch[] = {Verb::Write(a + 64, data.data(), 32), Verb::Write(a, &flag, 8)};
  const VerbCounts before = ep->counts();
  ASSERT_TRUE(ep->PostUnwaited(batch, Ordering::kInOrder, nullptr).ok());
  EXPECT_TRUE(ep->unwaited_in_flight());
  Verb again[] = {Verb::Write(a + 8, &flag, 8)};
  EXPECT_TRUE(ep->PostUnwaited(again, Ordering::kInOrder, nullptr).IsInvalidArgument());
  const VerbCounts d = ep->counts() - before;
  EXPECT_EQ(d.writes, 2u);
  EXPECT_EQ(d.write_bytes, 40u);
  EXPECT_EQ(d.round_trips, GetParam() == "inproc" ? 0u : 1u) << "a round trip counts only where a thread waits";
  ASSERT_TRUE(ep->Reap().ok());
  EXPECT_FALSE(ep->unwaited_in_flight());
  EXPECT_TRUE(ep->Reap().ok()) << "nothing in flight";
  std::array<uint64_t, 4> back = {};
  uint64_t seen = 0;
  ASSERT_TRUE(other->Read(a, &seen, 8).ok());
  ASSERT_TRUE(other->Read(a + 64, back.data(), 32).ok());
  EXPECT_EQ(seen, 1u);
  EXPECT_EQ(back, data);
}

INSTANTIATE_TEST_SUITE_P(Backends, FabricVerbsTest,
                         ::testing::ValuesIn(dmindex::testing::TestFabricNames()),
                         dmindex::testing::FabricParamName());

}  // namespace
}  // namespace dmindex::fabric
