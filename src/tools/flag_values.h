// Command-line options whose values are checked while the command line is parsed: every
// number, size and duration goes through common/parse_values.h with the limits of what it
// configures, lists refuse empty items, output files are probed for writability. A bad value
// is a CLI11 ValidationError naming the flag, which main turns into exit status 2 before any
// work starts. Every subcommand declares its options through these.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/parse_values.h"
#include "common/watchdog.h"
#include "dmindex/status.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace dmindex::tools {

// An option whose single value `apply` parses and stores; a non-OK Status refuses it.
CLI::Option* AddParsed(CLI::App& cmd, const std::string& name, const std::string& help,
                       std::function<Status(const std::string&)> apply);

namespace detail {
template <typename T> struct Stored { using type = T; };
template <typename T> struct Stored<std::optional<T>> { using type = T; };
}  // namespace detail

// Whole numbers in [min, max] into an integer or std::optional<integer>.
template <typename Target>
CLI::Option* AddCount(CLI::App& cmd, const std::string& name, Target* target, uint64_t min,
                      uint64_t max, const std::string& help) {
  using T = typename detail::Stored<Target>::type;
  static_assert(std::is_integral_v<T>);
  return AddParsed(cmd, name, help, [=](const std::string& text) -> Status {
    auto v = ParseCount(text, min, max);
    if (!v.ok()) return v.status();
    *target = static_cast<T>(*v);
    return Status::Ok();
  });
}

// Reals in `range` into a double or std::optional<double>.
template <typename Target>
CLI::Option* AddReal(CLI::App& cmd, const std::string& name, Target* target, RealRange range,
                     const std::string& help) {
  return AddParsed(cmd, name, help, [=](const std::string& text) -> Status {
    auto v = ParseReal(text, range);
    if (!v.ok()) return v.status();
    *target = *v;
    return Status::Ok();
  });
}

// Durations (a bare number is in `bare_unit_seconds`; "200ms", "2s", "1h" say their unit),
// stored in that bare unit, in `range` (given in the bare unit).
template <typename Target>
CLI::Option* AddDuration(CLI::App& cmd, const std::string& name, Target* target,
                         double bare_unit_seconds, RealRange range, const std::string& help) {
  RealRange seconds = range;
  seconds.min *= bare_unit_seconds;
  if (seconds.max != RealRange{}.max) seconds.max *= bare_unit_seconds;
  return AddParsed(cmd, name, help, [=](const std::string& text) -> Status {
    auto v = ParseDuration(text, bare_unit_seconds, seconds);
    if (!v.ok()) return v.status();
    using T = typename detail::Stored<Target>::type;
    *target = static_cast<T>(*v / bare_unit_seconds);
    return Status::Ok();
  });
}

// Comma-separated lists, the option repeatable ("--design a,b --design c"); empty items
// (",", "a,,b", a trailing comma) are refused.
CLI::Option* AddList(CLI::App& cmd, const std::string& name, std::vector<std::string>* target,
                     const std::string& help);

// A file the command writes when it is done: refused now if it cannot be written (missing
// directory, a directory, no permission), so a long run never fails at its end.
CLI::Option* AddOutputFile(CLI::App& cmd, const std::string& name, std::string* target,
                           const std::string& help);
// --stall-timeout SECONDS (0: off; default 60): the watchdog of a workload run. When no
// operation completes for that long, `command` prints what each thread is doing and exits
// with kStalledExitCode instead of hanging (StallWatchdog builds the options).
CLI::Option* AddStallTimeout(CLI::App& cmd, double* seconds);
WatchdogOptions StallWatchdog(const std::string& command, double seconds);

// The probe behind AddOutputFile: opens `path` for appending (creating it only to delete it
// again), so nothing existing is changed.
Status ProbeWritable(const std::string& path);

}  // namespace dmindex::tools
