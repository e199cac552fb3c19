#include "common/runtime.h"

#include <thread>

namespace dmindex::runtime {

Clock::time_point Now() { return Clock::now(); }

std::chrono::system_clock::time_point WallNow() { return std::chrono::system_clock::now(); }

void SleepFor(Clock::duration d) { std::this_thread::sleep_for(d); }

void SleepUntil(Clock::time_point t) { std::this_thread::sleep_until(t); }

void Yield() { std::this_thread::yield(); }

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace dmindex::runtime
