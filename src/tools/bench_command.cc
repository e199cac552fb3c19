// `dmindex bench`: runs YCSB and DEX workloads on every design (or those named) and prints a
// side-by-side table; JSON/CSV on request. Flags map onto bench::BenchOptions; the logic
// lives in src/bench/.
#include <CLI/CLI.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "alloc/catalog.h"
#include "bench/bench_plan.h"
#include "bench/interrupt.h"
#include "bench/report.h"
#include "common/runtime.h"
#include "sim/simulation.h"
#include "designs/registry.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"
#include "tools/flag_values.h"

namespace dmindex::tools {
namespace {

struct BenchFlags {
  bench::BenchOptions options;
  FabricFlags fabric;
  std::string json_path, csv_path, trace_out_path, calibrate_out;
  std::string columns = "default";  // the terminal table: default (the first screen) or all
  bool list = false;
  double stall_s = 60;
  double progress_s = 0;  // > 0: a progress line this often when stderr is no terminal
};

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Commented(const std::string& lines) {
  std::string out;
  size_t at = 0;
  while (at < lines.size()) {
    const size_t end = lines.find('\n', at);
    out += "#   " + lines.substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

[[noreturn]] void Fail(const std::string& message, int code) {
  std::cerr << "dmindex bench: " << message << "\n";
  throw CLI::RuntimeError(code);
}

// Over --memservers, a run's index is dropped from the servers' catalog afterwards, so
// repeated runs do not fill its 20 slots nor the pools (its chunks go back to the servers).
void DropIndex(const FabricFlags& flags, const std::string& name) {
  auto fabric = flags.Open();
  if (!fabric.ok()) return;  // the run reported the fabric's trouble already
  auto ep = (*fabric)->Connect();
  if (ep.ok()) (void)alloc::Catalog::Drop(**ep, name, (*fabric)->memory_nodes());
}

// How long each run is: a count of operations, a time, or a replayed trace's whole stream.
std::string RunLength(const bench::RunConfig& c) {
  if (c.trace) return "the trace's " + std::to_string(c.trace->ops.size()) + " operations";
  return c.ops ? std::to_string(c.ops) + " ops" : Fixed(c.seconds) + " s";
}

std::string Describe(const BenchFlags& f, const bench::BenchPlan& plan) {
  const bench::RunConfig& c = plan.runs.front().config;
  char line[1024];
  std::snprintf(line, sizeof line,
                "# dmindex bench: %s, %llu keys, %u threads, %u compute node(s),\n"
                "#   cache %.2f MB per compute node, %u B nodes, warmup %llu ops, %s per run, seed %llu\n",
                f.fabric.Describe().c_str(),
                static_cast<unsigned long long>(c.keys), c.threads, c.index.compute_nodes,
                c.index.cache_bytes / 1048576.0, c.index.node_bytes,
                static_cast<unsigned long long>(c.warmup_ops), RunLength(c).c_str(),
                static_cast<unsigned long long>(c.seed));
  std::string out = line;
  // Which records ran: each distinct shape once, naming the workloads that had it.
  std::vector<std::pair<std::string, std::string>> shapes;  // shape, workloads
  for (const bench::PlannedRun& run : plan.runs) {
    const bench::RunConfig& rc = run.config;
    const std::string shape = rc.shape.format == KeyFormat::kBytes ? rc.shape.ToString()
                              : rc.trace ? "u64: the trace's user<N> as integer N+1, 8-byte values"
                                         : "u64: 8-byte integer keys and values";
    auto it = std::find_if(shapes.begin(), shapes.end(), [&](const auto& s) { return s.first == shape; });
    if (it == shapes.end()) shapes.emplace_back(shape, run.workload.name);
    else if (it->second.find(run.workload.name) == std::string::npos) it->second += ", " + run.workload.name;
  }
  for (const auto& [shape, workloads] : shapes)
    out += "# records: " + shape + (shapes.size() > 1 ? " (" + workloads + ")" : "") + "\n";
  if (f.options.key_dist) out += std::string("# keys: ") + *f.options.key_dist + "\n";
  if (c.timeline_s > 0) out += "# timeline: throughput per " + Fixed(c.timeline_s * 1000) + " ms\n";
  if (f.options.memory_limit)
    out += "# memory limit: " + Fixed(static_cast<double>(*f.options.memory_limit) / (1 << 20)) +
           " MiB (knob limit_mb of indexy, rocksdb, lmdb, btree-disk)\n";
  if (c.repartition)
    out += "# repartitioning at " + Fixed(c.repartition->at_s) + " s: compute node " +
           std::to_string(c.repartition->from) + " hands " + Fixed(c.repartition->share * 100) +
           "% of its bulk-loaded keys to " + (c.repartition->scale_out ? "scale-out " : "") +
           "compute node " + std::to_string(c.repartition->to) +
           (c.repartition->scale_out ? " (which starts with none)" : "") + "\n";
  return out;
}

// What simulating each run took: real time, simulated operations per real second, and the
// process's peak memory so far.
std::string DescribeSimulation(const std::vector<bench::RunResult>& results) {
  std::string out;
  for (const bench::RunResult& r : results) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "# simulator: %s %s: %.1f s real for %.3f s simulated, %llu ops: %.0f simulated ops per real second\n",
                  r.design.c_str(), r.workload.c_str(), r.sim_real_seconds, r.seconds,
                  static_cast<unsigned long long>(r.sim_ops), r.sim_ops_per_real_second());
    out += line;
  }
  // Designs on disk (indexy, rocksdb, lmdb, btree-disk) run on the simulated threads and stay
  // correct, but the simulation models the network and the memory servers, not disks or a
  // store's own OS threads (RocksDB's flushes and compactions): say so once per design.
  const std::vector<std::string> on_disk = designs::MemoryLimitedDesigns();
  std::set<std::string> noted;
  for (const bench::RunResult& r : results) {
    const std::string name = r.design.substr(0, r.design.find(':'));
    if (std::find(on_disk.begin(), on_disk.end(), name) == on_disk.end() || !noted.insert(r.design).second ||
        r.design.find(":y=mem") != std::string::npos)  // indexy's Y in memory: no disk
      continue;
    out += "# simulator: " + r.design + " keeps its data on disk: disk I/O and the store's own threads take no "
           "simulated time, so its times model none of them (docs/SIMULATION.md)\n";
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  out += "# simulator: peak memory " + std::to_string(usage.ru_maxrss / 1024) + " MiB\n";
  return out;
}

void PrintDesignsAndWorkloads() {
  std::cout << "designs:";
  for (const std::string& d : designs::DesignNames()) std::cout << " " << d;
  std::cout << "\nworkloads:";
  for (const std::string& w : bench::WorkloadNames()) std::cout << " " << w;
  std::cout << "\n";
  for (const std::string& d : designs::DesignNames())
    if (const std::string note = designs::DesignNote(d); !note.empty()) std::cout << d << ": " << note << "\n";
  std::cout << "knobs (--design NAME:knob=value:...; `dmindex knobs` prints the same):\n";
  for (const std::string& d : designs::DesignNames()) {
    auto knobs = designs::DesignKnobs(d);
    if (knobs.ok() && !knobs->empty()) std::cout << d << ":\n" << KnobText(*knobs);
  }
}

// One simulated run's compute over its measured phase.
struct RunProfile {
  std::string label, workload;
  uint64_t ops = 0;
  sim::ComputeProfile profile;
};

// --calibrate-out: the mean cycles per segment learned from the runs' compute profiles, with
// the setup they were measured in, for `--calibration FILE` of later modelled runs.
// A design's line pools its workloads (for a workload the file has no line of its own); each
// label@workload line is that run's.
void WriteCalibration(const BenchFlags& f, const bench::BenchPlan& plan, const std::vector<RunProfile>& runs) {
  std::map<std::string, sim::ComputeProfile> pooled;
  for (const RunProfile& r : runs) pooled[r.label] += r.profile;
  sim::Calibration learned;
  for (const auto& [label, profile] : pooled) learned.Learn(label, profile);
  for (const RunProfile& r : runs) learned.Learn(r.label + "@" + r.workload, r.profile);
  std::string designs, workloads;
  for (const bench::PlannedRun& run : plan.runs) {
    if (designs.find(run.design.label) == std::string::npos) designs += " " + run.design.label;
    if (workloads.find(run.workload.name) == std::string::npos) workloads += " " + run.workload.name;
  }
  std::string text = "# dmindex compute calibration (docs/SIMULATION.md): mean cycles per segment, by design and\n"
                     "# the call that ends it, measured on this machine (" + std::to_string(sim::LocalCpuGhz()) +
                     " GHz) over workloads" + workloads + ", designs" + designs + ":\n" +
                     Describe(f, plan) + learned.Format();
  if (Status s = bench::WriteTextFile(f.calibrate_out, text); !s.ok()) Fail(s.message(), 1);
}

// Says on stderr what failed: a run that could not start, operations that failed, a tree that
// failed its check after a run. True if anything did (the exit status is then 1).
bool ReportFailures(const std::string& setup_error, const std::vector<bench::RunResult>& results) {
  bool failed = !setup_error.empty();
  if (failed) std::cerr << "dmindex bench: run could not start: " << setup_error << "\n";
  for (const bench::RunResult& r : results) {
    if (!r.error.empty()) std::cerr << "dmindex bench: " << r.design << " " << r.workload
                                    << ": OPERATION FAILED: " << r.error << "\n";
    if (!r.verify_error.empty()) std::cerr << "dmindex bench: " << r.design << " " << r.workload
                                           << ": TREE CHECK FAILED: " << r.verify_error << "\n";
    failed |= !r.ok();
  }
  return failed;
}

void Run(BenchFlags& f, bool threads_given, bool compute_nodes_given) {
  bench::BenchOptions& o = f.options;
  if (f.list) return PrintDesignsAndWorkloads();
  o.trace_out = !f.trace_out_path.empty();
  if (!f.calibrate_out.empty() && (f.fabric.fabric != "sim" || (!f.fabric.compute.empty() && f.fabric.compute != "measured")))
    Fail("--calibrate-out: needs --fabric sim --compute measured (it records measured costs)", 2);
  // --fabric sim: the platform's client threads spread over its compute servers, one compute
  // node per compute server, unless told otherwise.
  auto simulation = f.fabric.StartSimulation(o.seed);
  if (!simulation.ok()) Fail(simulation.status().message(), 2);
  if (*simulation) {
    const sim::Platform& p = (*simulation)->platform();
    if (!threads_given) o.threads = p.total_threads();
    if (!compute_nodes_given) o.compute_nodes = static_cast<uint32_t>(p.compute.size());
  }
  o.memory_limited = designs::MemoryLimitedDesigns();
  auto plan = bench::MakeBenchPlan(o, designs::DesignNames());
  if (!plan.ok()) Fail(plan.status().message(), 2);
  for (const std::string& w : plan->warnings) std::cerr << "dmindex bench: warning: " << w << "\n";
  // Fail on fabric flags before any run starts.
  if (auto probe = f.fabric.Open(); !probe.ok()) Fail(probe.status().message(), 2);

  const bool tty = isatty(STDERR_FILENO);
  bench::ScopedInterruptHandler interrupt;
  bench::Progress progress(tty, f.progress_s);
  bench::Runner runner([&f] { return f.fabric.OpenCluster(); },
                       [](const IndexOptions& o, std::shared_ptr<Cluster> c) { return Index::Open(o, std::move(c)); },
                       interrupt.flag(), progress);
  std::cout << Describe(f, *plan) << std::flush;
  std::vector<bench::RunResult> results;
  std::vector<RunProfile> profiles;  // --fabric sim: per run
  std::string setup_error;
  for (size_t i = 0; i < plan->runs.size() && !interrupt.flag().load(); ++i) {
    const bench::PlannedRun& run = plan->runs[i];
    // Every run builds a new index; over --memservers the servers' catalog still holds the
    // earlier ones, so each gets a name of its own.
    bench::RunConfig config = run.config;
    config.watchdog = StallWatchdog("dmindex bench", f.stall_s);
    config.index.name = "bench-" + std::to_string(getpid()) + "-" + std::to_string(i);
    if (o.trace_out) config.trace_out = std::make_shared<bench::TraceRecorder>(config.threads, run.workload.table);
    std::optional<Result<bench::RunResult>> r;
    sim::ComputeProfile measured;  // the measured phase's compute: what modelled mode is calibrated from
    if (*simulation) {
      (*simulation)->UseDesign(run.design.label, run.workload.name);
      config.on_measured_phase = [s = simulation->get(), &measured](bool begins) {
        if (begins) (void)s->TakeProfile(); else measured = s->TakeProfile();
      };
    }
    const auto real_start = runtime::Now();  // outside the simulation: the real clock
    if (Status s = f.fabric.RunOn([&] { r = runner.Run(run.design, run.workload, config); }); !s.ok())
      r = s;
    if (*simulation && r->ok()) {
      (*r)->sim_real_seconds = std::chrono::duration<double>(runtime::Now() - real_start).count();
      (*r)->sim_ops = (*r)->ops + config.warmup_ops;
      profiles.push_back({run.design.label, run.workload.name, (*r)->ops, measured});
    }
    if (!f.fabric.memservers.empty()) DropIndex(f.fabric, config.index.name);
    if (!r->ok()) {
      setup_error = run.design.label + " " + run.workload.name + ": " + r->status().ToString();
      break;
    }
    if (tty)
      std::fprintf(stderr, "[%zu/%zu] %s %s: %.3f Mops/s%s\n", i + 1, plan->runs.size(),
                   run.design.label.c_str(), run.workload.name.c_str(), (*r)->throughput_ops() / 1e6,
                   (*r)->ok() ? "" : ", FAILED");
    results.push_back(std::move(*r).value());
    if (config.trace_out)
      if (Status s = config.trace_out->WriteTo(f.trace_out_path); !s.ok()) Fail(s.message(), 1);
  }
  const auto columns = f.columns == "all" ? bench::TableColumns::kAll : bench::TableColumns::kDefault;
  std::cout << bench::FormatTable(results, plan->baseline, columns) << bench::FormatTimeline(results);
  if (*simulation) {
    std::cout << DescribeSimulation(results);
    for (const RunProfile& p : profiles)
      std::cout << "# compute profile of " << p.label << " on " << p.workload
                << "'s measured phase (cycles charged per segment, by the call ending it):\n"
                << Commented(p.profile.ToString(p.ops));
  }
  std::cout << std::flush;
  if (!f.calibrate_out.empty()) WriteCalibration(f, *plan, profiles);
  if (!f.json_path.empty())
    if (Status s = bench::WriteJson(f.json_path, results); !s.ok()) Fail(s.message(), 1);
  if (!f.csv_path.empty())
    if (Status s = bench::WriteCsv(f.csv_path, results); !s.ok()) Fail(s.message(), 1);

  if (ReportFailures(setup_error, results)) throw CLI::RuntimeError(1);
  if (interrupt.flag().load()) {
    std::cerr << "dmindex bench: interrupted; the table shows what was measured\n";
    throw CLI::RuntimeError(130);
  }
}

// --help's footer: each design's knobs by name (values, defaults and docs: --list, `dmindex knobs`).
std::string KnobFooter() {
  std::string out = "Knobs by design (--design NAME:knob=value; values and defaults: --list or `dmindex knobs`):\n";
  for (const std::string& d : designs::DesignNames()) {
    auto knobs = designs::DesignKnobs(d);
    if (!knobs.ok() || knobs->empty()) continue;
    std::string names;
    for (const KnobDoc& k : *knobs) names += (names.empty() ? "" : ", ") + k.name;
    out += "  " + d + ": " + names + "\n";
  }
  return out;
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  bench::BenchOptions& o = f->options;
  using bench::BenchLimits;
  CLI::App* cmd = app.add_subcommand(
      "bench", "Run YCSB / DEX workloads on the index designs and compare them side by side");
  cmd->footer(KnobFooter());
  AddList(*cmd, "--design", &o.designs,
          "Designs to run, comma-separated; knobs as name:knob=value:knob=value "
          "(default: every registered design)");
  AddList(*cmd, "--workload", &o.workloads,
          "Workloads, comma-separated: ycsb-a..ycsb-f, dex-ro, dex-ri, dex-ri2, dex-wi, "
          "dex-ii, dex-si, insert-only, load-a (--keys records into an empty index) "
          "(default: ycsb-c,ycsb-a unless -P is given)");
  cmd->add_option("-P", o.workload_files, "YCSB workload property file (repeatable)");
  cmd->add_option("-p", o.properties, "YCSB property key=value applied to every workload (repeatable)");
  AddCount(*cmd, "--keys", &o.keys, 0, BenchLimits::kMaxKeys,
           "Records bulk-loaded before each run (default: recordcount of a -P file, else 200000)");
  AddCount(*cmd, "--warmup-ops", &o.warmup_ops, 0, BenchLimits::kMaxOps,
           "Operations run before measuring (default 20000; none when a -P file's "
           "operationcount sizes the run, as in YCSB's run phase)");
  auto* ops = AddCount(*cmd, "--ops", &o.ops, 1, BenchLimits::kMaxOps,
                       "Measured operations per run, over all threads");
  AddDuration(*cmd, "--duration", &o.seconds, 1.0, {0, BenchLimits::kMaxSeconds, true},
              "Seconds measured per run (default 2)")->excludes(ops);
  AddCount(*cmd, "--threads", &o.threads, 1, BenchLimits::kMaxThreads,
           "Client threads (default 2; a -P file's threadcount, else YCSB's 1)");
  AddCount(*cmd, "--compute-nodes", &o.compute_nodes, 1, BenchLimits::kMaxThreads,
           "Logical compute nodes (each with its own cache); thread t uses node t mod N (default 1)");
  auto* cache_mb = AddReal(*cmd, "--cache-mb", &o.cache_mb, {0, BenchLimits::kMaxCacheMb},
                           "Cache per compute node, MB");
  AddReal(*cmd, "--cache-pct", &o.cache_pct, {0, 1000},
          "Cache per compute node, % of keys x record bytes (default 10)")->excludes(cache_mb);
  AddCount(*cmd, "--node-size", &o.node_bytes, 64, 1u << 20, "Tree node bytes (default 1024)");
  AddDuration(*cmd, "--progress-s", &f->progress_s, 1.0, {0, BenchLimits::kMaxSeconds, true},
              "When stderr is no terminal (a log), print a progress line this often: the bulk load's "
              "elapsed time, the measured phase's share done and throughput (default: none)");
  AddParsed(*cmd, "--memory-limit",
            "Memory of the designs that hold an index larger than memory (indexy's X, the rocksdb "
            "and lmdb stores' caches, btree-disk's buffer pool): their knob limit_mb, unless given; "
            "a size such as 64M (docs/INDEXY.md)",
            [&o](const std::string& text) -> Status {
              auto bytes = ParseByteSize(text, 64 << 10, uint64_t{1} << 44);
              if (!bytes.ok()) return bytes.status();
              o.memory_limit = *bytes;
              return Status::Ok();
            });
  cmd->add_option("--key-format", o.key_format,
                  "u64: 8-byte integer keys and values (default of --workload; with --trace, key user<N> is "
                  "integer N+1); bytes: byte-string keys and values (default of -P and --trace: YCSB's key "
                  "names and records; --key-style, --key-bytes, --value-bytes, --value-dist)")
      ->check(CLI::IsMember({"u64", "bytes"}));
  cmd->add_option("--key-style", o.key_style,
                  "Bytes format: binary (8 big-endian bytes of the key then derived bytes; default) or "
                  "ycsb (\"user\" + FNV-64 of the record number, or the number when ordered, as YCSB's "
                  "CoreWorkload names keys; default with -P)")
      ->check(CLI::IsMember({"binary", "ycsb"}));
  AddCount(*cmd, "--key-bytes", &o.key_bytes, 1, kMaxKeyBytes,
           "Bytes format: binary keys of exactly N bytes (>= 8, default 16); ycsb keys zero-padded to N");
  AddCount(*cmd, "--value-bytes", &o.value_bytes, 8, 1u << 30,
           "Bytes format: raw values of N bytes, the largest with --value-dist (default 8; with -P "
           "YCSB records of fieldcount x fieldlength, serialized as the YCSB binding does)");
  cmd->add_option("--key-dist", o.key_dist,
                  "Keys of the records: hashed (YCSB's default), ordered (YCSB's insertorder), or for "
                  "learned indexes sequential, noised-linear, lognormal (docs/XSTORE.md)");
  cmd->add_option("--value-dist", o.value_dist,
                  "Bytes format: value lengths constant (default), uniform or zipfian in [1, N] per field "
                  "(YCSB's fieldlengthdistribution)")
      ->check(CLI::IsMember({"constant", "uniform", "zipfian"}));
  AddReal(*cmd, "--theta", &o.theta, {0, 1, false, true},
          "Zipfian theta for every workload, in [0,1) (default 0.99)");
  AddCount(*cmd, "--seed", &o.seed, 0, UINT64_MAX, "Seed of the operation streams (default 42)");
  cmd->add_option("--baseline", o.baseline, "Design the throughput ratios refer to (default: first)");
  AddDuration(*cmd, "--timeline-ms", &o.timeline_ms, 1e-3, {1, BenchLimits::kMaxSeconds * 1e3},
              "Also report throughput per interval of this many ms (default 100 with --repartition-at)");
  AddDuration(*cmd, "--repartition-at", &o.repartition_at, 1.0, {0, BenchLimits::kMaxSeconds, true},
              "Seconds into the measured phase at which compute node --repartition-from hands "
              "--repartition-share of its keys to its neighbour --repartition-to (DEX Fig. 10)");
  AddCount(*cmd, "--repartition-from", &o.repartition_from, 0, BenchLimits::kMaxThreads - 1,
           "Compute node giving keys away (default 0)");
  AddCount(*cmd, "--repartition-to", &o.repartition_to, 0, BenchLimits::kMaxThreads - 1,
           "Neighbour receiving them (default: from + 1)");
  AddReal(*cmd, "--repartition-share", &o.repartition_share, {0, 1, true},
          "Share of the giver's bulk-loaded keys, in (0, 1] (default 0.5)");
  cmd->add_flag("--scale-out", o.scale_out,
                "The receiver starts with no keys (its range goes to the giver before the warmup): "
                "a new compute node taking over part of a busy one");
  // The embedded cluster models an RDMA round trip (~2 us, DEX §2.2) unless told otherwise:
  // with a free fabric a design's local bookkeeping would outweigh the verbs it saves, the
  // opposite of disaggregated memory. --latency-us 0 measures the raw in-process cost.
  f->fabric.latency_us = 2;
  f->fabric.AddTo(*cmd);
  AddOutputFile(*cmd, "--json", &f->json_path, "Also write the results as JSON to this file");
  cmd->add_option("--columns", f->columns,
                  "The table on stdout: default (Mops/s, p50/p99, round trips, bytes, client memory, "
                  "check; other figures a line per run where not zero) or all (every figure a column; "
                  "--json and --csv always have every figure)")
      ->check(CLI::IsMember({"default", "all"}));
  AddOutputFile(*cmd, "--csv", &f->csv_path, "Also write the results as CSV to this file");
  AddOutputFile(*cmd, "--calibrate-out", &f->calibrate_out,
                "--fabric sim --compute measured: write each design's mean cycles per segment, the "
                "calibration of --compute modelled (docs/SIMULATION.md)");
  AddOutputFile(*cmd, "--trace-out", &f->trace_out_path,
                "Write the operations the run executes (warm-up included, in completion order) "
                "in YCSB BasicDB's line format: the run's key names, every field of a write (one design, "
                "one workload)");
  cmd->add_option("--trace", o.trace,
                  "Replay this operation stream (YCSB BasicDB's output, e.g. of `ycsb run ... -db "
                  "site.ycsb.BasicDB`) instead of a workload; its keys are byte strings as written "
                  "(with --key-format u64: user<N> is integer N+1)");
  cmd->add_option("--trace-load", o.trace_load,
                  "With --trace: bulk load the INSERTs of this stream first (YCSB's load phase)");
  AddStallTimeout(*cmd, &f->stall_s);
  cmd->add_flag("--list", f->list, "List the designs and workloads, then exit");
  cmd->callback([f, cmd] { Run(*f, cmd->count("--threads") > 0, cmd->count("--compute-nodes") > 0); });
}

}  // namespace dmindex::tools
