// A disaggregated-memory cluster in virtual time: a SimGrid engine with a platform file
// loaded, the runtime seam on SimGrid (sim_runtime.h) and the simulated network
// (sim_network.h). See docs/SIMULATION.md.
//
//   auto sim = Simulation::Create({.platform_file = "platforms/dex-vldb24.xml"});
//   fabric::InProcOptions o = (*sim)->FabricOptions();   // an in-process fabric timed by it
//   (*sim)->Run([&] { ... the code to simulate: open a fabric, an index, run threads ... });
//
// Run runs its function as a simulated thread on the first compute server, with every
// runtime:: call of the process on simulated time, until every simulated thread has ended;
// it can be called again (simulated time goes on). SimGrid allows one engine per process, so
// one Simulation per process; it must outlive every object used inside a run (a lock keeps
// simulation state until it is destroyed).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "dmindex/status.h"
#include "fabric/inproc/inproc_fabric.h"
#include "sim/compute_model.h"
#include "sim/platform.h"

namespace simgrid::s4u {
class Engine;
}

namespace dmindex::sim {

class SimRuntime;
class SimNetwork;

struct SimulationOptions {
  std::string platform_file;
  ComputeOptions compute;
  // Modelled mode: each design's costs (UseDesign); the kinds compute.overridden names keep
  // compute.cycles. Empty: compute.cycles for every design.
  std::optional<Calibration> calibration;
  uint64_t seed = 1;  // of runtime::Entropy inside the simulation
};

class Simulation {
 public:
  // InvalidArgument for an unreadable or unusable platform file; FailedPrecondition-like
  // InvalidArgument if this process already has a simulation.
  static Result<std::unique_ptr<Simulation>> Create(const SimulationOptions& options);
  ~Simulation();

  const Platform& platform() const { return platform_; }
  const ComputeOptions& compute() const { return options_.compute; }
  // In-process fabric options for this platform: one memory node per memory server, one RPC
  // thread per memory-server core, the simulated network. The caller sets pool sizes and
  // prepare_node.
  fabric::InProcOptions FabricOptions() const;

  // Runs `main` in simulated time (see above). Not an error: whatever `main` returns through
  // its captures. An error: a simulated thread threw, or the simulation deadlocked (every
  // simulated thread waits and nothing can wake any of them), named with the threads' states.
  Status Run(const std::function<void()>& main);

  // Modelled mode: the next runs simulate design `label` ("dex:offload=off") on `workload`,
  // costed with its calibration (SimulationOptions::calibration). Measured mode: nothing to do.
  void UseDesign(const std::string& label, const std::string& workload = "");

  // Simulated seconds since the simulation started.
  double now_seconds() const;
  // The compute charged since the last call (or the start), by the kind of call ending each
  // segment; measured mode's is what modelled mode is calibrated from.
  ComputeProfile TakeProfile();

 private:
  Simulation(SimulationOptions options, std::unique_ptr<simgrid::s4u::Engine> engine, Platform platform);

  const SimulationOptions options_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  Platform platform_;
  std::unique_ptr<SimRuntime> runtime_;
  std::shared_ptr<SimNetwork> network_;
  bool deadlock_hooked_ = false;
  std::string deadlock_;  // set by SimGrid's deadlock signal during a run
};

}  // namespace dmindex::sim
