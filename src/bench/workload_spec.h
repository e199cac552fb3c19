// What a workload is: an operation mix, how keys are requested, and scan lengths. The
// built-in YCSB core workloads A-F and the DEX microbenchmarks (DEX, VLDB'24, Tables 1 and 3)
// are named specs; YCSB property files produce the same struct (property_file.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/key_space.h"
#include "dmindex/status.h"

namespace dmindex::bench {

enum class OpKind : uint8_t { kRead, kUpdate, kInsert, kScan, kReadModifyWrite };
inline constexpr size_t kOpKinds = 5;
const char* OpKindName(OpKind kind);

// YCSB's requestdistribution values (all of them).
enum class Distribution : uint8_t { kUniform, kZipfian, kLatest, kSequential, kHotspot, kExponential };
Result<Distribution> ParseDistribution(std::string_view name);
const char* DistributionName(Distribution d);

// YCSB's scanlengthdistribution (plus "constant", which some YCSB ports use: always max).
enum class ScanLengthDistribution : uint8_t { kUniform, kZipfian, kConstant };
Result<ScanLengthDistribution> ParseScanLengthDistribution(std::string_view name);

struct WorkloadSpec {
  std::string name;
  // Relative weights of the operation kinds, indexed by OpKind; like YCSB they need not sum
  // to one (they are normalised), but must be non-negative and not all zero.
  std::array<double, kOpKinds> proportion{};
  Distribution request = Distribution::kZipfian;
  double zipfian_theta = 0.99;
  uint32_t min_scan_length = 1;
  uint32_t max_scan_length = 100;
  ScanLengthDistribution scan_length = ScanLengthDistribution::kUniform;
  // hotspot: hotspotopnfraction of the requests go uniformly to the first
  // hotspotdatafraction of the loaded records, the rest uniformly to the others (YCSB).
  double hotspot_data_fraction = 0.2;
  double hotspot_op_fraction = 0.8;
  // exponential: record = newest - X, X exponential such that exponential.percentile % of
  // the draws fall within the newest exponential.frac x loaded records (YCSB).
  double exponential_percentile = 95;
  double exponential_frac = 0.8571428571;
  InsertOrder insert_order = InsertOrder::kHashed;
  // recordcount / operationcount of a property file; 0 = not given (driver flags decide).
  uint64_t record_count = 0;
  uint64_t operation_count = 0;

  double& weight(OpKind k) { return proportion[static_cast<size_t>(k)]; }
  double weight(OpKind k) const { return proportion[static_cast<size_t>(k)]; }
  // The normalised share of `k` in the mix.
  double Share(OpKind k) const;
  // Whether any operation reads an existing record (everything but insert does).
  bool NeedsExistingRecords() const;
  Status Validate() const;
};

// ycsb-a ... ycsb-f, dex-ro, dex-ri, dex-ri2, dex-wi, dex-ii, dex-si, insert-only.
std::vector<std::string> WorkloadNames();
Result<WorkloadSpec> NamedWorkload(std::string_view name);

}  // namespace dmindex::bench
