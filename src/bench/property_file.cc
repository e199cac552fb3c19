#include "bench/property_file.h"

#include "bench/record_shape.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/key_text.h"
#include "common/parse_values.h"

namespace dmindex::bench {
namespace {

std::string Trim(std::string_view s) {
  const char* ws = " \t\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(ws) - b + 1));
}

Status BadValue(const Property& p, const Status& why) {
  // The reason may quote the value too (the parsers' messages do): escape it all.
  return Status::InvalidArgument(EscapedText(p.where + ": " + p.key + "=" + p.value + ": " + why.message()));
}

// Java's Double.parseDouble trims blanks; the limits are ours (YCSB would take a negative
// proportion and misbehave).
Status Real(const Property& p, double* out, RealRange range = {0, 1e300}) {
  auto v = ParseReal(Trim(p.value), range);
  if (!v.ok()) return BadValue(p, v.status());
  *out = *v;
  return Status::Ok();
}

template <typename T>
Status Count(const Property& p, T* out, uint64_t max) {
  auto v = ParseCount(Trim(p.value), 0, max);
  if (!v.ok()) return BadValue(p, v.status());
  *out = static_cast<T>(*v);
  return Status::Ok();
}

template <typename T>
Status Enum(const Property& p, Result<T> (*parse)(std::string_view), T* out) {
  Result<T> r = parse(Trim(p.value));
  if (!r.ok()) return Status::InvalidArgument(p.where + ": " + r.status().message());
  *out = *r;
  return Status::Ok();
}

// YCSB 0.17.0's properties that dmindex does not apply, by why: the driver prints them.
const std::map<std::string, const char*>& NotHonoured() {
  static const std::map<std::string, const char*> kWhy = [] {
    std::map<std::string, const char*> m;
    for (const char* k : {"readallfields", "writeallfields", "dataintegrity"})
      m[k] = "the bench reads and writes whole records (all fieldcount fields, serialized as the YCSB "
             "binding stores them) and checks every record it reads against its key";
    m["fieldlengthhistogram"] = "field lengths are constant, uniform or zipfian (fieldlengthdistribution)";
    for (const char* k : {"target", "maxexecutiontime"})
      m[k] = "dmindex runs unthrottled, for --ops or --duration";
    for (const char* k : {"core_workload_insertion_retry_limit", "core_workload_insertion_retry_interval"})
      m[k] = "a failed insert fails the run";
    m["dotransactions"] = "dmindex always bulk loads, then runs the transactions";
    for (const char* k : {"db", "exporter", "exportfile", "measurementtype", "measurement.interval",
                          "measurement.trackjvm", "measurement.histogram.verbose", "histogram.buckets",
                          "hdrhistogram.percentiles", "hdrhistogram.fileoutput", "hdrhistogram.output.path",
                          "measurement.raw.output_file", "measurement.raw.no_summary",
                          "timeseries.granularity", "status", "status.interval", "label",
                          "reportlatencyforeacherror", "latencytrackederrors", "basicdb.verbose",
                          "basicdb.simulatedelay", "basicdb.randomizedelay", "basicdb.count"})
      m[k] = "YCSB client and binding settings; dmindex measures and reports its own way";
    return m;
  }();
  return kWhy;
}

Result<InsertOrder> ParseYcsbInsertOrder(std::string_view v) {
  // YCSB compares with "hashed" exactly and takes anything else as ordered.
  if (v == "hashed") return InsertOrder::kHashed;
  return InsertOrder::kOrdered;
}

// Applies one property; `unknown_is_error`: a -p override (a typo there must not pass).
Status Apply(const Property& p, bool unknown_is_error, WorkloadSpec* s) {
  const std::string& k = p.key;
  if (k == "readproportion") return Real(p, &s->weight(OpKind::kRead));
  if (k == "updateproportion") return Real(p, &s->weight(OpKind::kUpdate));
  if (k == "insertproportion") return Real(p, &s->weight(OpKind::kInsert));
  if (k == "scanproportion") return Real(p, &s->weight(OpKind::kScan));
  if (k == "readmodifywriteproportion") return Real(p, &s->weight(OpKind::kReadModifyWrite));
  if (k == "recordcount") return Count(p, &s->record_count, kMaxRecords / 4);
  if (k == "operationcount") return Count(p, &s->operation_count, kMaxRecords / 4);
  if (k == "threadcount") return Count(p, &s->thread_count, 1024);
  if (k == "insertstart") return Count(p, &s->insert_start, kMaxRecords / 4);
  if (k == "insertcount") return Count(p, &s->insert_count, kMaxRecords / 4);
  // Any padding a key can hold: "user" and the digits make at most kMaxKeyBytes.
  if (k == "zeropadding") return Count(p, &s->zero_padding, kMaxKeyBytes - 4);
  if (k == "fieldcount") return Count(p, &s->field_count, 1024);
  if (k == "fieldlength") return Count(p, &s->field_length, 1u << 20);
  if (k == "minfieldlength") return Count(p, &s->min_field_length.emplace(), 1u << 20);
  if (k == "fieldnameprefix") {
    s->field_name_prefix = p.value;  // YCSB takes the value as it is, blanks and all
    return Status::Ok();
  }
  if (k == "fieldlengthdistribution") {
    const std::string v = Trim(p.value);
    if (!ParseFieldLengths(v).ok())
      return Status::InvalidArgument(p.where + ": fieldlengthdistribution=" + v +
                                     ": dmindex takes constant, uniform or zipfian (not histogram)");
    s->field_length_distribution = v;
    return Status::Ok();
  }
  if (k == "requestdistribution") return Enum(p, &ParseDistribution, &s->request);
  if (k == "hotspotdatafraction") return Real(p, &s->hotspot_data_fraction, {0, 1});
  if (k == "hotspotopnfraction") return Real(p, &s->hotspot_op_fraction, {0, 1});
  if (k == "exponential.percentile") return Real(p, &s->exponential_percentile, {0, 100, true, true});
  if (k == "exponential.frac") return Real(p, &s->exponential_frac, {0, 1e300, true});
  // dmindex's own (IndeXY Fig. 7): a shifting working set and reads of consecutive records.
  if (k == "shiftphases") return Count(p, &s->shift_phases, 1000);
  if (k == "shiftops") return Count(p, &s->shift_ops, UINT64_MAX);
  if (k == "readunit") return Count(p, &s->read_unit, 1000);
  // dmindex's own: which records the zipfian ranks name (workload_spec.h, ZipfianRanks).
  if (k == "zipfianranks") return Enum(p, &ParseZipfianRanks, &s->zipfian_ranks);
  if (k == "minscanlength") return Count(p, &s->min_scan_length, UINT32_MAX);
  if (k == "maxscanlength") return Count(p, &s->max_scan_length, UINT32_MAX);
  if (k == "scanlengthdistribution") {
    DMX_RETURN_IF_ERROR(Enum(p, &ParseScanLengthDistribution, &s->scan_length));
    if (s->scan_length == ScanLengthDistribution::kConstant)
      s->warnings.push_back(p.where + ": scanlengthdistribution=constant is dmindex's (YCSB 0.17.0 "
                            "refuses it): every scan reads maxscanlength records");
    return Status::Ok();
  }
  if (k == "insertorder") {
    DMX_RETURN_IF_ERROR(Enum(p, &ParseYcsbInsertOrder, &s->insert_order));
    const std::string v = Trim(p.value);
    std::string lower(v.size(), ' ');
    std::transform(v.begin(), v.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v != "hashed" && lower != "ordered")
      s->warnings.push_back(p.where + ": insertorder=" + v + " is ordered (YCSB takes every value "
                            "but 'hashed' as ordered)");
    return Status::Ok();
  }
  if (k == "table") {
    if (Trim(p.value).empty() || Trim(p.value).find_first_of(" \t") != std::string::npos)
      return Status::InvalidArgument(p.where + ": table must be one word");
    s->table = Trim(p.value);
    return Status::Ok();
  }
  if (k == "workload") {
    if (Trim(p.value) == "site.ycsb.workloads.CoreWorkload") return Status::Ok();
    return Status::NotSupported(p.where + ": workload=" + p.value + ": dmindex runs YCSB's "
                                "CoreWorkload (site.ycsb.workloads.CoreWorkload) only");
  }
  if (k == "zipfianconstant")
    return Status::InvalidArgument(p.where + ": zipfianconstant is not a YCSB 0.17.0 property (its "
                                   "zipfian generators always use 0.99); give dmindex's --theta instead");
  if (auto it = NotHonoured().find(k); it != NotHonoured().end()) {
    s->warnings.push_back(p.where + ": " + k + " is not honoured: " + it->second);
    return Status::Ok();
  }
  if (unknown_is_error)
    return Status::InvalidArgument(p.where + ": unknown property '" + EscapedText(k) +
                                   "' (not one of YCSB 0.17.0's core workload or client properties)");
  s->warnings.push_back(p.where + ": unknown property '" + EscapedText(k) + "' ignored (not YCSB 0.17.0's)");
  return Status::Ok();
}

// java.util.Properties escapes: \t \n \r \f, \uXXXX, and \x for any other x (so "\=", "\:",
// "\ " and "\\" are the character itself). False on a malformed \u.
bool Unescape(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\' || i + 1 == in.size()) {
      out->push_back(in[i]);
      continue;
    }
    const char c = in[++i];
    if (c == 't') out->push_back('\t');
    else if (c == 'n') out->push_back('\n');
    else if (c == 'r') out->push_back('\r');
    else if (c == 'f') out->push_back('\f');
    else if (c == 'u') {
      if (i + 4 >= in.size()) return false;  // four hex digits must follow
      uint32_t code = 0;
      for (int d = 1; d <= 4; ++d) {
        const char h = in[i + d];
        if (!std::isxdigit(static_cast<unsigned char>(h))) return false;
        const int digit = std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10;
        code = code * 16 + static_cast<uint32_t>(digit);
      }
      i += 4;
      // UTF-8 (property names and values of YCSB are ASCII; this keeps others readable).
      if (code < 0x80) out->push_back(static_cast<char>(code));
      else if (code < 0x800) {
        out->push_back(static_cast<char>(0xC0 | (code >> 6)));
        out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
      } else {
        out->push_back(static_cast<char>(0xE0 | (code >> 12)));
        out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
      }
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// Splits one logical line as java.util.Properties does: the key ends at the first unescaped
// '=', ':' or blank; blanks, then at most one '=' or ':', then blanks follow; the rest is the
// value. A line with a key only has an empty value.
bool SplitProperty(std::string_view line, Property* p) {
  size_t i = 0;
  while (i < line.size() && IsBlank(line[i])) ++i;
  const size_t key_start = i;
  while (i < line.size()) {
    if (line[i] == '\\') {
      i += 2;
      continue;
    }
    if (line[i] == '=' || line[i] == ':' || IsBlank(line[i])) break;
    ++i;
  }
  const std::string_view raw_key = line.substr(key_start, std::min(i, line.size()) - key_start);
  while (i < line.size() && IsBlank(line[i])) ++i;
  if (i < line.size() && (line[i] == '=' || line[i] == ':')) ++i;
  while (i < line.size() && IsBlank(line[i])) ++i;
  const std::string_view raw_value = i < line.size() ? line.substr(i) : std::string_view();
  return !raw_key.empty() && Unescape(raw_key, &p->key) && Unescape(raw_value, &p->value);
}

// A line continues if it ends in an odd number of backslashes.
bool Continues(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[line.size() - 1 - n] == '\\') ++n;
  return n % 2 == 1;
}

}  // namespace

Result<Properties> ParseProperties(std::string_view text, std::string_view source) {
  Properties out;
  std::istringstream in{std::string(text)};
  std::string raw;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    const int first_line = line_no;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const size_t start = raw.find_first_not_of(" \t\f");
    if (start == std::string::npos || raw[start] == '#' || raw[start] == '!') continue;
    std::string line = raw.substr(start);
    while (Continues(line) && std::getline(in, raw)) {
      ++line_no;
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      line.pop_back();
      const size_t next = raw.find_first_not_of(" \t\f");
      if (next != std::string::npos) line += raw.substr(next);
    }
    if (Continues(line)) line.pop_back();  // a continuation at the end of the file
    Property p;
    p.where = std::string(source) + ":" + std::to_string(first_line);
    if (!SplitProperty(line, &p))
      return Status::InvalidArgument(p.where + ": malformed line '" + EscapedText(line) +
                                     "' (a bad \\u escape; expected key=value, key: value, "
                                     "key value or a # comment)");
    out.push_back(std::move(p));
  }
  return out;
}

WorkloadSpec YcsbDefaults(std::string name) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.proportion = {0.95, 0.05, 0, 0, 0, 0};
  s.request = Distribution::kUniform;
  s.zipfian_theta = 0.99;
  s.min_scan_length = 1;
  s.max_scan_length = 1000;
  s.scan_length = ScanLengthDistribution::kUniform;
  s.insert_order = InsertOrder::kHashed;
  s.generators = Generators::kYcsb;
  s.thread_count = 1;  // YCSB's Client runs one thread unless told
  return s;
}

Status ApplyProperties(const Properties& properties, WorkloadSpec* spec) {
  for (const Property& p : properties) DMX_RETURN_IF_ERROR(Apply(p, false, spec));
  return Status::Ok();
}

Status ApplyPropertyOverride(std::string_view key_equals_value, WorkloadSpec* spec) {
  Property p;
  p.where = "-p " + std::string(key_equals_value);
  const size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos || Trim(key_equals_value.substr(0, eq)).empty())
    return Status::InvalidArgument(p.where + ": expected key=value");
  p.key = Trim(key_equals_value.substr(0, eq));
  p.value = std::string(key_equals_value.substr(eq + 1));
  return Apply(p, true, spec);
}

Result<WorkloadSpec> LoadWorkloadFile(const std::string& path) {
  // A directory opens as a stream that reads nothing: it would run YCSB's defaults.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::InvalidArgument("workload file '" + path + "' is a directory");
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot open workload file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("cannot read workload file '" + path + "'");
  Result<Properties> props = ParseProperties(text.str(), path);
  if (!props.ok()) return props.status();
  WorkloadSpec spec = YcsbDefaults(std::filesystem::path(path).filename().string());
  DMX_RETURN_IF_ERROR(ApplyProperties(*props, &spec));
  DMX_RETURN_IF_ERROR(spec.Validate());
  return spec;
}

}  // namespace dmindex::bench
