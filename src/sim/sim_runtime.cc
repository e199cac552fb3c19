#include "sim/sim_runtime.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace dmindex::sim {
namespace {

namespace sg = simgrid::s4u;
using runtime::BackendState;

// Simulated time 0 on the steady clock: far from its epoch, so code that treats a zero time
// point as "unset" never meets one.
constexpr double kClockOffsetSeconds = 1e6;
// The wall clock of a simulation: a fixed date plus simulated time, the same in every run.
constexpr double kWallEpochSeconds = 1.7e9;

// Where simulated threads sleep until a lock or a notification lets them go: a SimGrid mutex
// and condition variable, made the first time someone has to wait. A sleeper counts itself in
// before it takes the mutex, and whoever wakes sleepers takes the mutex first, so a wakeup
// never falls between a sleeper's check and its sleep.
struct Sleepers {
  sg::MutexPtr mu;
  sg::ConditionVariablePtr cv;
  uint32_t count = 0;

  void Ensure() {
    if (mu != nullptr) return;
    // Making them is a simulation call, during which another actor may make them too: the
    // first ones installed stay.
    sg::MutexPtr m = sg::Mutex::create();
    sg::ConditionVariablePtr c = sg::ConditionVariable::create();
    if (mu == nullptr) {
      mu = std::move(m);
      cv = std::move(c);
    }
  }
  // Sleeps until take() succeeds; take() is tried under the mutex, and what it takes is taken
  // before the mutex is released (releasing it is a simulation call: others run meanwhile).
  template <typename Take>
  void SleepUntil(Take take) {
    ++count;
    Ensure();
    {
      std::unique_lock<sg::Mutex> lock(*mu);
      while (!take()) cv->wait(lock);
    }
    --count;
  }
  void Wake(bool all) {
    Ensure();  // a sleeper that counted itself in may still be making them
    std::lock_guard<sg::Mutex> lock(*mu);
    all ? cv->notify_all() : cv->notify_one();
  }
};

// Actors are never preempted between simulation calls, so a lock's state is read and changed
// directly: an uncontended lock or unlock is no simulation call at all.
struct MutexState final : BackendState {
  bool held = false;
  Sleepers sleepers;
  bool TryTake() { return !held && (held = true); }
};

struct RwState final : BackendState {
  uint32_t readers = 0;
  bool writer = false;
  Sleepers sleepers;
  bool TryTake(bool shared) {
    if (writer || (!shared && readers > 0)) return false;
    shared ? ++readers : (writer = true, 0u);
    return true;
  }
};

struct CondState final : BackendState {
  Sleepers sleepers;
};

struct ThreadState final : BackendState {
  sg::ActorPtr actor;
};

template <typename S>
S& StateOf(std::unique_ptr<BackendState>& slot) {
  if (slot == nullptr) slot = std::make_unique<S>();  // no simulation call: nobody can interleave
  return static_cast<S&>(*slot);
}

// Measured mode times a segment by the monotonic clock, not the thread CPU clock: that one
// is a system call (about 800 ns on this VM, against 35 ns for the monotonic clock's vDSO
// read), and the jitter of two such calls per segment was larger than a short segment itself
// (a DEX cache hit's clock-ended segments measured -40 cycles on average). The thread CPU
// clock is read twice per window instead (SegmentNs), to take out the time the simulation's
// thread had no core. A window is long enough that those reads (~1.6 us) cost little, short
// enough to follow a machine's load and for a long segment's window to hold little before it.
constexpr int64_t kShareWindowNs = 500'000;

// What one read of the segment clock adds to a measured segment: the median time between two
// consecutive reads.
int64_t ClockOverheadNs() {
  std::vector<int64_t> deltas;
  int64_t last = MeasureClockNs();
  for (int i = 0; i < 201; ++i) {
    const int64_t now = MeasureClockNs();
    deltas.push_back(now - last);
    last = now;
  }
  std::nth_element(deltas.begin(), deltas.begin() + 100, deltas.end());
  return deltas[100];
}

}  // namespace

// What a simulated thread carries; lives in its actor's body (ActorBody), found through the
// actor's data pointer.
struct SimRuntime::ActorData {
  sg::Host* host = nullptr;         // where the thread runs
  sg::Host* charge_host = nullptr;  // where its segments are charged (a memory server in a handler)
  int64_t cpu_mark = 0;             // measured mode: the monotonic clock when the segment began
  double pending = 0;               // cycles of ended segments not charged yet
  void* slots[static_cast<size_t>(runtime::ThreadSlot::kCount)] = {};
};

SimRuntime::SimRuntime(const Platform& platform, const ComputeOptions& compute, uint64_t seed)
    : platform_(platform), compute_(compute),
      clock_overhead_ns_(compute.mode == ComputeMode::kMeasured ? ClockOverheadNs() : 0),
      entropy_(seed) {}

uint64_t SimRuntime::Entropy() {
  // splitmix64: actors draw in a deterministic order, so the stream is the seed's.
  uint64_t z = (entropy_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

runtime::Clock::time_point SimRuntime::ToTimePoint(double seconds) {
  return runtime::Clock::time_point(std::chrono::duration_cast<runtime::Clock::duration>(
      std::chrono::duration<double>(kClockOffsetSeconds + seconds)));
}

double SimRuntime::ToSeconds(runtime::Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count() - kClockOffsetSeconds;
}

SimRuntime::ActorData& SimRuntime::Current() const {
  auto* data = sg::Actor::self() == nullptr ? nullptr : sg::Actor::self()->get_data<ActorData>();
  if (data == nullptr) {
    std::fprintf(stderr, "dmindex: a runtime call outside a simulated thread\n");
    std::abort();
  }
  return *data;
}

sg::Host* SimRuntime::host() const { return Current().host; }

void SimRuntime::Execute(sg::Host* host, double cycles) {
  if (cycles <= 0) return;
  // A host with no more busy threads than cores runs each at full speed: a sleep says so
  // (cheaper to simulate than an execution); past its cores, SimGrid shares them out.
  if (busy_[host] <= static_cast<uint32_t>(host->get_core_count())) {
    sg::this_actor::sleep_for(cycles / host->get_speed());
  } else if (host == sg::this_actor::get_host()) {
    sg::this_actor::execute(cycles);
  } else {
    sg::this_actor::exec_init(cycles)->set_host(host)->wait();
  }
}

void SimRuntime::Enter(CallKind c) {
  ActorData& d = Current();
  double cycles;
  if (compute_.mode == ComputeMode::kMeasured) {
    cycles = SegmentNs(d.cpu_mark) * compute_.cpu_ghz - segment_overhead_cycles_;
  } else {
    cycles = compute_.cycles[static_cast<size_t>(c)];
  }
  profile_.Add(c, cycles);
  d.pending += cycles;
  if (d.pending < compute_.min_charge_cycles) return;  // carried into the next segment
  Execute(d.charge_host, d.pending);
  d.pending = 0;
}

double SimRuntime::SegmentNs(int64_t start_ns) {
  const int64_t now = MeasureClockNs();
  // Every actor runs on the simulation's one thread, so the share of wall time that thread had
  // a core (its CPU clock over the wall clock: another process, or the hypervisor, may have
  // taken it) scales the segments: a window opens at a segment's start and closes at the first
  // segment end 0.5 ms later; its share scales the segment that closes it (which it covers
  // whole) and the ones until the next closes. A preempted segment is charged its work, not
  // the wait. (The thread does not block inside a simulation but on a disk read, which the
  // simulation does not model anyway: docs/SIMULATION.md.)
  if (window_cpu_ns_ >= 0 && now - window_wall_ns_ >= kShareWindowNs) {
    on_core_share_ = std::clamp(static_cast<double>(ThreadCpuNs() - window_cpu_ns_) / static_cast<double>(now - window_wall_ns_), 0.01, 1.0);
    window_cpu_ns_ = -1;  // closed: the next segment's start opens one
  }
  return static_cast<double>(now - start_ns - clock_overhead_ns_) * on_core_share_;
}

void SimRuntime::Resume() {
  if (compute_.mode != ComputeMode::kMeasured) return;
  if (window_cpu_ns_ < 0) {
    window_cpu_ns_ = ThreadCpuNs();
    window_wall_ns_ = MeasureClockNs();
  }
  Current().cpu_mark = MeasureClockNs();
}

void SimRuntime::Spin(double cycles) {
  // Always charged at once, carried work included: a spin must let simulated time pass.
  ActorData& d = Current();
  Execute(d.charge_host, std::max(0.0, d.pending) + cycles);
  d.pending = 0;
}

void SimRuntime::BeginServe(sg::Host* server, double extra_cycles) {
  ActorData& d = Current();
  d.charge_host = server;
  ++busy_[server];
  d.pending += extra_cycles;
  Resume();
}

void SimRuntime::EndServe() {
  Enter(CallKind::kHandler);
  ActorData& d = Current();
  Execute(d.charge_host, d.pending);  // the handler's work is done on the server, not later
  d.pending = 0;
  --busy_[d.charge_host];
  d.charge_host = d.host;
}

// A clock read is an event (its caller's work so far is charged first): the times the
// threads read must order as their events did, or a history of operations stamped with them
// would claim an order that did not happen (the checkers rely on it).
runtime::Clock::time_point SimRuntime::Now() {
  Enter(CallKind::kClock);
  const double t = sg::Engine::get_clock();
  Resume();
  return ToTimePoint(t);
}

std::chrono::system_clock::time_point SimRuntime::WallNow() {
  Enter(CallKind::kClock);
  const double t = sg::Engine::get_clock();
  Resume();
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::duration<double>(kWallEpochSeconds + t)));
}

void SimRuntime::SleepUntil(runtime::Clock::time_point t) {
  Enter(CallKind::kSleep);
  const double until = ToSeconds(t);
  if (until > sg::Engine::get_clock()) sg::this_actor::sleep_until(until);
  Resume();
}

void SimRuntime::SleepFor(runtime::Clock::duration d) {
  Enter(CallKind::kSleep);
  const double seconds = std::chrono::duration<double>(d).count();
  if (seconds > 0) sg::this_actor::sleep_for(seconds);
  Resume();
}

void SimRuntime::Yield() {
  Enter(CallKind::kSpin);
  Spin(compute_.yield_cycles);
  Resume();
}

void SimRuntime::CpuRelax() {
  Enter(CallKind::kSpin);
  Spin(compute_.pause_cycles);
  Resume();
}

void*& SimRuntime::ThreadLocal(runtime::ThreadSlot slot) { return Current().slots[static_cast<size_t>(slot)]; }

void SimRuntime::Lock(std::unique_ptr<BackendState>& state) {
  MutexState& m = StateOf<MutexState>(state);
  if (m.TryTake()) return;
  Enter(CallKind::kLock);
  m.sleepers.SleepUntil([&m] { return m.TryTake(); });
  Resume();
}

bool SimRuntime::TryLock(std::unique_ptr<BackendState>& state) { return StateOf<MutexState>(state).TryTake(); }

void SimRuntime::Unlock(std::unique_ptr<BackendState>& state) {
  MutexState& m = StateOf<MutexState>(state);
  m.held = false;
  if (m.sleepers.count == 0) return;
  Enter(CallKind::kUnlock);
  m.sleepers.Wake(false);  // one can take it; one that loses it to another sleeps again
  Resume();
}

void SimRuntime::LockRw(std::unique_ptr<BackendState>& state, bool shared) {
  RwState& rw = StateOf<RwState>(state);
  if (rw.TryTake(shared)) return;
  Enter(CallKind::kLock);
  rw.sleepers.SleepUntil([&rw, shared] { return rw.TryTake(shared); });
  Resume();
}

bool SimRuntime::TryLockRw(std::unique_ptr<BackendState>& state, bool shared) {
  return StateOf<RwState>(state).TryTake(shared);
}

void SimRuntime::UnlockRw(std::unique_ptr<BackendState>& state, bool shared) {
  RwState& rw = StateOf<RwState>(state);
  shared ? --rw.readers : (rw.writer = false, 0u);
  if (rw.sleepers.count == 0) return;
  Enter(CallKind::kUnlock);
  rw.sleepers.Wake(true);  // readers may all go at once
  Resume();
}

bool SimRuntime::Wait(std::unique_ptr<BackendState>& cv, std::unique_ptr<BackendState>& mutex,
                      const runtime::Clock::time_point* deadline) {
  Enter(CallKind::kWait);
  Sleepers& c = StateOf<CondState>(cv).sleepers;
  MutexState& m = StateOf<MutexState>(mutex);
  // Counted in while the caller still holds `mutex`: whoever changes the waited-for state
  // under it, or takes it after a change, then sees a sleeper to notify.
  ++c.count;
  c.Ensure();
  bool woken = true;
  {
    std::unique_lock<sg::Mutex> lock(*c.mu);
    m.held = false;
    if (m.sleepers.count > 0) m.sleepers.Wake(false);
    if (deadline == nullptr) {
      c.cv->wait(lock);
    } else {
      const double until = ToSeconds(*deadline);
      woken = until > sg::Engine::get_clock() && c.cv->wait_until(lock, until) == std::cv_status::no_timeout;
    }
  }
  --c.count;
  if (!m.TryTake()) m.sleepers.SleepUntil([&m] { return m.TryTake(); });
  Resume();
  return woken;
}

void SimRuntime::Notify(std::unique_ptr<BackendState>& cv, bool all) {
  Sleepers& c = StateOf<CondState>(cv).sleepers;
  if (c.count == 0) return;
  Enter(CallKind::kNotify);
  c.Wake(all);
  Resume();
}

sg::Host* SimRuntime::HostFor(runtime::Placement where) const {
  if (where.compute_node == runtime::Placement::kCreatorsHost) return Current().host;
  return platform_.compute[where.compute_node % platform_.compute.size()].host;
}

std::function<void()> SimRuntime::ActorBody(std::function<void()> body, sg::Host* host) {
  return [this, body = std::move(body), host] {
    ActorData data;
    data.host = data.charge_host = host;
    sg::Actor::self()->set_data(&data);
    ++busy_[host];
    Resume();
    try {
      body();
    } catch (const std::exception& e) {
      if (failure_.empty()) failure_ = std::string("a simulated thread threw: ") + e.what();
    }
    Enter(CallKind::kThread);
    Execute(data.charge_host, data.pending);
    --busy_[host];
    sg::Actor::self()->set_data(nullptr);
  };
}

void SimRuntime::StartMain(std::function<void()> body, size_t server) {
  sg::Host* host = platform_.compute[server % platform_.compute.size()].host;
  sg::Actor::create("main", host, ActorBody(std::move(body), host));
}

std::unique_ptr<BackendState> SimRuntime::StartThread(std::function<void()> body, runtime::Placement where) {
  Enter(CallKind::kThread);
  sg::Host* host = HostFor(where);
  auto state = std::make_unique<ThreadState>();
  state->actor = sg::Actor::create("thread-" + std::to_string(++actors_started_), host,
                                   ActorBody(std::move(body), host));
  Resume();
  return state;
}

void SimRuntime::JoinThread(BackendState& thread) {
  Enter(CallKind::kThread);
  static_cast<ThreadState&>(thread).actor->join();
  Resume();
}

}  // namespace dmindex::sim
