// Memory servers that restart: with `--data-dir` the pool outlives the server process and a
// live writer rides through a kill -9 and restart (every acknowledged write is there
// afterwards, for it and for a new opener); without it the pool is volatile, and a restart
// fails every operation of the process that used it and makes the index NotFound for a new
// opener, on every design shared across processes. Real `dmindex memserver` processes over
// shared memory (docs/FAILURES.md, "A memory server dies or restarts").
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "designs/registry.h"
#include "fabric/pool_layout.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_fabric.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

using fabric::ucx::MemserverProcess;
using fabric::ucx::MemserverSpec;
using fabric::ucx::UcxFabric;

// A fresh directory under the build's temp dir, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dmindex-persist-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

MemserverSpec Spec(const std::string& listen, const std::string& data_dir, const std::string& log) {
  MemserverSpec spec;
  spec.tool_path = DMINDEX_TOOL_PATH;
  spec.listen = listen;
  spec.pool_bytes = 64ull << 20;
  spec.chunk_bytes = 1ull << 20;
  spec.data_dir = data_dir;
  spec.stderr_path = log;
  return spec;
}

// SIGSTOP, and wait until the server is stopped: a signal is delivered asynchronously, and a
// verb issued before it lands would be answered.
void StopAndWait(const MemserverProcess& server) {
  server.Signal(SIGSTOP);
  int status = 0;
  ASSERT_EQ(waitpid(server.pid(), &status, WUNTRACED), server.pid());
  ASSERT_TRUE(WIFSTOPPED(status));
}

// --- The pool directory: refused when it cannot be served as it is ---

TEST(PersistentPool, RefusesALiveDirectoryASizeMismatchAndACorruptIdentity) {
  TempDir dir;
  const std::string data = dir.path() + "/data", log = dir.path() + "/log";
  auto first = MemserverProcess::Start(Spec("127.0.0.1:0", data, log));
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  auto second = MemserverProcess::Start(Spec("127.0.0.1:0", data, log));
  EXPECT_FALSE(second.ok());
  EXPECT_NE(Slurp(log).find("is served by a live memory server"), std::string::npos) << Slurp(log);

  // A crash leaves no lock behind: the kernel drops it with the process.
  (*first)->Signal(SIGKILL);
  ASSERT_TRUE((*first)->Wait(std::chrono::seconds(5)).ok());
  MemserverSpec bigger = Spec("127.0.0.1:0", data, log);
  bigger.pool_bytes = 128ull << 20;
  EXPECT_FALSE(MemserverProcess::Start(bigger).ok());
  EXPECT_NE(Slurp(log).find("--size asks for " + std::to_string(bigger.pool_bytes)), std::string::npos)
      << Slurp(log);
  MemserverSpec other_chunks = Spec("127.0.0.1:0", data, log);
  other_chunks.chunk_bytes = 2ull << 20;
  EXPECT_FALSE(MemserverProcess::Start(other_chunks).ok());
  EXPECT_NE(Slurp(log).find("was created with chunks of 1 MiB"), std::string::npos) << Slurp(log);

  // Damage the identity record: the server refuses rather than serve (or reformat) it.
  const int fd = open((data + "/pool").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const char junk[8] = {'n', 'o', 't', 'a', 'p', 'o', 'o', 'l'};
  ASSERT_EQ(pwrite(fd, junk, sizeof junk, fabric::kPoolIdentityOffset), 8);
  close(fd);
  EXPECT_FALSE(MemserverProcess::Start(Spec("127.0.0.1:0", data, log)).ok());
  EXPECT_NE(Slurp(log).find("holds no valid pool identity"), std::string::npos) << Slurp(log);
}

// A persistent pool's server that does not come back within restart_wait, or comes back
// with another pool (its DIR/pool moved away), is given up: every operation of the fabric
// fails from then on, naming it.
TEST(PersistentPool, AServerNotBackInTimeOrBackWithAnotherPoolIsGivenUp) {
  TempDir dir;
  const std::string log = dir.path() + "/log";
  for (const bool moved : {false, true}) {
    const std::string data = dir.path() + (moved ? "/moved" : "/late");
    auto server = MemserverProcess::Start(Spec("127.0.0.1:0", data, log));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    const std::string at = (*server)->address().ToString();
    fabric::ucx::UcxOptions o;
    o.restart_wait = std::chrono::milliseconds(moved ? 30000 : 300);
    auto fabric = UcxFabric::Create(at, o);
    ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
    auto ep = std::move((*fabric)->Connect()).value();
    uint64_t word = 0;
    ASSERT_TRUE(ep->Read(GlobalAddress(0, fabric::kChunkAreaOffset), &word, 8).ok());
    (*server)->Signal(SIGKILL);
    ASSERT_TRUE((*server)->Wait(std::chrono::seconds(5)).ok());
    if (moved) {
      std::filesystem::rename(data + "/pool", data + "/pool.old");
      server = MemserverProcess::Start(Spec(at, data, log));
      ASSERT_TRUE(server.ok()) << server.status().ToString();
    }
    // Bounded: restart_wait (300 ms), or one reconnection attempt once the new server is up.
    for (int i = 0; i < 20000 && (*fabric)->LostPool().ok(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const Status lost = (*fabric)->LostPool();
    ASSERT_TRUE(lost.IsUnavailable()) << lost.ToString();
    EXPECT_NE(lost.message().find(moved ? "restarted with another pool" : "did not come back"),
              std::string::npos) << lost.ToString();
    Status s = ep->Read(GlobalAddress(0, fabric::kChunkAreaOffset), &word, 8);
    EXPECT_EQ(s.ToString(), lost.ToString());
  }
}

// A server that stalls just as this process reattaches to it after a restart (SIGSTOP: the
// handshake times out; the same as one that dies again just as the monitor saw it back):
// operations wait for it as for a restarting server and go on once it answers. Before, the
// failed reattachment stayed the endpoint's state and every later operation on the node failed
// at once, without being issued (naive over shm, crash soak seed 500195: 446 in a row).
TEST(PersistentPool, AReattachmentThatFailsWaitsForTheServerInsteadOfFailingEveryOperation) {
  TempDir dir;
  const std::string log = dir.path() + "/log", data = dir.path() + "/data";
  auto server = MemserverProcess::Start(Spec("127.0.0.1:0", data, log));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string at = (*server)->address().ToString();
  fabric::ucx::UcxOptions o;
  o.connect_timeout = std::chrono::milliseconds(300);
  o.op_timeout = std::chrono::milliseconds(60000);
  auto fabric = UcxFabric::Create(at, o);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  auto ep = std::move((*fabric)->Connect()).value();
  const GlobalAddress word(0, fabric::kChunkAreaOffset);
  uint64_t value = 0;
  ASSERT_TRUE(ep->Read(word, &value, 8).ok());

  (*server)->Signal(SIGKILL);
  ASSERT_TRUE((*server)->Wait(std::chrono::seconds(5)).ok());
  server = MemserverProcess::Start(Spec(at, data, log));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  // Another endpoint's read answers once the monitor has the server back; `ep` has not
  // reattached yet (it reattaches on its next use).
  auto other = std::move((*fabric)->Connect()).value();
  ASSERT_TRUE(other->Read(word, &value, 8).ok());

  StopAndWait(**server);
  std::thread resume([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // several handshake timeouts
    (*server)->Signal(SIGCONT);
  });
  Status first = ep->Read(word, &value, 8);  // reattaches to the stopped server
  resume.join();
  EXPECT_TRUE(first.ok()) << "an operation failed at once instead of waiting for the server: " << first.ToString();
  for (int i = 0; i < 20; ++i) {
    const Status s = ep->Read(word, &value, 8);
    ASSERT_TRUE(s.ok()) << "read " << i << " after the server resumed: " << s.ToString();
  }
}

// An endpoint made while its server stalls (SIGSTOP: the monitor still sees it up) fails its
// handshake (connect_timeout); once the server answers again, the endpoint's next operation
// connects and works. Before, the failed handshake stayed the node's state and every later
// operation was answered it at once, for good (crash soak, TCP seed 340576).
TEST(PersistentPool, AnEndpointWhoseFirstHandshakeFailedConnectsOnItsNextUse) {
  TempDir dir;
  auto server = MemserverProcess::Start(Spec("127.0.0.1:0", dir.path() + "/data", dir.path() + "/log"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  fabric::ucx::UcxOptions o;
  o.connect_timeout = std::chrono::milliseconds(300);
  auto fabric = UcxFabric::Create((*server)->address().ToString(), o);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  StopAndWait(**server);
  auto ep = std::move((*fabric)->Connect()).value();  // its handshake times out
  const GlobalAddress word(0, fabric::kChunkAreaOffset);
  uint64_t value = 0;
  (*server)->Signal(SIGCONT);
  for (int i = 0; i < 5; ++i) {
    const Status s = ep->Read(word, &value, 8);
    ASSERT_TRUE(s.ok()) << "read " << i << " after the server resumed: " << s.ToString();
  }
}

// A server that stalls longer than op_timeout (SIGSTOP; over TCP its verbs then time out) and
// then answers again: the operation in flight is Unavailable, and every later one works once
// it answers. Before, the endpoint kept the timeout as the node's state and answered every
// later operation on it Unavailable at once, without issuing it, for good. A resumed server
// on a loaded machine may still miss a 500 ms timeout now and then: such a read must have
// been issued and waited for (it took the timeout), never refused at once, and the reads go
// on working - 20 of them within a minute.
TEST(PersistentPool, AnEndpointWhoseOperationTimedOutOnAStalledServerWorksOnceItAnswers) {
  TempDir dir;
  MemserverSpec spec = Spec("127.0.0.1:0", dir.path() + "/data", dir.path() + "/log");
  spec.transport = fabric::ucx::UcxTransport::kTcp;
  auto server = MemserverProcess::Start(spec);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  fabric::ucx::UcxOptions o;
  o.transport = fabric::ucx::UcxTransport::kTcp;
  o.connect_timeout = std::chrono::milliseconds(300);
  o.op_timeout = std::chrono::milliseconds(500);
  auto fabric = UcxFabric::Create((*server)->address().ToString(), o);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  auto ep = std::move((*fabric)->Connect()).value();
  const GlobalAddress word(0, fabric::kChunkAreaOffset);
  uint64_t value = 0;
  ASSERT_TRUE(ep->Read(word, &value, 8).ok());

  StopAndWait(**server);
  const Status stalled = ep->Read(word, &value, 8);
  EXPECT_TRUE(stalled.IsUnavailable()) << stalled.ToString();
  (*server)->Signal(SIGCONT);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  int answered = 0;
  while (answered < 20 && std::chrono::steady_clock::now() < deadline) {
    const auto issued = std::chrono::steady_clock::now();
    const Status s = ep->Read(word, &value, 8);
    if (s.ok()) {
      ++answered;
      continue;
    }
    const auto waited = std::chrono::steady_clock::now() - issued;
    ASSERT_GE(waited, o.op_timeout * 9 / 10)
        << "read after the server resumed, refused without waiting for it: " << s.ToString();
  }
  EXPECT_EQ(answered, 20) << "reads answered within a minute of the server resuming";
}

// --- Every design shared across processes ---

class RestartFixture : public ::testing::Test {
 protected:
  std::unique_ptr<MemserverProcess> Start(const std::string& listen, const std::string& data_dir) {
    MemserverSpec spec = Spec(listen, data_dir, dir_.path() + "/log");
    spec.transport = transport_;
    auto p = MemserverProcess::Start(spec);
    EXPECT_TRUE(p.ok()) << p.status().ToString() << "\n" << Slurp(dir_.path() + "/log");
    return p.ok() ? std::move(p).value() : nullptr;
  }
  // Kills `server` (as a crash would) and starts a new one on its port.
  void Restart(std::unique_ptr<MemserverProcess>& server, const std::string& data_dir) {
    const std::string at = server->address().ToString();
    server->Signal(SIGKILL);
    ASSERT_TRUE(server->Wait(std::chrono::seconds(5)).ok());
    server = Start(at, data_dir);
    ASSERT_TRUE(server);
  }
  std::unique_ptr<UcxFabric> Connect(const std::string& servers) {
    fabric::ucx::UcxOptions o;
    o.transport = transport_;
    auto f = UcxFabric::Create(servers, o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  Result<std::unique_ptr<Index>> Open(fabric::Fabric& fabric, bool create_if_missing) {
    IndexOptions o;
    o.name = "orders";
    o.create_if_missing = create_if_missing;
    return designs::MakeIndex(design_, fabric, o);
  }
  // Two servers on --data-dir; a writer that the kill and restart of each must not stop.
  void RideThroughRestarts();

  std::string design_;
  fabric::ucx::UcxTransport transport_ = fabric::ucx::UcxTransport::kShm;
  TempDir dir_;
};

class MemserverRestart : public RestartFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    design_ = GetParam();
    if (Status shared = designs::SharedAcrossProcesses(design_); !shared.ok())
      GTEST_SKIP() << shared.message();
  }
};

// Over TCP an operation in flight at the kill fails (UCX's peer error) rather than landing
// in a mapped file, and every verb needs the server: the reconnection path under load.
class MemserverRestartOverTcp : public RestartFixture {
 protected:
  void SetUp() override {
    design_ = "sherman";
    transport_ = fabric::ucx::UcxTransport::kTcp;
  }
};

TEST_P(MemserverRestart, AWriterRidesThroughAPersistentPoolsRestart) { RideThroughRestarts(); }

TEST_F(MemserverRestartOverTcp, AShermanWriterRidesThroughAPersistentPoolsRestart) {
  RideThroughRestarts();
}

void RestartFixture::RideThroughRestarts() {
  const std::string data0 = dir_.path() + "/node0", data1 = dir_.path() + "/node1";
  auto s0 = Start("127.0.0.1:0", data0);
  auto s1 = Start("127.0.0.1:0", data1);
  ASSERT_TRUE(s0 && s1);
  const std::string servers = s0->address().ToString() + "," + s1->address().ToString();
  auto fabric = Connect(servers);
  ASSERT_TRUE(fabric);
  auto index = Open(*fabric, true);
  ASSERT_TRUE(index.ok()) << index.status().ToString();

  // One writer: key k gets k * 7. A write that returns Unavailable was in flight at the kill
  // (its outcome is unknown) and is tried again; every other error fails the test.
  std::atomic<uint64_t> acked{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> unavailable{0};
  std::string first_unavailable, thousandth_unavailable;  // the writer's, read after it joined
  Status failure;
  std::thread writer([&] {
    auto session = std::move((*index)->OpenSession()).value();
    for (uint64_t k = 1; !stop.load(); ++k) {
      Status s = session->Insert(k, k * 7);
      while (s.IsUnavailable() && !stop.load()) {
        const uint64_t seen = unavailable.fetch_add(1);
        if (seen == 0) first_unavailable = s.ToString();
        if (seen == 1000) thousandth_unavailable = s.ToString();  // a writer stuck on one error
        s = session->Insert(k, k * 7);
      }
      if (!s.ok()) {
        if (!stop.load()) failure = s;
        return;
      }
      acked.store(k);
    }
  });
  const auto wait_for = [&](uint64_t count) {
    for (int i = 0; i < 20000 && acked.load() < count && failure.ok(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return acked.load() >= count;
  };
  ASSERT_TRUE(wait_for(500)) << failure.ToString();
  // Node 0 holds the catalog, node 1 only index memory: restart both, one after the other.
  Restart(s1, data1);
  const uint64_t after_first = acked.load();
  EXPECT_TRUE(wait_for(after_first + 500)) << failure.ToString();
  Restart(s0, data0);
  const uint64_t after_second = acked.load();
  EXPECT_TRUE(wait_for(after_second + 500)) << failure.ToString();
  stop = true;
  writer.join();
  ASSERT_TRUE(failure.ok()) << failure.ToString();
  const uint64_t last = acked.load();
  std::printf("%s over %s: acknowledged %llu writes before the first restart, %llu before the "
              "second, %llu in all; %llu returned Unavailable and were retried\n",
              design_.c_str(), fabric::ucx::UcxTransportName(transport_), static_cast<unsigned long long>(after_first),
              static_cast<unsigned long long>(after_second), static_cast<unsigned long long>(last),
              static_cast<unsigned long long>(unavailable.load()));
  if (unavailable.load() > 0) std::printf("the first: %s\n", first_unavailable.c_str());
  if (unavailable.load() > 1000) std::printf("the 1001st: %s\n", thousandth_unavailable.c_str());
  EXPECT_TRUE(fabric->LostPool().ok()) << fabric->LostPool().ToString();

  // Every acknowledged write is there: for the writer's process, and (after it closed the
  // index, writing back what a design caches) for a new opener.
  const auto verify = [&](Index& idx, const char* who) {
    auto session = std::move(idx.OpenSession()).value();
    for (uint64_t k = 1; k <= last; ++k) {
      uint64_t v = 0;
      Status s = session->Lookup(k, &v);
      ASSERT_TRUE(s.ok()) << who << ": key " << k << " of " << last << ": " << s.ToString();
      ASSERT_EQ(v, k * 7) << who << ": key " << k;
    }
  };
  verify(**index, "the writer's process");
  index->reset();
  auto other = Connect(servers);
  ASSERT_TRUE(other);
  auto reopened = Open(*other, false);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  verify(**reopened, "a new opener");
}

TEST_P(MemserverRestart, AVolatilePoolsRestartFailsEveryOperationAndReopeningIsNotFound) {
  auto s0 = Start("127.0.0.1:0", "");
  auto s1 = Start("127.0.0.1:0", "");
  ASSERT_TRUE(s0 && s1);
  const std::string servers = s0->address().ToString() + "," + s1->address().ToString();
  auto fabric = Connect(servers);
  ASSERT_TRUE(fabric);
  auto index = Open(*fabric, true);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto session = std::move((*index)->OpenSession()).value();
  constexpr uint64_t kKeys = 3000;
  for (uint64_t k = 1; k <= kKeys; ++k) ASSERT_TRUE(session->Insert(k, k).ok());

  // Node 1 holds no catalog: the restart loses only index memory, which the process's
  // operations may not even touch (a design that caches nodes answers from its cache).
  // Every operation fails anyway, with one Unavailable naming the node and the restart.
  Restart(s1, "");
  for (int i = 0; i < 5000 && fabric->LostPool().ok(); ++i)  // the monitor notices within ms
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Status lost = fabric->LostPool();
  ASSERT_TRUE(lost.IsUnavailable()) << lost.ToString();
  EXPECT_NE(lost.message().find("memory node 1"), std::string::npos) << lost.ToString();
  EXPECT_NE(lost.message().find("every index it held is lost"), std::string::npos) << lost.ToString();
  std::set<std::string> messages;
  int answered = 0, failed = 0;
  for (uint64_t k = 1; k <= kKeys; k += 97) {
    uint64_t v = 0;
    for (Status s : {session->Lookup(k, &v), session->Insert(k, k + 1), session->Insert(kKeys + k, 1)}) {
      if (s.ok()) {
        ++answered;
        continue;
      }
      ++failed;
      EXPECT_TRUE(s.IsUnavailable()) << "key " << k << ": " << s.ToString();
      messages.insert(s.message());
    }
  }
  // DEX answers operations on cached leaves of its own partitions without a verb, which the
  // fabric cannot fail (docs/FAILURES.md); every other design needs the pool for each one.
  std::printf("%s after the loss: %d operations failed, %d answered without the pool\n",
              GetParam().c_str(), failed, answered);
  if (GetParam() != "dex") {
    EXPECT_EQ(answered, 0);
  }
  EXPECT_GT(failed, 0);
  EXPECT_EQ(messages.size(), 1u) << "one Unavailable, naming the node and the restart";
  for (const std::string& m : messages)
    EXPECT_NE(m.find("memory node 1"), std::string::npos) << m;

  // A new process: the index is gone on every design, NotFound, whatever node 0's catalog says.
  auto after = Connect(servers);
  ASSERT_TRUE(after);
  auto missing = Open(*after, false);
  ASSERT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("memory node 1"), std::string::npos)
      << missing.status().ToString();
  // Creating it gives a fresh, empty index.
  auto fresh = Open(*after, true);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  uint64_t v = 0;
  EXPECT_TRUE(std::move((*fresh)->OpenSession()).value()->Lookup(1, &v).IsNotFound());
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, MemserverRestart, ::testing::ValuesIn(designs::DesignNames()),
                         testing::FabricParamName());

}  // namespace
}  // namespace dmindex
