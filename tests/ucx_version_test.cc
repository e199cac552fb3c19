// Processes of another dmindex version never share a pool (wire.h, protocol 04): a memory
// server or client of another version is refused with both versions named, and anything else
// on the port is still "not dmindex".
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fabric/ucx/bootstrap.h"
#include "fabric/ucx/cluster_key.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {
namespace {

// A one-connection server that sends a Challenge with `magic` and then waits for the client
// to hang up.
class ChallengeServer {
 public:
  explicit ChallengeServer(const char (&magic)[8]) {
    auto listener = ListenTcp({"127.0.0.1", 0}, &port_);
    EXPECT_TRUE(listener.ok()) << listener.status().ToString();
    if (!listener.ok()) return;
    listener_ = std::move(listener).value();
    std::memcpy(challenge_.magic, magic, 8);
    thread_ = std::thread([this] {
      const auto give_up = Clock::now() + std::chrono::seconds(10);
      Socket peer;
      std::string who;
      while (!peer.valid() && Clock::now() < give_up) {
        peer = AcceptTcp(listener_, &who);
        if (!peer.valid()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!peer.valid()) return;
      (void)SendAll(peer, &challenge_, sizeof challenge_, Clock::now() + std::chrono::seconds(5));
      char byte;  // until the client hangs up (or gives up on us)
      (void)RecvAll(peer, &byte, 1, Clock::now() + std::chrono::seconds(5));
    });
  }
  ~ChallengeServer() {
    if (thread_.joinable()) thread_.join();
  }
  HostPort address() const { return {"127.0.0.1", port_}; }

 private:
  uint16_t port_ = 0;
  Socket listener_;
  wire::Challenge challenge_{};
  std::thread thread_;
};

Status HandshakeWith(const HostPort& server) {
  const ClusterKey key = ClusterKey::FromSecret("a cluster key of at least sixteen bytes");
  const std::vector<std::byte> worker_address(64, std::byte{1});
  return Handshake(server, key, 0, wire::ConnectionKind::kEndpoint, UcxTransport::kShm, worker_address,
                   std::chrono::milliseconds(5000))
      .status();
}

TEST(UcxVersion, AMemoryServerOfAnotherVersionIsRefusedNamingBoth) {
  const char older[8] = {'D', 'M', 'X', 'U', 'C', 'X', '0', '3'};
  ChallengeServer server(older);
  const Status s = HandshakeWith(server.address());
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("DMXUCX03"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(std::string(wire::kMagic, 8)), std::string::npos) << s.ToString();
}

TEST(UcxVersion, SomethingElseOnThePortIsStillNotDmindex) {
  const char http[8] = {'H', 'T', 'T', 'P', '/', '1', '.', '1'};
  ChallengeServer server(http);
  const Status s = HandshakeWith(server.address());
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_NE(s.message().find("not a dmindex memory server"), std::string::npos) << s.ToString();
}

TEST(UcxVersion, AClientOfAnotherVersionIsToldWhy) {
  wire::Hello hello{};
  const char older[8] = {'D', 'M', 'X', 'U', 'C', 'X', '0', '3'};
  std::memcpy(hello.magic, older, 8);
  const std::string why = wire::HelloDefect(hello);
  EXPECT_NE(why.find("another version"), std::string::npos) << why;
  EXPECT_NE(why.find("DMXUCX03"), std::string::npos) << why;
  std::memcpy(hello.magic, "GARBAGE!", 8);
  EXPECT_NE(wire::HelloDefect(hello).find("bad magic"), std::string::npos);
}

}  // namespace
}  // namespace dmindex::fabric::ucx
