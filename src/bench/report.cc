#include "bench/report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <utility>

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

// The workloads of `results`, in the order they first appear (the table's groups).
std::vector<std::string> Workloads(const std::vector<RunResult>& results) {
  std::vector<std::string> workloads;
  for (const RunResult& r : results)
    if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end())
      workloads.push_back(r.workload);
  return workloads;
}

// The baseline design's throughput on workload `w` (0: the baseline did not run it), and a
// run's ratio to it as the tables print it.
double BaselineOps(const std::vector<RunResult>& results, const std::string& w, const std::string& baseline) {
  for (const RunResult& r : results)
    if (r.workload == w && r.design == baseline) return r.throughput_ops();
  return 0;
}
std::string Ratio(const RunResult& r, double base) { return base > 0 ? Fixed(r.throughput_ops() / base, 2) : "-"; }

// --columns all: every figure of every run, a column each (columns of figures no run has are
// left out: offloads, RF-tree's and XStore's caches, IndeXY's ideal hit ratios).
std::string WideTable(const std::vector<RunResult>& results, const std::string& baseline) {
  const std::vector<std::string> workloads = Workloads(results);
  // Offload columns only when some design offloads: they would be all zeros otherwise.
  const bool offloading = std::any_of(results.begin(), results.end(), [](const RunResult& r) {
    return r.offloads + r.offload_fallbacks > 0;
  });
  // Search-layer cache columns only when some design has one (RF-tree).
  const bool refreshing = std::any_of(results.begin(), results.end(), [](const RunResult& r) {
    return r.slc_refreshes + r.stale_reads > 0;
  });
  // Learned-cache columns only when some design predicts with one (XStore).
  const bool learned = std::any_of(results.begin(), results.end(), [](const RunResult& r) {
    return r.model_lookups + r.model_fallbacks > 0;
  });
  std::vector<std::string> header = {
      "workload", "design", "Mops/s", "x" + baseline, "p50 us", "p99 us", "p99.9 us", "p99.99 us",
      "READ/op", "WRITE/op", "atomic/op", "RPC/op", "RTT/op", "bytes/op"};
  if (offloading) header.insert(header.end(), {"offl/op", "fallb/op"});
  if (refreshing) header.insert(header.end(), {"refreshes", "stale/op"});
  if (learned) header.insert(header.end(), {"leaves/get", "spec/op", "split/op", "srv/op", "retrains", "expand"});
  // What an oracle, an LRU and a random-eviction cache of the cache's key count would hit, when
  // some design reports that count (IndeXY).
  const bool ideal = std::any_of(results.begin(), results.end(), [](const RunResult& r) { return r.ideal_hit_ratio.has_value(); });
  header.insert(header.end(), {"hit %"});
  if (ideal) header.insert(header.end(), {"ideal %", "LRU %", "random %"});
  header.insert(header.end(), {"cache MB", "pool MB", "check"});
  std::vector<std::vector<std::string>> rows = {header};
  for (const std::string& w : workloads) {
    const double base = BaselineOps(results, w, baseline);
    for (const RunResult& r : results) {
      if (r.workload != w) continue;
      const auto hit = r.cache_hit_ratio();
      std::vector<std::string> row = {
          w, r.design, Fixed(r.throughput_ops() / 1e6, 3), Ratio(r, base), Fixed(r.p50_us, 1),
          Fixed(r.p99_us, 1), Fixed(r.p999_us, 1), Fixed(r.p9999_us, 1), Fixed(r.PerOp(r.verbs.reads), 2),
          Fixed(r.PerOp(r.verbs.writes), 2), Fixed(r.PerOp(r.verbs.atomics()), 2),
          Fixed(r.PerOp(r.verbs.rpcs), 2), Fixed(r.PerOp(r.verbs.round_trips), 2),
          Fixed(r.PerOp(r.verbs.bytes()), 0)};
      if (offloading)
        row.insert(row.end(), {Fixed(r.PerOp(r.offloads), 3), Fixed(r.PerOp(r.offload_fallbacks), 3)});
      if (refreshing)
        row.insert(row.end(), {std::to_string(r.slc_refreshes), Fixed(r.PerOp(r.stale_reads), 3)});
      if (learned)
        row.insert(row.end(), {r.model_lookups ? Fixed(static_cast<double>(r.model_leaves_read) / r.model_lookups, 2) : "-",
                               Fixed(r.PerOp(r.speculative_reads), 3), Fixed(r.PerOp(r.invalidations), 3),
                               Fixed(r.PerOp(r.model_fallbacks), 3), std::to_string(r.retrains),
                               std::to_string(r.expansions)});
      row.insert(row.end(), {hit ? Fixed(*hit * 100, 1) : "-"});
      if (ideal)
        for (const auto& v : {r.ideal_hit_ratio, r.lru_hit_ratio, r.random_hit_ratio})
          row.insert(row.end(), {v ? Fixed(*v * 100, 1) : "-"});
      row.insert(row.end(), {Mb(r.cache_bytes), Mb(r.pool_bytes), CheckText(r)});
      rows.push_back(std::move(row));
    }
  }
  return Align(rows, 2);
}

// The figures of a run beyond the default table's, as (name, value), only those not zero:
// the verbs a round trip was made of, the design's own counters, the hit ratios, the pool.
std::vector<std::pair<std::string, std::string>> NonZeroFigures(const RunResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  auto per_op = [&](const char* name, uint64_t count, int decimals) {
    if (count > 0) out.emplace_back(name, Fixed(r.PerOp(count), decimals));
  };
  per_op("READ/op", r.verbs.reads, 2);
  per_op("WRITE/op", r.verbs.writes, 2);
  per_op("atomic/op", r.verbs.atomics(), 2);
  per_op("RPC/op", r.verbs.rpcs, 2);
  per_op("offl/op", r.offloads, 3);
  per_op("fallb/op", r.offload_fallbacks, 3);
  if (r.slc_refreshes > 0) out.emplace_back("refreshes", std::to_string(r.slc_refreshes));
  per_op("stale/op", r.stale_reads, 3);
  if (r.model_lookups > 0)
    out.emplace_back("leaves/get", Fixed(static_cast<double>(r.model_leaves_read) / r.model_lookups, 2));
  per_op("spec/op", r.speculative_reads, 3);
  per_op("split/op", r.invalidations, 3);
  per_op("srv/op", r.model_fallbacks, 3);
  if (r.retrains > 0) out.emplace_back("retrains", std::to_string(r.retrains));
  if (r.expansions > 0) out.emplace_back("expand", std::to_string(r.expansions));
  const std::pair<const char*, std::optional<double>> ratios[] = {
      {"hit %", r.cache_hit_ratio()}, {"ideal %", r.ideal_hit_ratio}, {"LRU %", r.lru_hit_ratio},
      {"random %", r.random_hit_ratio}};
  for (const auto& [name, ratio] : ratios)
    if (ratio) out.emplace_back(name, Fixed(*ratio * 100, 1));
  if (r.pool_bytes > 0) out.emplace_back("pool MB", Mb(r.pool_bytes));
  return out;
}

// "#   <workload> <design>  name value, name value, ...", the names padded to `name_width`,
// wrapped before `width` columns.
std::string FiguresLines(const RunResult& r, size_t name_width, size_t width) {
  const auto figures = NonZeroFigures(r);
  if (figures.empty()) return "";
  std::string head = "#   " + r.workload + " " + r.design;
  head.resize(std::max(head.size(), name_width), ' ');
  head += " ";
  std::string out, line = head;
  for (const auto& [name, value] : figures) {
    const std::string item = (line.size() > head.size() ? ", " : " ") + name + " " + value;
    if (line.size() > head.size() && line.size() + item.size() > width) {
      out += line + "\n";
      line.assign(head.size(), ' ');
      line[0] = '#';
    }
    line += item;
  }
  return out + line + "\n";
}

// The first screen: what most people compare, a column each, then a line per run with its
// other figures that are not zero. Fits 120 columns with the registered designs' names.
std::string CompactTable(const std::vector<RunResult>& results, const std::string& baseline) {
  std::vector<std::vector<std::string>> rows = {
      {"workload", "design", "Mops/s", "x" + baseline, "p50 us", "p99 us", "RTT/op", "bytes/op",
       "client MB", "check"}};
  std::string details;
  size_t name_width = 0;  // of "#   <workload> <design>", so the figures line up
  for (const RunResult& r : results) name_width = std::max(name_width, 5 + r.workload.size() + r.design.size());
  for (const std::string& w : Workloads(results)) {
    const double base = BaselineOps(results, w, baseline);
    for (const RunResult& r : results) {
      if (r.workload != w) continue;
      rows.push_back({w, r.design, Fixed(r.throughput_ops() / 1e6, 3), Ratio(r, base), Fixed(r.p50_us, 1),
                      Fixed(r.p99_us, 1), Fixed(r.PerOp(r.verbs.round_trips), 2),
                      Fixed(r.PerOp(r.verbs.bytes()), 0), Mb(r.cache_bytes), CheckText(r)});
      details += FiguresLines(r, name_width, kCompactWidth);
    }
  }
  if (details.empty()) return Align(rows, 2);
  return Align(rows, 2) + "# and where not zero (client MB: the caches' memory; --columns all: every figure " +
         "as a column):\n" + details;
}

}  // namespace

std::string FormatTable(const std::vector<RunResult>& results, const std::string& baseline, TableColumns columns) {
  return columns == TableColumns::kAll ? WideTable(results, baseline) : CompactTable(results, baseline);
}

namespace {

std::string Seconds(double s) { return Fixed(s, 2) + " s"; }
std::string Mops(double ops) { return Fixed(ops / 1e6, 3) + " Mops/s"; }

std::string DescribeRepartition(const RunResult& r) {
  const RepartitionOutcome& p = *r.repartition;
  std::string line = "# " + r.design + " " + r.workload + ": compute node " +
                     std::to_string(p.spec.from) + " hands " + std::to_string(p.move.moved_keys) +
                     " of its " + std::to_string(p.move.from_keys) + " bulk-loaded keys to " +
                     (p.spec.scale_out ? "scale-out " : "") + "compute node " +
                     std::to_string(p.spec.to) + " at " + Seconds(p.spec.at_s);
  if (!p.ran) return line + ": not reached (the run ended first)\n";
  line += ": ran " + Fixed(p.start_s, 3) + "-" + Fixed(p.end_s, 3) + " s (Repartition " +
          Fixed(p.reported_s, 3) + " s); " + Mops(p.dip.before_ops) + " before, lowest " +
          Mops(p.dip.lowest_ops) + " (interval ending " + Seconds(p.dip.lowest_end_s) + "), ";
  if (!p.dip.recovered_s) return line + "not back to 90% by the end of the run\n";
  return line + "back to >= 90% by " + Seconds(*p.dip.recovered_s) + " (" +
         Seconds(*p.dip.recovered_s - p.end_s) + " after it ended), " + Mops(*p.dip.after_ops) +
         " from then on\n";
}

}  // namespace

std::string FormatTimeline(const std::vector<RunResult>& results) {
  std::vector<const RunResult*> runs;
  size_t rows = 0;
  for (const RunResult& r : results) {
    if (r.timeline.empty()) continue;
    runs.push_back(&r);
    rows = std::max(rows, r.timeline.size());
  }
  if (runs.empty()) return "";
  // RPCs per operation only when some design made RPCs (DEX's offloads, XStore's writes and
  // fallbacks).
  const bool rpcs = std::any_of(runs.begin(), runs.end(), [](const RunResult* r) {
    return std::any_of(r->timeline.begin(), r->timeline.end(), [](const TimelineInterval& t) { return t.rpcs > 0; });
  });
  // The cache's hit ratio per interval only when some design counted cache lookups.
  const bool hits = std::any_of(runs.begin(), runs.end(), [](const RunResult* r) {
    return std::any_of(r->timeline.begin(), r->timeline.end(),
                       [](const TimelineInterval& t) { return t.cache_hit_ratio().has_value(); });
  });
  std::vector<std::vector<std::string>> table = {{"until s"}};
  for (const RunResult* r : runs) {
    table[0].insert(table[0].end(), {r->design + " " + r->workload + " Mops/s", "RTT/op"});
    if (rpcs) table[0].push_back("RPC/op");
    table[0].push_back("mem MB");
    if (hits) table[0].push_back("hit %");
  }
  bool marked = false;
  for (size_t i = 0; i < rows; ++i) {
    std::vector<std::string> row = {""};
    for (const RunResult* r : runs) {
      if (i >= r->timeline.size()) {
        row.insert(row.end(), {"-", "-", "-"});
        if (rpcs) row.push_back("-");
        if (hits) row.push_back("-");
        continue;
      }
      const TimelineInterval& t = r->timeline[i];
      if (row[0].empty()) row[0] = Fixed(t.end_s, 2);
      const auto& p = r->repartition;
      const bool during = p && p->ran && t.start_s < p->end_s && t.end_s > p->start_s;
      marked |= during;
      row.insert(row.end(), {Fixed(t.throughput_ops() / 1e6, 3) + (during ? "*" : " "),
                             Fixed(t.round_trips_per_op(), 2)});
      if (rpcs) row.push_back(Fixed(t.rpcs_per_op(), 3));
      row.push_back(Fixed(static_cast<double>(t.memory_bytes) / (1 << 20), 1));
      if (hits) row.push_back(t.cache_hit_ratio() ? Fixed(*t.cache_hit_ratio() * 100, 1) : "-");
    }
    table.push_back(std::move(row));
  }
  std::string out = std::string("# throughput, round trips per operation") + (rpcs ? ", RPCs per operation" : "") +
                    " and the index's memory over time, per " +
                    Fixed(runs.front()->timeline_interval_s * 1000, 0) + " ms interval" +
                    (hits ? " (hit %: the cache's hit ratio)" : "") +
                    (marked ? " (*: repartitioning during the interval)" : "") + "\n" +
                    Align(table, 0);
  for (const RunResult* r : runs)
    if (r->repartition) out += DescribeRepartition(*r);
  return out;
}

namespace {

nlohmann::ordered_json NullOr(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json RepartitionJson(const RepartitionOutcome& p) {
  // Times and throughputs exist only if it ran.
  const auto if_ran = [&p](double v) { return p.ran ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json j;
  j["from"] = p.spec.from;
  j["to"] = p.spec.to;
  j["share"] = p.spec.share;
  j["scale_out"] = p.spec.scale_out;
  j["from_keys"] = p.move.from_keys;
  j["moved_keys"] = p.move.moved_keys;
  j["boundaries_before"] = p.move.initial;
  j["boundaries_after"] = p.move.after;
  j["at_s"] = p.spec.at_s;
  j["ran"] = p.ran;
  j["start_s"] = if_ran(p.start_s);
  j["end_s"] = if_ran(p.end_s);
  j["reported_s"] = if_ran(p.reported_s);
  j["throughput_before_ops"] = if_ran(p.dip.before_ops);
  j["lowest_throughput_ops"] = if_ran(p.dip.lowest_ops);
  j["lowest_end_s"] = if_ran(p.dip.lowest_end_s);
  j["recovered_s"] = NullOr(p.dip.recovered_s);
  j["throughput_after_ops"] = NullOr(p.dip.after_ops);
  return j;
}

}  // namespace

nlohmann::ordered_json ToJson(const RunResult& r) {
  nlohmann::ordered_json j;
  j["design"] = r.design;
  j["workload"] = r.workload;
  j["backend"] = r.backend;
  j["records"] = r.records;
  j["threads"] = r.threads;
  j["compute_nodes"] = r.compute_nodes;
  j["cache_per_node_bytes"] = r.cache_per_node_bytes;
  j["keys"] = r.keys;
  j["ops"] = r.ops;
  j["seconds"] = r.seconds;
  j["throughput_ops"] = r.throughput_ops();
  j["p50_us"] = r.p50_us;
  j["p99_us"] = r.p99_us;
  j["p999_us"] = r.p999_us;
  j["p9999_us"] = r.p9999_us;
  j["mean_us"] = r.mean_us;
  j["reads_per_op"] = r.PerOp(r.verbs.reads);
  j["writes_per_op"] = r.PerOp(r.verbs.writes);
  j["atomics_per_op"] = r.PerOp(r.verbs.atomics());
  j["rpcs_per_op"] = r.PerOp(r.verbs.rpcs);
  j["round_trips_per_op"] = r.PerOp(r.verbs.round_trips);
  j["bytes_per_op"] = r.PerOp(r.verbs.bytes());
  j["offloads_per_op"] = r.PerOp(r.offloads);
  j["offload_fallbacks_per_op"] = r.PerOp(r.offload_fallbacks);
  j["model_lookups"] = r.model_lookups;
  j["model_leaves_read"] = r.model_leaves_read;
  j["speculative_reads_per_op"] = r.PerOp(r.speculative_reads);
  j["invalidations_per_op"] = r.PerOp(r.invalidations);
  j["model_fallbacks_per_op"] = r.PerOp(r.model_fallbacks);
  j["retrains"] = r.retrains;
  j["expansions"] = r.expansions;
  j["slc_refreshes"] = r.slc_refreshes;
  j["stale_reads_per_op"] = r.PerOp(r.stale_reads);
  const auto hit = r.cache_hit_ratio();
  j["cache_hit_ratio"] = hit ? nlohmann::ordered_json(*hit) : nlohmann::ordered_json(nullptr);
  j["ideal_hit_ratio"] = NullOr(r.ideal_hit_ratio);
  j["lru_hit_ratio"] = NullOr(r.lru_hit_ratio);
  j["random_hit_ratio"] = NullOr(r.random_hit_ratio);
  j["cached_keys"] = r.cached_keys ? nlohmann::ordered_json(*r.cached_keys) : nlohmann::ordered_json(nullptr);
  j["cache_bytes"] = r.cache_bytes;
  j["pool_bytes"] = r.pool_bytes;
  j["inserted"] = r.inserted;
  j["verified"] = r.verified;
  j["interrupted"] = r.interrupted;
  j["error"] = r.error;
  j["verify_error"] = r.verify_error;
  j["properties"] = nlohmann::ordered_json::object();
  for (const auto& [name, v] : r.properties) j["properties"][name] = v;
  j["timeline_interval_s"] = NullOr(r.timeline_interval_s > 0 ? std::optional<double>(r.timeline_interval_s)
                                                               : std::nullopt);
  j["timeline"] = nlohmann::ordered_json::array();
  for (const TimelineInterval& t : r.timeline)
    j["timeline"].push_back({{"start_s", t.start_s}, {"end_s", t.end_s}, {"ops", t.ops},
                             {"throughput_ops", t.throughput_ops()}, {"round_trips", t.round_trips},
                             {"round_trips_per_op", t.round_trips_per_op()}, {"rpcs", t.rpcs},
                             {"memory_bytes", t.memory_bytes}, {"cache_hits", t.cache_hits},
                             {"cache_misses", t.cache_misses}, {"cache_hit_ratio", NullOr(t.cache_hit_ratio())}});
  j["repartition"] = r.repartition ? RepartitionJson(*r.repartition) : nlohmann::ordered_json(nullptr);
  j["sim_real_seconds"] = r.sim_real_seconds;
  j["sim_ops_per_real_second"] = r.sim_ops_per_real_second();
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

namespace {

std::string JoinCells(const nlohmann::ordered_json& array, const std::string& member) {
  std::string cell;
  for (const auto& e : array) {
    const auto& v = member.empty() ? e : e[member];
    if (!cell.empty()) cell += ' ';
    cell += v.is_string() ? v.get<std::string>() : v.dump();
  }
  return cell;
}

// Nested objects become name_member columns; an array one space-separated cell, or for an
// array of objects one such cell per member.
void Flatten(const std::string& name, const nlohmann::ordered_json& v, nlohmann::ordered_json* out) {
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) Flatten(name.empty() ? k : name + "_" + k, x, out);
  } else if (v.is_array() && !v.empty() && v.front().is_object()) {
    for (const auto& [k, x] : v.front().items()) (*out)[name + "_" + k] = JoinCells(v, k);
  } else if (v.is_array()) {
    (*out)[name] = JoinCells(v, "");
  } else {
    (*out)[name] = v;
  }
}

}  // namespace

Status WriteCsv(const std::string& path, const std::vector<RunResult>& results) {
  std::vector<nlohmann::ordered_json> rows;
  std::vector<std::string> header;  // every column of any row, in first-seen order
  for (const RunResult& r : results) {
    nlohmann::ordered_json flat;
    Flatten("", ToJson(r), &flat);
    for (const auto& [name, value] : flat.items())
      if (std::find(header.begin(), header.end(), name) == header.end()) header.push_back(name);
    rows.push_back(std::move(flat));
  }
  std::ofstream out(path);
  for (size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << header[i];
  if (!header.empty()) out << "\n";
  for (const nlohmann::ordered_json& row : rows) {
    for (size_t i = 0; i < header.size(); ++i)
      out << (i ? "," : "") << (row.contains(header[i]) ? CsvCell(row[header[i]]) : "");
    out << "\n";
  }
  out.close();
  if (!out) return Status::IoError("cannot write CSV to '" + path + "'");
  return Status::Ok();
}

}  // namespace dmindex::bench
