#include "sim/sim_runtime.h"

#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>

namespace dmindex::sim {
namespace {

namespace sg = simgrid::s4u;
using runtime::BackendState;

// Simulated time 0 on the steady clock: far from its epoch, so code that treats a zero time
// point as "unset" never meets one.
constexpr double kClockOffsetSeconds = 1e6;
// The wall clock of a simulation: a fixed date plus simulated time, the same in every run.
constexpr double kWallEpochSeconds = 1.7e9;

struct MutexState final : BackendState {
  sg::MutexPtr m = sg::Mutex::create();
};

// A readers-writer lock from a SimGrid mutex and condition variable. Actors are never
// preempted between simulation calls, so the counters are read and changed without the
// mutex; it is taken only to sleep (a waiter checks again under it, and whoever releases
// takes it before notifying, so no wakeup falls between a check and the sleep).
struct RwState final : BackendState {
  sg::MutexPtr mu = sg::Mutex::create();
  sg::ConditionVariablePtr cv = sg::ConditionVariable::create();
  uint32_t readers = 0;
  bool writer = false;
  uint32_t waiters = 0;
  bool Blocks(bool shared) const { return writer || (!shared && readers > 0); }
  void Take(bool shared) { shared ? ++readers : (writer = true, 0u); }
};

struct CondState final : BackendState {
  sg::ConditionVariablePtr cv = sg::ConditionVariable::create();
};

struct ThreadState final : BackendState {
  sg::ActorPtr actor;
};

// The object's state, made on first use. Making SimGrid's mutexes and condition variables is
// a simulation call, during which other actors run and may make the same object's state:
// the first one installed stays (replacing it would free what another actor already uses).
template <typename S>
S& StateOf(std::unique_ptr<BackendState>& slot) {
  if (slot == nullptr) {
    auto made = std::make_unique<S>();
    if (slot == nullptr) slot = std::move(made);
  }
  return static_cast<S&>(*slot);
}

}  // namespace

// What a simulated thread carries; lives in its actor's body (ActorBody), found through the
// actor's data pointer.
struct SimRuntime::ActorData {
  sg::Host* host = nullptr;         // where the thread runs
  sg::Host* charge_host = nullptr;  // where its segments are charged (a memory server in a handler)
  int64_t cpu_mark = 0;             // measured mode: thread CPU time when the segment began
  double pending = 0;               // cycles of ended segments not charged yet
};

SimRuntime::SimRuntime(const Platform& platform, const ComputeOptions& compute)
    : platform_(platform), compute_(compute) {}

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
  if (host == sg::this_actor::get_host())
    sg::this_actor::execute(cycles);
  else
    sg::this_actor::exec_init(cycles)->set_host(host)->wait();
}

void SimRuntime::Enter(CallKind c) {
  ActorData& d = Current();
  double cycles;
  if (compute_.mode == ComputeMode::kMeasured) {
    const int64_t now = ThreadCpuNs();
    cycles = static_cast<double>(now - d.cpu_mark) * compute_.cpu_ghz;
  } else {
    cycles = compute_.cycles[static_cast<size_t>(c)];
  }
  profile_.Add(c, cycles);
  d.pending += cycles;
  if (d.pending < compute_.min_charge_cycles) return;  // carried into the next segment
  Execute(d.charge_host, d.pending);
  d.pending = 0;
}

void SimRuntime::Resume() {
  if (compute_.mode == ComputeMode::kMeasured) Current().cpu_mark = ThreadCpuNs();
}

void SimRuntime::Spin(double cycles) {
  // Always charged at once, carried work included: a spin must let simulated time pass.
  ActorData& d = Current();
  Execute(d.charge_host, d.pending + cycles);
  d.pending = 0;
}

void SimRuntime::BeginServe(sg::Host* server, double extra_cycles) {
  ActorData& d = Current();
  d.charge_host = server;
  d.pending += extra_cycles;
  Resume();
}

void SimRuntime::EndServe() {
  Enter(CallKind::kHandler);
  ActorData& d = Current();
  Execute(d.charge_host, d.pending);  // the handler's work is done on the server, not later
  d.pending = 0;
  d.charge_host = d.host;
}

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

void SimRuntime::Lock(std::unique_ptr<BackendState>& state) {
  Enter(CallKind::kLock);
  StateOf<MutexState>(state).m->lock();
  Resume();
}

bool SimRuntime::TryLock(std::unique_ptr<BackendState>& state) {
  Enter(CallKind::kLock);
  const bool got = StateOf<MutexState>(state).m->try_lock();
  Resume();
  return got;
}

void SimRuntime::Unlock(std::unique_ptr<BackendState>& state) {
  Enter(CallKind::kUnlock);
  StateOf<MutexState>(state).m->unlock();
  Resume();
}

void SimRuntime::LockRw(std::unique_ptr<BackendState>& state, bool shared) {
  Enter(CallKind::kLock);
  RwState& rw = StateOf<RwState>(state);
  if (rw.Blocks(shared)) {
    // Taken before the mutex is released: releasing it is a simulation call, during which
    // another actor could take the lock too.
    ++rw.waiters;
    std::unique_lock<sg::Mutex> lock(*rw.mu);
    while (rw.Blocks(shared)) rw.cv->wait(lock);
    rw.Take(shared);
    --rw.waiters;
  } else {
    rw.Take(shared);
  }
  Resume();
}

bool SimRuntime::TryLockRw(std::unique_ptr<BackendState>& state, bool shared) {
  Enter(CallKind::kLock);
  RwState& rw = StateOf<RwState>(state);
  const bool got = !rw.Blocks(shared);
  if (got) rw.Take(shared);
  Resume();
  return got;
}

void SimRuntime::UnlockRw(std::unique_ptr<BackendState>& state, bool shared) {
  Enter(CallKind::kUnlock);
  RwState& rw = StateOf<RwState>(state);
  if (shared)
    --rw.readers;
  else
    rw.writer = false;
  if (rw.waiters > 0) {
    std::lock_guard<sg::Mutex> lock(*rw.mu);
    rw.cv->notify_all();
  }
  Resume();
}

bool SimRuntime::Wait(std::unique_ptr<BackendState>& cv, std::unique_ptr<BackendState>& mutex,
                      const runtime::Clock::time_point* deadline) {
  Enter(CallKind::kWait);
  CondState& c = StateOf<CondState>(cv);
  std::unique_lock<sg::Mutex> lock(*StateOf<MutexState>(mutex).m, std::adopt_lock);
  bool woken = true;
  if (deadline == nullptr) {
    c.cv->wait(lock);
  } else {
    const double until = ToSeconds(*deadline);
    woken = until > sg::Engine::get_clock() && c.cv->wait_until(lock, until) == std::cv_status::no_timeout;
  }
  lock.release();  // held again, and still owned by the caller's lock
  Resume();
  return woken;
}

void SimRuntime::Notify(std::unique_ptr<BackendState>& cv, bool all) {
  Enter(CallKind::kNotify);
  CondState& c = StateOf<CondState>(cv);
  if (all)
    c.cv->notify_all();
  else
    c.cv->notify_one();
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
    Resume();
    try {
      body();
    } catch (const std::exception& e) {
      if (failure_.empty()) failure_ = std::string("a simulated thread threw: ") + e.what();
    }
    Enter(CallKind::kThread);
    Execute(data.charge_host, data.pending);
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
