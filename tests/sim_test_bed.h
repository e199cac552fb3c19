// What the simulation tests share. SimGrid allows one engine per process, so every test runs
// its simulation in a child process (RunInChild) and gets back named figures.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "sim/simulation.h"

namespace dmindex::testing {

using Figures = std::map<std::string, double>;

// SimGrid switches its simulated threads' stacks by hand (raw contexts), which the sanitizers
// cannot follow (the Debian library is not built with their annotations): the simulation's
// tests run in the Release passes only.
#define DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS()                                          \
  if (std::string(DMINDEX_SANITIZER).size() > 0)                                            \
    GTEST_SKIP() << "SimGrid's raw contexts are invisible to " DMINDEX_SANITIZER " sanitizers"

// Runs `work` in a forked child; its figures come back through a pipe. A child that dies, or
// whose work fails, gives figure "error" (and prints why on its stderr).
inline Figures RunInChild(const std::function<Figures()>& work) {
  int fds[2];
  if (pipe(fds) != 0) return {{"error", 1}};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::ostringstream out;
    out.precision(17);
    for (const auto& [k, v] : work()) out << k << " " << v << "\n";
    const std::string text = out.str();
    (void)!write(fds[1], text.data(), text.size());
    close(fds[1]);
    std::fflush(nullptr);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {{"error", 2}};
  Figures f;
  std::istringstream in(text);
  std::string key;
  double v;
  while (in >> key >> v) f[key] = v;
  return f;
}

// What a test measured, on its output (docs/SIMULATION.md quotes the micro-validation's).
inline void Print(const Figures& f) {
  for (const auto& [k, v] : f) std::printf("  %s = %.6g\n", k.c_str(), v);
}

inline std::string PlatformFile(const std::string& name) {
  return std::string(DMINDEX_PLATFORM_DIR) + "/" + name + ".xml";
}

// A simulation of a shipped platform and an in-process fabric timed by it.
struct SimBed {
  std::unique_ptr<sim::Simulation> sim;
  std::unique_ptr<fabric::InProcFabric> fabric;

  static SimBed Make(const std::string& platform, const sim::ComputeOptions& compute,
                     uint64_t pool_bytes = 64ull << 20,
                     std::function<Status(fabric::MemoryNode&)> prepare = designs::RegisterMemoryNodeHandlers) {
    SimBed bed;
    sim::SimulationOptions options;
    options.platform_file = PlatformFile(platform);
    options.compute = compute;
    auto sim = sim::Simulation::Create(options);
    if (!sim.ok()) {
      std::fprintf(stderr, "simulation: %s\n", sim.status().ToString().c_str());
      return bed;
    }
    bed.sim = std::move(sim).value();
    fabric::InProcOptions o = bed.sim->FabricOptions();
    o.pool_bytes = pool_bytes;
    o.prepare_node = std::move(prepare);
    auto f = fabric::InProcFabric::Create(o);
    if (!f.ok()) {
      std::fprintf(stderr, "fabric: %s\n", f.status().ToString().c_str());
      bed.sim.reset();
      return bed;
    }
    bed.fabric = std::move(f).value();
    return bed;
  }
  bool ok() const { return sim != nullptr && fabric != nullptr; }
};

// Modelled compute that costs nothing: what is measured is the network alone.
inline sim::ComputeOptions FreeCompute() {
  sim::ComputeOptions c;
  c.mode = sim::ComputeMode::kModelled;
  c.cycles.fill(0);
  return c;
}

}  // namespace dmindex::testing
