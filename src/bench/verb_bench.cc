#include "bench/verb_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>

#include "common/runtime.h"
#include "fabric/rpc.h"

namespace dmindex::bench {
namespace {

using Clock = runtime::Clock;
using fabric::Endpoint;
using fabric::Verb;

// One benchmarked operation: given a thread's endpoint and a scratch area of remote memory
// private to that thread, performs the op once.
struct OpSpec {
  std::string name;
  std::function<Status(Endpoint&, GlobalAddress area, std::vector<std::byte>& buf)> run;
};

std::vector<OpSpec> Ops(uint32_t node_bytes) {
  auto node = std::to_string(node_bytes);
  return {
      {"READ 8B", [](Endpoint& ep, GlobalAddress a, auto& b) { return ep.Read(a, b.data(), 8); }},
      {"READ " + node + "B",
       [=](Endpoint& ep, GlobalAddress a, auto& b) { return ep.Read(a, b.data(), node_bytes); }},
      {"WRITE " + node + "B",
       [=](Endpoint& ep, GlobalAddress a, auto& b) { return ep.Write(a, b.data(), node_bytes); }},
      {"CAS", [](Endpoint& ep, GlobalAddress a, auto& b) {
         uint64_t old;
         return ep.Cas(a, 0, 0, &old);
       }},
      {"FAA", [](Endpoint& ep, GlobalAddress a, auto& b) {
         uint64_t old;
         return ep.Faa(a, 1, &old);
       }},
      {"batch 4x READ " + node + "B",
       [=](Endpoint& ep, GlobalAddress a, auto& b) {
         std::byte* p = b.data();
         return ep.Post({Verb::Read(a, p, node_bytes), Verb::Read(a + 4096, p + node_bytes, node_bytes),
                         Verb::Read(a + 8192, p + 2 * node_bytes, node_bytes),
                         Verb::Read(a + 12288, p + 3 * node_bytes, node_bytes)},
                        fabric::Ordering::kUnordered);
       }},
      {"RPC ping", [](Endpoint& ep, GlobalAddress a, auto&) {
         fabric::RpcReply reply;
         return ep.Call(a.node(), fabric::rpc_op::kPing, {}, &reply);
       }},
  };
}

// Each thread works in its own chunk, so threads contend on the fabric, not on one word.
Result<GlobalAddress> TakeArea(Endpoint& ep, uint16_t node) {
  fabric::RpcReply reply;
  DMX_RETURN_IF_ERROR(ep.Call(node, fabric::rpc_op::kAllocChunk, {}, &reply));
  uint64_t offset = 0;
  fabric::ReadPod(reply, 0, &offset);
  return GlobalAddress(node, offset);
}

double Percentile(std::vector<double>& v, double p) {
  size_t k = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

}  // namespace

Result<std::vector<VerbBenchRow>> RunVerbBench(fabric::Fabric& fabric, const VerbBenchOptions& o) {
  if (o.threads == 0 || o.latency_ops == 0) return Status::InvalidArgument("threads and ops must be > 0");
  std::vector<VerbBenchRow> rows;
  std::vector<std::unique_ptr<Endpoint>> eps;
  std::vector<GlobalAddress> areas;
  for (uint32_t t = 0; t < o.threads; ++t) {
    auto ep = fabric.Connect();
    if (!ep.ok()) return ep.status();
    // Spread threads over memory nodes, as clients of a real cluster would be.
    auto area = TakeArea(**ep, static_cast<uint16_t>(t % fabric.memory_nodes()));
    if (!area.ok()) return area.status();
    eps.push_back(std::move(ep).value());
    areas.push_back(*area);
  }
  for (const OpSpec& op : Ops(o.node_bytes)) {
    VerbBenchRow row{fabric.backend_name(), op.name};
    std::vector<std::byte> buf(4 * o.node_bytes);
    std::vector<double> lat;
    lat.reserve(o.latency_ops);
    for (uint32_t i = 0; i < o.latency_ops; ++i) {
      auto t0 = runtime::Now();
      DMX_RETURN_IF_ERROR(op.run(*eps[0], areas[0], buf));
      lat.push_back(std::chrono::duration<double, std::micro>(runtime::Now() - t0).count());
    }
    double sum = 0;
    for (double x : lat) sum += x;
    row.mops_1thread = lat.size() / sum;  // ops per microsecond = Mops/s
    row.p50_us = Percentile(lat, 0.50);
    row.p99_us = Percentile(lat, 0.99);

    std::atomic<bool> stop{false};
    std::atomic<uint64_t> total{0};
    Status failure;
    runtime::Mutex failure_mu;
    std::vector<runtime::Thread> threads;
    const auto start = runtime::Now();
    for (uint32_t t = 0; t < o.threads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<std::byte> mine(4 * o.node_bytes);
        uint64_t n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          Status s = op.run(*eps[t], areas[t], mine);
          if (!s.ok()) {
            std::lock_guard lock(failure_mu);
            failure = s;
            break;
          }
          ++n;
        }
        total += n;
      });
    }
    runtime::SleepFor(std::chrono::duration_cast<runtime::Clock::duration>(
        std::chrono::duration<double>(o.throughput_seconds)));
    stop = true;
    for (auto& t : threads) t.join();
    DMX_RETURN_IF_ERROR(failure);
    double us = std::chrono::duration<double, std::micro>(runtime::Now() - start).count();
    row.mops_threads = total.load() / us;
    rows.push_back(row);
  }
  return rows;
}

std::string FormatVerbBenchTable(const std::vector<VerbBenchRow>& rows, uint32_t threads) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %-22s %9s %9s %12s %12s\n", "backend", "operation",
                "p50 us", "p99 us", "Mops/s 1thr", ("Mops/s " + std::to_string(threads) + "thr").c_str());
  out += line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%-8s %-22s %9.2f %9.2f %12.3f %12.3f\n", r.backend.c_str(),
                  r.op.c_str(), r.p50_us, r.p99_us, r.mops_1thread, r.mops_threads);
    out += line;
  }
  return out;
}

}  // namespace dmindex::bench
