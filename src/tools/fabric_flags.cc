#include "tools/fabric_flags.h"

#include <unistd.h>

#include <exception>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "api/cluster_access.h"
#include "common/parse_values.h"
#include "dmindex/global_address.h"
#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/pool_layout.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/ucx_fabric.h"
#include "sim/simulation.h"
#include "tools/flag_values.h"

namespace dmindex::tools {
namespace {

// Self-started memory servers run this very executable.
std::string SelfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("dmindex");
}

}  // namespace

namespace {
// The shipped platform files: installed next to the command (share/dmindex/platforms), else
// in the source tree it was built from.
std::string PlatformDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = (exe.parent_path() / DMINDEX_PLATFORMS_FROM_BIN).lexically_normal();
    if (std::filesystem::exists(installed / "dex-vldb24.xml", ec)) return installed.string();
  }
  return DMINDEX_PLATFORM_DIR;
}
}  // namespace

void AddClusterKeyFlag(CLI::App& cmd, std::string* file) {
  cmd.add_option("--cluster-key", *file,
                 "File holding the cluster's secret key, shared by its memory servers and "
                 "clients (default ~/.dmindex/cluster-key, created on first use, mode 0600); "
                 "handshakes not signed with it are refused");
}

void FabricFlags::AddTo(CLI::App& cmd) {
  cmd.add_option("--fabric", fabric,
                 "inproc: the embedded in-process cluster; sim: the embedded cluster on a "
                 "simulated platform, in virtual time (--platform, --compute; docs/SIMULATION.md)")
      ->check(CLI::IsMember({"inproc", "sim"}))
      ->capture_default_str();
  cmd.add_option("--platform", platform,
                 "--fabric sim: SimGrid platform file (default: the DEX testbed's, platforms/dex-vldb24.xml)")
      ->check(CLI::ExistingFile);  // SimGrid's own message for a directory is a flex scanner's
  cmd.add_option("--compute", compute,
                 "--fabric sim: compute time of the simulated threads: measured (their CPU time) or "
                 "modelled[:kind=cycles:...] (calibrated costs; a run is a function of its seed)" +
                     (compute.empty() ? std::string() : " (default " + compute + ")"))
      ->each([this](const std::string&) { compute_given = true; });
  cmd.add_option("--calibration", calibration,
                 "--fabric sim, modelled compute: each design's cycles per segment (default: "
                 "platforms/compute-calibration.txt; docs/SIMULATION.md, \"Calibration\")");
  cmd.add_option("--memservers", memservers,
                 "Run over UCX against these running memory servers (HOST:PORT,...); "
                 "default: the embedded in-process cluster")
      ->check(CLI::Validator(
          [](std::string& list) {
            return list.empty() ? std::string("an empty list of memory servers (HOST:PORT,...); "
                                              "leave --memservers out for the embedded cluster")
                                : std::string();
          },
          "HOST:PORT,..."));
  cmd.add_option("--transport", transport, "With --memservers: UCX transport of the servers")
      ->check(CLI::IsMember({"shm", "tcp"}))
      ->capture_default_str();
  AddClusterKeyFlag(cmd, &cluster_key);
  AddCount(cmd, "--memory-nodes", &memory_nodes, 1, 64,
           "Memory nodes of the embedded cluster (default " + std::to_string(memory_nodes) +
               "; --fabric sim: the platform's memory servers)")
      ->each([this](const std::string&) { memory_nodes_given = true; });
  AddParsed(cmd, "--pool-size", "Pool per memory node of the embedded cluster, e.g. 4G (default " +
                                    pool_size + ")",
            [this](const std::string& text) -> Status {
              auto bytes = ParseByteSize(text, fabric::kMinPoolBytes, GlobalAddress::kOffsetMask);
              if (!bytes.ok()) return bytes.status();
              pool_size = text;
              return Status::Ok();
            });
  AddCount(cmd, "--rpc-threads", &rpc_threads, 1, 64,
           "Embedded cluster: RPC handlers each memory node runs at once, its weak cores (default 1)");
  AddReal(cmd, "--latency-us", &latency_us, {0, 1e6},
          "Embedded cluster: modelled cost of one round trip in us (default " +
              FormatNumber(latency_us) + ")")
      ->each([this](const std::string&) { latency_given = true; });
  AddReal(cmd, "--bandwidth-gbps", &bandwidth_gbps, {0, 1e5},
          "Embedded cluster: modelled bandwidth (0 = unlimited)");
}

Result<std::unique_ptr<fabric::Fabric>> FabricFlags::Open(const std::string& backend) const {
  auto pool = ParseByteSize(pool_size);
  if (!pool.ok()) return Status::InvalidArgument("--pool-size: " + pool.status().message());
  const std::string which = !backend.empty() ? backend : !memservers.empty() ? "memservers" : fabric;
  if (which != "inproc" && rpc_threads != 1)
    return Status::InvalidArgument("--rpc-threads sets the embedded cluster's memory nodes (memory servers "
                                   "take their own --rpc-threads; --fabric sim: the platform's cores)");
  if (which == "sim") {
    if (simulation == nullptr) return Status::InvalidArgument("--fabric sim: no simulation was started");
    if (latency_given || bandwidth_gbps > 0)
      return Status::InvalidArgument("--latency-us/--bandwidth-gbps: with --fabric sim the platform "
                                     "file times the verbs");
    fabric::InProcOptions o = simulation->FabricOptions();
    o.pool_bytes = *pool;
    o.prepare_node = designs::RegisterMemoryNodeHandlers;
    o.faults = faults;
    auto f = fabric::InProcFabric::Create(o);
    if (!f.ok()) return f.status();
    return std::unique_ptr<fabric::Fabric>(std::move(f).value());
  }
  if (which == "inproc") {
    fabric::InProcOptions o;
    o.memory_nodes = memory_nodes;
    o.pool_bytes = *pool;
    o.round_trip_ns = static_cast<uint64_t>(latency_us * 1000);
    o.node.rpc_threads = rpc_threads;
    o.prepare_node = designs::RegisterMemoryNodeHandlers;
    o.bandwidth_gbps = bandwidth_gbps;
    o.faults = faults;
    auto f = fabric::InProcFabric::Create(o);
    if (!f.ok()) return f.status();
    return std::unique_ptr<fabric::Fabric>(std::move(f).value());
  }
  if ((latency_given && latency_us > 0) || bandwidth_gbps > 0)
    return Status::InvalidArgument("--latency-us/--bandwidth-gbps model the in-process fabric only");
  if (faults.tear || faults.delay_probability > 0)
    return Status::InvalidArgument("fault injection works on the in-process fabric only");
  if (which == "memservers") {
    fabric::ucx::UcxOptions o;
    auto t = fabric::ucx::ParseUcxTransport(transport);
    if (!t.ok()) return t.status();
    o.transport = *t;
    o.cluster_key_file = cluster_key;
    auto f = fabric::ucx::UcxFabric::Create(memservers, o);
    if (!f.ok()) return f.status();
    return std::unique_ptr<fabric::Fabric>(std::move(f).value());
  }
  if (which == "ucx-shm" || which == "ucx-tcp") {
    fabric::ucx::MemserverSpec spec;
    spec.tool_path = SelfPath();
    spec.pool_bytes = *pool;
    spec.chunk_bytes = std::min<uint64_t>(fabric::kDefaultChunkBytes, *pool / 4);
    spec.transport = which == "ucx-shm" ? fabric::ucx::UcxTransport::kShm : fabric::ucx::UcxTransport::kTcp;
    fabric::ucx::UcxOptions client;
    client.transport = spec.transport;
    client.cluster_key_file = cluster_key;
    auto f = fabric::ucx::StartLocalUcxCluster(spec, memory_nodes, client);
    if (!f.ok()) return f.status();
    return std::unique_ptr<fabric::Fabric>(std::move(f).value());
  }
  return Status::InvalidArgument("unknown backend '" + which + "' (inproc, ucx-shm, ucx-tcp)");
}

Result<std::unique_ptr<sim::Simulation>> FabricFlags::StartSimulation(uint64_t seed) {
  const bool sim = fabric == "sim";
  if (!sim) {
    if (!platform.empty() || compute_given || !calibration.empty())
      return Status::InvalidArgument("--platform, --compute and --calibration are for --fabric sim");
    return std::unique_ptr<sim::Simulation>();
  }
  if (!memservers.empty()) return Status::InvalidArgument("--fabric sim runs the embedded cluster: no --memservers");
  if (memory_nodes_given)
    return Status::InvalidArgument("--memory-nodes: with --fabric sim the platform's memory servers are the memory nodes");
  sim::SimulationOptions o;
  o.platform_file = platform.empty() ? PlatformDir() + "/dex-vldb24.xml" : platform;
  auto compute_options = sim::ParseComputeOptions(compute.empty() ? "measured" : compute);
  if (!compute_options.ok()) return compute_options.status();
  o.compute = *compute_options;
  o.compute.cpu_ghz = sim::LocalCpuGhz();
  o.seed = seed;
  if (o.compute.mode == sim::ComputeMode::kModelled) {
    const std::string file = calibration.empty() ? PlatformDir() + "/compute-calibration.txt" : calibration;
    auto c = sim::Calibration::Read(file);
    if (!c.ok()) return Status::InvalidArgument("--calibration: " + c.status().message());
    o.calibration = std::move(c).value();
  } else if (!calibration.empty()) {
    return Status::InvalidArgument("--calibration is for --compute modelled");
  }
  auto s = sim::Simulation::Create(o);
  if (!s.ok()) return Status::InvalidArgument("--platform: " + s.status().message());
  simulation = s->get();
  return s;
}

Status FabricFlags::RunOn(const std::function<void()>& body) const {
  if (simulation == nullptr) {
    body();
    return Status::Ok();
  }
  std::exception_ptr thrown;
  Status s = simulation->Run([&] {
    try {
      body();
    } catch (const std::exception&) {  // not SimGrid's kill of a deadlocked thread: no std::exception
      thrown = std::current_exception();
    }
  });
  if (thrown) std::rethrow_exception(thrown);
  return s;
}

std::string FabricFlags::Describe() const {
  if (!memservers.empty()) return "UCX fabric (memory servers " + memservers + ")";
  if (simulation != nullptr)
    return "simulated cluster (" + simulation->platform().Describe() + "; compute " +
           (compute.empty() ? "measured" : compute) + ")";
  return "in-process fabric (" + std::to_string(memory_nodes) + " memory nodes, " + FormatNumber(latency_us) +
         " us round trip" + (rpc_threads > 1 ? ", " + std::to_string(rpc_threads) + " RPC threads each" : "") + ")";
}

Result<std::shared_ptr<Cluster>> FabricFlags::OpenCluster(const std::string& backend) const {
  auto fabric = Open(backend);
  if (!fabric.ok()) return fabric.status();
  return ClusterOver(std::shared_ptr<fabric::Fabric>(std::move(fabric).value()));
}

}  // namespace dmindex::tools
