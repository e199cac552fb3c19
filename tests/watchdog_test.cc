// The watchdog of `dmindex bench` and `dmindex check`: a run whose operations stop completing
// ends with a report of what every thread is doing (operation, key, what it waits for) instead
// of spinning forever, and the commands exit with their own code. The stall comes from an
// index wrapper whose sessions block on a gate from some operation on; the watchdog's
// callback records the report and opens the gate, so the run can end and be inspected.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "api/cluster_access.h"
#include "bench/runner.h"
#include "bench_test_index.h"
#include "check/workload.h"
#include "common/activity.h"
#include "common/watchdog.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

using std::chrono::milliseconds;

// Blocks every caller from the moment it closes until it is opened again; the wait is noted
// on the caller's Activity, as the library's own waits are.
class Gate {
 public:
  void Pass() {
    std::unique_lock lock(mu_);
    if (open_) return;
    WaitNote note("the test's gate");
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Sessions whose operations pass the gate from the index's `stall_at`-th operation on.
class StallingIndex final : public Index {
 public:
  StallingIndex(std::unique_ptr<Index> inner, Gate& gate, uint64_t stall_at)
      : Index(inner->design(), inner->options()), inner_(std::move(inner)), gate_(gate), stall_at_(stall_at) {}

  void BeforeOperation() {
    if (ops_.fetch_add(1) + 1 >= stall_at_) gate_.Pass();
  }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override { return inner_->BulkLoad(sorted); }
  IndexStats DoStats() const override { return inner_->Stats(); }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override;

  std::unique_ptr<Index> inner_;
  Gate& gate_;
  const uint64_t stall_at_;
  std::atomic<uint64_t> ops_{0};
};

class StallingSession final : public Session {
 public:
  StallingSession(std::unique_ptr<Session> inner, StallingIndex& index)
      : inner_(std::move(inner)), index_(index) {
    AdoptRules(*inner_);
  }

 private:
  Status DoLookup(Slice key, std::string* value) override {
    index_.BeforeOperation();
    return inner_->Lookup(key, value);
  }
  Status DoInsert(Slice key, Slice value) override {
    index_.BeforeOperation();
    return inner_->Insert(key, value);
  }
  Status DoUpdate(Slice key, Slice value) override {
    index_.BeforeOperation();
    return inner_->Update(key, value);
  }
  Status DoDelete(Slice key) override {
    index_.BeforeOperation();
    return inner_->Delete(key);
  }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    index_.BeforeOperation();
    return ScanRangeOf(*inner_, range, count, out);
  }

  std::unique_ptr<Session> inner_;
  StallingIndex& index_;
};

Result<std::unique_ptr<Session>> StallingIndex::DoOpenSession(uint32_t compute_node) {
  auto s = inner_->OpenSession(compute_node);
  if (!s.ok()) return s.status();
  return std::unique_ptr<Session>(std::make_unique<StallingSession>(std::move(s).value(), *this));
}

// Records the report and opens the gate, as a test's on_stall.
struct StallRecorder {
  Gate gate;
  std::mutex mu;
  std::string report;
  int calls = 0;
  WatchdogOptions Options(milliseconds stall_after) {
    WatchdogOptions o;
    o.stall_after = stall_after;
    o.on_stall = [this](const std::string& r) {
      {
        std::lock_guard lock(mu);
        report = r;
        ++calls;
      }
      gate.Open();
    };
    return o;
  }
};

TEST(Watchdog, ReportsABusyThreadThatCompletesNothing) {
  Activity worker("worker"), idle("idler");
  worker.Begin("insert", 17);
  worker.Wait("the node lock", GlobalAddress(1, 0x40), 5);
  StallRecorder rec;
  Watchdog dog({&worker, &idle}, rec.Options(milliseconds(100)));
  for (int i = 0; i < 2000 && !dog.stalled(); ++i) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(dog.stalled());
  std::lock_guard lock(rec.mu);
  EXPECT_EQ(rec.calls, 1);
  EXPECT_NE(rec.report.find("no operation completed for 0.1 s"), std::string::npos) << rec.report;
  EXPECT_NE(rec.report.find("worker: insert of key 17 for "), std::string::npos) << rec.report;
  EXPECT_NE(rec.report.find("waiting for the node lock 1:0x40 (5 steps)"), std::string::npos) << rec.report;
  EXPECT_NE(rec.report.find("idler: idle; 0 operations completed"), std::string::npos) << rec.report;
}

TEST(Watchdog, IdleThreadsAndSteadyProgressAreNoStall) {
  // A stall report means an operation under way for at least stall_after with no completion
  // meanwhile (the watchdog measures from the operation's own begin or the poll that saw the
  // last completion, whichever is later). Whether a loaded machine descheduled the worker that
  // long inside one of its 2 ms operations is not the test's to decide: it asserts that
  // implication on the durations it measured itself, from before Begin to after End. Idle time
  // (200 ms, four stall periods) never counts.
  Activity worker("worker");
  StallRecorder rec;
  const auto stall_after = milliseconds(50);
  Watchdog dog({&worker}, rec.Options(stall_after));
  std::this_thread::sleep_for(milliseconds(200));  // idle: nothing to wait for
  auto longest = std::chrono::steady_clock::duration::zero();
  for (int i = 0; i < 100; ++i) {                 // busy, but completing every 2 ms
    const auto begun = std::chrono::steady_clock::now();
    worker.Begin("lookup", static_cast<uint64_t>(i));
    std::this_thread::sleep_for(milliseconds(2));
    worker.End();
    longest = std::max(longest, std::chrono::steady_clock::now() - begun);
  }
  EXPECT_TRUE(!dog.stalled() || longest >= stall_after)
      << "reported a stall although no operation took " << stall_after.count()
      << " ms (longest " << std::chrono::duration_cast<milliseconds>(longest).count() << " ms): "
      << dog.stall_report();
  EXPECT_EQ(worker.completed(), 100u);
}

// The bench driver on the test-map index, stalled from its 3000th operation (in the warm-up).
TEST(BenchWatchdog, AStuckRunEndsWithAReportOfWhatEachThreadWaitsFor) {
  StallRecorder rec;
  std::atomic<bool> interrupt{false};
  bench::Progress progress(false);
  bench::IndexFactory indexes = [&rec](const IndexOptions&,
                                       std::shared_ptr<Cluster> c) -> Result<std::unique_ptr<Index>> {
    return std::unique_ptr<Index>(std::make_unique<StallingIndex>(
        std::make_unique<testing::TestIndex>(FabricOf(*c), testing::TestIndexFaults{}), rec.gate, 3000));
  };
  bench::Runner runner(&testing::TestCluster, indexes, interrupt, progress);
  bench::RunConfig c;
  c.keys = 5000;
  c.warmup_ops = 4000;
  c.ops = 20'000;
  c.threads = 2;
  c.watchdog = rec.Options(milliseconds(300));
  auto r = runner.Run(*bench::ParseDesignChoice("test-map"), *bench::NamedWorkload("ycsb-a"), c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->error.find("the run stalled: no operation completed for 0.3 s"), std::string::npos) << r->error;
  for (const char* thread : {"thread 0: ", "thread 1: "})
    EXPECT_NE(r->error.find(thread), std::string::npos) << r->error;
  EXPECT_NE(r->error.find("waiting for the test's gate"), std::string::npos) << r->error;
  EXPECT_LT(r->ops, c.ops) << "the run stops after a stall";
  std::lock_guard lock(rec.mu);
  EXPECT_EQ(rec.calls, 1);
}

// The check workload on the same index, stalled in its first round.
TEST(CheckWatchdog, AStuckRoundEndsTheRunWithAReport) {
  StallRecorder rec;
  auto f = testing::MakeTestFabric("inproc");
  StallingIndex index(std::make_unique<testing::TestIndex>(*f, testing::TestIndexFaults{}), rec.gate, 500);
  check::WorkloadOptions w;
  w.threads = 4;
  w.ops_per_thread = 1000;
  check::ConcurrentWorkload workload(index, w);
  check::RoundsPlan plan;
  plan.rounds = 2;
  plan.watchdog = rec.Options(milliseconds(300));
  auto result = check::RunRounds(workload, plan);
  ASSERT_FALSE(result.ok());
  const std::string m = result.status().message();
  EXPECT_TRUE(result.status().code() == Status::Code::kAborted) << result.status().ToString();
  EXPECT_NE(m.find("the run stalled"), std::string::npos) << m;
  EXPECT_NE(m.find("thread 3: "), std::string::npos) << m;
  EXPECT_NE(m.find("repartitioner: idle"), std::string::npos) << m;
  EXPECT_NE(m.find("waiting for the test's gate"), std::string::npos) << m;
}

// What the commands do on a stall (ExitWithStallReport, their on_stall): the report on
// stderr and exit code 3, although the stuck threads never return.
TEST(BenchWatchdogDeathTest, TheCommandExitsWithItsStallCodeAndTheReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Gate never_opened;
        std::atomic<bool> interrupt{false};
        bench::Progress progress(false);
        bench::Runner runner(
            &testing::TestCluster,
            [&](const IndexOptions&, std::shared_ptr<Cluster> c) -> Result<std::unique_ptr<Index>> {
              return std::unique_ptr<Index>(std::make_unique<StallingIndex>(
                  std::make_unique<testing::TestIndex>(FabricOf(*c), testing::TestIndexFaults{}), never_opened, 100));
            },
            interrupt, progress);
        bench::RunConfig c;
        c.keys = 1000;
        c.ops = 10'000;
        c.watchdog.stall_after = milliseconds(200);
        c.watchdog.on_stall = [](const std::string& report) { ExitWithStallReport("dmindex bench", report); };
        (void)runner.Run(*bench::ParseDesignChoice("test-map"), *bench::NamedWorkload("ycsb-c"), c);
      },
      ::testing::ExitedWithCode(kStalledExitCode),
      "dmindex bench: STALLED: no operation completed for 0.2 s(.|\n)*read of key [0-9]+ for "
      "[0-9.]+ s, waiting for the test's gate");
}

}  // namespace
}  // namespace dmindex
