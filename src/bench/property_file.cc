#include "bench/property_file.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dmindex::bench {
namespace {

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

Status BadValue(const Property& p, const std::string& expected) {
  return Status::InvalidArgument(p.where + ": " + p.key + "='" + p.value + "': expected " +
                                 expected);
}

Status ParseDouble(const Property& p, double* out) {
  const std::string& v = p.value;
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || errno != 0) return BadValue(p, "a number");
  *out = d;
  return Status::Ok();
}

template <typename T>
Status ParseUnsigned(const Property& p, T* out) {
  const std::string& v = p.value;
  T n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size())
    return BadValue(p, "a non-negative integer");
  *out = n;
  return Status::Ok();
}

template <typename T>
Status ParseEnum(const Property& p, Result<T> (*parse)(std::string_view), T* out) {
  Result<T> r = parse(p.value);
  if (!r.ok()) {
    // Keep "not supported" distinct from "invalid": the first is our gap, not the user's typo.
    const std::string message = p.where + ": " + r.status().message();
    return r.status().code() == Status::Code::kNotSupported ? Status::NotSupported(message)
                                                            : Status::InvalidArgument(message);
  }
  *out = *r;
  return Status::Ok();
}

Status Apply(const Property& p, WorkloadSpec* s) {
  const std::string& k = p.key;
  if (k == "readproportion") return ParseDouble(p, &s->weight(OpKind::kRead));
  if (k == "updateproportion") return ParseDouble(p, &s->weight(OpKind::kUpdate));
  if (k == "insertproportion") return ParseDouble(p, &s->weight(OpKind::kInsert));
  if (k == "scanproportion") return ParseDouble(p, &s->weight(OpKind::kScan));
  if (k == "readmodifywriteproportion") return ParseDouble(p, &s->weight(OpKind::kReadModifyWrite));
  if (k == "recordcount") return ParseUnsigned(p, &s->record_count);
  if (k == "operationcount") return ParseUnsigned(p, &s->operation_count);
  if (k == "requestdistribution") return ParseEnum(p, &ParseDistribution, &s->request);
  if (k == "zipfianconstant") return ParseDouble(p, &s->zipfian_theta);
  if (k == "hotspotdatafraction") return ParseDouble(p, &s->hotspot_data_fraction);
  if (k == "hotspotopnfraction") return ParseDouble(p, &s->hotspot_op_fraction);
  if (k == "exponential.percentile") return ParseDouble(p, &s->exponential_percentile);
  if (k == "exponential.frac") return ParseDouble(p, &s->exponential_frac);
  if (k == "minscanlength") return ParseUnsigned(p, &s->min_scan_length);
  if (k == "maxscanlength") return ParseUnsigned(p, &s->max_scan_length);
  if (k == "scanlengthdistribution")
    return ParseEnum(p, &ParseScanLengthDistribution, &s->scan_length);
  if (k == "insertorder") return ParseEnum(p, &ParseInsertOrder, &s->insert_order);
  return Status::Ok();  // a property of YCSB's client or bindings: not ours to judge
}

// Splits one logical line into a property; false if it is not `key=value` / `key: value`.
bool SplitProperty(std::string_view line, Property* p) {
  size_t sep = line.find_first_of("=:");
  if (sep == std::string_view::npos) return false;
  std::string_view key = Trim(line.substr(0, sep));
  if (key.empty() || key.find_first_of(" \t") != std::string_view::npos) return false;
  p->key = std::string(key);
  p->value = std::string(Trim(line.substr(sep + 1)));
  return true;
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
    std::string line(Trim(raw));
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    // A trailing backslash continues the property on the next line.
    while (!line.empty() && line.back() == '\\' && std::getline(in, raw)) {
      ++line_no;
      line.pop_back();
      line += Trim(raw);
    }
    Property p;
    p.where = std::string(source) + ":" + std::to_string(first_line);
    if (!SplitProperty(line, &p))
      return Status::InvalidArgument(p.where + ": malformed line '" + line +
                                     "' (expected key=value or a # comment)");
    out.push_back(std::move(p));
  }
  return out;
}

WorkloadSpec YcsbDefaults(std::string name) {
  WorkloadSpec s;
  s.name = std::move(name);
  s.proportion = {0.95, 0.05, 0, 0, 0};
  s.request = Distribution::kUniform;
  s.zipfian_theta = 0.99;
  s.min_scan_length = 1;
  s.max_scan_length = 1000;
  s.scan_length = ScanLengthDistribution::kUniform;
  s.insert_order = InsertOrder::kHashed;
  return s;
}

Status ApplyProperties(const Properties& properties, WorkloadSpec* spec) {
  for (const Property& p : properties) DMX_RETURN_IF_ERROR(Apply(p, spec));
  return Status::Ok();
}

Status ApplyPropertyOverride(std::string_view key_equals_value, WorkloadSpec* spec) {
  Property p;
  p.where = "-p " + std::string(key_equals_value);
  if (!SplitProperty(Trim(key_equals_value), &p))
    return Status::InvalidArgument(p.where + ": expected key=value");
  return Apply(p, spec);
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
