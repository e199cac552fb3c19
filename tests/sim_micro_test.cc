// Micro-validation of the simulated cluster (docs/SIMULATION.md, "Validation"): on the
// shipped DEX platform, each figure the platform file states must come out of the simulation
// within 5%: the idle round trip of a READ, the NIC's message rate under a load of small
// READs, the link bandwidth under large READs, and the memory server's cores under RPCs.
// Compute costs nothing here (modelled, zero), so what is measured is the platform alone.
#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>

#include <atomic>
#include <vector>

#include "common/runtime.h"
#include "fabric/pool_layout.h"
#include "sim_test_bed.h"

namespace dmindex::testing {
namespace {

constexpr uint64_t kArea = fabric::kChunkAreaOffset;
constexpr uint16_t kTestOp = fabric::rpc_op::kFirstTestOpcode;

double Seconds(runtime::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// `threads` threads spread over the compute servers each run `per_thread` calls of `op` on
// their own endpoint; returns calls per simulated second from the first start to the last end.
double Throughput(SimBed& bed, uint32_t threads, uint32_t per_thread,
                  const std::function<Status(fabric::Endpoint&, uint32_t thread)>& op, bool* failed) {
  double rate = 0;
  Status run = bed.sim->Run([&] {
    std::atomic<int> errors{0};
    const auto t0 = runtime::Now();
    std::vector<runtime::Thread> workers;
    for (uint32_t t = 0; t < threads; ++t)
      workers.emplace_back(runtime::Placement{t}, [&, t] {
        auto ep = bed.fabric->Connect();
        if (!ep.ok()) return (void)++errors;
        for (uint32_t i = 0; i < per_thread; ++i)
          if (!op(**ep, t).ok()) ++errors;
      });
    for (auto& w : workers) w.join();
    rate = threads * per_thread / Seconds(runtime::Now() - t0);
    if (errors.load() > 0) *failed = true;
  });
  if (!run.ok()) {
    std::fprintf(stderr, "%s\n", run.ToString().c_str());
    *failed = true;
  }
  return rate;
}

TEST(SimMicro, AnIdleReadCostsThePlatformsRoundTrip) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    double per_read = 0;
    Status s = bed.sim->Run([&] {
      auto ep = bed.fabric->Connect();
      std::byte buf[64];
      const auto t0 = runtime::Now();
      for (int i = 0; i < 100; ++i) (void)(*ep)->Read(GlobalAddress(1, kArea), buf, sizeof buf);
      per_read = Seconds(runtime::Now() - t0) / 100;
    });
    return Figures{{"error", s.ok() ? 0.0 : 1.0}, {"read_ns", per_read * 1e9},
                   {"platform_ns", bed.sim->platform().round_trip_ns}};
  });
  Print(f);
  ASSERT_EQ(f["error"], 0);
  ASSERT_GT(f["platform_ns"], 0) << "the platform states no round trip";
  EXPECT_NEAR(f["read_ns"], f["platform_ns"], 0.05 * f["platform_ns"]);
}

TEST(SimMicro, SmallReadsSaturateAtTheNicMessageRate) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    bool failed = false;
    // 144 threads with one READ each in flight offer 72 M READs/s to memory server 0.
    const double rate = Throughput(bed, 144, 400, [](fabric::Endpoint& ep, uint32_t) {
      uint64_t word;
      return ep.Read(GlobalAddress(0, kArea), &word, 8);
    }, &failed);
    return Figures{{"error", failed ? 1.0 : 0.0}, {"rate", rate},
                   {"nic_rate", bed.sim->platform().memory[0].messages_per_s}};
  });
  Print(f);
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["rate"], f["nic_rate"], 0.05 * f["nic_rate"]);
}

TEST(SimMicro, LargeReadsRunAtTheLinkBandwidth) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    constexpr uint32_t kBytes = 64 * 1024;
    std::vector<std::vector<std::byte>> buffers(64, std::vector<std::byte>(kBytes));
    bool failed = false;
    const double rate = Throughput(bed, 64, 30, [&](fabric::Endpoint& ep, uint32_t t) {
      return ep.Read(GlobalAddress(0, kArea), buffers[t].data(), kBytes);
    }, &failed);
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    bed.sim->platform().memory[0].host->route_to(bed.sim->platform().compute[1].host, links, &latency);
    return Figures{{"error", failed ? 1.0 : 0.0}, {"bytes_per_s", rate * kBytes},
                   {"link_bytes_per_s", links.front()->get_bandwidth()}};
  });
  Print(f);
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["bytes_per_s"], f["link_bytes_per_s"], 0.05 * f["link_bytes_per_s"]);
}

TEST(SimMicro, RpcsSaturateAtTheMemoryServersCores) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    // A handler of 10 us at 3.1 GHz: its modelled cost, charged to memory server 0's cores.
    sim::ComputeOptions compute = FreeCompute();
    compute.cycles[static_cast<size_t>(sim::CallKind::kHandler)] = 31000;
    SimBed bed = SimBed::Make("dex-vldb24", compute, 64ull << 20, [](fabric::MemoryNode& node) {
      return node.rpc().Register(kTestOp, "test", [](fabric::RpcRequest, fabric::RpcReply*) { return Status::Ok(); });
    });
    if (!bed.ok()) return Figures{{"error", 1}};
    bool failed = false;
    const double rate = Throughput(bed, 144, 50, [](fabric::Endpoint& ep, uint32_t) {
      fabric::RpcReply reply;
      return ep.Call(0, kTestOp, {}, &reply);
    }, &failed);
    const sim::MemoryServer& m = bed.sim->platform().memory[0];
    return Figures{{"error", failed ? 1.0 : 0.0}, {"rate", rate},
                   {"cores_rate", m.cores * m.host->get_speed() / (31000 + m.rpc_cycles)}};
  });
  Print(f);
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["rate"], f["cores_rate"], 0.05 * f["cores_rate"]);
}

TEST(SimMicro, AnUnorderedBatchOverMemoryServersCostsOneRoundTrip) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute());
    if (!bed.ok()) return Figures{{"error", 1}};
    double batch = 0, in_order = 0, single = 0;
    Status s = bed.sim->Run([&] {
      auto ep = bed.fabric->Connect();
      uint64_t w[4] = {};
      auto t0 = runtime::Now();
      (void)(*ep)->Read(GlobalAddress(0, kArea), &w[0], 8);
      single = Seconds(runtime::Now() - t0);
      std::vector<fabric::Verb> verbs;
      for (uint16_t n = 0; n < 4; ++n) verbs.push_back(fabric::Verb::Read(GlobalAddress(n, kArea), &w[n], 8));
      t0 = runtime::Now();
      (void)(*ep)->Post(verbs, fabric::Ordering::kUnordered);
      batch = Seconds(runtime::Now() - t0);
      verbs.clear();
      for (uint64_t i = 0; i < 4; ++i) verbs.push_back(fabric::Verb::Write(GlobalAddress(2, kArea + 8 * i), &w[i], 8));
      t0 = runtime::Now();
      (void)(*ep)->Post(verbs, fabric::Ordering::kInOrder);
      in_order = Seconds(runtime::Now() - t0);
    });
    return Figures{{"error", s.ok() ? 0.0 : 1.0}, {"single", single}, {"batch", batch}, {"in_order", in_order}};
  });
  Print(f);
  ASSERT_EQ(f["error"], 0);
  EXPECT_NEAR(f["batch"], f["single"], 0.05 * f["single"]);
  EXPECT_NEAR(f["in_order"], f["single"], 0.05 * f["single"]);
}

}  // namespace
}  // namespace dmindex::testing
