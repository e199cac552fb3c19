#include "common/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "common/runtime_backend.h"

namespace dmindex::runtime {

namespace internal {
std::atomic<Backend*> g_backend{nullptr};
}  // namespace internal

using internal::Active;

Clock::time_point Now() {
  if (Backend* b = Active()) [[unlikely]] return b->Now();
  return Clock::now();
}

std::chrono::system_clock::time_point WallNow() {
  if (Backend* b = Active()) [[unlikely]] return b->WallNow();
  return std::chrono::system_clock::now();
}

void SleepFor(Clock::duration d) {
  if (Backend* b = Active()) [[unlikely]] return b->SleepFor(d);
  std::this_thread::sleep_for(d);
}

void SleepUntil(Clock::time_point t) {
  if (Backend* b = Active()) [[unlikely]] return b->SleepUntil(t);
  std::this_thread::sleep_until(t);
}

void Yield() {
  if (Backend* b = Active()) [[unlikely]] return b->Yield();
  std::this_thread::yield();
}

void CpuRelax() {
  if (Backend* b = Active()) [[unlikely]] return b->CpuRelax();
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

uint64_t Entropy() {
  if (Backend* b = Active()) [[unlikely]] return b->Entropy();
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

void*& ThreadLocal(ThreadSlot slot) {
  if (Backend* b = Active()) [[unlikely]] return b->ThreadLocal(slot);
  thread_local void* slots[static_cast<size_t>(ThreadSlot::kCount)] = {};
  return slots[static_cast<size_t>(slot)];
}

// The backend paths of the primitives: out of line, so the std paths inline to what they were.
void Mutex::BackendLock() { Active()->Lock(state_); }
bool Mutex::BackendTryLock() { return Active()->TryLock(state_); }
void Mutex::BackendUnlock() { Active()->Unlock(state_); }

void SharedMutex::BackendLock(bool shared) { Active()->LockRw(state_, shared); }
bool SharedMutex::BackendTryLock(bool shared) { return Active()->TryLockRw(state_, shared); }
void SharedMutex::BackendUnlock(bool shared) { Active()->UnlockRw(state_, shared); }

bool CondVar::BackendWait(Mutex& mutex, const Clock::time_point* deadline) {
  return Active()->Wait(state_, mutex.state_, deadline);
}
void CondVar::BackendNotify(bool all) { Active()->Notify(state_, all); }

void Thread::BackendStart(std::function<void()> body, Placement where) {
  state_ = Active()->StartThread(std::move(body), where);
}

void Thread::BackendJoin() {
  Backend* b = Active();
  if (b == nullptr) {
    // A thread started under a backend outlived it: nothing can run it any more.
    std::fprintf(stderr, "dmindex: runtime::Thread joined after its runtime backend was removed\n");
    std::abort();
  }
  b->JoinThread(*state_);
  state_.reset();
}

ScopedBackend::ScopedBackend(Backend& backend) {
  Backend* expected = nullptr;
  if (!internal::g_backend.compare_exchange_strong(expected, &backend)) {
    std::fprintf(stderr, "dmindex: a runtime backend is already installed\n");
    std::abort();
  }
}

ScopedBackend::~ScopedBackend() { internal::g_backend.store(nullptr); }

}  // namespace dmindex::runtime
