#include "common/runtime.h"

#include <thread>

namespace dmindex::runtime {

Clock::time_point Now() { return Clock::now(); }

void SleepFor(Clock::duration d) { std::this_thread::sleep_for(d); }

void Yield() { std::this_thread::yield(); }

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace dmindex::runtime
