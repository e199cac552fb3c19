// Issue 25.5, "the port and the pool are closed to strangers", on real `dmindex memserver`
// processes: its shared-memory segments (the pool among them) are reachable only by its
// user, and the pool is still exported over shared memory to a client of that user; a flood
// of unsigned connections never costs a signed handshake its answer; garbage on UCX's own
// TCP port does not bring the server down. Loopback only, bounded counts.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <deque>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fabric/rpc.h"
#include "fabric/ucx/bootstrap.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_context.h"
#include "fabric/ucx/ucx_fabric.h"
#include "test_fabrics.h"
#include "ucx_bootstrap_peer.h"

namespace dmindex::fabric::ucx {
namespace {

struct SharedSegment {
  std::string name;  // what the mapping names: /dev/shm/..., /SYSV...
  uint64_t bytes = 0;
  unsigned mode = 0;  // permission bits of the object behind it
};

// The shared-memory objects `pid` has mapped (/proc/<pid>/map_files: one link per mapping,
// named by its address range, followed by stat() to the object itself).
std::vector<SharedSegment> SharedSegmentsOf(pid_t pid) {
  std::vector<SharedSegment> out;
  const std::filesystem::path dir = "/proc/" + std::to_string(pid) + "/map_files";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (ec || (target.rfind("/dev/shm/", 0) != 0 && target.rfind("/SYSV", 0) != 0)) continue;
    struct stat st {};
    if (stat(entry.path().c_str(), &st) != 0) continue;
    const std::string range = entry.path().filename().string();
    const size_t dash = range.find('-');
    const uint64_t begin = std::stoull(range.substr(0, dash), nullptr, 16);
    const uint64_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    out.push_back({target, end - begin, static_cast<unsigned>(st.st_mode & 0777)});
  }
  return out;
}

// System V segments created by `pid` (/proc/sysvipc/shm: key shmid perms size cpid ...).
std::vector<std::string> SysvSegmentsCreatedBy(pid_t pid) {
  std::vector<std::string> out;
  std::ifstream in("/proc/sysvipc/shm");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, shmid, perms, size;
    pid_t cpid = 0;
    if (fields >> key >> shmid >> perms >> size >> cpid && cpid == pid)
      out.push_back("shmid " + shmid + " perms " + perms + " bytes " + size);
  }
  return out;
}

TEST(UcxStrangers, ThePoolIsReachableOnlyByTheServersUser) {
  constexpr uint64_t kPool = 64ull << 20;
  auto server = testing::StartShmMemserver(kPool);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const pid_t pid = (*server)->pid();

  // No System V segment: UCX 1.13 makes those 0660 (group members could attach the pool).
  EXPECT_EQ(SysvSegmentsCreatedBy(pid), std::vector<std::string>{});
  bool pool_seen = false;
  for (const SharedSegment& s : SharedSegmentsOf(pid)) {
    EXPECT_EQ(s.mode & 077, 0u) << s.name << " (" << s.bytes << " bytes) has mode 0" << std::oct << s.mode;
    pool_seen = pool_seen || s.bytes == kPool;
  }
  EXPECT_TRUE(pool_seen) << "the pool is not a shared-memory mapping of the server";

  // And a client of the server's user still reaches it: verbs work on the pool.
  auto fabric = UcxFabric::Create({(*server)->address()}, UcxOptions{});
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  auto ep = (*fabric)->Connect();
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  uint64_t old = 1;
  ASSERT_TRUE((*ep)->Faa(GlobalAddress(0, kPool - 8), 5, &old).ok());
  EXPECT_EQ(old, 0u);
}

// The TCP ports `pid` listens on (its sockets' inodes, looked up in /proc/net/tcp).
std::vector<uint16_t> ListeningPortsOf(pid_t pid) {
  std::set<std::string> inodes;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<uint16_t> ports;
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    f >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    if (state == "0A" && inodes.contains(inode))
      ports.push_back(static_cast<uint16_t>(std::stoul(local.substr(local.find(':') + 1), nullptr, 16)));
  }
  return ports;
}

class UcxStrangersOnThePort : public ::testing::TestWithParam<UcxTransport> {
 protected:
  void SetUp() override {
    key_file_ = WriteKeyFile("strangers-key", "strangers-test-secret-" + std::to_string(getpid()));
    log_file_ = TempPath("strangers.log");
    key_ = std::make_unique<ClusterKey>(std::move(ClusterKey::Load(key_file_)).value());
    MemserverSpec spec;
    spec.tool_path = DMINDEX_TOOL_PATH;
    spec.pool_bytes = 32ull << 20;
    spec.transport = GetParam();
    spec.cluster_key_file = key_file_;
    spec.stderr_path = log_file_;
    auto p = MemserverProcess::Start(spec);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    server_ = std::move(p).value();
  }
  void TearDown() override {
    server_.reset();
    for (const auto& f : {key_file_, log_file_}) std::filesystem::remove(f);
  }
  std::string Log() const {
    std::stringstream ss;
    ss << std::ifstream(log_file_).rdbuf();
    return ss.str();
  }
  void ExpectServedAndAlive() {
    EXPECT_FALSE(server_->Wait(milliseconds(0)).ok()) << "the memory server died; log:\n" << Log().substr(0, 4000);
    UcxOptions o;
    o.transport = GetParam();
    o.cluster_key_file = key_file_;
    auto f = UcxFabric::Create({server_->address()}, o);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto ep = (*f)->Connect();
    ASSERT_TRUE(ep.ok()) << ep.status().ToString();
    uint64_t old = 1;
    ASSERT_TRUE((*ep)->Faa(GlobalAddress(0, 64), 1, &old).ok());
  }

  std::string key_file_, log_file_;
  std::unique_ptr<ClusterKey> key_;
  std::unique_ptr<MemserverProcess> server_;
};

// The case: 3,000 idle unsigned connections around 30 signed handshakes, each sent
// before the next 100 of the flood connect - so each reached the server while at most 100
// newer connections were accepted after it, enough to evict it as the oldest pending of 64
// before this fix (1 in 21 went unanswered). Now a pending Hello is read before any pending
// connection is dropped, and the flood's silent connections are dropped among themselves.
TEST_P(UcxStrangersOnThePort, AFloodOfUnsignedConnectionsNeverEvictsASignedHandshake) {
  constexpr int kSigned = 30, kFloodEach = 100;
  constexpr size_t kFloodOpen = 400;  // the test's own descriptors: older flood sockets close
  std::deque<Socket> flood;
  int welcomed = 0, flooded = 0;
  for (int i = 0; i < kSigned; ++i) {
    RawPeer peer(server_->address());
    ASSERT_TRUE(peer.ok()) << "no challenge for signed client " << i;
    ASSERT_TRUE(peer.Send(MakeHello(key_.get(), peer.nonce(), wire::ConnectionKind::kMonitor, 0, {}, GetParam())));
    for (int j = 0; j < kFloodEach; ++j) {
      auto s = ConnectTcp(server_->address(), milliseconds(2000));
      if (!s.ok()) continue;  // the listen backlog was full: a flood the kernel held back
      ++flooded;
      flood.push_back(std::move(s).value());
      if (flood.size() > kFloodOpen) flood.pop_front();
    }
    const Outcome o = peer.Await(/*until_closed=*/false);
    EXPECT_TRUE(o.welcomed) << "signed handshake " << i << " was not answered";
    welcomed += o.welcomed;
  }
  EXPECT_EQ(welcomed, kSigned);
  EXPECT_GT(flooded, kSigned * kFloodEach / 2);
  EXPECT_NE(Log().find("handshakes pending"), std::string::npos) << "the flood never filled the pending slots";
  flood.clear();
  ExpectServedAndAlive();
}

// Over TCP, UCX listens on a port of its own (the worker's TCP interface); a client learns it
// from the signed Welcome, but anyone can find it. What guards it is not the cluster key
// (docs/UCX.md, "Who can reach the pool"); what this test holds it to: bytes that are not
// UCX's protocol - random, a flood of connections, half-open ones - do not bring the server
// down, and clients are still served.
TEST_P(UcxStrangersOnThePort, GarbageOnUcxsOwnPortDoesNotBringTheServerDown) {
  const uint16_t bootstrap = server_->address().port;
  std::vector<uint16_t> ucx_ports;
  for (uint16_t p : ListeningPortsOf(server_->pid()))
    if (p != bootstrap) ucx_ports.push_back(p);
  if (GetParam() == UcxTransport::kTcp) ASSERT_FALSE(ucx_ports.empty()) << "UCX's TCP port not found";
  std::mt19937_64 rng(25);
  for (uint16_t port : ucx_ports) {
    HostPort at = server_->address();
    at.port = port;
    std::vector<Socket> held;
    for (int i = 0; i < 40; ++i) {
      auto s = ConnectTcp(at, milliseconds(2000));
      if (!s.ok()) continue;
      const auto junk = RandomBytes(rng, i % 4 == 0 ? 0 : 1 + rng() % 4096);
      (void)SendAll(*s, junk.data(), junk.size(), Clock::now() + std::chrono::seconds(1));
      if (i % 3 == 0) held.push_back(std::move(s).value());  // left open, mid-message
    }
    ExpectServedAndAlive();
  }
  ExpectServedAndAlive();
}

// A peer that speaks UCX but not dmindex's handshake: its own context with every feature a
// stranger could ask for (RMA, atomics, AM) over TCP, one worker, one endpoint.
struct StrangerUcx {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  ucp_ep_h ep = nullptr;
  int answers = 0;  // replies of either kind that reached it

  bool Start(const std::vector<std::byte>& server_worker) {
    ucp_config_t* config = nullptr;
    if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) return false;
    ucp_config_modify(config, "TLS", "tcp");
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_AM;
    const ucs_status_t inited = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (inited != UCS_OK) return false;
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (ucp_worker_create(context, &wp, &worker) != UCS_OK) return false;
    for (unsigned am : {wire::kVerbReplyAm, wire::kRpcReplyAm}) {
      ucp_am_handler_param_t hp{};
      hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG;
      hp.id = am;
      hp.cb = [](void* arg, const void*, size_t, void*, size_t, const ucp_am_recv_param_t*) {
        ++*static_cast<int*>(arg);
        return UCS_OK;
      };
      hp.arg = &answers;
      if (ucp_worker_set_am_recv_handler(worker, &hp) != UCS_OK) return false;
    }
    ucp_ep_params_t ep_params{};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep_params.address = reinterpret_cast<const ucp_address_t*>(server_worker.data());
    ep_params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    return ucp_ep_create(worker, &ep_params, &ep) == UCS_OK;
  }
  ~StrangerUcx() {
    if (ep != nullptr) {
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      p.flags = UCP_EP_CLOSE_FLAG_FORCE;
      void* closing = ucp_ep_close_nbx(ep, &p);
      if (UCS_PTR_IS_PTR(closing)) {
        while (ucp_request_check_status(closing) == UCS_INPROGRESS) ucp_worker_progress(worker);
        ucp_request_free(closing);
      }
    }
    if (worker != nullptr) ucp_worker_destroy(worker);
    if (context != nullptr) ucp_cleanup(context);
  }
};

// A stranger that reaches UCX's own port over TCP and knows the server's worker address (it
// can build one from the port): UCX's emulated PUT has no handler on the server (no RMA
// feature), and dmindex's verb and RPC messages without a live connection's token are
// neither carried out nor answered. The pool word the stranger aims at keeps its value.
TEST_P(UcxStrangersOnThePort, APeerOnUcxsPortWithoutAConnectionTokenReachesNothing) {
  if (GetParam() != UcxTransport::kTcp) GTEST_SKIP() << "over shm UCX has no port of its own";
  UcxOptions o;
  o.transport = UcxTransport::kTcp;
  o.cluster_key_file = key_file_;
  auto fabric = UcxFabric::Create({server_->address()}, o);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  auto client = (*fabric)->Connect();
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  RpcReply chunk_reply;
  ASSERT_TRUE((*client)->Call(0, rpc_op::kAllocChunk, {}, &chunk_reply).ok());
  uint64_t chunk = 0;
  ASSERT_TRUE(ReadPod(chunk_reply, 0, &chunk));
  const GlobalAddress target(0, chunk + 64);
  const uint64_t kept = 0x600d, forged = 0xbad;
  ASSERT_TRUE((*client)->Write(target, &kept, 8).ok());

  // The stranger's UCX: RMA, atomics and AM over TCP (dmindex's own contexts over TCP
  // have AM only), with the server's worker address.
  auto welcome = Handshake(server_->address(), *key_, 0, wire::ConnectionKind::kMonitor,
                           UcxTransport::kTcp, {}, milliseconds(5000));
  ASSERT_TRUE(welcome.ok()) << welcome.status().ToString();
  StrangerUcx stranger;
  ASSERT_TRUE(stranger.Start(welcome->worker_address));

  // Every connection id a stranger might guess, with a made-up token: a WRITE of `forged`
  // as a verb message, and an RPC.
  std::vector<std::byte> batch(sizeof(wire::VerbRecord) + 8);
  wire::VerbRecord write{};
  write.kind = static_cast<uint8_t>(VerbKind::kWrite);
  write.length = 8;
  write.offset = target.offset();
  std::memcpy(batch.data(), &write, sizeof write);
  std::memcpy(batch.data() + sizeof write, &forged, 8);
  std::vector<wire::VerbRequestHeader> verb_headers;
  std::vector<wire::RpcRequestHeader> rpc_headers;
  for (uint32_t id = 0; id < 16; ++id) {
    verb_headers.push_back({id, 1, id, 0x1234});
    rpc_headers.push_back({id, rpc_op::kPoolInfo, 0, id, 0x1234});
  }
  std::vector<void*> sends;
  ucp_request_param_t p{};
  for (uint32_t id = 0; id < 16; ++id) {
    sends.push_back(ucp_am_send_nbx(stranger.ep, wire::kVerbRequestAm, &verb_headers[id], sizeof verb_headers[id],
                                    batch.data(), batch.size(), &p));
    sends.push_back(ucp_am_send_nbx(stranger.ep, wire::kRpcRequestAm, &rpc_headers[id], sizeof rpc_headers[id],
                                    nullptr, 0, &p));
  }
  // UCX's own emulated PUT of `forged`, if this UCX lets the stranger issue one at all.
  ucp_rkey_h rkey = nullptr;
  if (ucp_ep_rkey_unpack(stranger.ep, welcome->rkey.data(), &rkey) == UCS_OK)
    sends.push_back(ucp_put_nbx(stranger.ep, &forged, 8, welcome->pool_base + target.offset(), rkey, &p));
  const auto until = Clock::now() + std::chrono::milliseconds(500);
  while (Clock::now() < until) ucp_worker_progress(stranger.worker);
  EXPECT_EQ(stranger.answers, 0) << "a message without its connection's token was answered";

  uint64_t now = 0;
  ASSERT_TRUE((*client)->Read(target, &now, 8).ok());
  EXPECT_EQ(now, kept) << "a stranger's write reached the pool";
  for (void* r : sends)
    if (UCS_PTR_IS_PTR(r)) ucp_request_cancel(stranger.worker, r);
  for (void* r : sends)
    if (UCS_PTR_IS_PTR(r)) ucp_request_free(r);
  if (rkey != nullptr) ucp_rkey_destroy(rkey);
  ExpectServedAndAlive();
}

INSTANTIATE_TEST_SUITE_P(Transports, UcxStrangersOnThePort, ::testing::Values(UcxTransport::kShm, UcxTransport::kTcp),
                         [](const auto& info) { return std::string(UcxTransportName(info.param)); });

}  // namespace
}  // namespace dmindex::fabric::ucx
