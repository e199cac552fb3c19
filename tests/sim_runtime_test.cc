// The runtime seam on SimGrid (sim/sim_runtime.h): simulated threads, locks, condition
// variables, clocks and spins behave as the seam promises, in simulated time; compute is
// charged as sim/compute_model.h says; a deadlock is reported, not hung on.
#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "common/runtime.h"
#include "common/sync.h"
#include "sim_test_bed.h"

namespace dmindex::testing {
namespace {

using namespace std::chrono_literals;

double Seconds(runtime::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

sim::ComputeOptions ModelledClock(double cycles) {
  sim::ComputeOptions c = FreeCompute();
  c.cycles[static_cast<size_t>(sim::CallKind::kClock)] = cycles;
  return c;
}

TEST(SimRuntime, MeasuredModeChargesTheThreadsCpuTimeToItsHost) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    sim::ComputeOptions measured;
    measured.cpu_ghz = 2.0;
    SimBed bed = SimBed::Make("dex-vldb24", measured);
    if (!bed.ok()) return Figures{{"error", 1}};
    double simulated = 0, cpu = 0;
    Status s = bed.sim->Run([&] {
      const auto t0 = runtime::Now();
      const int64_t c0 = sim::ThreadCpuNs();
      volatile uint64_t sink = 0;
      while (sim::ThreadCpuNs() - c0 < 20'000'000) sink = sink + 1;  // 20 ms of this thread's CPU
      cpu = static_cast<double>(sim::ThreadCpuNs() - c0) * 1e-9;
      simulated = Seconds(runtime::Now() - t0);
    });
    const double speed = bed.sim->platform().compute[0].host->get_speed();
    return Figures{{"error", s.ok() ? 0.0 : 1.0}, {"simulated", simulated}, {"expected", cpu * 2.0e9 / speed}};
  });
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["simulated"], f["expected"], 0.05 * f["expected"]);
}

TEST(SimRuntime, AHostBusierThanItsCoresSlowsItsThreadsDown) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    // Each clock read costs 1 ms of one core: 36 threads on a 36-core server take 1 ms,
    // 72 take 2 ms. The threads all start (and meet) before any of them computes.
    SimBed bed = SimBed::Make("dex-vldb24", ModelledClock(3.1e6));
    if (!bed.ok()) return Figures{{"error", 1}};
    Figures out{{"error", 0}};
    for (uint32_t threads : {36u, 72u}) {
      double took = 0;
      Status s = bed.sim->Run([&] {
        const double t0 = simgrid::s4u::Engine::get_clock();
        std::vector<runtime::Thread> workers;
        Latch started(threads);
        for (uint32_t t = 0; t < threads; ++t)
          workers.emplace_back(runtime::Placement{0}, [&started] {
            started.ArriveAndWait();
            (void)runtime::Now();
          });
        for (auto& w : workers) w.join();
        took = simgrid::s4u::Engine::get_clock() - t0;
      });
      if (!s.ok()) out["error"] = 1;
      out["took_" + std::to_string(threads)] = took;
    }
    return out;
  });
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["took_36"], 1e-3, 0.05e-3);  // 37 threads on cs0 with main: one waits in join
  EXPECT_NEAR(f["took_72"], 2e-3, 0.1e-3);
}

TEST(SimRuntime, ASpinningThreadLetsTheOneItWaitsForRun) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    double waited = 0;
    uint64_t spins = 0;
    Status s = bed.sim->Run([&] {
      std::atomic<bool> flag{false};
      const auto t0 = runtime::Now();
      runtime::Thread setter([&] {
        runtime::SleepFor(1ms);
        flag.store(true);
      });
      while (!flag.load()) {
        runtime::CpuRelax();
        if (++spins % 64 == 0) runtime::Yield();
      }
      waited = Seconds(runtime::Now() - t0);
      setter.join();
    });
    return Figures{{"error", s.ok() ? 0.0 : 1.0}, {"waited", waited}, {"spins", static_cast<double>(spins)}};
  });
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["waited"], 1e-3, 1e-5);
  EXPECT_GT(f["spins"], 100);  // each pause took simulated time, and the spinner kept spinning
}

TEST(SimRuntime, LocksConditionVariablesAndSleepsWaitInSimulatedTime) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    Figures out{{"error", 0}};
    Status s = bed.sim->Run([&] {
      // Four readers hold a shared mutex for 1 ms each at once; then four writers, one by one.
      runtime::SharedMutex rw;
      auto t0 = runtime::Now();
      std::vector<runtime::Thread> ts;
      for (int i = 0; i < 4; ++i)
        ts.emplace_back([&] {
          std::shared_lock lock(rw);
          runtime::SleepFor(1ms);
        });
      for (auto& t : ts) t.join();
      out["readers"] = Seconds(runtime::Now() - t0);
      ts.clear();
      t0 = runtime::Now();
      for (int i = 0; i < 4; ++i)
        ts.emplace_back([&] {
          std::lock_guard lock(rw);
          runtime::SleepFor(1ms);
        });
      for (auto& t : ts) t.join();
      out["writers"] = Seconds(runtime::Now() - t0);
      // A semaphore of one slot, three holders of 2 ms each.
      Semaphore slot(1);
      ts.clear();
      t0 = runtime::Now();
      for (int i = 0; i < 3; ++i)
        ts.emplace_back([&] {
          slot.Acquire();
          runtime::SleepFor(2ms);
          slot.Release();
        });
      for (auto& t : ts) t.join();
      out["semaphore"] = Seconds(runtime::Now() - t0);
      // A condition wait that times out ends at its deadline.
      runtime::Mutex mu;
      runtime::CondVar cv;
      std::unique_lock lock(mu);
      t0 = runtime::Now();
      const bool ready = cv.WaitUntil(lock, t0 + 3ms, [] { return false; });
      out["timed_out"] = ready ? 0 : 1;
      out["cv_wait"] = Seconds(runtime::Now() - t0);
    });
    if (!s.ok()) out["error"] = 1;
    return out;
  });
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["readers"], 1e-3, 1e-6);
  EXPECT_NEAR(f["writers"], 4e-3, 1e-6);
  EXPECT_NEAR(f["semaphore"], 6e-3, 1e-6);
  EXPECT_EQ(f["timed_out"], 1);
  EXPECT_NEAR(f["cv_wait"], 3e-3, 1e-6);
}

TEST(SimRuntime, ADeadlockIsReportedNamingTheStuckThreads) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    runtime::Mutex a, b;
    Status s = bed.sim->Run([&] {
      runtime::Thread other([&] {
        std::lock_guard la(a);
        runtime::SleepFor(1ms);
        std::lock_guard lb(b);
      });
      std::lock_guard lb(b);
      runtime::SleepFor(1ms);
      std::lock_guard la(a);
    });
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    const bool named = s.message().find("deadlocked") != std::string::npos &&
                       s.message().find("main on cs0") != std::string::npos;
    return Figures{{"error", 0}, {"aborted", s.code() == Status::Code::kAborted ? 1.0 : 0.0}, {"named", named ? 1.0 : 0.0}};
  });
  ASSERT_EQ(f["error"], 0);
  EXPECT_EQ(f["aborted"], 1);
  EXPECT_EQ(f["named"], 1);
}

TEST(SimRuntime, ThreadsRunOnTheComputeServerOfTheirComputeNode) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    Figures out{{"error", 0}};
    Status s = bed.sim->Run([&] {
      std::vector<runtime::Thread> ts;
      for (uint32_t node = 0; node < 6; ++node)
        ts.emplace_back(runtime::Placement{node}, [&out, node] {
          out["host_of_" + std::to_string(node)] = std::stod(simgrid::s4u::this_actor::get_host()->get_name().substr(2));
          runtime::Thread child([&out, node] {  // no placement: the creator's host
            out["child_of_" + std::to_string(node)] = std::stod(simgrid::s4u::this_actor::get_host()->get_name().substr(2));
          });
          child.join();
        });
      for (auto& t : ts) t.join();
    });
    if (!s.ok()) out["error"] = 1;
    return out;
  });
  ASSERT_EQ(f["error"], 0);
  for (int node = 0; node < 6; ++node) {
    EXPECT_EQ(f["host_of_" + std::to_string(node)], node % 4) << node;
    EXPECT_EQ(f["child_of_" + std::to_string(node)], node % 4) << node;
  }
}

}  // namespace
}  // namespace dmindex::testing

namespace dmindex::testing {
namespace {

TEST(SimRuntime, EachSimulatedThreadHasItsOwnThreadLocalSlot) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    int kept = 0;
    Status s = bed.sim->Run([&] {
      std::vector<runtime::Thread> ts;
      std::vector<int> mine(8);
      for (int t = 0; t < 8; ++t)
        ts.emplace_back([&, t] {
          runtime::ThreadLocal(runtime::ThreadSlot::kActivity) = &mine[t];
          runtime::SleepFor(std::chrono::microseconds(10 + t));  // the others set theirs meanwhile
          kept += runtime::ThreadLocal(runtime::ThreadSlot::kActivity) == &mine[t];
        });
      for (auto& t : ts) t.join();
    });
    return Figures{{"error", s.ok() ? 0.0 : 1.0}, {"kept", static_cast<double>(kept)}};
  });
  ASSERT_EQ(f["error"], 0);
  EXPECT_EQ(f["kept"], 8);
}

}  // namespace
}  // namespace dmindex::testing
