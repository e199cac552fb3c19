// YCSB workload property files (workloads/workloada etc.), so a user's YCSB file runs
// unchanged. The syntax is java.util.Properties' (YCSB loads them with it): # and ! comments,
// `key=value`, `key: value`, `key value`, a key alone (empty value), escapes (\t, \uXXXX,
// \= ...), backslash continuation. YCSB 0.17.0's core-workload and client properties are
// applied with YCSB's defaults and YCSB's quirks (any insertorder but "hashed" is ordered);
// those dmindex cannot honour (fieldlength, target, ...) and unknown ones become warnings in
// WorkloadSpec::warnings, never silence; properties YCSB does not have (zipfianconstant) and
// bad values are errors naming file and line. A -p override of an unknown key is an error.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/workload_spec.h"
#include "dmindex/status.h"

namespace dmindex::bench {

struct Property {
  std::string key;
  std::string value;
  std::string where;  // "file:line", for error messages
};
using Properties = std::vector<Property>;

// Parses property-file text; `source` names it in errors.
Result<Properties> ParseProperties(std::string_view text, std::string_view source);

// A spec holding YCSB CoreWorkload's defaults (95% read / 5% update, uniform requests,
// scans of 1..1000 uniform, zipfian constant 0.99, hashed insert order).
WorkloadSpec YcsbDefaults(std::string name);

// Applies the core-workload properties to *spec, in order (a later one wins).
Status ApplyProperties(const Properties& properties, WorkloadSpec* spec);
// Applies one `key=value` given on the command line (YCSB's -p).
Status ApplyPropertyOverride(std::string_view key_equals_value, WorkloadSpec* spec);

// Reads a property file into a spec named after the file (basename, e.g. "workloada").
Result<WorkloadSpec> LoadWorkloadFile(const std::string& path);

}  // namespace dmindex::bench
