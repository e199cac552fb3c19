// What a workload is: an operation mix, how keys are requested, and scan lengths. The
// built-in YCSB core workloads A-F and the DEX microbenchmarks (DEX, VLDB'24, Tables 1 and 3)
// are named specs; YCSB property files produce the same struct (property_file.h).
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/key_space.h"
#include "dmindex/status.h"

namespace dmindex::bench {

// kDelete: replayed traces only (YCSB's CoreWorkload never deletes; its BasicDB can).
enum class OpKind : uint8_t { kRead, kUpdate, kInsert, kScan, kReadModifyWrite, kDelete };
inline constexpr size_t kOpKinds = 6;
const char* OpKindName(OpKind kind);

// YCSB's requestdistribution values (all of them).
enum class Distribution : uint8_t { kUniform, kZipfian, kLatest, kSequential, kHotspot, kExponential };
Result<Distribution> ParseDistribution(std::string_view name);
const char* DistributionName(Distribution d);

// Whose generators a workload follows.
//   kYcsb: YCSB 0.17.0's CoreWorkload, as its Java code behaves: zipfian ranks over 10^10
//     items hashed (FNV-64) into the records plus the expected inserts, uniform, sequential
//     and hotspot over the loaded records, latest and exponential counted back from the
//     newest acknowledged insert, one insert counter and one sequential counter shared by
//     every client thread.
//   kDex: DEX's benchmark (and Sherman's, which it extends): zipfian ranks over the key space
//     (the loaded records), hashed into it; uniform over every record that exists.
enum class Generators : uint8_t { kYcsb, kDex };

// Which records a zipfian request's rank names (the `zipfianranks` property; docs/BENCHMARKS.md).
//   kYcsb: YCSB's ScrambledZipfianGenerator - ranks over 10^10 items, FNV-hashed into the
//     key range. Most of the mass lies beyond the records' count and lands evenly on them, so
//     the records' popularity is far flatter than the theta says (at theta 0.7 over 500 k
//     records the top 10% get 11.6% of the requests; ranked over the records: 54%).
//   kRecords: ranks over the loaded records, FNV-hashed into them (DEX's benchmark; the
//     IndeXY authors' bench, which maps rank i to the i-th key of a random permutation).
//   kClustered: ranks over the loaded records, rank i = record i (YCSB's unscrambled
//     ZipfianGenerator): with insertorder=ordered the hot records are neighbours in key order.
enum class ZipfianRanks : uint8_t { kYcsb, kRecords, kClustered };
Result<ZipfianRanks> ParseZipfianRanks(std::string_view name);
const char* ZipfianRanksName(ZipfianRanks r);

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
  ZipfianRanks zipfian_ranks = ZipfianRanks::kYcsb;  // ycsb-*: kYcsb, the other named ones: kRecords
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
  // A shifting working set (IndeXY Fig. 7): the requests' records are rotated by 1/shift_phases
  // of the loaded records at the start of each phase of shift_ops operations (all threads
  // together; 0: the run's --ops spread over the phases). 0 or 1: no shift.
  uint32_t shift_phases = 0;
  uint64_t shift_ops = 0;
  // Reads touch `read_unit` consecutive records each time (IndeXY Fig. 7's access unit): one
  // chosen record, then the next ones, as that many lookups. With insertorder=ordered these
  // are neighbouring keys.
  uint32_t read_unit = 1;
  // YCSB's load phase (load-a, RF-tree's "Load A"): the index starts empty and the measured
  // phase inserts the run's records (--keys of them), with no warm-up.
  bool load_phase = false;
  InsertOrder insert_order = InsertOrder::kHashed;
  uint32_t zero_padding = 1;                // YCSB's zeropadding of key names
  Generators generators = Generators::kYcsb;
  // YCSB's insertstart / insertcount: the records this client requests (its share of a load
  // split over several clients); every record is loaded here. insert_count 0: up to the end.
  uint64_t insert_start = 0;
  uint64_t insert_count = 0;
  // recordcount / operationcount / threadcount of a property file; 0 = not given (driver
  // flags decide; a property file's threadcount is YCSB's default, 1, unless it says).
  uint64_t record_count = 0;
  uint64_t operation_count = 0;
  uint32_t thread_count = 0;
  std::string table = "usertable";          // the table named in trace lines
  // YCSB's record shape (fieldcount x fieldlength, minfieldlength, fieldlengthdistribution,
  // fieldnameprefix): the values of a bytes-format run (record_shape.h); 0 / unset: not given
  // (driver flags decide).
  uint32_t field_count = 0;
  uint32_t field_length = 0;
  std::optional<uint32_t> min_field_length;
  std::optional<std::string> field_length_distribution;
  std::optional<std::string> field_name_prefix;
  // From a YCSB property file or trace: the run takes YCSB's records by default (bytes format,
  // YCSB's key names, YCSB records of fieldcount fields serialized as the YCSB binding does).
  bool ycsb_records = false;
  // Properties of the file that dmindex cannot honour, for the driver to print.
  std::vector<std::string> warnings;

  double& weight(OpKind k) { return proportion[static_cast<size_t>(k)]; }
  double weight(OpKind k) const { return proportion[static_cast<size_t>(k)]; }
  // The normalised share of `k` in the mix.
  double Share(OpKind k) const;
  // Whether any operation reads an existing record (everything but insert does).
  bool NeedsExistingRecords() const;
  Status Validate() const;
};

// ycsb-a ... ycsb-f, dex-ro, dex-ri, dex-ri2, dex-wi, dex-ii, dex-si, insert-only, load-a,
// shift-c.
std::vector<std::string> WorkloadNames();
Result<WorkloadSpec> NamedWorkload(std::string_view name);

}  // namespace dmindex::bench
