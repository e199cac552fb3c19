#include "sim/simulation.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <vector>

#include "common/runtime_backend.h"
#include "sim/sim_network.h"
#include "sim/sim_runtime.h"

namespace dmindex::sim {

namespace sg = simgrid::s4u;

Simulation::Simulation(SimulationOptions options, std::unique_ptr<sg::Engine> engine, Platform platform)
    : options_(std::move(options)), engine_(std::move(engine)), platform_(std::move(platform)) {
  runtime_ = std::make_unique<SimRuntime>(platform_, options_.compute, options_.seed);
  network_ = std::make_shared<SimNetwork>(platform_, *runtime_);
}

Simulation::~Simulation() = default;

Result<std::unique_ptr<Simulation>> Simulation::Create(const SimulationOptions& options) {
  // SimGrid 3.32 cannot start a second engine in a process, even after the first is gone
  // (it crashes loading the platform): refuse instead.
  static std::atomic<bool> engine_made{false};
  if (engine_made.exchange(true))
    return Status::InvalidArgument("this process already ran a simulation (SimGrid allows one engine per process)");
  if (!std::ifstream(options.platform_file))
    return Status::InvalidArgument("cannot read platform file " + options.platform_file);
  if (!(options.compute.cpu_ghz > 0)) return Status::InvalidArgument("the CPU clock rate must be > 0 GHz");
  // The engine reads its settings from a command line; dmindex's own is not SimGrid's.
  int argc = 1;
  char name[] = "dmindex";
  char* argv[] = {name, nullptr};
  auto engine = std::make_unique<sg::Engine>(&argc, argv);
  // Quiet unless something is wrong; transfers take latency + size / bandwidth exactly, with
  // max-min sharing among concurrent transfers (CM02: no TCP correction factors, which model
  // a TCP stack, not an RDMA NIC), and acknowledgements add no traffic in the other direction.
  xbt_log_control_set("root.thres:critical");
  sg::Engine::set_config("network/model:CM02");
  sg::Engine::set_config("network/crosstraffic:0");
  try {
    engine->load_platform(options.platform_file);
  } catch (const std::exception& e) {
    return Status::InvalidArgument("platform file " + options.platform_file + ": " + e.what());
  }
  auto platform = Platform::FromEngine(*engine, options.platform_file);
  if (!platform.ok()) return platform.status();
  std::unique_ptr<Simulation> sim(new Simulation(options, std::move(engine), std::move(platform).value()));
  if (options.compute.mode == ComputeMode::kMeasured) {
    // An empty segment, measured: a clock read right after a simulated thread was resumed
    // (the simulation's own cost per segment, about 400 cycles here), subtracted from every
    // segment.
    // The median of 41 batches' means: this machine is shared, and a batch may be preempted.
    std::vector<double> means;
    SimRuntime& rt = *sim->runtime_;
    DMX_RETURN_IF_ERROR(sim->Run([&rt, &means] {
      const size_t clock = static_cast<size_t>(CallKind::kClock);
      for (int batch = 0; batch < 41; ++batch) {
        (void)rt.TakeProfile();
        for (int i = 0; i < 100; ++i) {  // a clock read after the thread was resumed, as most are
          runtime::SleepFor(std::chrono::nanoseconds(1));
          (void)runtime::Now();
        }
        const ComputeProfile p = rt.TakeProfile();
        means.push_back(p.cycles[clock] / static_cast<double>(p.segments[clock]));
      }
    }));
    std::nth_element(means.begin(), means.begin() + 20, means.end());
    rt.SetSegmentOverhead(means[20]);
    (void)rt.TakeProfile();
  }
  return sim;
}

fabric::InProcOptions Simulation::FabricOptions() const {
  fabric::InProcOptions o;
  o.memory_nodes = static_cast<uint16_t>(platform_.memory.size());
  o.node.rpc_threads = platform_.memory.front().cores;
  o.network = network_;
  return o;
}

Status Simulation::Run(const std::function<void()>& main) {
  // SimGrid notices when every remaining actor waits for something no actor will do, says so
  // on this signal, then kills them: the run ends instead of hanging, and is reported.
  std::string deadlock;
  if (!deadlock_hooked_) {
    deadlock_hooked_ = true;
    sg::Engine::on_deadlock_cb([this] {
      std::string stuck;
      for (const sg::ActorPtr& a : engine_->get_all_actors())
        stuck.append(stuck.empty() ? "" : ", ").append(a->get_name()).append(" on ").append(a->get_host()->get_name());
      deadlock_ = "the simulation deadlocked at " + std::to_string(sg::Engine::get_clock()) +
                  " s simulated: every remaining simulated thread waits for another (" + stuck + ")";
    });
  }
  deadlock_.clear();
  {
    runtime::ScopedBackend installed(*runtime_);
    runtime_->StartMain(main, 0);
    engine_->run();
  }
  if (!deadlock_.empty()) return Status::Aborted(deadlock_);
  if (!runtime_->failure().empty()) return Status::Aborted(runtime_->failure());
  return Status::Ok();
}

double Simulation::now_seconds() const { return sg::Engine::get_clock(); }

ComputeProfile Simulation::TakeProfile() { return runtime_->TakeProfile(); }

void Simulation::UseDesign(const std::string& label, const std::string& workload) {
  if (options_.compute.mode != ComputeMode::kModelled || !options_.calibration) return;
  CycleTable cycles = options_.calibration->For(label, workload);
  for (size_t k = 0; k < kCallKinds; ++k)
    if (options_.compute.overridden[k]) cycles[k] = options_.compute.cycles[k];
  runtime_->SetCycles(cycles);
}

}  // namespace dmindex::sim
