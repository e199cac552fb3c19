// What the code between two simulation calls costs in simulated time.
//
// A simulated thread (an actor) runs real code; only its calls into the simulation (the
// runtime seam, the simulated fabric) let simulated time pass. The computation between two
// such calls - a segment - is charged to the host the thread runs on, as work for the host's
// cores (a host busier than its cores slows every thread on it down), in one of two modes:
//
//  measured  the segment's time on the core: the monotonic clock when the segment ends minus
//            when it began, times the share of the last few milliseconds the simulation's
//            thread had a core (its CPU clock over the wall clock); converted to cycles at this
//            machine's clock rate (cpu_ghz), run at the host's speed (its cycles per second).
//  modelled  a fixed number of cycles per segment, by the kind of call that ends it (a verb,
//            a lock, a clock read...), calibrated from measured runs (docs/SIMULATION.md). No
//            clock is read: a run is a pure function of its inputs and seed.
//
// Time the simulation spends inside its own calls (SimGrid's scheduling, the fabric copying
// a verb's bytes as a NIC's DMA engine would) is never charged.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "dmindex/status.h"

namespace dmindex::sim {

// The kinds of simulation calls that end a segment.
enum class CallKind : uint8_t {
  kClock,    // runtime::Now / WallNow
  kSleep,    // SleepFor / SleepUntil
  kSpin,     // Yield / CpuRelax
  kLock,     // mutex, shared-mutex lock / try_lock
  kUnlock,   // unlocks
  kWait,     // condition waits
  kNotify,   // notifies
  kThread,   // thread start, join, end
  kVerb,     // a batch of verbs posted to the simulated fabric
  kRpc,      // an RPC sent to a memory server
  kHandler,  // the end of an RPC handler on a memory server
};
inline constexpr size_t kCallKinds = 11;
const char* CallName(CallKind c);

enum class ComputeMode : uint8_t { kMeasured, kModelled };

// Cycles per segment, by the call that ends it.
using CycleTable = std::array<double, kCallKinds>;

struct ComputeOptions {
  ComputeMode mode = ComputeMode::kMeasured;
  // Clock rate of this machine's cores, for converting measured CPU time into cycles.
  double cpu_ghz = 2.6;
  // Modelled cycles per segment: the calibration's table of the design that runs (see
  // Calibration), with the kinds set on the command line (`overridden`) replaced.
  CycleTable cycles{};
  std::array<bool, kCallKinds> overridden{};
  // Segments shorter than this are carried into the next one instead of being charged on
  // their own (each charge is a simulation event).
  double min_charge_cycles = 200;
  // What a spin step itself costs, in both modes (it is how a spin lets time pass): one x86
  // PAUSE (runtime::CpuRelax; about 140 cycles on Skylake and later Xeons) and one yield of
  // the core (runtime::Yield: a sched_yield system call that finds nothing else to run).
  double pause_cycles = 140;
  double yield_cycles = 1000;
};

// The calibrated defaults of modelled mode (docs/SIMULATION.md, "Calibration").
ComputeOptions DefaultModelledCompute();

// "measured", "modelled", or "modelled:verb=900:clock=400" (cycles for the named kinds,
// the rest from the defaults). InvalidArgument naming the bad part.
Result<ComputeOptions> ParseComputeOptions(std::string_view text);

// Per call kind: how many segments ended in it and the cycles they were charged. A measured
// run's profile is what modelled mode is calibrated from.
struct ComputeProfile {
  std::array<uint64_t, kCallKinds> segments{};
  std::array<double, kCallKinds> cycles{};
  void Add(CallKind c, double cyc) {
    ++segments[static_cast<size_t>(c)];
    cycles[static_cast<size_t>(c)] += cyc;
  }
  ComputeProfile& operator+=(const ComputeProfile& o);
  // One line per kind: "verb 12345 segments, mean 812 cycles"; with `ops`, each kind's
  // segments per operation too.
  std::string ToString(uint64_t ops = 0) const;
};

// Modelled mode's costs, by design: the mean cycles per segment of each kind that measured
// runs of the design gave (their measured phases: not the bulk load, warm-up or check). A
// text file, one line per design label (knobs included), per label and workload, and one for
// the rest:
//   design sherman clock=2381 verb=7685 spin=1148 ...
//   design sherman@dex-ro clock=2290 verb=7012 ...
//   default clock=2700 verb=5000 ...
// Per workload, since what a segment ending in a verb does depends on the operation: a scan's
// verb segments decode whole leaves, a lookup's walk cached nodes. Kinds a line omits cost
// what the default line says (or the built-in defaults).
// `dmindex bench --fabric sim --compute measured --calibrate-out FILE` writes one.
struct Calibration {
  std::map<std::string, CycleTable> designs;
  CycleTable fallback = DefaultModelledCompute().cycles;

  static Result<Calibration> Read(const std::string& path);
  // A kind with fewer than `min_segments` segments in a design's profile keeps the default:
  // such rare segments are set-up work (bulk load, thread starts), not the operations'.
  void Learn(const std::string& design, const ComputeProfile& profile, uint64_t min_segments = 1000);
  std::string Format() const;
  // The table of design `label` ("dex:offload=off") on `workload`, else of its name ("dex")
  // on it, else of the label, of the name, else the default.
  const CycleTable& For(const std::string& label, const std::string& workload = "") const;
};

// This thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
int64_t ThreadCpuNs();
// The monotonic clock in nanoseconds (CLOCK_MONOTONIC): measured mode's segment clock. Like
// ThreadCpuNs it times the simulator's own work, never simulated time, so it is read here
// rather than through common/runtime.h (whose clock, inside a simulation, is the simulation's).
int64_t MeasureClockNs();

// This machine's core clock rate in GHz, as /proc/cpuinfo states it (the first core's "cpu
// MHz"); 2.6 if it cannot be read. Measured CPU time times this is the cycles charged.
double LocalCpuGhz();

}  // namespace dmindex::sim
