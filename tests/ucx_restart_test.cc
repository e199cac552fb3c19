// A memory server that restarts loses its pool (it is volatile): every index on it is gone.
// That must be reported, never papered over with a new empty index: a process whose server
// restarted under it gets Unavailable saying so; a new process opening the index by name
// without creating it (IndexOptions::create_if_missing = false, `check --no-create`) gets
// NotFound saying how young the pool is; with creating it, it gets a fresh index on a pool
// of another identity. Real `dmindex memserver` processes over shared memory.
#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <thread>

#include "designs/registry.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_fabric.h"
#include "test_fabrics.h"
#include "u64_api.h"

namespace dmindex {
namespace {

// This file's tests speak the u64 key format in integers (u64_api.h).
using Key = uint64_t;
using Value = uint64_t;
using KeyValue = ::dmindex::testing::U64Pair;
using ::dmindex::u64::kMinKey;
using ::dmindex::u64::kMaxKey;
using ::dmindex::u64::IsValidKey;


using fabric::ucx::MemserverProcess;
using fabric::ucx::MemserverSpec;
using fabric::ucx::UcxFabric;

class RestartTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (Status shared = designs::SharedAcrossProcesses(GetParam()); !shared.ok())
      GTEST_SKIP() << shared.message();
    Start("127.0.0.1:0");
  }
  void Start(const std::string& listen) {
    MemserverSpec spec;
    spec.tool_path = DMINDEX_TOOL_PATH;
    spec.listen = listen;
    spec.pool_bytes = 64ull << 20;
    spec.chunk_bytes = 1ull << 20;
    auto p = MemserverProcess::Start(spec);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    server_ = std::move(p).value();
  }
  // Kills the server (as a crash would) and starts a new one on the same port.
  void Restart() {
    const std::string at = server_->address().ToString();
    server_->Signal(SIGKILL);
    ASSERT_TRUE(server_->Wait(std::chrono::seconds(5)).ok());
    Start(at);
  }
  std::unique_ptr<UcxFabric> Connect() {
    auto f = UcxFabric::Create(server_->address().ToString(), {});
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  Result<std::unique_ptr<Index>> Open(fabric::Fabric& fabric, bool create_if_missing) {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.name = "orders";
    o.create_if_missing = create_if_missing;
    return designs::MakeIndex(GetParam(), fabric, o);
  }

  std::unique_ptr<MemserverProcess> server_;
};

TEST_P(RestartTest, AnIndexOnlyOpensWithoutCreatingWhenItExists) {
  auto fabric = Connect();
  ASSERT_TRUE(fabric);
  auto missing = Open(*fabric, false);
  ASSERT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("no index named 'orders'"), std::string::npos)
      << missing.status().ToString();
  auto created = Open(*fabric, true);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  {
    auto session = std::move((*created)->OpenSession()).value();
    ASSERT_TRUE(session->Insert(42, 4200).ok());
  }
  created->reset();
  auto reopened = Open(*fabric, false);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  Value v = 0;
  ASSERT_TRUE(std::move((*reopened)->OpenSession()).value()->Lookup(42, &v).ok());
  EXPECT_EQ(v, 4200u);
}

TEST_P(RestartTest, ARestartedServerIsReportedNotPaperedOver) {
  auto before = Connect();
  ASSERT_TRUE(before);
  const fabric::PoolIdentity old_pool = before->pool_identity(0);
  auto index = Open(*before, true);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  {
    auto session = std::move((*index)->OpenSession()).value();
    for (Key k = 1; k <= 2000; ++k) ASSERT_TRUE(session->Insert(k, k * 10).ok());
  }

  Restart();

  // This process's fabric: the server it used is gone, whatever answers there now. (The
  // session may still answer from a compute-side cache, as DEX's does for its partitions:
  // the fabric is where the loss shows.)
  for (int i = 0; i < 5000 && !before->IsNodeDown(0); ++i)  // the monitor notices within ms
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(before->IsNodeDown(0));
  auto ep = before->Connect();
  ASSERT_TRUE(ep.ok());
  uint64_t word = 0;
  Status lost = (*ep)->Read(GlobalAddress(0, 4096), &word, 8);
  EXPECT_TRUE(lost.IsUnavailable()) << lost.ToString();
  EXPECT_NE(lost.message().find(server_->address().ToString()), std::string::npos) << lost.ToString();
  EXPECT_NE(lost.message().find("every index it held is lost"), std::string::npos) << lost.ToString();
  Value v = 0;

  // A new process: the index is not there, and opening without creating says why it may
  // be missing; the pool it looked in is a new one.
  auto after = Connect();
  ASSERT_TRUE(after);
  EXPECT_NE(after->pool_identity(0), old_pool);
  EXPECT_NE(after->pool_identity(0).id, 0u);
  auto missing = Open(*after, false);
  ASSERT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  const std::string why = missing.status().message();
  EXPECT_NE(why.find("no index named 'orders'"), std::string::npos) << why;
  EXPECT_NE(why.find(after->pool_identity(0).ToString().substr(0, 21)), std::string::npos) << why;
  EXPECT_NE(why.find("restart"), std::string::npos) << why;
  // Creating it (the default) gives a fresh, empty index on the new pool.
  auto fresh = Open(*after, true);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_TRUE(std::move((*fresh)->OpenSession()).value()->Lookup(1, &v).IsNotFound());
}

TEST_P(RestartTest, CheckWithNoCreateRefusesAMissingIndex) {
  const std::string at = server_->address().ToString();
  testing::ToolRun r = testing::RunTool("check --design " + GetParam() + " --index-name gone --no-create "
                                        "--history-out /dev/null --rounds 1 --memservers " + at);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no index named 'gone'"), std::string::npos) << r.output;
  // Without --no-create a joining process that finds no index warns that it made one.
  r = testing::RunTool("check --design " + GetParam() + " --index-name gone "
                       "--history-out /dev/null --rounds 1 --threads 2 --ops 50 --memservers " + at);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("did not exist and was created empty"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, RestartTest, ::testing::ValuesIn(designs::DesignNames()),
                         testing::FabricParamName());

}  // namespace
}  // namespace dmindex
