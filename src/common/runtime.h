// The calls through which dmindex's own code waits and reads the clock: sleeping, yielding the
// core, pausing inside a spin, and the monotonic clock. They are kept in this one place so that
// a simulated runtime (SimGrid's actors) can later take them over without touching the callers;
// code in src/ waits through these (or through common/retry.h, which uses them), never through
// std::this_thread directly.
#pragma once

#include <chrono>

namespace dmindex::runtime {

using Clock = std::chrono::steady_clock;

Clock::time_point Now();
// Gives up the core for at least `d`.
void SleepFor(Clock::duration d);
// Lets another runnable thread have the core now (a descheduled lock holder, on few cores).
void Yield();
// One step of a busy-wait that keeps the core: a CPU pause hint, cheaper than a yield.
void CpuRelax();

}  // namespace dmindex::runtime
