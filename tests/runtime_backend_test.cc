// The runtime seam is switchable at run time (common/runtime_backend.h): while a backend is
// installed every primitive goes to it, and once it is removed the std runtime is back. A
// recording backend on a virtual clock shows each call arriving where it should.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "common/retry.h"
#include "common/runtime.h"
#include "common/runtime_backend.h"
#include "common/sync.h"

namespace dmindex::runtime {
namespace {

// Runs everything on the calling thread: a started thread runs to its end at once (the tests
// below only start threads that never block), sleeping moves a virtual clock.
class RecordingBackend final : public Backend {
 public:
  struct Flag final : BackendState {
    bool held = false;
    int shared = 0;
  };

  std::map<std::string, int> calls;
  Clock::time_point clock{std::chrono::seconds(1000)};

  Clock::time_point Now() override { return ++calls["Now"], clock; }
  std::chrono::system_clock::time_point WallNow() override {
    ++calls["WallNow"];
    return std::chrono::system_clock::time_point(std::chrono::seconds(7));
  }
  void SleepUntil(Clock::time_point t) override {
    ++calls["SleepUntil"];
    clock = std::max(clock, t);
  }
  void SleepFor(Clock::duration d) override {
    ++calls["SleepFor"];
    clock += d;
  }
  void Yield() override { ++calls["Yield"]; }
  void CpuRelax() override { ++calls["CpuRelax"]; }
  void*& ThreadLocal(ThreadSlot slot) override {
    ++calls["ThreadLocal"];
    return slots[static_cast<size_t>(slot)];
  }
  void* slots[static_cast<size_t>(ThreadSlot::kCount)] = {};
  uint64_t Entropy() override { return ++calls["Entropy"]; }

  static Flag& Of(std::unique_ptr<BackendState>& s) {
    if (s == nullptr) s = std::make_unique<Flag>();
    return static_cast<Flag&>(*s);
  }
  void Lock(std::unique_ptr<BackendState>& s) override {
    ++calls["Lock"];
    EXPECT_FALSE(Of(s).held) << "a single-threaded test never blocks";
    Of(s).held = true;
  }
  bool TryLock(std::unique_ptr<BackendState>& s) override {
    ++calls["TryLock"];
    if (Of(s).held) return false;
    return Of(s).held = true;
  }
  void Unlock(std::unique_ptr<BackendState>& s) override {
    ++calls["Unlock"];
    EXPECT_TRUE(Of(s).held);
    Of(s).held = false;
  }
  void LockRw(std::unique_ptr<BackendState>& s, bool shared) override {
    ++calls[shared ? "LockShared" : "LockRw"];
    shared ? ++Of(s).shared : (Of(s).held = true, 0);
  }
  bool TryLockRw(std::unique_ptr<BackendState>& s, bool shared) override {
    ++calls[shared ? "TryLockShared" : "TryLockRw"];
    if (Of(s).held || (!shared && Of(s).shared > 0)) return false;
    shared ? ++Of(s).shared : (Of(s).held = true, 0);
    return true;
  }
  void UnlockRw(std::unique_ptr<BackendState>& s, bool shared) override {
    ++calls[shared ? "UnlockShared" : "UnlockRw"];
    shared ? --Of(s).shared : (Of(s).held = false, 0);
  }
  bool Wait(std::unique_ptr<BackendState>& cv, std::unique_ptr<BackendState>& mutex,
            const Clock::time_point* deadline) override {
    ++calls["Wait"];
    EXPECT_TRUE(Of(mutex).held) << "waits hold the mutex";
    Of(cv);
    if (deadline == nullptr) return true;  // a spurious wakeup: the caller re-checks
    clock = std::max(clock, *deadline);
    return false;
  }
  void Notify(std::unique_ptr<BackendState>& cv, bool all) override {
    ++calls[all ? "NotifyAll" : "NotifyOne"];
  }
  std::unique_ptr<BackendState> StartThread(std::function<void()> body, Placement where) override {
    ++calls["StartThread"];
    placements.push_back(where.compute_node);
    body();
    return std::make_unique<Flag>();
  }
  void JoinThread(BackendState&) override { ++calls["JoinThread"]; }

  std::vector<uint32_t> placements;
};

TEST(RuntimeBackend, EveryPrimitiveGoesToTheInstalledBackend) {
  RecordingBackend backend;
  Mutex mu;            // made before the backend is installed: its state is made on first use
  SharedMutex rw;
  {
    ScopedBackend installed(backend);
    EXPECT_EQ(Now(), Clock::time_point(std::chrono::seconds(1000)));
    SleepFor(std::chrono::microseconds(5));
    EXPECT_EQ(Now() - Clock::time_point(std::chrono::seconds(1000)), std::chrono::microseconds(5));
    SleepUntil(Now() + std::chrono::microseconds(10));
    EXPECT_EQ(WallNow(), std::chrono::system_clock::time_point(std::chrono::seconds(7)));
    Yield();
    CpuRelax();
    int here = 0;
    ThreadLocal(ThreadSlot::kActivity) = &here;
    EXPECT_EQ(backend.slots[0], &here);
    EXPECT_EQ(Entropy(), 1u);
    {
      std::lock_guard lock(mu);
      EXPECT_FALSE(mu.try_lock());
    }
    {
      std::shared_lock reader(rw);
      EXPECT_FALSE(rw.try_lock());
      EXPECT_TRUE(rw.try_lock_shared());
      rw.unlock_shared();
    }
    { std::lock_guard writer(rw); }
    CondVar cv;
    std::unique_lock lock(mu);
    int wakeups = 0;
    cv.Wait(lock, [&] { return ++wakeups == 3; });  // two spurious wakeups, then ready
    EXPECT_EQ(wakeups, 3);
    const auto before = Now();
    EXPECT_FALSE(cv.WaitUntil(lock, before + std::chrono::milliseconds(1), [] { return false; }));
    EXPECT_EQ(Now() - before, std::chrono::milliseconds(1));  // slept to the deadline
    cv.NotifyOne();
    cv.NotifyAll();
    lock.unlock();
    int ran = 0;
    Thread a([&] { ++ran; });
    Thread b(Placement{3}, [&] { ++ran; });
    EXPECT_TRUE(a.joinable());
    a.join();
    b.join();
    EXPECT_FALSE(b.joinable());
    EXPECT_EQ(ran, 2);
  }
  EXPECT_EQ(backend.calls["Now"], 5);
  EXPECT_EQ(backend.calls["SleepFor"], 1);
  EXPECT_EQ(backend.calls["SleepUntil"], 1);
  EXPECT_EQ(backend.calls["WallNow"], 1);
  EXPECT_EQ(backend.calls["Yield"], 1);
  EXPECT_EQ(backend.calls["CpuRelax"], 1);
  EXPECT_EQ(backend.calls["ThreadLocal"], 1);
  EXPECT_EQ(backend.calls["Entropy"], 1);
  EXPECT_EQ(backend.calls["Lock"], 2);  // lock_guard, unique_lock
  EXPECT_EQ(backend.calls["TryLock"], 1);
  EXPECT_EQ(backend.calls["Unlock"], 2);
  EXPECT_EQ(backend.calls["LockShared"], 1);
  EXPECT_EQ(backend.calls["TryLockShared"], 1);
  EXPECT_EQ(backend.calls["UnlockShared"], 2);
  EXPECT_EQ(backend.calls["TryLockRw"], 1);
  EXPECT_EQ(backend.calls["LockRw"], 1);
  EXPECT_EQ(backend.calls["UnlockRw"], 1);
  EXPECT_EQ(backend.calls["Wait"], 3);
  EXPECT_EQ(backend.calls["NotifyOne"], 1);
  EXPECT_EQ(backend.calls["NotifyAll"], 1);
  EXPECT_EQ(backend.calls["StartThread"], 2);
  EXPECT_EQ(backend.calls["JoinThread"], 2);
  EXPECT_EQ(backend.placements, (std::vector<uint32_t>{Placement::kCreatorsHost, 3}));
}

TEST(RuntimeBackend, TheSyncPrimitivesAndBackoffsWaitThroughTheBackend) {
  RecordingBackend backend;
  ScopedBackend installed(backend);
  Semaphore slots(1);
  slots.Acquire();
  EXPECT_FALSE(slots.TryAcquire());
  slots.Release();
  Latch latch(1);
  latch.CountDown();
  latch.Wait();
  Backoff backoff(BackoffStages{1, 1, std::chrono::microseconds(2), std::chrono::microseconds(4)});
  for (int i = 0; i < 4; ++i) backoff.Pause();  // spin, yield, sleep 2 us, sleep 4 us
  EXPECT_EQ(backend.calls["CpuRelax"], 1);
  EXPECT_EQ(backend.calls["Yield"], 1);
  EXPECT_EQ(backend.calls["SleepFor"], 2);
  EXPECT_EQ(backend.clock - Clock::time_point(std::chrono::seconds(1000)), std::chrono::microseconds(6));
  EXPECT_GE(backend.calls["Lock"], 4);
}

TEST(RuntimeBackend, RemovingTheBackendRestoresStdsRuntime) {
  {
    RecordingBackend backend;
    ScopedBackend installed(backend);
    EXPECT_EQ(ActiveBackend(), &backend);
  }
  EXPECT_EQ(ActiveBackend(), nullptr);
  // The steady clock again, and real threads that run concurrently.
  const auto t0 = Now();
  EXPECT_GT(t0.time_since_epoch(), std::chrono::seconds(0));
  Mutex mu;
  CondVar cv;
  bool go = false, seen = false;
  Thread waiter([&] {
    std::unique_lock lock(mu);
    cv.Wait(lock, [&] { return go; });
    seen = true;
  });
  {
    std::lock_guard lock(mu);
    go = true;
  }
  cv.NotifyAll();
  waiter.join();
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace dmindex::runtime
