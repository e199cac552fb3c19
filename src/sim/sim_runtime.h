// The runtime seam on SimGrid: while a simulation runs (sim/simulation.h), every runtime::
// call of dmindex's code goes here. Threads are SimGrid actors on simulated hosts (a thread
// started with a Placement runs on the compute server hosting that compute node; others on
// their creator's host); a lock, shared lock or condition variable that makes a thread wait
// puts it to sleep on a SimGrid mutex and condition variable (s4u::Mutex,
// s4u::ConditionVariable) - one that is free is taken without a simulation call; the clock is
// the simulated clock, sleeps are simulated sleeps. A spin pause or a yield costs its cycles on the host's
// cores, so simulated time always advances in a spin and a spinning thread cannot livelock the
// simulation: whoever it waits for gets to run.
//
// Actors run one at a time (SimGrid's raw contexts, all on the thread that runs the engine),
// so the code between two simulation calls of one actor is atomic with respect to the other
// actors. Its cost is charged as described in sim/compute_model.h.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/runtime_backend.h"
#include "sim/compute_model.h"
#include "sim/platform.h"

namespace dmindex::sim {

class SimRuntime final : public runtime::Backend {
 public:
  // `seed`: of runtime::Entropy's stream.
  SimRuntime(const Platform& platform, const ComputeOptions& compute, uint64_t seed);

  // Starts `body` as an actor on compute server `server` (the simulation's main thread).
  void StartMain(std::function<void()> body, size_t server);

  // --- for the simulated fabric: the calling actor's side of a verb or an RPC ---
  // Ends the caller's segment (charging it) before a simulation call of kind `c`...
  void Enter(CallKind c);
  // ...and starts its next segment once the call returned.
  void Resume();
  // The host the calling actor runs on.
  simgrid::s4u::Host* host() const;
  // While an RPC handler runs on a memory server: the caller's segments are charged to that
  // server's cores, plus `extra_cycles` of the server's messaging work. EndServe charges the
  // handler's last segment there and returns to the caller's own host.
  void BeginServe(simgrid::s4u::Host* server, double extra_cycles);
  void EndServe();

  const ComputeProfile& profile() const { return profile_; }
  ComputeProfile TakeProfile() { return std::exchange(profile_, ComputeProfile{}); }
  // Modelled mode: the cycles per segment from now on (between runs).
  void SetCycles(const CycleTable& cycles) { compute_.cycles = cycles; }
  // Measured mode: what the simulation's own bookkeeping adds to every segment (the clock
  // reads' cost beyond their median, the seam's calls), subtracted from each from now on.
  void SetSegmentOverhead(double cycles) { segment_overhead_cycles_ = cycles; }
  // What went wrong inside the simulation (an actor's exception), or empty.
  const std::string& failure() const { return failure_; }

  // --- runtime::Backend ---
  runtime::Clock::time_point Now() override;
  std::chrono::system_clock::time_point WallNow() override;
  void SleepUntil(runtime::Clock::time_point t) override;
  void SleepFor(runtime::Clock::duration d) override;
  void Yield() override;
  void CpuRelax() override;
  void*& ThreadLocal(runtime::ThreadSlot slot) override;
  uint64_t Entropy() override;
  void Lock(std::unique_ptr<runtime::BackendState>& state) override;
  bool TryLock(std::unique_ptr<runtime::BackendState>& state) override;
  void Unlock(std::unique_ptr<runtime::BackendState>& state) override;
  void LockRw(std::unique_ptr<runtime::BackendState>& state, bool shared) override;
  bool TryLockRw(std::unique_ptr<runtime::BackendState>& state, bool shared) override;
  void UnlockRw(std::unique_ptr<runtime::BackendState>& state, bool shared) override;
  bool Wait(std::unique_ptr<runtime::BackendState>& cv, std::unique_ptr<runtime::BackendState>& mutex,
            const runtime::Clock::time_point* deadline) override;
  void Notify(std::unique_ptr<runtime::BackendState>& cv, bool all) override;
  std::unique_ptr<runtime::BackendState> StartThread(std::function<void()> body, runtime::Placement where) override;
  void JoinThread(runtime::BackendState& thread) override;

  // Simulated seconds <-> the steady clock's time points handed to the code (simulated time
  // 0 is a fixed point well after the clock's epoch, so no reading is ever zero).
  static runtime::Clock::time_point ToTimePoint(double seconds);
  static double ToSeconds(runtime::Clock::time_point t);

 private:
  struct ActorData;
  ActorData& Current() const;
  // Charges `cycles` of work to `host` now (the caller waits until it is done).
  void Execute(simgrid::s4u::Host* host, double cycles);
  void Spin(double cycles);
  // Measured mode: the length on the core, in nanoseconds, of the segment begun at start_ns
  // and ending now.
  double SegmentNs(int64_t start_ns);
  simgrid::s4u::Host* HostFor(runtime::Placement where) const;
  std::function<void()> ActorBody(std::function<void()> body, simgrid::s4u::Host* host);

  const Platform& platform_;
  ComputeOptions compute_;
  const int64_t clock_overhead_ns_;  // measured mode: subtracted from every segment
  double segment_overhead_cycles_ = 0;  // measured mode: subtracted from every segment too
  // Measured mode: the share of the last window the simulation's thread had a core (its CPU
  // time / the wall time), which scales every wall-clock segment; the open window's start by
  // both clocks (window_cpu_ns_ -1: no window open).
  double on_core_share_ = 1;
  int64_t window_wall_ns_ = 0, window_cpu_ns_ = -1;
  std::unordered_map<simgrid::s4u::Host*, uint32_t> busy_;  // simulated threads running on each host
  ComputeProfile profile_;
  std::string failure_;
  uint64_t actors_started_ = 0;
  uint64_t entropy_;  // splitmix64 state
};

}  // namespace dmindex::sim
