// `dmindex soak`: the crash soak (docs/FAILURES.md, "The crash soak"). Each trial starts two
// memory servers on `--data-dir` pools, creates an index of one design shared across
// processes, runs writer processes on it (`dmindex soak-writer`, which journal every
// operation), SIGKILLs writers and memory servers at random instants and restarts them, then
// stops the writers and checks:
//   - the final state: every key holds its last acknowledged value, or the value of a write
//     whose outcome is unknown (in flight at a kill, or answered Unavailable);
//   - the merged history of every process that ran (and the final read-back) is
//     linearizable, with the killed processes' in-flight operations pending;
//   - no answered operation took longer than the lease plus one second, not counting the
//     time a memory server was down (from its kill until its restart listened).
// A trial is a function of its seed (design, kill instants and kinds, the writers' streams;
// the scheduling of processes is not). A failing trial keeps its directory (journals, logs)
// and prints the command that replays it.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "bench/runner.h"
#include "check/checker.h"
#include "check/final_read.h"
#include "check/journal.h"
#include "common/retry.h"
#include "common/runtime.h"
#include "designs/registry.h"
#include "fabric/ucx/memserver_process.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"
#include "tools/flag_values.h"
#include "tools/soak.h"

namespace dmindex::tools {
namespace {

namespace fs = std::filesystem;
using fabric::ucx::MemserverProcess;
using fabric::ucx::MemserverSpec;

constexpr uint32_t kMemoryServers = 2;  // node 0 holds the catalog and lease table, node 1 only index memory
// Writers stop within one operation of the stop file; one held up by a memory server down
// and a DEX takeover takes a few seconds. Anything longer is a hang the soak reports.
constexpr auto kWriterStopWait = std::chrono::seconds(60);

constexpr RetryLimit kWritersReady{"polls", 0, std::chrono::seconds(60), Status::Code::kUnavailable,
                                   "a writer never opened the index"};

struct SoakFlags {
  std::vector<std::string> designs = {"naive", "sherman", "rftree", "dex", "xstore"};
  uint32_t trials = 10;
  uint64_t seed = 1;
  double seconds = 3;       // each trial's writing phase
  uint32_t kills = 2;       // per trial
  uint32_t writers = 2;
  uint32_t threads = 2;
  uint32_t keys = 64;
  std::string transport = "shm";
  std::string dir;          // trials' directories go under it
  double max_wait_s = 0;    // 0: the lease plus one second
  bool keep = false;
};

// A writer process (fork + exec of this executable), killed with this process.
class WriterProcess {
 public:
  static Result<pid_t> Spawn(const std::vector<std::string>& args, const std::string& log) {
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out < 0) return Status::IoError("cannot open " + log);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(126);
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out);
    if (pid < 0) return Status::IoError("fork failed");
    return pid;
  }
  // The wait status once `pid` exited; Unavailable if it still runs after `timeout`.
  static Result<int> Wait(pid_t pid, std::chrono::milliseconds timeout) {
    RetryBudget budget(TimeLimit("polls", timeout, Status::Code::kUnavailable, "the writer does not exit"),
                       "waiting for a soak writer");
    Backoff poll(backoff::kPoll, "a soak writer's exit");
    for (;;) {
      int status = 0;
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) return status;
      if (r < 0) return Status::IoError("waitpid failed");
      if (!budget.Spend()) return budget.Exhausted("pid " + std::to_string(pid));
      poll.Pause();
    }
  }
};

struct Interval {
  int64_t from_ns, to_ns;
};

struct TrialOutcome {
  bool ok = true;
  std::string summary;  // one line
  std::string details;  // violations, logs
};

class Trial {
 public:
  Trial(const SoakFlags& flags, uint64_t seed, std::string design, std::string dir)
      : f_(flags), seed_(seed), rng_(seed), design_(std::move(design)), dir_(std::move(dir)) {}
  TrialOutcome Run();

 private:
  Status Start();
  Status SpawnWriter(uint32_t slot);
  Status KillWriter(uint32_t slot);
  Status KillMemoryServer(uint32_t node);
  Status StopWriters();
  void Verify();
  void Fail(const std::string& what) {
    out_.ok = false;
    out_.details += what + "\n";
  }
  std::string WriterLogs() const;

  const SoakFlags& f_;
  const uint64_t seed_;
  std::mt19937_64 rng_;
  const std::string design_;
  const std::string dir_;
  SoakWriterSpec spec_;
  std::vector<std::unique_ptr<MemserverProcess>> servers_;
  std::vector<pid_t> writers_;       // by slot; -1: not running
  uint32_t incarnations_ = 0;        // started writer processes
  std::vector<Interval> down_;       // memory servers down
  std::vector<int64_t> writer_deaths_;  // when writers were killed (JournalNow)
  std::string kill_log_;
  std::string load_ = "?";  // the load average as the writing phase ended
  TrialOutcome out_;
};

std::string ToolPath() { return fs::read_symlink("/proc/self/exe").string(); }

MemserverSpec ServerSpec(const std::string& dir, uint32_t node, const std::string& transport) {
  MemserverSpec spec;
  spec.tool_path = ToolPath();
  spec.pool_bytes = 64ull << 20;
  spec.chunk_bytes = 1ull << 20;
  spec.transport = transport == "tcp" ? fabric::ucx::UcxTransport::kTcp : fabric::ucx::UcxTransport::kShm;
  spec.data_dir = dir + "/node" + std::to_string(node);
  spec.stderr_path = dir + "/memserver" + std::to_string(node) + ".log";
  return spec;
}


Status Trial::Start() {
  std::string memservers;
  for (uint32_t node = 0; node < kMemoryServers; ++node) {
    auto server = MemserverProcess::Start(ServerSpec(dir_, node, f_.transport));
    if (!server.ok()) return server.status();
    memservers += (node ? "," : "") + (*server)->address().ToString();
    servers_.push_back(std::move(server).value());
  }
  spec_.memservers = memservers;
  spec_.transport = f_.transport;
  spec_.design = design_;
  spec_.writers = f_.writers;
  spec_.threads = f_.threads;
  spec_.keys = f_.keys;
  spec_.seed = seed_;
  spec_.journal_dir = dir_;
  spec_.stop_file = dir_ + "/stop";
  // Created here, empty, and closed: the writers only open it (DEX: each hosts its slot's
  // compute node, which the creator hosted until its Close released them all).
  FabricFlags fabric;
  fabric.memservers = memservers;
  fabric.transport = f_.transport;
  auto cluster = fabric.OpenCluster();
  if (!cluster.ok()) return cluster.status();
  auto options = SoakIndexOptions(spec_, 0, design_ == "dex" || design_.starts_with("dex:") ? f_.writers : 1);
  if (!options.ok()) return options.status();
  auto index = Index::Open(*options, *cluster);
  if (!index.ok()) return index.status();
  DMX_RETURN_IF_ERROR((*index)->Close());
  writers_.assign(f_.writers, -1);
  for (uint32_t slot = 0; slot < f_.writers; ++slot) DMX_RETURN_IF_ERROR(SpawnWriter(slot));
  // The writing phase starts once every writer opened the index: starting processes and
  // connecting take a variable while on a loaded machine, and kills before that test less.
  RetryBudget budget(kWritersReady, "waiting for the soak's writers to open the index");
  Backoff poll(backoff::kPoll, "the soak's writers to open the index");
  for (uint32_t incarnation = 1; incarnation <= f_.writers; ++incarnation)
    while (!fs::exists(SoakReadyPath(dir_, incarnation))) {
      if (!budget.Spend()) return budget.Exhausted("writer " + std::to_string(incarnation - 1) + " (see its log)");
      poll.Pause();
    }
  return Status::Ok();
}

Status Trial::SpawnWriter(uint32_t slot) {
  const uint32_t incarnation = ++incarnations_;
  const std::vector<std::string> args = {
      ToolPath(), "soak-writer", "--memservers", spec_.memservers, "--transport", spec_.transport,
      "--design", spec_.design, "--index-name", spec_.index_name, "--writer", std::to_string(slot),
      "--writers", std::to_string(spec_.writers), "--incarnation", std::to_string(incarnation),
      "--threads", std::to_string(spec_.threads), "--keys", std::to_string(spec_.keys),
      "--seed", std::to_string(seed_), "--journal-dir", dir_, "--stop-file", spec_.stop_file};
  auto pid = WriterProcess::Spawn(args, dir_ + "/writer." + std::to_string(incarnation) + ".log");
  if (!pid.ok()) return pid.status();
  writers_[slot] = *pid;
  return Status::Ok();
}

Status Trial::KillWriter(uint32_t slot) {
  writer_deaths_.push_back(check::JournalNow());
  kill(writers_[slot], SIGKILL);
  auto status = WriterProcess::Wait(writers_[slot], std::chrono::seconds(10));
  if (!status.ok()) return status.status();
  if (!WIFSIGNALED(*status))  // it exited before the kill: that is a failure of its own
    Fail("writer " + std::to_string(slot) + " (pid " + std::to_string(writers_[slot]) +
         ") had exited with status " + std::to_string(WEXITSTATUS(*status)) + " before its kill");
  return SpawnWriter(slot);
}

Status Trial::KillMemoryServer(uint32_t node) {
  const std::string at = servers_[node]->address().ToString();
  const int64_t killed = check::JournalNow();
  servers_[node]->Signal(SIGKILL);
  auto status = servers_[node]->Wait(std::chrono::milliseconds(10000));
  if (!status.ok()) return status.status();
  MemserverSpec spec = ServerSpec(dir_, node, f_.transport);
  spec.listen = at;
  auto restarted = MemserverProcess::Start(spec);
  if (!restarted.ok()) return Status::Unavailable("restarting memory node " + std::to_string(node) + " on " + at +
                                                  ": " + restarted.status().ToString());
  servers_[node] = std::move(restarted).value();
  down_.push_back({killed, check::JournalNow()});
  char line[96];
  std::snprintf(line, sizeof line, " (down %.2f s)", static_cast<double>(down_.back().to_ns - killed) / 1e9);
  kill_log_ += line;
  return Status::Ok();
}

Status Trial::StopWriters() {
  if (std::FILE* stop = std::fopen(spec_.stop_file.c_str(), "w")) std::fclose(stop);
  else return Status::IoError("cannot create " + spec_.stop_file);
  for (uint32_t slot = 0; slot < f_.writers; ++slot) {
    auto status = WriterProcess::Wait(writers_[slot], kWriterStopWait);
    if (!status.ok()) {
      Fail("writer " + std::to_string(slot) + " did not stop within 60 s of the stop file (killed): hung?");
      kill(writers_[slot], SIGKILL);
      (void)WriterProcess::Wait(writers_[slot], std::chrono::seconds(10));
    } else if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
      Fail("writer " + std::to_string(slot) + " failed (wait status " + std::to_string(*status) + ")");
    }
    writers_[slot] = -1;
  }
  return Status::Ok();
}

std::string Trial::WriterLogs() const {
  std::string all;
  for (uint32_t i = 1; i <= incarnations_; ++i) {
    std::ifstream in(dir_ + "/writer." + std::to_string(i) + ".log");
    for (std::string line; std::getline(in, line);) all += "  writer." + std::to_string(i) + ": " + line + "\n";
  }
  return all;
}

uint32_t ComputeNodesOfVerifier(const std::string& design, uint32_t writers) {
  return design == "dex" || design.starts_with("dex:") ? writers : 1;
}

// The lease of the trial's design (its lease_ms knob, or the default 2 s) plus one second.
double DefaultMaxWait(const std::string& design) {
  const size_t at = design.find("lease_ms=");
  const double lease_s = at == std::string::npos ? 2.0 : std::stod(design.substr(at + 9)) / 1000;
  return lease_s + 1.0;
}

// Unknown outcomes answered in a row by one thread beyond which a trial fails: a kill
// accounts for the thread's operation in flight and, until its process has seen the server
// go, one or two issued on the dead connection (XStore's RPCs: a few); later operations wait
// for the server to come back. A failure kept as an endpoint's state answered 446 in a row
// (seed 500195, docs/results/crash-soak.md). Four a kill is the allowance, not a tuned figure.
// The machine's load average over the last minute (/proc/loadavg's first field), or "?": a
// wait over the bound on a machine loaded by other work is reported with it.
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one_minute;
  return in >> one_minute ? one_minute : "?";
}

uint64_t MostUnknownInARow(uint32_t kills) { return 4 * std::max<uint64_t>(kills, 1); }

int64_t Overlap(int64_t from, int64_t to, const std::vector<Interval>& intervals) {
  int64_t sum = 0;
  for (const Interval& i : intervals) sum += std::max<int64_t>(0, std::min(to, i.to_ns) - std::max(from, i.from_ns));
  return sum;
}

void Trial::Verify() {
  std::vector<check::Operation> ops;
  uint64_t answered = 0, unknown = 0, pending = 0, unknown_run = 0;
  std::string unknown_run_of;  // the journal of the longest run
  for (uint32_t incarnation = 1; incarnation <= incarnations_; ++incarnation)
    for (uint32_t t = 0; t < f_.threads; ++t) {
      const std::string path = SoakJournalPath(dir_, incarnation, t);
      if (!fs::exists(path)) continue;  // killed before it created its journals: did nothing
      auto journal = check::ReadJournal(path, incarnation, t);
      if (!journal.ok()) return Fail(journal.status().ToString());
      answered += journal->ops.size() - journal->pending;
      unknown += journal->unknown;
      pending += journal->pending;
      if (journal->longest_unknown_run > unknown_run)
        unknown_run = journal->longest_unknown_run, unknown_run_of = path;
      for (auto& op : journal->ops) ops.push_back(std::move(op));
    }
  if (answered == 0) return Fail("no operation was answered in the whole trial");
  // The longest wait, not counting the time a memory server was down.
  const double max_wait_s = f_.max_wait_s > 0 ? f_.max_wait_s : DefaultMaxWait(design_);
  const check::Operation* slowest = nullptr;
  int64_t worst_ns = 0, origin = ops.front().invoke_ns;
  for (const check::Operation& op : ops) {
    origin = std::min(origin, op.invoke_ns);
    if (op.response_ns == std::numeric_limits<int64_t>::max()) continue;
    // Counted from the last writer death before the answer, if it came after the start: an
    // operation may wait on each dead writer's lock in turn, and each wait is bounded from
    // that writer's death (the promise: nobody waits on the dead longer than a lease, and its
    // margin, after they died). Two deaths 0.6 s apart made an honest wait of 3.5 s from the
    // start (seed 340020, docs/FAILURES.md).
    int64_t from = op.invoke_ns;
    for (int64_t death : writer_deaths_)
      if (death > from && death < op.response_ns) from = death;
    const int64_t waited = op.response_ns - from - Overlap(from, op.response_ns, down_);
    if (waited > worst_ns) worst_ns = waited, slowest = &op;
  }
  const double worst_s = static_cast<double>(worst_ns) / 1e9;
  std::string slowest_text = slowest != nullptr ? check::Describe(*slowest, origin) : "";
  for (check::Operation& op : ops) {
    op.invoke_ns -= origin;
    if (op.response_ns != std::numeric_limits<int64_t>::max()) op.response_ns -= origin;
  }
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.invoke_ns < b.invoke_ns; });
  check::History history;
  history.ops = std::move(ops);
  history.clock_origin_ns = origin;

  FabricFlags fabric;
  fabric.memservers = spec_.memservers;
  fabric.transport = f_.transport;
  auto cluster = fabric.OpenCluster();
  if (!cluster.ok()) return Fail("verifier: " + cluster.status().ToString());
  auto index = OpenSoakIndex(spec_, *cluster, 0, ComputeNodesOfVerifier(design_, f_.writers));
  if (!index.ok()) return Fail("verifier: opening the index: " + index.status().ToString());
  auto present = check::ReadBackFinalState(**index, 0, &history);
  if (!present.ok()) return Fail("verifier: reading the index back: " + present.status().ToString());
  if (Status closed = (*index)->Close(); !closed.ok()) Fail("verifier: closing the index: " + closed.ToString());
  check::CheckReport report = check::CheckFinalState(history, *present);
  const uint64_t keys = report.keys_checked;
  report.Append(check::CheckHistory(history));
  if (!report.ok()) Fail(report.ToString(3));
  if (worst_s > max_wait_s) {
    char line[128];
    std::snprintf(line, sizeof line, "an operation waited %.3f s (memory servers' down time not counted), more than %.1f s:\n  ",
                  worst_s, max_wait_s);
    Fail(line + slowest_text);
  }
  if (unknown_run > MostUnknownInARow(f_.kills))
    Fail(std::to_string(unknown_run) + " operations in a row answered with an unknown outcome (more than " +
         std::to_string(MostUnknownInARow(f_.kills)) + " for " + std::to_string(f_.kills) +
         " kill(s)): a storm of failures instead of a wait for the server, in " + unknown_run_of);
  char line[256];
  std::snprintf(line, sizeof line,
                "%llu ops (%llu answered, %llu unknown, most in a row %llu, %llu pending), %llu keys; worst wait %.3f s",
                static_cast<unsigned long long>(answered + pending), static_cast<unsigned long long>(answered),
                static_cast<unsigned long long>(unknown), static_cast<unsigned long long>(unknown_run),
                static_cast<unsigned long long>(pending), static_cast<unsigned long long>(keys), worst_s);
  out_.summary += line;
}

TrialOutcome Trial::Run() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return {false, "cannot create " + dir_, ec.message()};
  Status s = Start();
  const auto began = runtime::Now();
  const auto at = [&](double fraction) {
    return began + std::chrono::duration_cast<runtime::Clock::duration>(std::chrono::duration<double>(fraction * f_.seconds));
  };
  std::vector<double> instants;
  for (uint32_t k = 0; k < f_.kills; ++k) instants.push_back(0.15 + 0.7 * std::uniform_real_distribution<double>()(rng_));
  std::sort(instants.begin(), instants.end());
  for (uint32_t k = 0; k < f_.kills && s.ok(); ++k) {
    // The first kill alternates with the seed, so consecutive seeds cover both kinds.
    const bool writer = k == 0 ? seed_ % 2 == 0 : rng_() % 2 == 0;
    const uint32_t victim = static_cast<uint32_t>(rng_() % (writer ? f_.writers : kMemoryServers));
    runtime::SleepUntil(at(instants[k]));
    char line[96];
    std::snprintf(line, sizeof line, "%s%s %u at %.2f s", k ? ", " : "", writer ? "writer" : "memory node", victim,
                  instants[k] * f_.seconds);
    kill_log_ += line;
    s = writer ? KillWriter(victim) : KillMemoryServer(victim);
  }
  if (s.ok()) {
    runtime::SleepUntil(at(1.0));
    load_ = LoadAverage();
    s = StopWriters();
  }
  if (!s.ok()) {
    Fail("the trial could not run: " + s.ToString());
    for (pid_t pid : writers_)
      if (pid > 0) kill(pid, SIGKILL), (void)WriterProcess::Wait(pid, std::chrono::seconds(10));
  } else {
    Verify();
  }
  servers_.clear();
  out_.summary = "kills: " + kill_log_ + "; " + out_.summary + "; load average " + load_;
  if (!out_.ok) out_.details += WriterLogs();
  return out_;
}

std::string ReplayCommand(const SoakFlags& f, uint64_t seed, const std::string& design) {
  std::ostringstream c;
  c << "dmindex soak --trials 1 --seed " << seed << " --designs " << design << " --seconds " << f.seconds
    << " --kills " << f.kills << " --writers " << f.writers << " --threads " << f.threads << " --keys " << f.keys
    << " --transport " << f.transport;
  if (f.max_wait_s > 0) c << " --max-wait " << f.max_wait_s;
  return c.str();
}

int RunSoak(const SoakFlags& f) {
  for (const std::string& design : f.designs) {
    auto choice = bench::ParseDesignChoice(design);
    Status shared = choice.ok() ? designs::SharedAcrossProcesses(choice->name) : choice.status();
    if (!shared.ok()) {
      std::cerr << "dmindex soak: --designs " << design << ": " << shared.ToString() << "\n";
      return 2;
    }
  }
  const std::string base = !f.dir.empty() ? f.dir : fs::exists("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
  std::string pattern = base + "/dmindex-soak-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "dmindex soak: cannot create a directory under " << base << "\n";
    return 2;
  }
  uint32_t failed = 0;
  for (uint32_t i = 0; i < f.trials; ++i) {
    const uint64_t seed = f.seed + i;
    const std::string& design = f.designs[i % f.designs.size()];
    const std::string dir = pattern + "/trial-" + std::to_string(seed);
    const auto started = runtime::Now();
    TrialOutcome out = Trial(f, seed, design, dir).Run();
    const double took = std::chrono::duration<double>(runtime::Now() - started).count();
    std::printf("trial %u seed %llu %s: %s (%.1f s): %s\n", i + 1, static_cast<unsigned long long>(seed), design.c_str(),
                out.ok ? "ok" : "FAILED", took, out.summary.c_str());
    std::fflush(stdout);  // a log of a long soak shows each trial as it ends
    if (out.ok && !f.keep) {
      std::error_code ec;
      fs::remove_all(dir, ec);
      continue;
    }
    if (out.ok) continue;
    ++failed;
    // The journals and logs say what went wrong; the pools (two 64 MiB files, in memory under
    // /dev/shm) are dropped unless asked for: a long soak must not fill the machine.
    for (uint32_t node = 0; node < kMemoryServers && !f.keep; ++node) {
      std::error_code ec;
      fs::remove_all(dir + "/node" + std::to_string(node), ec);
    }
    std::printf("%s  kept: %s\n  replay: %s\n", out.details.c_str(), dir.c_str(), ReplayCommand(f, seed, design).c_str());
    std::fflush(stdout);
  }
  std::fflush(stdout);
  if (failed == 0 && !f.keep) {
    std::error_code ec;
    fs::remove_all(pattern, ec);
  }
  std::printf("dmindex soak: %u trial(s), %u failed\n", f.trials, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace

void AddSoakCommand(CLI::App& app) {
  auto f = std::make_shared<SoakFlags>();
  CLI::App* cmd = app.add_subcommand(
      "soak", "Crash soak: trials that kill writer processes and memory servers (--data-dir pools) at random "
              "and check every acknowledged write, linearizability and waits (docs/FAILURES.md)");
  cmd->add_option("--designs", f->designs, "Designs shared across processes, with knobs; trials rotate over them")
      ->delimiter(',')
      ->capture_default_str();
  AddCount(*cmd, "--trials", &f->trials, 1, 100'000'000, "Trials (default 10)");
  AddCount(*cmd, "--seed", &f->seed, 0, UINT64_MAX - 100'000'000, "Seed of the first trial; trial i uses seed + i (default 1)");
  AddReal(*cmd, "--seconds", &f->seconds, {0.2, 3600}, "Writing phase of each trial, seconds (default 3)");
  AddCount(*cmd, "--kills", &f->kills, 0, 100, "Kills per trial, of writers and memory servers (default 2)");
  AddCount(*cmd, "--writers", &f->writers, 1, 8, "Writer processes (default 2)");
  AddCount(*cmd, "--threads", &f->threads, 1, 16, "Threads per writer (default 2)");
  AddCount(*cmd, "--keys", &f->keys, 1, 1u << 20, "Keys the writers race on, spread over the u64 key space (default 64)");
  cmd->add_option("--transport", f->transport, "Memory servers' transport")
      ->check(CLI::IsMember({"shm", "tcp"}))
      ->capture_default_str();
  cmd->add_option("--dir", f->dir, "Where trials keep pools, journals and logs (default /dev/shm)");
  AddReal(*cmd, "--max-wait", &f->max_wait_s, {0, 3600},
          "Longest wait of an answered operation, seconds, from its start or the last writer kill during it, memory servers' down time not counted (default: the "
          "design's lease plus 1 s)");
  cmd->add_flag("--keep", f->keep, "Keep the directories of trials that passed too, and the pools of failed ones");
  cmd->callback([f] {
    if (const int code = RunSoak(*f); code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace dmindex::tools
