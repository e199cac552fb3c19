// A memory server outlives its clients over TCP: a client killed with a verb batch in the
// server's socket leaves the server serving. Under UCX's emulated RMA the server aborted
// when it answered such a batch (`ucp_request.inl: Fatal: unexpected error: Endpoint
// timeout` in ucp_get_req_handler / ucp_put_handler; crash soak, TCP seed 900242); verbs
// over TCP are dmindex messages now (fabric/ucx/verb_messages.h).
//
// Deterministic: the server is stopped (SIGSTOP) before the client posts, the test waits
// until the whole batch sits unread in the server's sockets, kills the client, and only
// then lets the server run, so the server always meets a batch from a dead client.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fabric/rpc.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_fabric.h"

namespace dmindex::fabric::ucx {
namespace {

using std::chrono::milliseconds;

constexpr int kBatchVerbs = 32;
constexpr uint32_t kVerbBytes = 1024;

UcxOptions TcpOptions() {
  UcxOptions o;
  o.transport = UcxTransport::kTcp;
  o.connect_timeout = milliseconds(2000);
  o.op_timeout = milliseconds(5000);
  return o;
}

GlobalAddress Chunk(Endpoint& ep) {
  RpcReply reply;
  Status s = ep.Call(0, rpc_op::kAllocChunk, {}, &reply);
  EXPECT_TRUE(s.ok()) << s.ToString();
  uint64_t offset = 0;
  EXPECT_TRUE(ReadPod(reply, 0, &offset));
  return GlobalAddress(0, offset);
}

// Bytes received but not yet read in the TCP sockets `pid` holds (their Recv-Q).
uint64_t UnreadBytes(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::set<std::string> inodes;
  for (int fd = 0; fd < 1024; ++fd) {
    char link[64];
    const ssize_t n = readlink((proc + "/fd/" + std::to_string(fd)).c_str(), link, sizeof link - 1);
    if (n <= 0) continue;
    const std::string target(link, static_cast<size_t>(n));
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  uint64_t unread = 0;
  for (const char* table : {"/net/tcp", "/net/tcp6"}) {
    std::ifstream in(proc + table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (inodes.count(inode) == 0) continue;
      unread += std::stoull(queues.substr(queues.find(':') + 1), nullptr, 16);
    }
  }
  return unread;
}

// Polls `done` every 2 ms for up to 20 s (a loaded machine); false if it never held.
template <typename Done>
bool WaitFor(Done done) {
  for (int i = 0; i < 10000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return false;
}

bool IsStopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T';
}

// The doomed client (a forked child): connects, proves its connection with one WRITE, says
// so on `ready`, waits for `go`, then posts a batch of WRITEs and READs that its server,
// stopped by then, never answers before this process is killed. Exit codes name a failure.
int RunDoomedClient(const HostPort& server, int ready, int go) {
  auto fabric = UcxFabric::Create({server}, TcpOptions());
  if (!fabric.ok()) return 10;
  auto ep = (*fabric)->Connect();
  if (!ep.ok()) return 11;
  const GlobalAddress chunk = Chunk(**ep);
  std::vector<std::byte> data(kBatchVerbs * kVerbBytes, std::byte{0x5a});
  if (!(*ep)->Write(chunk + 64, data.data(), kVerbBytes).ok()) return 12;
  char c = 'r';
  if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1) return 13;
  std::vector<std::byte> back(data.size());
  std::vector<Verb> batch;
  for (uint32_t i = 0; i < kBatchVerbs; ++i) {
    const GlobalAddress at = chunk + 64 + uint64_t{i} * kVerbBytes;
    batch.push_back(Verb::Write(at, data.data() + i * kVerbBytes, kVerbBytes));
    batch.push_back(Verb::Read(at, back.data() + i * kVerbBytes, kVerbBytes));
  }
  (void)(*ep)->Post(batch, Ordering::kInOrder);  // killed while it waits
  return 14;
}

TEST(UcxClientKilled, AServerAnsweringAKilledClientsVerbsKeepsServing) {
  MemserverSpec spec;
  spec.tool_path = DMINDEX_TOOL_PATH;
  spec.pool_bytes = 32ull << 20;
  spec.transport = UcxTransport::kTcp;
  auto server = MemserverProcess::Start(spec);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const pid_t server_pid = (*server)->pid();
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t client = fork();  // before this process touches UCX: the child starts it afresh
  if (client == 0) _exit(RunDoomedClient((*server)->address(), ready[1], go[0]));
  ASSERT_GT(client, 0);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the client died before its first WRITE";

  (*server)->Signal(SIGSTOP);
  ASSERT_TRUE(WaitFor([&] { return IsStopped(server_pid); }));
  const uint64_t before = UnreadBytes(server_pid);
  ASSERT_EQ(write(go[1], "g", 1), 1);
  // The whole batch (its WRITEs' data at least) waits in the stopped server's sockets.
  ASSERT_TRUE(WaitFor([&] { return UnreadBytes(server_pid) >= before + kBatchVerbs * kVerbBytes; }))
      << UnreadBytes(server_pid) << " bytes unread";
  ASSERT_EQ(kill(client, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(client, &status, 0), client);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the client exited by itself, code " << WEXITSTATUS(status);
  (*server)->Signal(SIGCONT);
  // The server reads the dead client's batch, carries it out and answers into a closed
  // connection; then a new client is served.
  ASSERT_TRUE(WaitFor([&] { return !IsStopped(server_pid) && UnreadBytes(server_pid) == 0; }));
  auto fabric = UcxFabric::Create({(*server)->address()}, TcpOptions());
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  auto ep = (*fabric)->Connect();
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  const GlobalAddress chunk = Chunk(**ep);
  uint64_t word = 7, old = 0;
  ASSERT_TRUE((*ep)->Write(chunk + 64, &word, 8).ok());
  ASSERT_TRUE((*ep)->Faa(chunk + 64, 1, &old).ok());
  EXPECT_EQ(old, 7u);
  auto exited = (*server)->Wait(milliseconds(0));
  EXPECT_FALSE(exited.ok()) << "the memory server exited, status " << *exited;
}

}  // namespace
}  // namespace dmindex::fabric::ucx
