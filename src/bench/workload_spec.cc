#include "bench/workload_spec.h"

#include <numeric>
#include <utility>

#include "bench/zipfian.h"

namespace dmindex::bench {
namespace {

struct Mix {
  double read = 0, update = 0, insert = 0, scan = 0, rmw = 0;
};

WorkloadSpec Make(const char* name, Mix mix, Distribution request, uint32_t min_scan = 1,
                  uint32_t max_scan = 100) {
  WorkloadSpec s;
  s.name = name;
  const bool ycsb = std::string_view(name).starts_with("ycsb-");
  s.generators = ycsb ? Generators::kYcsb : Generators::kDex;
  s.zipfian_ranks = ycsb ? ZipfianRanks::kYcsb : ZipfianRanks::kRecords;
  s.proportion = {mix.read, mix.update, mix.insert, mix.scan, mix.rmw, 0};
  s.request = request;
  s.min_scan_length = min_scan;
  s.max_scan_length = max_scan;
  return s;
}

WorkloadSpec LoadPhase(WorkloadSpec s) {
  s.load_phase = true;
  return s;
}

// IndeXY's Fig. 7: reads at zipfian 0.7 whose hot set moves by a quarter of the records four
// times (the phases split the run's --ops).
WorkloadSpec Shifting(WorkloadSpec s) {
  s.zipfian_theta = 0.7;
  s.shift_phases = 4;
  return s;
}

// The named workloads. YCSB's as its workloads/workload[a-f] files of 0.17.0 define them
// (with YCSB's generators; scans of A-D and F would be 1..1000 but none scans); DEX's from
// its Table 1 (and Table 3: read-intensive-2, insert-only), zipfian theta 0.99 throughout,
// scans of exactly 100 records, DEX's generators. Inserts always take fresh keys, uniformly
// spread (hashed). load-a is YCSB's load phase as RF-tree's evaluation runs it ("Load A"):
// the records inserted into an empty index. shift-c is IndeXY's shifting working set (Fig. 7).
std::vector<WorkloadSpec> BuiltIns() {
  using D = Distribution;
  return {
      Make("ycsb-a", {.read = 0.5, .update = 0.5}, D::kZipfian),
      Make("ycsb-b", {.read = 0.95, .update = 0.05}, D::kZipfian),
      Make("ycsb-c", {.read = 1.0}, D::kZipfian),
      Make("ycsb-d", {.read = 0.95, .insert = 0.05}, D::kLatest),
      Make("ycsb-e", {.insert = 0.05, .scan = 0.95}, D::kZipfian, 1, 100),
      Make("ycsb-f", {.read = 0.5, .rmw = 0.5}, D::kZipfian),
      Make("dex-ro", {.read = 1.0}, D::kZipfian),
      Make("dex-ri", {.read = 0.95, .update = 0.05}, D::kZipfian),
      Make("dex-ri2", {.read = 0.95, .insert = 0.05}, D::kZipfian),
      Make("dex-wi", {.read = 0.5, .update = 0.5}, D::kZipfian),
      Make("dex-ii", {.read = 0.5, .insert = 0.5}, D::kZipfian),
      Make("dex-si", {.insert = 0.05, .scan = 0.95}, D::kZipfian, 100, 100),
      Make("insert-only", {.insert = 1.0}, D::kUniform),
      LoadPhase(Make("load-a", {.insert = 1.0}, D::kUniform)),
      Shifting(Make("shift-c", {.read = 1.0}, D::kZipfian)),
  };
}

}  // namespace

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kRead: return "read";
    case OpKind::kUpdate: return "update";
    case OpKind::kInsert: return "insert";
    case OpKind::kScan: return "scan";
    case OpKind::kReadModifyWrite: return "rmw";
    case OpKind::kDelete: return "delete";
  }
  return "?";
}

Result<Distribution> ParseDistribution(std::string_view name) {
  if (name == "uniform") return Distribution::kUniform;
  if (name == "zipfian") return Distribution::kZipfian;
  if (name == "latest") return Distribution::kLatest;
  if (name == "sequential") return Distribution::kSequential;
  if (name == "hotspot") return Distribution::kHotspot;
  if (name == "exponential") return Distribution::kExponential;
  return Status::InvalidArgument("unknown requestdistribution '" + std::string(name) +
                                 "' (use uniform, zipfian, latest, sequential, hotspot, exponential)");
}

const char* DistributionName(Distribution d) {
  switch (d) {
    case Distribution::kUniform: return "uniform";
    case Distribution::kZipfian: return "zipfian";
    case Distribution::kLatest: return "latest";
    case Distribution::kSequential: return "sequential";
    case Distribution::kHotspot: return "hotspot";
    case Distribution::kExponential: return "exponential";
  }
  return "?";
}

namespace {
constexpr std::pair<std::string_view, ZipfianRanks> kZipfianRanks[] = {
    {"ycsb", ZipfianRanks::kYcsb}, {"records", ZipfianRanks::kRecords}, {"clustered", ZipfianRanks::kClustered}};
}  // namespace

Result<ZipfianRanks> ParseZipfianRanks(std::string_view name) {
  for (const auto& [n, r] : kZipfianRanks)
    if (n == name) return r;
  return Status::InvalidArgument("unknown zipfianranks '" + std::string(name) + "' (use ycsb, records, clustered)");
}

const char* ZipfianRanksName(ZipfianRanks r) {
  for (const auto& [n, v] : kZipfianRanks)
    if (v == r) return n.data();
  return "?";
}

Result<ScanLengthDistribution> ParseScanLengthDistribution(std::string_view name) {
  if (name == "uniform") return ScanLengthDistribution::kUniform;
  if (name == "zipfian") return ScanLengthDistribution::kZipfian;
  if (name == "constant") return ScanLengthDistribution::kConstant;
  return Status::InvalidArgument("unknown scanlengthdistribution '" + std::string(name) +
                                 "' (use uniform, zipfian, constant)");
}

double WorkloadSpec::Share(OpKind k) const {
  const double total = std::accumulate(proportion.begin(), proportion.end(), 0.0);
  return total > 0 ? weight(k) / total : 0.0;
}

bool WorkloadSpec::NeedsExistingRecords() const {
  return weight(OpKind::kRead) + weight(OpKind::kUpdate) + weight(OpKind::kScan) +
             weight(OpKind::kReadModifyWrite) > 0;
}

Status WorkloadSpec::Validate() const {
  const std::string where = "workload '" + name + "': ";
  double total = 0;
  for (size_t i = 0; i < kOpKinds; ++i) {
    if (!(proportion[i] >= 0))
      return Status::InvalidArgument(where + OpKindName(static_cast<OpKind>(i)) +
                                     " proportion must be >= 0");
    total += proportion[i];
  }
  if (!(total > 0)) return Status::InvalidArgument(where + "all operation proportions are zero");
  if (weight(OpKind::kDelete) != 0) return Status::InvalidArgument(where + "workloads do not delete");
  if (Status s = ValidateTheta(zipfian_theta); !s.ok())
    return Status::InvalidArgument(where + s.message());
  if (!(hotspot_data_fraction >= 0 && hotspot_data_fraction <= 1) ||
      !(hotspot_op_fraction >= 0 && hotspot_op_fraction <= 1))
    return Status::InvalidArgument(where + "hotspotdatafraction and hotspotopnfraction must be in [0, 1]");
  if (!(exponential_percentile > 0 && exponential_percentile < 100) || !(exponential_frac > 0))
    return Status::InvalidArgument(where + "exponential.percentile must be in (0, 100) and "
                                   "exponential.frac > 0");
  if (min_scan_length < 1 || max_scan_length < min_scan_length)
    return Status::InvalidArgument(where + "scan lengths need 1 <= minscanlength <= maxscanlength");
  if (shift_phases > 1000) return Status::InvalidArgument(where + "shiftphases must be at most 1000");
  if (read_unit < 1 || read_unit > 1000) return Status::InvalidArgument(where + "readunit must be in [1, 1000]");
  if (record_count > 0 && insert_start + insert_count > record_count)
    return Status::InvalidArgument(where + "insertstart + insertcount must not exceed recordcount "
                                   "(YCSB refuses this combination too)");
  return Status::Ok();
}

std::vector<std::string> WorkloadNames() {
  std::vector<std::string> names;
  for (const WorkloadSpec& s : BuiltIns()) names.push_back(s.name);
  return names;
}

Result<WorkloadSpec> NamedWorkload(std::string_view name) {
  for (WorkloadSpec& s : BuiltIns())
    if (s.name == name) return std::move(s);
  std::string known;
  for (const std::string& n : WorkloadNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown workload '" + std::string(name) + "' (known: " + known +
                                 ")");
}

}  // namespace dmindex::bench
