#include "sim/compute_model.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include "common/parse_values.h"

namespace dmindex::sim {

namespace {
constexpr const char* kNames[kCallKinds] = {"clock", "sleep", "spin",   "lock", "unlock", "wait",
                                            "notify", "thread", "verb", "rpc", "handler"};
}  // namespace

const char* CallName(CallKind c) { return kNames[static_cast<size_t>(c)]; }

ComputeOptions DefaultModelledCompute() {
  ComputeOptions o;
  o.mode = ComputeMode::kModelled;
  // Cycles per segment by the call that ends it: means of measured runs (docs/SIMULATION.md,
  // "Calibration"; `dmindex bench --fabric sim --compute measured` prints the profile).
  o.cycles = {
      /*clock*/ 2700, /*sleep*/ 700, /*spin*/ 700, /*lock*/ 2000, /*unlock*/ 1500, /*wait*/ 1500,
      /*notify*/ 1500, /*thread*/ 5000, /*verb*/ 5000, /*rpc*/ 800, /*handler*/ 4000,
  };
  return o;
}

Result<ComputeOptions> ParseComputeOptions(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view mode = text.substr(0, colon);
  if (mode == "measured") {
    if (colon != std::string_view::npos)
      return Status::InvalidArgument("--compute measured takes no costs ('" + std::string(text) + "')");
    return ComputeOptions{};
  }
  if (mode != "modelled")
    return Status::InvalidArgument("--compute '" + std::string(text) + "': expected measured or modelled[:kind=cycles...]");
  ComputeOptions o = DefaultModelledCompute();
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  while (!rest.empty()) {
    const size_t next = rest.find(':');
    const std::string_view item = rest.substr(0, next);
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
    const size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    size_t kind = kCallKinds;
    for (size_t k = 0; k < kCallKinds; ++k)
      if (name == kNames[k]) kind = k;
    if (eq == std::string_view::npos || kind == kCallKinds) {
      std::string known;
      for (const char* n : kNames) known.append(known.empty() ? "" : ", ").append(n);
      return Status::InvalidArgument("--compute: '" + std::string(item) + "' is not kind=cycles (kinds: " + known + ")");
    }
    auto cycles = ParseReal(item.substr(eq + 1), RealRange{0, 1e9});
    if (!cycles.ok()) return Status::InvalidArgument("--compute " + std::string(name) + ": " + cycles.status().message());
    o.cycles[kind] = *cycles;
    o.overridden[kind] = true;
  }
  return o;
}

namespace {

// "clock=2381 verb=7685" into `table`; InvalidArgument naming the item.
Status ParseCycles(std::string_view items, CycleTable* table, const std::string& where) {
  while (!items.empty()) {
    const size_t space = items.find(' ');
    const std::string_view item = items.substr(0, space);
    items = space == std::string_view::npos ? std::string_view() : items.substr(space + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    size_t kind = kCallKinds;
    for (size_t k = 0; k < kCallKinds; ++k)
      if (item.substr(0, eq) == kNames[k]) kind = k;
    if (eq == std::string_view::npos || kind == kCallKinds)
      return Status::InvalidArgument(where + ": '" + std::string(item) + "' is not kind=cycles");
    auto cycles = ParseReal(item.substr(eq + 1), RealRange{0, 1e9});
    if (!cycles.ok()) return Status::InvalidArgument(where + ": " + cycles.status().message());
    (*table)[kind] = *cycles;
  }
  return Status::Ok();
}

}  // namespace

ComputeProfile& ComputeProfile::operator+=(const ComputeProfile& o) {
  for (size_t k = 0; k < kCallKinds; ++k) {
    segments[k] += o.segments[k];
    cycles[k] += o.cycles[k];
  }
  return *this;
}

Result<Calibration> Calibration::Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read compute calibration " + path);
  Calibration c;
  std::string line;
  std::vector<std::pair<std::string, std::string>> designs;  // applied over the default line
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string where = path + ":" + std::to_string(n);
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("default ", 0) == 0) {
      DMX_RETURN_IF_ERROR(ParseCycles(std::string_view(line).substr(8), &c.fallback, where));
    } else if (line.rfind("design ", 0) == 0) {
      const size_t name_end = line.find(' ', 7);
      if (name_end == std::string::npos || name_end == 7)
        return Status::InvalidArgument(where + ": expected 'design NAME kind=cycles...'");
      designs.emplace_back(line.substr(7, name_end - 7), line.substr(name_end + 1));
    } else {
      return Status::InvalidArgument(where + ": expected a 'design' or 'default' line");
    }
  }
  for (const auto& [name, items] : designs) {
    CycleTable t = c.fallback;
    DMX_RETURN_IF_ERROR(ParseCycles(items, &t, path + ": design " + name));
    c.designs[name] = t;
  }
  return c;
}

void Calibration::Learn(const std::string& design, const ComputeProfile& profile, uint64_t min_segments) {
  CycleTable t = fallback;
  for (size_t k = 0; k < kCallKinds; ++k)
    // A mean below zero is the residual of subtracting the simulation's own cost per segment
    // (an empty segment measures about -150 cycles): such segments cost nothing measurable.
    if (profile.segments[k] >= min_segments)
      t[k] = std::max(0.0, profile.cycles[k] / static_cast<double>(profile.segments[k]));
  designs[design] = t;
}

std::string Calibration::Format() const {
  auto line = [](const std::string& head, const CycleTable& t) {
    std::string s = head;
    // Appended piece by piece: "lit" + std::string trips GCC 12's -Wrestrict.
    for (size_t k = 0; k < kCallKinds; ++k) s.append(" ").append(kNames[k]).append("=").append(std::to_string(std::lround(t[k])));
    return s.append("\n");
  };
  std::string out = line("default", fallback);
  for (const auto& [name, t] : designs) out.append(line(std::string("design ").append(name), t));
  return out;
}

const CycleTable& Calibration::For(const std::string& label, const std::string& workload) const {
  const std::string name = label.substr(0, label.find(':'));
  if (!workload.empty())
    for (const std::string& key : {label + "@" + workload, name + "@" + workload})
      if (auto it = designs.find(key); it != designs.end()) return it->second;
  for (const std::string& key : {label, name})
    if (auto it = designs.find(key); it != designs.end()) return it->second;
  return fallback;
}

std::string ComputeProfile::ToString(uint64_t ops) const {
  std::string s;
  for (size_t k = 0; k < kCallKinds; ++k) {
    if (segments[k] == 0) continue;
    char per_op[32] = "";
    if (ops > 0) std::snprintf(per_op, sizeof per_op, " (%.2f per op)", static_cast<double>(segments[k]) / ops);
    char line[160];
    std::snprintf(line, sizeof line, "%-8s %12llu segments%s, mean %8.0f cycles\n", kNames[k],
                  static_cast<unsigned long long>(segments[k]), per_op, cycles[k] / static_cast<double>(segments[k]));
    s += line;
  }
  return s;
}

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t MeasureClockNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

double LocalCpuGhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    auto mhz = ParseReal(line.substr(colon + 1 + (line.size() > colon + 1 && line[colon + 1] == ' ')), RealRange{1, 1e5});
    if (mhz.ok()) return *mhz / 1000;
    break;
  }
  return 2.6;
}

}  // namespace dmindex::sim
