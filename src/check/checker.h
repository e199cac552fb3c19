// Correctness checkers for recorded index histories (see history.h).
//
// Point operations must be linearizable: each key behaves as a register that is absent or
// holds a value (Lookup reads it, Insert writes it, Update writes it only if present, Delete
// empties it; NotFound answers mean "absent"). Linearizability is compositional
// (Herlihy & Wing, 1990), so every key is checked on its own.
//
// Scans are not snapshots. They must return keys strictly ascending and >= start, miss no key
// that was present throughout the scan within the range they covered, and return for each key
// a value that was current at some instant during the scan.
//
// Both checkers work best when every write writes a value never written before: then each
// value read names the one write it came from. They stay correct (only less sharp) otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "check/history.h"

namespace dmindex::check {

struct Violation {
  std::string kind;    // e.g. "not linearizable", "scan missed a key"
  Key key;             // the key the violation is about
  std::string detail;  // readable excerpt of the history that shows it
};

struct CheckReport {
  std::vector<Violation> violations;
  uint64_t keys_checked = 0;
  uint64_t point_ops_checked = 0;
  uint64_t scans_checked = 0;
  // Steps the linearizability search took over all keys (an event visited: a call tried or a
  // return backtracked from), the measure of its work that does not depend on the machine.
  uint64_t search_steps = 0;

  bool ok() const { return violations.empty(); }
  void Append(CheckReport other);
  // A summary line plus the details of up to `max_details` violations.
  std::string ToString(size_t max_details = 3) const;
};

struct LinearizabilityOptions {
  // Bound on the search per key: a pathological history is reported as inconclusive (a
  // violation of kind "search budget exhausted") instead of running for hours.
  uint64_t max_steps_per_key = 20'000'000;
  size_t excerpt_ops = 24;  // operations shown around the point where the search got stuck
};

CheckReport CheckLinearizability(const History& history, const LinearizabilityOptions& options = {});
CheckReport CheckScans(const History& history);
// Both of the above.
CheckReport CheckHistory(const History& history);

// The index's state after every operation of `history` completed - `final_state` holds the
// keys read present, with their values; every other key was read absent - against the
// history, in plain terms: each key holds the value of its last acknowledged write (last by
// response time; where acknowledged writes overlap at the end, any of them), and is absent if
// that write was a Delete, or holds its initial state if no write was acknowledged. Writes
// whose outcome is unknown may have taken effect too. Violations are of kind "wrong final
// state". Implied by CheckLinearizability of the history with the reads appended; this one
// says directly which write was lost.
CheckReport CheckFinalState(const History& history, const std::map<Key, Value>& final_state);

}  // namespace dmindex::check
