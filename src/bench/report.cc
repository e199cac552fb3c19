#include "bench/report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace dmindex::bench {
namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Mb(uint64_t bytes) { return Fixed(static_cast<double>(bytes) / (1 << 20), 1); }

std::string CheckText(const RunResult& r) {
  if (!r.error.empty()) return "OP-FAIL";
  if (!r.verify_error.empty()) return "FAIL";
  std::string text = r.verified ? "ok" : "-";
  return r.interrupted ? text + " (interrupted)" : text;
}

// Columns padded to their widest cell; the first `left` columns are left-aligned names.
std::string Align(const std::vector<std::vector<std::string>>& rows, size_t left) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (c < left ? row[c] + pad : pad + row[c]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

std::string CsvCell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string FormatTable(const std::vector<RunResult>& results, const std::string& baseline) {
  std::vector<std::string> workloads;
  for (const RunResult& r : results)
    if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end())
      workloads.push_back(r.workload);
  // Offload columns only when some design offloads: they would be all zeros otherwise.
  const bool offloading = std::any_of(results.begin(), results.end(), [](const RunResult& r) {
    return r.offloads + r.offload_fallbacks > 0;
  });
  std::vector<std::string> header = {
      "workload", "design", "Mops/s", "x" + baseline, "p50 us", "p99 us", "p99.9 us", "READ/op",
      "WRITE/op", "atomic/op", "RPC/op", "RTT/op", "bytes/op"};
  if (offloading) header.insert(header.end(), {"offl/op", "fallb/op"});
  header.insert(header.end(), {"hit %", "cache MB", "pool MB", "check"});
  std::vector<std::vector<std::string>> rows = {header};
  for (const std::string& w : workloads) {
    double base = 0;
    for (const RunResult& r : results)
      if (r.workload == w && r.design == baseline) base = r.throughput_ops();
    for (const RunResult& r : results) {
      if (r.workload != w) continue;
      const auto hit = r.cache_hit_ratio();
      std::vector<std::string> row = {
          w, r.design, Fixed(r.throughput_ops() / 1e6, 3),
          base > 0 ? Fixed(r.throughput_ops() / base, 2) : "-", Fixed(r.p50_us, 1),
          Fixed(r.p99_us, 1), Fixed(r.p999_us, 1), Fixed(r.PerOp(r.verbs.reads), 2),
          Fixed(r.PerOp(r.verbs.writes), 2), Fixed(r.PerOp(r.verbs.atomics()), 2),
          Fixed(r.PerOp(r.verbs.rpcs), 2), Fixed(r.PerOp(r.verbs.round_trips), 2),
          Fixed(r.PerOp(r.verbs.bytes()), 0)};
      if (offloading)
        row.insert(row.end(), {Fixed(r.PerOp(r.offloads), 3), Fixed(r.PerOp(r.offload_fallbacks), 3)});
      row.insert(row.end(), {hit ? Fixed(*hit * 100, 1) : "-", Mb(r.cache_bytes), Mb(r.pool_bytes),
                             CheckText(r)});
      rows.push_back(std::move(row));
    }
  }
  return Align(rows, 2);
}

nlohmann::ordered_json ToJson(const RunResult& r) {
  nlohmann::ordered_json j;
  j["design"] = r.design;
  j["workload"] = r.workload;
  j["backend"] = r.backend;
  j["threads"] = r.threads;
  j["keys"] = r.keys;
  j["ops"] = r.ops;
  j["seconds"] = r.seconds;
  j["throughput_ops"] = r.throughput_ops();
  j["p50_us"] = r.p50_us;
  j["p99_us"] = r.p99_us;
  j["p999_us"] = r.p999_us;
  j["mean_us"] = r.mean_us;
  j["reads_per_op"] = r.PerOp(r.verbs.reads);
  j["writes_per_op"] = r.PerOp(r.verbs.writes);
  j["atomics_per_op"] = r.PerOp(r.verbs.atomics());
  j["rpcs_per_op"] = r.PerOp(r.verbs.rpcs);
  j["round_trips_per_op"] = r.PerOp(r.verbs.round_trips);
  j["bytes_per_op"] = r.PerOp(r.verbs.bytes());
  j["offloads_per_op"] = r.PerOp(r.offloads);
  j["offload_fallbacks_per_op"] = r.PerOp(r.offload_fallbacks);
  const auto hit = r.cache_hit_ratio();
  j["cache_hit_ratio"] = hit ? nlohmann::ordered_json(*hit) : nlohmann::ordered_json(nullptr);
  j["cache_bytes"] = r.cache_bytes;
  j["pool_bytes"] = r.pool_bytes;
  j["inserted"] = r.inserted;
  j["verified"] = r.verified;
  j["interrupted"] = r.interrupted;
  j["error"] = r.error;
  j["verify_error"] = r.verify_error;
  return j;
}

Status WriteJson(const std::string& path, const std::vector<RunResult>& results) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const RunResult& r : results) all.push_back(ToJson(r));
  std::ofstream out(path);
  out << all.dump(2) << "\n";
  out.close();
  if (!out) return Status::IoError("cannot write JSON to '" + path + "'");
  return Status::Ok();
}

Status WriteCsv(const std::string& path, const std::vector<RunResult>& results) {
  std::ofstream out(path);
  bool header = true;
  for (const RunResult& r : results) {
    const nlohmann::ordered_json j = ToJson(r);
    std::string names, values;
    for (const auto& [name, value] : j.items()) {
      if (!names.empty()) names += ',', values += ',';
      names += name;
      values += CsvCell(value);
    }
    if (header) out << names << "\n";
    header = false;
    out << values << "\n";
  }
  out.close();
  if (!out) return Status::IoError("cannot write CSV to '" + path + "'");
  return Status::Ok();
}

}  // namespace dmindex::bench
