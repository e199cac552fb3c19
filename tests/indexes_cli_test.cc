// `dmindex indexes` over real memory servers (ucx-shm): the catalog listing (and --drop, which
// `dmindex bench` does for its runs' indexes), a DEX index's
// partitions and host leases, and the repairs after a compute process died - a lease it
// held (--release-host, only with its token) and a partition map it left locked
// (--unlock-map) - after which another process can host its compute node again.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "alloc/catalog.h"
#include "designs/dex/partition_store.h"
#include "designs/registry.h"
#include "fabric/memory_node.h"
#include "fabric/rpc.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/pool_layout.h"
#include "fabric/ucx/ucx_fabric.h"
#include "lease/lease.h"
#include "tree/lock_word.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

using testing::RunTool;

class IndexesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::StartShmMemserver();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    memservers_ = (*server)->address().ToString();
    server_ = std::move(server).value();
    auto f = fabric::ucx::UcxFabric::Create(memservers_, fabric::ucx::UcxOptions{});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    fabric_ = std::move(f).value();
  }
  Result<std::unique_ptr<Index>> Open(const std::string& design, const std::string& name,
                                      std::map<std::string, std::string> knobs = {}) {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.name = name;
    o.node_bytes = 512;
    o.cache_bytes = 1 << 20;
    o.knobs = std::move(knobs);
    return designs::MakeIndex(design, *fabric_, o);
  }
  // The memory server's chunks in use (kPoolInfo), as any client sees them.
  uint64_t ChunksInUse() {
    auto ep = std::move(fabric_->Connect()).value();
    fabric::RpcReply reply;
    EXPECT_TRUE(ep->Call(0, fabric::rpc_op::kPoolInfo, {}, &reply).ok());
    fabric::PoolInfo info;
    EXPECT_TRUE(fabric::ReadPod(reply, 0, &info));
    return info.chunks_in_use;
  }
  testing::ToolRun Indexes(const std::string& args) {
    return RunTool("indexes --memservers " + memservers_ + " " + args);
  }
  // The store of index `name`, to play a process that died (a lease it never gave back).
  designs::dex::PartitionStore StoreOf(const std::string& name) {
    auto ep = std::move(fabric_->Connect()).value();
    auto entry = std::move(alloc::Catalog::Open(*ep, name)).value();
    uint64_t raw = 0;
    EXPECT_TRUE(ep->Read(entry.aux_word(0), &raw, 8).ok());
    return designs::dex::PartitionStore(GlobalAddress::FromRaw(raw));
  }

  std::unique_ptr<fabric::ucx::MemserverProcess> server_;
  std::string memservers_;
  std::unique_ptr<fabric::Fabric> fabric_;
};

TEST_F(IndexesCliTest, ListsIndexesAndRepairsWhatADeadProcessLeft) {
  EXPECT_NE(Indexes("").output.find("no indexes"), std::string::npos);
  // `dmindex bench` drops its runs' indexes, so repeated runs fill neither the catalog nor the
  // pool: their chunks went back to the server.
  const uint64_t empty = ChunksInUse();
  testing::ToolRun bench = RunTool("bench --memservers " + memservers_ +
                                   " --design sherman,dex --workload ycsb-c --keys 2000 --ops 2000 --warmup-ops 100");
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(Indexes("").output.find("no indexes"), std::string::npos);
  EXPECT_EQ(ChunksInUse(), empty);
  auto sherman = Open("sherman", "plain");
  ASSERT_TRUE(sherman.ok()) << sherman.status().ToString();
  ASSERT_TRUE(std::move((*sherman)->OpenSession()).value()->Insert(5, 6).ok());
  const uint64_t without_parted = ChunksInUse();
  auto dex = Open("dex", "parted", {{"partitions", "2"}, {"boundaries", "1000"}});
  ASSERT_TRUE(dex.ok()) << dex.status().ToString();

  testing::ToolRun list = Indexes("");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("plain: sherman, 512-byte nodes, root "), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("parted: dex, 512-byte nodes, root none (empty)"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("compute node 0: keys [1, 1000), hosted by token "), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("compute node 1: keys [1000, end)"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("not hosted"), std::string::npos) << list.output;

  // A process hosting compute node 1 dies: its lease stays, nobody else may host node 1.
  auto ep = std::move(fabric_->Connect()).value();
  ASSERT_TRUE(StoreOf("parted").ClaimHosts(*ep, 2, 1, 1u, 0xdead0001).ok());
  EXPECT_FALSE(Open("dex", "parted", {{"first_node", "1"}}).ok());
  EXPECT_NE(Indexes("--index parted").output.find("hosted by token 00000000dead0001"), std::string::npos);
  testing::ToolRun wrong = Indexes("--index parted --release-host 1 --token dead0002");
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("nothing released"), std::string::npos) << wrong.output;
  testing::ToolRun released = Indexes("--index parted --release-host 1 --token dead0001");
  EXPECT_EQ(released.exit_code, 0) << released.output;
  auto second = Open("dex", "parted", {{"first_node", "1"}});
  EXPECT_TRUE(second.ok()) << second.status().ToString();
  second->reset();

  // A process died while repartitioning: the map stays locked until an operator unlocks it.
  auto store = StoreOf("parted");
  auto stored = store.Load(*ep);
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(store.Lock(*ep, stored->version).ok());
  EXPECT_NE(Indexes("--index parted").output.find("LOCKED"), std::string::npos);
  testing::ToolRun unlocked = Indexes("--index parted --unlock-map");
  EXPECT_EQ(unlocked.exit_code, 0) << unlocked.output;
  auto moved = (*dex)->partitioning()->Repartition({U64Key(500).str()});  // the repartitioning that was blocked works again
  EXPECT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_NE(Indexes("--index parted").output.find("compute node 0: keys [1, 500)"), std::string::npos);
  EXPECT_EQ(Indexes("--index parted --unlock-map").exit_code, 1);  // not locked

  // Bad input: a clear error, nothing changed.
  EXPECT_EQ(Indexes("--release-host 1 --token 1").exit_code, 2);   // no --index
  EXPECT_EQ(Indexes("--index parted --release-host 1").exit_code, 2);  // no --token
  EXPECT_EQ(Indexes("--index plain --unlock-map").exit_code, 1);   // not a dex index
  EXPECT_EQ(Indexes("--index nosuch --unlock-map").exit_code, 2);
  EXPECT_EQ(RunTool("indexes").exit_code, 2);  // the embedded cluster holds no indexes

  // Held open (by this process's handle): refused, naming the holder; nothing freed.
  const uint64_t held_chunks = ChunksInUse();
  testing::ToolRun held = Indexes("--drop parted");
  EXPECT_EQ(held.exit_code, 1) << held.output;
  EXPECT_NE(held.output.find("Busy"), std::string::npos) << held.output;
  EXPECT_NE(held.output.find("process " + std::to_string(getpid())), std::string::npos) << held.output;
  EXPECT_EQ(ChunksInUse(), held_chunks);

  // Dropping frees the index's chunks and its slot: the name can be created anew (empty).
  dex->reset();
  EXPECT_GT(ChunksInUse(), without_parted);
  EXPECT_EQ(Indexes("--drop parted").exit_code, 0);
  EXPECT_EQ(ChunksInUse(), without_parted);
  EXPECT_EQ(Indexes("--drop parted").exit_code, 1);  // gone
  EXPECT_EQ(Indexes("--index parted").output.find("parted"), std::string::npos);
  auto again = Open("dex", "parted");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  uint64_t v = 0;
  EXPECT_TRUE(std::move((*again)->OpenSession()).value()->Lookup(5, &v).IsNotFound());
}

}  // namespace
}  // namespace dmindex

namespace dmindex {
namespace {

// --locks: the lease this process holds for its open sherman index, and a node lock it left
// held (played by a CAS on a lock word, as a writer killed inside a write leaves it), named
// with that lease.
TEST_F(IndexesCliTest, LocksListsLeasesAndHeldLocksWithTheirHolder) {
  testing::ToolRun none = Indexes("--locks");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_NE(none.output.find("leases (memory node 0): none"), std::string::npos) << none.output;
  EXPECT_NE(none.output.find("0 locks held"), std::string::npos) << none.output;

  auto index = Open("sherman", "locked");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  testing::ToolRun leased = Indexes("--locks");
  ASSERT_EQ(leased.exit_code, 0) << leased.output;
  const std::string pid = "pid " + std::to_string(getpid()) + ", held, lease 2000 ms";
  EXPECT_NE(leased.output.find(pid), std::string::npos) << leased.output;

  // A word held by the lease in slot 0's epoch as listed: find the slot from the table.
  auto ep = std::move(fabric_->Connect()).value();
  auto table = std::move(lease::ReadLeaseTable(*ep)).value();
  ASSERT_EQ(table.size(), 1u);
  const lease::HolderId me{table[0].slot, table[0].state.epoch};
  const GlobalAddress word(0, fabric::kLockTableOffset + 8 * 123);
  uint64_t old = 1;
  ASSERT_TRUE(ep->Cas(word, 0, tree::EncodeLockWord(me, GlobalAddress()), &old).ok());
  testing::ToolRun held = Indexes("--locks");
  EXPECT_NE(held.output.find("lock " + word.ToString() + ": held by lease slot " + std::to_string(me.slot) +
                             " epoch " + std::to_string(me.epoch) + ", " + pid),
            std::string::npos)
      << held.output;
  EXPECT_NE(held.output.find("1 lock held"), std::string::npos) << held.output;

  // A word of the memory server's own tree (XStore's server-side writes) names the server.
  const GlobalAddress server_word(0, fabric::kLockTableOffset + 8 * 456);
  ASSERT_TRUE(ep->Cas(server_word, 0, tree::EncodeLockWord(lease::MemoryServerHolder(3), GlobalAddress()), &old).ok());
  testing::ToolRun server = Indexes("--locks");
  EXPECT_NE(server.output.find("lock " + server_word.ToString() + ": held by memory node 0's server (XStore's "
                               "server-side tree), incarnation 3"),
            std::string::npos)
      << server.output;
  EXPECT_NE(server.output.find("2 locks held"), std::string::npos) << server.output;
}

// A `dmindex soak-writer` process: it opens index "held" on `memservers` (never creating it),
// then writes to it until its stop file exists.
class WriterProcess {
 public:
  explicit WriterProcess(const std::string& memservers) {
    char dir_template[] = "/tmp/dmindex-drop-holder.XXXXXX";
    if (mkdtemp(dir_template) == nullptr) return;
    dir_ = dir_template;
    // `exec`: the writer is the shell popen started, so the pid it prints is the writer's.
    const std::string cmd = "echo $$; exec '" + std::string(DMINDEX_TOOL_PATH) + "' soak-writer --memservers " +
                            memservers + " --index-name held --writers 1 --threads 1 --keys 64 --journal-dir " +
                            dir_ + " --stop-file " + dir_ + "/stop 2>&1";
    pipe_ = popen(cmd.c_str(), "r");
    char line[64] = {};
    if (pipe_ == nullptr || std::fgets(line, sizeof line, pipe_) == nullptr) return;
    pid_ = std::atoi(line);
    // It creates ready.1 once the index is open (and so registered as a holder): a condition,
    // polled; the deadline only turns a writer that never opened into a failure, not a hang.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(dir_ + "/ready.1") && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ready_ = std::filesystem::exists(dir_ + "/ready.1");
  }
  ~WriterProcess() {
    if (pipe_ != nullptr) Kill();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  bool ready() const { return ready_; }
  std::string pid() const { return std::to_string(pid_); }
  // Asks it to stop; it closes the index and exits. Its exit status, and what it printed.
  int Stop(std::string* output) {
    if (std::FILE* stop = std::fopen((dir_ + "/stop").c_str(), "w")) std::fclose(stop);
    return Wait(output);
  }
  // Kills it (SIGKILL: a crash), leaving its lease and registration to expire.
  void Kill() {
    if (pid_ > 0) kill(pid_, SIGKILL);
    std::string ignored;
    Wait(&ignored);
  }

 private:
  int Wait(std::string* output) {
    char line[256];
    while (std::fgets(line, sizeof line, pipe_) != nullptr) *output += line;
    const int status = pclose(pipe_);
    pipe_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string dir_;
  FILE* pipe_ = nullptr;
  int pid_ = 0;
  bool ready_ = false;
};

// A second compute *process* holds the index open (a soak-writer, writing to it all along):
// Index::Drop here is Busy naming that process, and the writer loses nothing (it exits 0:
// every operation answered). Once it has closed the index and exited, a drop from a handle
// opened anew frees every chunk the index took. A holder that crashed refuses a plain drop
// until its lease is reclaimed; `indexes --drop --force` fences it and frees the chunks.
TEST_F(IndexesCliTest, AnotherProcessHoldingTheIndexMakesDropBusyUntilItExits) {
  const uint64_t empty = ChunksInUse();
  IndexOptions o;  // as the soak-writer opens it (tools::SoakIndexOptions)
  o.name = "held";
  o.key_format = KeyFormat::kU64;
  o.node_bytes = 256;
  auto created = designs::MakeIndex("sherman", *fabric_, o);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  {
    WriterProcess writer(memservers_);
    ASSERT_TRUE(writer.ready());
    Status refused = (*created)->Drop();
    EXPECT_TRUE(refused.IsBusy()) << refused.ToString();
    EXPECT_NE(refused.message().find("process " + writer.pid()), std::string::npos) << refused.ToString();
    EXPECT_EQ(refused.message().find("process " + std::to_string(getpid())), std::string::npos) << refused.ToString();
    std::string output;
    EXPECT_EQ(writer.Stop(&output), 0) << output;  // every operation answered
  }
  created->reset();
  auto again = designs::MakeIndex("sherman", *fabric_, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  Status dropped = (*again)->Drop();
  ASSERT_TRUE(dropped.ok()) << dropped.ToString();
  EXPECT_EQ(ChunksInUse(), empty);
  EXPECT_NE(Indexes("").output.find("no indexes"), std::string::npos);

  // A holder that crashed: its registration stands until its lease is taken back.
  auto crashed = designs::MakeIndex("sherman", *fabric_, o);
  ASSERT_TRUE(crashed.ok()) << crashed.status().ToString();
  crashed->reset();
  WriterProcess writer(memservers_);
  ASSERT_TRUE(writer.ready());
  writer.Kill();
  testing::ToolRun plain = Indexes("--drop held");
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_NE(plain.output.find("process " + writer.pid()), std::string::npos) << plain.output;
  testing::ToolRun forced = Indexes("--drop held --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_EQ(ChunksInUse(), empty);
}
}  // namespace
}  // namespace dmindex
