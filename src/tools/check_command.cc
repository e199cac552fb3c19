// `dmindex check`: the correctness harness's concurrent workload (check/workload.h) on one
// design, every operation recorded and the history checked (per-key linearizability, scans).
// Exits 1 with the report on a violation or an operation error. See docs/CHECK.md.
//
// Three ways to run it:
//   private index (default): a fresh index of this process, preloaded; each round is checked
//     as soon as it ends, so a soak (--seconds 600) runs in bounded memory.
//   shared index (--index-name): several processes on one index, e.g. over --memservers. One
//     history alone cannot be checked (the others' writes are missing from it), so each
//     process writes its history (--history-out); --load makes one of them the loader.
//   --merge FILE...: merges the histories of the processes and checks them together;
//     --final-state then also reads back every key from the index and checks the final state.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "common/runtime.h"
#include "api/cluster_access.h"
#include "alloc/catalog.h"
#include "bench/runner.h"
#include "check/final_read.h"
#include "check/history_file.h"
#include "check/workload.h"
#include "common/retry.h"
#include "designs/registry.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"
#include "tools/flag_values.h"
#include "sim/simulation.h"

namespace dmindex::tools {
namespace {

struct CheckFlags {
  std::string design = "sherman";
  check::WorkloadOptions workload;
  uint32_t rounds = 2;
  double seconds = 0;
  uint32_t node_bytes = 512;
  std::string key_format = "u64";
  uint32_t max_key_bytes = 255;
  bool tear = false;
  double delay = 0;
  std::string index_name;
  bool no_create = false;
  bool load = false;
  std::string history_out;
  std::vector<std::string> merge;
  bool final_state = false;
  double stall_s = 60;
  std::string start_barrier;
  uint32_t barrier_parties = 2;
  FabricFlags fabric;
};

// A soak longer than a month is a typo; so is a repartitioning pause longer than a round can be.
constexpr double kMaxCheckSeconds = 30 * 24 * 3600;
constexpr double kMaxRepartitionMs = 60'000;

[[noreturn]] void Fail(const std::string& message, int code) {
  std::cerr << "dmindex check: " << message << "\n";
  throw CLI::RuntimeError(code);
}

void FailIfError(const Status& s, const std::string& what, int code) {
  if (!s.ok()) Fail(what + ": " + s.ToString(), code);
}

std::string FabricName(const CheckFlags& f) {
  if (!f.fabric.memservers.empty()) return "UCX (" + f.fabric.transport + ", memory servers " + f.fabric.memservers + ")";
  std::string s = f.fabric.simulation != nullptr ? f.fabric.Describe() : "in-process fabric";
  if (f.tear) s += ", torn verbs";
  if (f.delay > 0) {
    char p[32];
    std::snprintf(p, sizeof p, ", delays p=%g", f.delay);
    s += p;
  }
  return s;
}

IndexOptions IndexOptionsFor(const bench::DesignChoice& design, const std::string& name,
                             uint32_t node_bytes, uint32_t compute_nodes, const alloc::KeySchema& schema) {
  IndexOptions o;
  o.name = name;
  o.node_bytes = node_bytes;
  o.key_format = schema.format;
  o.max_key_bytes = schema.max_key_bytes;
  o.inline_value_bytes = schema.inline_value_bytes;
  o.max_value_bytes = schema.max_value_bytes;
  o.compute_nodes = compute_nodes;
  o.design = design.name;
  o.knobs = design.knobs;
  return o;
}

// Prints the verdict; exits 1 on a violation or if operations failed (`errors` non-empty).
void Finish(const check::CheckReport& report, const std::string& what, const std::string& errors = "") {
  if (!report.ok()) std::cout << report.ToString(3) << std::flush;
  if (!errors.empty()) std::cerr << "dmindex check: " << errors << "\n";
  if (!report.ok()) Fail("VIOLATION: " + what + ": " + report.ToString(0), 1);
  if (!errors.empty()) Fail("FAILED: " + what, 1);
  if (report.point_ops_checked == 0 && report.scans_checked == 0)
    Fail("FAILED: " + what + ": no operation was checked", 1);
  std::cout << "dmindex check: OK: " << what << ": " << report.ToString(0) << "\n";
}

bool IndexExists(fabric::Fabric& fabric, const std::string& name) {
  auto ep = fabric.Connect();
  return ep.ok() && alloc::Catalog::Open(**ep, name).ok();
}

// Shared and private runs of the workload.
// --start-barrier: announces this process in `dir` (a file named after its pid) and waits
// until `parties` processes have, so that processes started together run their workloads at
// the same time however long each took to start and open the index.
Status WaitAtStartBarrier(const std::string& dir, uint32_t parties) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (std::FILE* me = std::fopen((dir + "/ready." + std::to_string(getpid())).c_str(), "w"))
    std::fclose(me);
  else
    return Status::IoError("cannot write a file in --start-barrier " + dir);
  RetryBudget budget(retry_limits::kStartBarrier, "waiting at --start-barrier");
  Backoff backoff(backoff::kPoll, "the other processes at the start barrier");
  for (;;) {
    uint32_t ready = 0;
    for (const auto& e : fs::directory_iterator(dir, ec))
      ready += e.path().filename().string().starts_with("ready.");
    if (ec) return Status::IoError("cannot list --start-barrier " + dir + ": " + ec.message());
    if (ready >= parties) return Status::Ok();
    if (!budget.Spend())
      return budget.Exhausted(dir + " (" + std::to_string(ready) + " of " + std::to_string(parties) +
                              " processes arrived)");
    backoff.Pause();
  }
}

void RunWorkload(CheckFlags& f) {
  auto design = bench::ParseDesignChoice(f.design);
  FailIfError(design.status(), "--design", 2);
  const bool shared = !f.index_name.empty();
  if (shared) FailIfError(designs::SharedAcrossProcesses(design->name), "--index-name", 2);
  if (shared && f.history_out.empty())
    Fail("with --index-name other processes may write the index too, so this process's history "
         "cannot be checked alone: give --history-out and check the histories with --merge", 2);
  if (f.rounds == 0 && f.seconds == 0 && !f.load) Fail("--rounds 0 only makes sense with --load", 2);
  if (!shared && f.load) Fail("--load is for a shared index (--index-name); a private one is always loaded", 2);
  if (f.no_create && (!shared || f.load))
    Fail("--no-create is for joining a shared index that exists (--index-name, without --load)", 2);
  if (f.workload.process > check::kMaxWorkloadProcess)
    Fail("--compute-node must be at most " + std::to_string(check::kMaxWorkloadProcess), 2);
  if ((f.tear || f.delay > 0) && !designs::IssuesVerbs(design->name))
    Fail("--tear and --delay inject faults into verbs, and design " + design->name +
             " issues none (its index lives in this process): nothing would be torn or delayed",
         2);
  f.fabric.faults.tear = f.tear;
  f.fabric.faults.delay_probability = f.delay;
  f.fabric.faults.seed = f.workload.seed;
  auto cluster = f.fabric.OpenCluster();
  FailIfError(cluster.status(), "fabric", 2);

  // A simulated run names its index the same every time: the history file records the name,
  // and a simulated history is a function of the seed.
  const std::string name = shared ? f.index_name
                                  : f.fabric.simulation != nullptr ? "check-sim" : "check-" + std::to_string(getpid());
  // A process joining a shared index that is not there probably lost it to a memory-server
  // restart (or misspelled it): say so (and with --no-create, refuse).
  const bool existed = shared && !f.load && IndexExists(FabricOf(**cluster), name);
  IndexOptions keyed;
  keyed.key_format = f.key_format == "bytes" ? KeyFormat::kBytes : KeyFormat::kU64;
  keyed.max_key_bytes = f.max_key_bytes;
  IndexOptions options = IndexOptionsFor(*design, name, f.node_bytes, f.workload.compute_nodes,
                                         alloc::KeySchema::Of(keyed));
  options.create_if_missing = !f.no_create;
  auto index = Index::Open(options, *cluster);
  FailIfError(index.status(), "opening index " + name, 2);
  if (shared && !f.load && !existed)
    std::cerr << "dmindex check: warning: index " << name << " did not exist and was created empty "
              << "(if it was there before, its memory server restarted and lost it; --no-create "
              << "makes this an error)\n";
  // Processes meeting at --start-barrier meet again halfway (WorkloadOptions::halfway): a
  // start barrier alone let a short workload end before a descheduled peer began.
  if (!f.start_barrier.empty())
    f.workload.halfway = [&f] {
      FailIfError(WaitAtStartBarrier(f.start_barrier + "/halfway", f.barrier_parties), "--start-barrier", 1);
    };
  check::ConcurrentWorkload workload(**index, f.workload);
  if (!shared || f.load) FailIfError(workload.Preload(), "bulk load of the initial keys", 2);

  check::RoundsPlan plan;
  plan.rounds = f.rounds;
  plan.seconds = f.seconds;
  plan.check_each_round = !shared;
  plan.keep_history = !f.history_out.empty();
  plan.watchdog = StallWatchdog("dmindex check", f.stall_s);
  const auto start = runtime::Now();
  auto last_note = start;
  if (f.seconds > 0)  // soak: a line now and then, so a long run shows it is alive
    plan.after_round = [&](uint32_t round, const check::CheckReport& so_far) {
      const auto now = runtime::Now();
      if (now - last_note < std::chrono::seconds(10)) return;
      last_note = now;
      std::fprintf(stderr, "[%6.0f s] round %u: %s\n",
                   std::chrono::duration<double>(now - start).count(), round, so_far.ToString(0).c_str());
    };
  if (!f.start_barrier.empty())
    FailIfError(WaitAtStartBarrier(f.start_barrier, f.barrier_parties), "--start-barrier", 1);
  auto result = check::RunRounds(workload, plan);
  FailIfError(result.status(), "workload", 1);
  // DEX writes the pages its compute nodes hold dirty back here: what other processes (and
  // --final-state) will read.
  FailIfError((*index)->Close(), "closing index " + name, 1);
  const double elapsed = std::chrono::duration<double>(runtime::Now() - start).count();

  if (plan.keep_history) {
    check::HistoryFile file{f.design, name, f.workload.process, std::move(result->history)};
    FailIfError(check::WriteHistoryFile(f.history_out, file), "--history-out", 1);
  }
  char what[256];
  std::snprintf(what, sizeof what, "%s on %s, %u threads, %u round(s) in %.1f s",
                f.design.c_str(), FabricName(f).c_str(), f.workload.threads, result->rounds, elapsed);
  std::string what_all = what;
  if (workload.repartitions() > 0)
    what_all += ", " + std::to_string(workload.repartitions()) + " repartitionings";
  const std::string errors =
      workload.errors() == 0 ? "" : std::to_string(workload.errors()) +
                                        " operation(s) failed; first: " + workload.first_error();
  if (shared && errors.empty()) {
    std::cout << "dmindex check: recorded " << what_all << " on shared index " << name << " into "
              << f.history_out << " (check with --merge)\n";
    return;
  }
  Finish(result->report, what_all, errors);
}

// --merge: the histories of several processes, checked together; --final-state adds the
// read-back of the index.
void RunMerge(CheckFlags& f) {
  std::vector<check::History> histories;
  std::string design, index;
  for (const std::string& path : f.merge) {
    auto file = check::ReadHistoryFile(path);
    FailIfError(file.status(), "--merge", 2);
    if (!index.empty() && (file->index != index || file->design != design))
      Fail(path + " records index " + file->index + " (" + file->design + "), the others " + index +
           " (" + design + ")", 2);
    design = file->design;
    index = file->index;
    histories.push_back(std::move(file->history));
  }
  auto merged = check::MergeHistories(std::move(histories));
  FailIfError(merged.status(), "--merge", 2);
  std::string what = std::to_string(f.merge.size()) + " merged histories of index " + index;

  check::CheckReport final_report;
  if (f.final_state) {
    auto choice = bench::ParseDesignChoice(design);
    FailIfError(choice.status(), "design recorded in the histories", 2);
    auto cluster = f.fabric.OpenCluster();
    FailIfError(cluster.status(), "fabric", 2);
    auto ep = FabricOf(**cluster).Connect();
    FailIfError(ep.status(), "fabric", 2);
    // Open, never create: reading back an index that does not exist is a mistake.
    auto entry = alloc::Catalog::Open(**ep, index);
    FailIfError(entry.status(), "index " + index + " in the catalog", 2);
    IndexOptions options =
        IndexOptionsFor(*choice, index, entry->node_bytes, f.workload.compute_nodes, entry->schema);
    options.create_if_missing = false;
    auto opened = Index::Open(options, *cluster);
    FailIfError(opened.status(), "opening index " + index, 2);
    auto present = check::ReadBackFinalState(**opened, f.workload.process, &*merged);
    FailIfError(present.status(), "final read-back", 1);
    final_report = check::CheckFinalState(*merged, *present);
    what += " and the final state of " + std::to_string(final_report.keys_checked) + " keys";
  }
  if (!f.history_out.empty()) {
    check::HistoryFile file{design, index, f.workload.process, *merged};
    FailIfError(check::WriteHistoryFile(f.history_out, file), "--history-out", 1);
  }
  // Final-state violations first: they name the lost write most directly.
  final_report.Append(check::CheckHistory(*merged));
  Finish(final_report, what);
}

}  // namespace

void AddCheckCommand(CLI::App& app) {
  auto f = std::make_shared<CheckFlags>();
  check::WorkloadOptions& w = f->workload;
  w.compute_nodes = 2;  // designs with per-compute-node caches and locks race across them
  CLI::App* cmd = app.add_subcommand(
      "check", "Run the concurrent correctness workload on a design and check the recorded "
               "history (linearizability per key, scans); exit 1 on a violation");
  cmd->add_option("--design", f->design, "Design, with knobs as name:knob=value:...")->capture_default_str();
  AddCount(*cmd, "--threads", &w.threads, 1, check::kMaxWorkloadThreads, "Client threads (default 8)");
  AddCount(*cmd, "--ops", &w.ops_per_thread, 1, 100'000'000,
           "Operations per thread in each round (default 1500)");
  auto* rounds = AddCount(*cmd, "--rounds", &f->rounds, 0, 1'000'000'000, "Rounds (0: only --load; default 2)");
  AddDuration(*cmd, "--seconds", &f->seconds, 1.0, {0, kMaxCheckSeconds, true},
              "Run rounds until this many seconds passed (soak)")->excludes(rounds);
  AddCount(*cmd, "--cas-pct", &w.cas_pct, 0, 35,
           "Percent of operations that are CompareAndSwap (a Lookup, then a swap of the value it "
           "read), checked as linearizable point operations (default 0)");
  AddCount(*cmd, "--keys", &w.keys, 1, 1u << 24, "Hot keys per round (default 128)");
  AddCount(*cmd, "--key-stride", &w.key_stride, 1, 1u << 20,
           "Gap between a round's hot keys, filled by later rounds (1: every round on the same "
           "keys; default 16)");
  AddCount(*cmd, "--seed", &w.seed, 0, UINT64_MAX, "Seed of the operation streams and faults (default 1)");
  AddCount(*cmd, "--node-size", &f->node_bytes, 64, 1u << 20, "Tree node bytes (default 512)");
  cmd->add_option("--key-format", f->key_format,
                  "Keys of the index: u64 (8-byte integers) or bytes (byte strings of shared prefixes, "
                  "extensions of one another and the longest allowed length, with values of 8 to 2008 bytes)")
      ->check(CLI::IsMember({"u64", "bytes"}))
      ->capture_default_str();
  AddCount(*cmd, "--max-key-bytes", &f->max_key_bytes, 1, kMaxKeyBytes,
           "Longest key of a bytes-format index (default 255)");
  cmd->add_flag("--tear", f->tear, "In-process fabric: tear READs/WRITEs into 64-byte pieces in random order");
  AddReal(*cmd, "--delay", &f->delay, {0, 1},
          "In-process fabric: probability that a round trip is delayed (up to 50 us)");
  cmd->add_option("--index-name", f->index_name,
                  "Catalog name of an index shared with other processes (needs --history-out)");
  AddCount(*cmd, "--compute-node", &w.process, 0, check::kMaxWorkloadProcess,
           "This process's number among the processes sharing the index (0-255): written "
           "values embed it, reports name it (default 0)");
  AddCount(*cmd, "--compute-nodes", &w.compute_nodes, 1, 64,
           "Logical compute nodes this process hosts (sessions spread over them; default 2)");
  AddDuration(*cmd, "--repartition-ms", &w.repartition_ms, 1e-3, {0, kMaxRepartitionMs},
              "Partitioned designs (dex): every this many ms a hosted compute node gives half "
              "of its hot keys to a neighbour, while the threads run (0: never)");
  cmd->add_option("--start-barrier", f->start_barrier,
                  "Directory: after opening the index, wait until --barrier-parties processes "
                  "given the same directory have, then start the workload together");
  AddCount(*cmd, "--barrier-parties", &f->barrier_parties, 1, 1024,
           "Processes meeting at --start-barrier (default 2)");
  cmd->add_flag("--load", f->load, "Shared index: bulk load the initial keys (the index must be new)");
  cmd->add_flag("--no-create", f->no_create,
                "Shared index: open it only if it exists (NotFound otherwise, e.g. after its "
                "memory server restarted and lost it) instead of creating an empty one");
  AddOutputFile(*cmd, "--history-out", &f->history_out, "Write the recorded history to this file");
  cmd->add_option("--merge", f->merge, "Merge these history files and check them together")
      ->expected(1, -1);
  cmd->add_flag("--final-state", f->final_state,
                "With --merge: read every key back from the index and check the final state");
  f->fabric.compute = "modelled";  // --fabric sim: a check's history is a function of its seed
  f->fabric.AddTo(*cmd);
  AddStallTimeout(*cmd, &f->stall_s);
  cmd->callback([f] {
    if (f->final_state && f->merge.empty()) Fail("--final-state works with --merge", 2);
    if (!f->merge.empty()) return RunMerge(*f);
    // --fabric sim: the whole workload runs in simulated time (one simulation per process).
    auto simulation = f->fabric.StartSimulation(f->workload.seed);
    FailIfError(simulation.status(), "--fabric", 2);
    if (*simulation) (*simulation)->UseDesign(f->design);
    FailIfError(f->fabric.RunOn([&] { RunWorkload(*f); }), "simulation", 1);
  });
}

}  // namespace dmindex::tools
