// RPC over UCX with a memory server in this process, so that a test can register its own
// handlers the way designs will (server.node().rpc() before Start()): payloads of every size
// (large ones switch UCX to rendezvous in both directions), handler errors with their
// messages, and the bound on concurrently running handlers.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "fabric/rpc.h"
#include "fabric/ucx/ucx_fabric.h"
#include "fabric/ucx/ucx_memory_server.h"

namespace dmindex::fabric::ucx {
namespace {

constexpr RpcOpcode kEcho = rpc_op::kFirstTestOpcode;
constexpr RpcOpcode kFail = rpc_op::kFirstTestOpcode + 1;
constexpr RpcOpcode kSlow = rpc_op::kFirstTestOpcode + 2;

class UcxRpcTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    UcxServerOptions o;
    o.pool_bytes = 8ull << 20;
    o.node.chunk_bytes = 1 << 20;
    o.node.rpc_threads = 2;
    o.transport = *ParseUcxTransport(GetParam());
    auto s = UcxMemoryServer::Create(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    RpcRegistry& rpc = server_->node().rpc();
    ASSERT_TRUE(rpc.Register(kEcho, "echo", [](RpcRequest req, RpcReply* reply) {
                     reply->assign(req.begin(), req.end());
                     return Status::Ok();
                   }).ok());
    ASSERT_TRUE(rpc.Register(kFail, "fail", [](RpcRequest, RpcReply*) {
                     return Status::NotFound("no such thing, as asked");
                   }).ok());
    ASSERT_TRUE(rpc.Register(kSlow, "slow", [this](RpcRequest, RpcReply*) {
                     int now = ++running_;
                     int seen = max_running_.load();
                     while (now > seen && !max_running_.compare_exchange_weak(seen, now)) {
                     }
                     std::this_thread::sleep_for(std::chrono::milliseconds(20));
                     --running_;
                     return Status::Ok();
                   }).ok());
    ASSERT_TRUE(server_->Start().ok());
    UcxOptions c;
    c.transport = o.transport;
    auto f = UcxFabric::Create(server_->address().ToString(), c);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    fabric_ = std::move(f).value();
  }
  void TearDown() override {
    fabric_.reset();
    server_.reset();
  }

  std::atomic<int> running_{0}, max_running_{0};
  std::unique_ptr<UcxMemoryServer> server_;
  std::unique_ptr<UcxFabric> fabric_;
};

TEST_P(UcxRpcTest, PayloadsOfEverySizeRoundTrip) {
  auto ep = std::move(fabric_->Connect()).value();
  for (size_t size : {size_t{0}, size_t{1}, size_t{100}, size_t{8000}, size_t{9000},
                      size_t{64} << 10, size_t{1} << 20}) {
    std::vector<std::byte> request(size);
    for (size_t i = 0; i < size; ++i) request[i] = static_cast<std::byte>(i * 31 + size);
    RpcReply reply;
    Status s = ep->Call(0, kEcho, request, &reply);
    ASSERT_TRUE(s.ok()) << size << ": " << s.ToString();
    EXPECT_EQ(reply, request) << "echo of " << size << " bytes";
  }
}

TEST_P(UcxRpcTest, HandlerErrorsArriveWithCodeAndMessage) {
  auto ep = std::move(fabric_->Connect()).value();
  RpcReply reply;
  Status s = ep->Call(0, kFail, {}, &reply);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(s.message(), "no such thing, as asked");
  s = ep->Call(0, 9999, {}, &reply);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(ep->Call(0, rpc_op::kPing, {}, &reply).ok());  // and the endpoint still works
  EXPECT_TRUE(ep->Call(1, rpc_op::kPing, {}, &reply).IsInvalidArgument());  // no node 1
}

TEST_P(UcxRpcTest, AtMostRpcThreadsHandlersRunAtOnce) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      auto ep = std::move(fabric_->Connect()).value();
      RpcReply reply;
      for (int i = 0; i < 3; ++i) ASSERT_TRUE(ep->Call(0, kSlow, {}, &reply).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(max_running_.load(), 2) << "two RPC threads, six eager clients";
}

INSTANTIATE_TEST_SUITE_P(Transports, UcxRpcTest, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace dmindex::fabric::ucx
