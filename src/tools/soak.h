// `dmindex soak` (soak_command.cc) and the writer processes it starts and kills
// (`dmindex soak-writer`, soak_writer.cc): what both need to agree on.
#pragma once

#include <cstdint>
#include <string>

#include "dmindex/index.h"
#include "dmindex/status.h"

namespace dmindex::tools {

// How one writer process of a trial opens the shared index and what it writes.
struct SoakWriterSpec {
  std::string memservers;       // HOST:PORT,... of the trial's memory servers
  std::string transport = "shm";
  std::string design = "sherman";  // with knobs, as --design takes it
  std::string index_name = "soak";
  uint32_t writer = 0;          // this writer's slot (DEX: the compute node it hosts)
  uint32_t writers = 2;         // writer slots of the trial (DEX: the index's compute nodes)
  uint32_t incarnation = 1;     // unique per started process of a trial: stamps its values
  uint32_t threads = 2;
  uint32_t keys = 64;           // the key space: `keys` u64 keys spread evenly over all u64 keys
  uint64_t seed = 1;
  std::string journal_dir;      // journals go to <dir>/journal.<incarnation>.<thread>
  std::string stop_file;        // the writer stops (and closes the index) once it exists
};

// The options every process of a trial opens the index with. `compute_nodes` hosted from
// `first` (DEX: the writer's slot; the creator and the verifier host them all).
Result<IndexOptions> SoakIndexOptions(const SoakWriterSpec& spec, uint32_t first, uint32_t compute_nodes);

// Opens the trial's index (never creates it), retrying while a memory server is down or a
// DEX compute node is still held by a dead process's lease; NotFound at once.
Result<std::unique_ptr<Index>> OpenSoakIndex(const SoakWriterSpec& spec, const std::shared_ptr<Cluster>& cluster,
                                             uint32_t first, uint32_t compute_nodes);

// <dir>/ready.<incarnation>: created by a writer once it opened the index.
std::string SoakReadyPath(const std::string& dir, uint32_t incarnation);

// <dir>/journal.<incarnation>.<thread>
std::string SoakJournalPath(const std::string& dir, uint32_t incarnation, uint32_t thread);

}  // namespace dmindex::tools
