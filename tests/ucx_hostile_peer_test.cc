// A memory server (a real `dmindex memserver` process, shared memory) against peers that
// are not dmindex clients of its cluster: the exact cases (a random 50- or 300-byte
// UCX worker address, which UCX answers with an assertion and SIGABRT if it ever reaches it;
// a well-formed handshake numbering the server 5), a replayed handshake, and a bounded fuzz
// of the bootstrap port (random, mutated, truncated, oversized, slowly written and
// half-sent handshakes, connection floods). Each refusal is logged with its reason, the
// server never dies, and a real client (with the key) is served afterwards, numbering the
// server as it should. Loopback only.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "fabric/rpc.h"
#include "fabric/ucx/cluster_key.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_fabric.h"
#include "fabric/ucx/wire.h"
#include "ucx_bootstrap_peer.h"

namespace dmindex::fabric::ucx {
namespace {


class HostilePeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_file_ = WriteKeyFile("key", "hostile-peer-test-secret-" + std::to_string(getpid()));
    other_key_file_ = WriteKeyFile("other-key", "some-other-cluster-entirely-0123456789");
    log_file_ = TempPath("server.log");
    std::filesystem::remove(log_file_);
    key_ = std::make_unique<ClusterKey>(std::move(ClusterKey::Load(key_file_)).value());
    MemserverSpec spec;
    spec.tool_path = DMINDEX_TOOL_PATH;
    spec.pool_bytes = 32ull << 20;
    spec.cluster_key_file = key_file_;
    spec.stderr_path = log_file_;
    auto p = MemserverProcess::Start(spec);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    server_ = std::move(p).value();
  }
  void TearDown() override {
    server_.reset();
    for (const auto& f : {key_file_, other_key_file_, log_file_}) std::filesystem::remove(f);
  }

  std::string Log() const {
    std::stringstream ss;
    ss << std::ifstream(log_file_).rdbuf();
    return ss.str();
  }
  void ExpectServerAlive() {
    auto exited = server_->Wait(milliseconds(0));
    EXPECT_FALSE(exited.ok()) << "memory server died, wait status " << *exited << "; log:\n" << Log();
  }
  // A real client of the cluster (its only server: memory node 0) allocates and writes.
  void ExpectRealClientServed() {
    UcxOptions o;
    o.cluster_key_file = key_file_;
    o.connect_timeout = milliseconds(3000);
    auto f = UcxFabric::Create({server_->address()}, o);
    ASSERT_TRUE(f.ok()) << f.status().ToString() << "\nserver log:\n" << Log();
    auto ep = (*f)->Connect();
    ASSERT_TRUE(ep.ok()) << ep.status().ToString();
    RpcReply reply;
    ASSERT_TRUE((*ep)->Call(0, rpc_op::kAllocChunk, {}, &reply).ok());
    uint64_t offset = 0;
    ASSERT_TRUE(ReadPod(reply, 0, &offset));
    uint64_t old = 1;
    ASSERT_TRUE((*ep)->Faa(GlobalAddress(0, offset), 7, &old).ok());
    EXPECT_EQ(old, 0u);
  }

  std::string key_file_, other_key_file_, log_file_;
  std::unique_ptr<ClusterKey> key_;
  std::unique_ptr<MemserverProcess> server_;
};

TEST_F(HostilePeerTest, RandomWorkerAddressesWithoutTheKeyNeverReachUcx) {
  std::mt19937_64 rng(7);
  const ClusterKey stranger = ClusterKey::FromSecret("a key of some other cluster");
  for (size_t bytes : {50, 300}) {
    for (const ClusterKey* signer : {static_cast<const ClusterKey*>(nullptr), &stranger}) {
      RawPeer peer(server_->address());
      ASSERT_TRUE(peer.ok());
      auto address = RandomBytes(rng, bytes);
      ASSERT_TRUE(peer.Send(MakeHello(signer, peer.nonce(), wire::ConnectionKind::kEndpoint, 0, address)));
      Outcome o = peer.Await();
      EXPECT_TRUE(o.refused && o.closed) << bytes << " bytes";
      ExpectServerAlive();
    }
  }
  EXPECT_NE(Log().find("handshake not signed with this cluster's key"), std::string::npos) << Log();
  ExpectRealClientServed();
}

TEST_F(HostilePeerTest, AHandshakeWithoutTheKeyCannotNumberTheServer) {
  const ClusterKey stranger = ClusterKey::FromSecret("a key of some other cluster");
  for (uint32_t node : {5u, 1u, 0u}) {
    RawPeer peer(server_->address());
    ASSERT_TRUE(peer.ok());
    ASSERT_TRUE(peer.Send(MakeHello(&stranger, peer.nonce(), wire::ConnectionKind::kMonitor, node, {})));
    EXPECT_TRUE(peer.Await().refused);
  }
  EXPECT_EQ(Log().find("serving as memory node"), std::string::npos) << Log();
  // A client with another cluster's key file is told so, by name of the problem.
  UcxOptions o;
  o.cluster_key_file = other_key_file_;
  auto f = UcxFabric::Create({server_->address()}, o);
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(f.status().IsInvalidArgument()) << f.status().ToString();
  EXPECT_NE(f.status().message().find("cluster's key"), std::string::npos) << f.status().ToString();
  ExpectRealClientServed();
  EXPECT_NE(Log().find("serving as memory node 0"), std::string::npos) << Log();
}

TEST_F(HostilePeerTest, AReplayedHandshakeIsRefused) {
  // Signed correctly, but over another connection's challenge (as if recorded off the wire).
  RawPeer first(server_->address());
  ASSERT_TRUE(first.ok());
  const auto recorded = MakeHello(key_.get(), first.nonce(), wire::ConnectionKind::kMonitor, 5, {});
  RawPeer second(server_->address());
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(second.Send(recorded));
  Outcome o = second.Await();
  EXPECT_TRUE(o.refused && o.closed);
  first.Close();
  ExpectRealClientServed();
}

TEST_F(HostilePeerTest, KeyFilesAreCheckedBeforeServing) {
  const std::string open_key = WriteKeyFile("open-key", "readable-by-everyone-0123456789");
  chmod(open_key.c_str(), 0644);
  auto k = ClusterKey::Load(open_key);
  EXPECT_TRUE(k.status().IsInvalidArgument());
  EXPECT_NE(k.status().message().find("chmod 600"), std::string::npos) << k.status().ToString();
  const std::string short_key = WriteKeyFile("short-key", "tooshort");
  EXPECT_TRUE(ClusterKey::Load(short_key).status().IsInvalidArgument());
  EXPECT_TRUE(ClusterKey::Load(TempPath("no-such-key")).status().IsInvalidArgument());
  for (const auto& f : {open_key, short_key}) std::filesystem::remove(f);
  // The default key is created on first use, private, and the same on the next load.
  const std::string home = TempPath("home");
  std::filesystem::create_directories(home);
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  setenv("HOME", home.c_str(), 1);
  auto created = ClusterKey::Load("");
  auto again = ClusterKey::Load("");
  if (old_home) setenv("HOME", saved.c_str(), 1);
  else unsetenv("HOME");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(again.ok());
  const Nonce n{};
  EXPECT_EQ(created->Sign({std::as_bytes(std::span(n))}), again->Sign({std::as_bytes(std::span(n))}));
  struct stat st {};
  ASSERT_EQ(stat((home + "/.dmindex/cluster-key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::filesystem::remove_all(home);
}

// The fuzz: a fixed seed (so a failure replays), a bounded number of cases and time.
TEST_F(HostilePeerTest, FuzzedHandshakesAreRefusedAndTheServerKeepsServing) {
  constexpr int kCases = 240;
  const auto budget = Clock::now() + std::chrono::seconds(60);
  std::mt19937_64 rng(20240611);
  std::vector<std::unique_ptr<RawPeer>> stalled;  // half-sent handshakes, left hanging
  int dropped = 0, welcomed_slow = 0;
  for (int i = 0; i < kCases && Clock::now() < budget; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    auto peer = std::make_unique<RawPeer>(server_->address());
    ASSERT_TRUE(peer->ok()) << "the server stopped answering; log:\n" << Log();
    // Signed handshakes are monitor connections: a signed endpoint handshake with a random
    // worker address is a key holder sending garbage, which the server trusts (to UCX).
    auto signed_hello = MakeHello(key_.get(), peer->nonce(), wire::ConnectionKind::kMonitor, 0, {});
    const auto unsigned_hello = MakeHello(nullptr, peer->nonce(), wire::ConnectionKind::kEndpoint,
                                          rng() % 8, RandomBytes(rng, 1 + rng() % 400));
    std::vector<std::byte> bytes;
    switch (i % 8) {
      case 0:  // random bytes
        bytes = RandomBytes(rng, rng() % 600);
        break;
      case 1:  // the magic, then random bytes (absurd kinds, transports, lengths)
        bytes = RandomBytes(rng, sizeof(wire::Hello) + rng() % 500);
        std::memcpy(bytes.data(), wire::kMagic, sizeof wire::kMagic);
        break;
      case 2:  // a handshake with 1-3 bytes changed: every byte is signed
      case 3: {
        bytes = i % 16 < 8 ? signed_hello : unsigned_hello;
        for (int flips = 1 + rng() % 3; flips > 0; --flips)
          bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1 + rng() % 255);
        break;
      }
      case 4: {  // a signed handshake with bytes beyond it: served if the server saw the
                 // handshake before the rest arrived, then dropped
        bytes = signed_hello;
        for (auto b : RandomBytes(rng, 1 + rng() % (rng() % 2 ? 16 : 100000))) bytes.push_back(b);
        peer->Send(bytes);
        EXPECT_TRUE(peer->Await(true).closed) << "bytes after a handshake were not dropped";
        continue;
      }
      case 5: {  // truncated, then the connection closed mid-message (or left hanging)
        bytes.assign(signed_hello.begin(), signed_hello.begin() + rng() % signed_hello.size());
        if (!bytes.empty() && bytes.size() < sizeof(wire::Hello) && rng() % 2)
          bytes[0] = std::byte{'X'};  // garbage noticed at once, not after the 5 s timeout
        peer->Send(bytes);
        if (stalled.size() < 8 && rng() % 2) stalled.push_back(std::move(peer));
        continue;
      }
      case 6: {  // a correct handshake written slowly, in small pieces: must be served
        ASSERT_TRUE(peer->SendSlowly(signed_hello, rng, 1 + rng() % 20));
        Outcome o = peer->Await(false);
        EXPECT_TRUE(o.welcomed) << "a slowly written real handshake was not served";
        welcomed_slow += o.welcomed;
        continue;
      }
      case 7:  // an oversized declared address (over the limit), then data
        bytes = signed_hello;
        {
          wire::Hello h;
          std::memcpy(&h, bytes.data(), sizeof h);
          h.kind = static_cast<uint32_t>(wire::ConnectionKind::kEndpoint);
          h.worker_address_bytes = wire::kMaxBlobBytes + 1 + static_cast<uint32_t>(rng() % 1000000);
          std::memcpy(bytes.data(), &h, sizeof h);
          bytes.resize(sizeof h + 70000);
        }
        break;
    }
    if (rng() % 4 == 0) peer->SendSlowly(bytes, rng, 64);
    else peer->Send(bytes);
    Outcome o = peer->Await();
    EXPECT_FALSE(o.welcomed) << "a malformed handshake was served";
    EXPECT_TRUE(o.closed) << "the server did not close a malformed handshake's connection";
    dropped += o.closed;
  }
  ExpectServerAlive();
  EXPECT_GT(dropped, kCases / 3);
  EXPECT_GT(welcomed_slow, 0);
  // A flood of idle connections beyond the pending limit does not lock real clients out.
  std::vector<std::unique_ptr<RawPeer>> flood;
  for (int i = 0; i < 100; ++i) flood.push_back(std::make_unique<RawPeer>(server_->address()));
  ExpectRealClientServed();
  flood.clear();
  stalled.clear();
  ExpectServerAlive();
  ExpectRealClientServed();
  const std::string log = Log();
  for (const char* why : {"bad magic", "malformed handshake", "not signed with this cluster's key",
                          "bytes beyond the handshake", "handshakes pending"})
    EXPECT_NE(log.find(why), std::string::npos) << why << "\n" << log.substr(0, 4000);
}

}  // namespace
}  // namespace dmindex::fabric::ucx
