// `dmindex soak-writer`: one writer process of a crash-soak trial (soak.h). It opens the
// trial's shared index over the memory servers, runs random upserts, updates, deletes and
// lookups on a small key space from a few threads, and journals every operation's invocation
// before the call and its response after it (check/journal.h), so that whatever instant
// `dmindex soak` kills it at, its history up to there is on disk. It runs until the stop
// file exists, then closes the index (DEX writes its pages back) and exits 0.
//
// Every written value is unique in the trial (incarnation, thread, sequence number), so the
// checkers can tell which write a read saw. An operation failing with Unavailable (a memory
// server down) is journalled with an unknown outcome and the writer goes on; any other
// error is journalled the same way, counted, and makes the exit status 3: the soak reports
// it. A lease revoked under it (the process was descheduled past its lease) closes and
// reopens the index, as the error says to.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <random>

#include "bench/runner.h"
#include "check/journal.h"
#include "common/retry.h"
#include "common/runtime.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"
#include "tools/flag_values.h"
#include "tools/soak.h"

namespace dmindex::tools {
namespace {

// Opening may meet a memory server that is down (it is being restarted) or, for DEX, the
// compute node of this writer's previous incarnation still held by its lease (2.5 s by
// default): both pass; anything still failing after this long is reported.
constexpr RetryLimit kSoakOpen{"attempts to open the index", 0, std::chrono::seconds(60),
                               Status::Code::kUnavailable, "the index never opened"};

struct WriterCounts {
  std::atomic<uint64_t> ops{0}, acknowledged{0}, unknown{0}, errors{0};
  std::atomic<bool> reopen{false};
  runtime::Mutex mu;
  std::string first_error;
  std::string first_unknown;  // the first answer whose effect is unknown (Unavailable...)
};

bool StopRequested(const std::string& stop_file) { return access(stop_file.c_str(), F_OK) == 0; }

// Key n of 1..keys: spread evenly over the u64 key space, so that DEX's compute nodes,
// which split the key space evenly, each serve some.
std::string KeyOf(uint64_t n, const SoakWriterSpec& spec) { return U64Key(n * (kMaxU64Key / (spec.keys + 1))).str(); }

// A key this process serves (DEX: keys of other compute nodes answer NotOwner).
std::string DrawKey(std::mt19937_64& rng, const SoakWriterSpec& spec, const Partitioning* partitioning) {
  std::string key = KeyOf(1 + rng() % spec.keys, spec);
  for (int attempt = 0; partitioning != nullptr && attempt < 16; ++attempt) {
    if (partitioning->RouteKey(key).hosted) break;
    key = KeyOf(1 + rng() % spec.keys, spec);
  }
  return key;
}

// One thread's operations until the stop file appears (or the lease was revoked).
Status RunThread(Index& index, const SoakWriterSpec& spec, uint32_t thread, check::OpJournal& journal,
                 uint64_t* sequence, WriterCounts& counts) {
  auto session = index.OpenSession(0);
  if (!session.ok()) return session.status();
  std::mt19937_64 rng(spec.seed * 0x9E3779B97F4A7C15ull + spec.incarnation * 1'000'003ull + thread + *sequence);
  const Partitioning* partitioning = index.partitioning();
  while (!StopRequested(spec.stop_file) && !counts.reopen.load()) {
    const std::string key = DrawKey(rng, spec, partitioning);
    // Values: incarnation, thread and sequence number, unique in the trial.
    const std::string value = U64Key(uint64_t{spec.incarnation} << 40 | uint64_t{thread} << 32 | ++*sequence).str();
    const uint32_t dice = static_cast<uint32_t>(rng() % 100);
    const check::OpKind kind = dice < 45   ? check::OpKind::kInsert
                               : dice < 60 ? check::OpKind::kUpdate
                               : dice < 70 ? check::OpKind::kDelete
                                           : check::OpKind::kLookup;
    auto id = journal.Invoke(kind, key, kind == check::OpKind::kLookup || kind == check::OpKind::kDelete ? "" : value);
    if (!id.ok()) return id.status();
    std::string read;
    Status s;
    switch (kind) {
      case check::OpKind::kInsert: s = (*session)->Insert(key, value); break;
      case check::OpKind::kUpdate: s = (*session)->Update(key, value); break;
      case check::OpKind::kDelete: s = (*session)->Delete(key); break;
      default: s = (*session)->Lookup(key, &read); break;
    }
    if (s.IsNotOwner()) {
      DMX_RETURN_IF_ERROR(journal.Refused(*id));
      continue;
    }
    const check::Outcome outcome = s.ok() ? check::Outcome::kOk
                                   : s.IsNotFound() ? check::Outcome::kNotFound
                                                    : check::Outcome::kUnknown;
    DMX_RETURN_IF_ERROR(journal.Respond(*id, outcome, read));
    counts.ops.fetch_add(1);
    counts.acknowledged.fetch_add(outcome != check::Outcome::kUnknown);
    if (outcome != check::Outcome::kUnknown) continue;
    if (counts.unknown.fetch_add(1) == 0) {
      std::lock_guard lock(counts.mu);
      counts.first_unknown = s.ToString();
    }
    if (s.message().find("revoked") != std::string::npos) counts.reopen.store(true);
    if (s.IsUnavailable()) continue;
    if (counts.errors.fetch_add(1) == 0) {
      std::lock_guard lock(counts.mu);
      counts.first_error = s.ToString();
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Index>> OpenSoakIndex(const SoakWriterSpec& spec, const std::shared_ptr<Cluster>& cluster,
                                             uint32_t first, uint32_t compute_nodes) {
  auto options = SoakIndexOptions(spec, first, compute_nodes);
  if (!options.ok()) return options.status();
  options->create_if_missing = false;  // `dmindex soak` created it; never a fresh empty one
  RetryBudget budget(kSoakOpen, "opening the soak's index");
  Backoff backoff(backoff::kPoll, "the soak's index to open");
  for (;;) {
    auto index = Index::Open(*options, cluster);
    if (index.ok() || !budget.Spend()) return index;
    if (index.status().IsNotFound()) return index.status();  // lost: the soak reports it
    backoff.Pause();
  }
}

namespace {

// A writer started while a memory server is down (restarted after a kill) connects once it
// is back.
Result<std::shared_ptr<Cluster>> ConnectWithRetries(const SoakWriterSpec& spec) {
  FabricFlags fabric;
  fabric.memservers = spec.memservers;
  fabric.transport = spec.transport;
  RetryBudget budget(kSoakOpen, "connecting to the soak's memory servers");
  Backoff backoff(backoff::kPoll, "the soak's memory servers");
  for (;;) {
    auto cluster = fabric.OpenCluster();
    if (cluster.ok() || !budget.Spend()) return cluster;
    backoff.Pause();
  }
}

int RunWriter(const SoakWriterSpec& spec) {
  auto cluster = ConnectWithRetries(spec);
  if (!cluster.ok()) {
    std::cerr << "dmindex soak-writer: " << cluster.status().ToString() << "\n";
    return 2;
  }
  std::vector<std::unique_ptr<check::OpJournal>> journals;
  for (uint32_t t = 0; t < spec.threads; ++t) {
    auto j = check::OpJournal::Create(SoakJournalPath(spec.journal_dir, spec.incarnation, t));
    if (!j.ok()) {
      std::cerr << "dmindex soak-writer: " << j.status().ToString() << "\n";
      return 2;
    }
    journals.push_back(std::move(j).value());
  }
  WriterCounts counts;
  std::vector<uint64_t> sequences(spec.threads, 0);
  Status failure;
  uint32_t opens = 0;
  while (failure.ok() && !StopRequested(spec.stop_file)) {
    auto index = OpenSoakIndex(spec, *cluster, spec.writer, 1);
    if (!index.ok()) {
      failure = index.status();
      break;
    }
    if (++opens == 1)  // tells `dmindex soak` this writer runs (the trial's clock starts when all do)
      if (std::FILE* ready = std::fopen(SoakReadyPath(spec.journal_dir, spec.incarnation).c_str(), "w")) std::fclose(ready);
    counts.reopen.store(false);
    std::vector<Status> results(spec.threads);
    std::vector<runtime::Thread> threads;
    for (uint32_t t = 0; t < spec.threads; ++t)
      threads.emplace_back([&, t] { results[t] = RunThread(**index, spec, t, *journals[t], &sequences[t], counts); });
    for (auto& t : threads) t.join();
    for (const Status& s : results)
      if (failure.ok() && !s.ok()) failure = s;
    // DEX writes its dirty pages back here; a memory server down at this instant makes it
    // fail, which loses nothing its log holds.
    if (Status closed = (*index)->Close(); !closed.ok() && !closed.IsUnavailable() && failure.ok())
      failure = closed;
  }
  std::printf("soak-writer %u (incarnation %u): %llu operations, %llu answered, %llu unknown, %u open(s)\n",
              spec.writer, spec.incarnation, static_cast<unsigned long long>(counts.ops.load()),
              static_cast<unsigned long long>(counts.acknowledged.load()),
              static_cast<unsigned long long>(counts.unknown.load()), opens);
  if (counts.unknown.load() > 0)
    std::printf("soak-writer %u: the first answer whose effect is unknown: %s\n", spec.writer, counts.first_unknown.c_str());
  if (!failure.ok()) {
    std::cerr << "dmindex soak-writer: " << failure.ToString() << "\n";
    return 2;
  }
  if (counts.errors.load() > 0) {
    std::cerr << "dmindex soak-writer: " << counts.errors.load() << " operation(s) failed with an error other "
              << "than Unavailable; first: " << counts.first_error << "\n";
    return 3;
  }
  return 0;
}

}  // namespace

Result<IndexOptions> SoakIndexOptions(const SoakWriterSpec& spec, uint32_t first, uint32_t compute_nodes) {
  auto design = bench::ParseDesignChoice(spec.design);
  if (!design.ok()) return design.status();
  IndexOptions o;
  o.name = spec.index_name;
  o.design = design->name;
  o.knobs = design->knobs;
  o.key_format = KeyFormat::kU64;
  o.max_key_bytes = kU64KeyBytes;
  o.node_bytes = 256;  // a few dozen keys split leaves and internal nodes while the kills land
  o.compute_nodes = compute_nodes;
  if (design->name == "dex") {  // one compute node per writer slot, hosted by that writer
    o.knobs["partitions"] = std::to_string(spec.writers);
    o.knobs["first_node"] = std::to_string(first);
  }
  return o;
}

std::string SoakReadyPath(const std::string& dir, uint32_t incarnation) {
  return dir + "/ready." + std::to_string(incarnation);
}

std::string SoakJournalPath(const std::string& dir, uint32_t incarnation, uint32_t thread) {
  return dir + "/journal." + std::to_string(incarnation) + "." + std::to_string(thread);
}

void AddSoakWriterCommand(CLI::App& app) {
  auto spec = std::make_shared<SoakWriterSpec>();
  CLI::App* cmd = app.add_subcommand(
      "soak-writer", "A writer process of `dmindex soak` (started and killed by it): journals every "
                     "operation on the trial's shared index until --stop-file exists");
  cmd->group("");  // internal: not in the tool's help
  cmd->add_option("--memservers", spec->memservers, "HOST:PORT,... of the memory servers")->required();
  cmd->add_option("--transport", spec->transport, "shm or tcp")->capture_default_str();
  cmd->add_option("--design", spec->design, "Design, with knobs")->capture_default_str();
  cmd->add_option("--index-name", spec->index_name, "The shared index")->capture_default_str();
  AddCount(*cmd, "--writer", &spec->writer, 0, 63, "This writer's slot");
  AddCount(*cmd, "--writers", &spec->writers, 1, 64, "Writer slots");
  AddCount(*cmd, "--incarnation", &spec->incarnation, 1, 1u << 23, "Unique number of this process in the trial");
  AddCount(*cmd, "--threads", &spec->threads, 1, 255, "Threads");
  AddCount(*cmd, "--keys", &spec->keys, 1, 1u << 20, "Keys");
  AddCount(*cmd, "--seed", &spec->seed, 0, UINT64_MAX, "Seed");
  cmd->add_option("--journal-dir", spec->journal_dir, "Directory of the journals")->required();
  cmd->add_option("--stop-file", spec->stop_file, "Stop once this file exists")->required();
  cmd->callback([spec] {
    if (const int code = RunWriter(*spec); code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace dmindex::tools
