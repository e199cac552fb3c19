#include "check/checker.h"

#include <map>

namespace dmindex::check {

void CheckReport::Append(CheckReport other) {
  for (Violation& v : other.violations) violations.push_back(std::move(v));
  keys_checked += other.keys_checked;
  point_ops_checked += other.point_ops_checked;
  scans_checked += other.scans_checked;
  search_steps += other.search_steps;
}

std::string CheckReport::ToString(size_t max_details) const {
  std::string s = std::to_string(violations.size()) + " violation(s) in " +
                  std::to_string(point_ops_checked) + " point operations on " +
                  std::to_string(keys_checked) + " keys and " + std::to_string(scans_checked) +
                  " scans";
  if (violations.empty()) return s;
  std::map<std::string, size_t> by_kind;
  for (const Violation& v : violations) ++by_kind[v.kind];
  s += " (";
  bool first = true;
  for (const auto& [kind, n] : by_kind) {
    s += (first ? "" : ", ") + std::to_string(n) + " " + kind;
    first = false;
  }
  s += ")\n";
  for (size_t i = 0; i < violations.size() && i < max_details; ++i)
    s += "--- " + violations[i].kind + ", key " + KeyStr(violations[i].key) + ":\n" +
         violations[i].detail + "\n";
  return s;
}

CheckReport CheckHistory(const History& history) {
  CheckReport report = CheckLinearizability(history);
  report.Append(CheckScans(history));
  return report;
}

}  // namespace dmindex::check
