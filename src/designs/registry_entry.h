// One design of the registry (registry.h), and how the registry finds the designs of
// dmindex::baselines without calling them. Only the registry's two tables include this:
// src/designs/registry.cc (the in-memory designs, dmindex::core) and
// src/designs/baselines/baseline_designs.cc (dmindex::baselines).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "common/knob_table.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "fabric/memory_node.h"

namespace dmindex::designs {

using Factory = std::function<Result<std::unique_ptr<Index>>(fabric::Fabric&, const IndexOptions&)>;

// Where a design keeps an index, which decides what IndexOptions::name, create_if_missing and
// directory mean for it (options.h).
enum class Home {
  kPool,       // the cluster's pool: found by name in the catalog; no directory
  kProcess,    // this process, for the Index object's life: nothing to reopen; no directory
  kDirectory,  // <directory>/<name> when a directory is given, else a temporary folder
};

struct Entry {
  const char* name;
  Factory make;
  Home home = Home::kPool;
  const char* not_shared_because = nullptr;  // null: SharedAcrossProcesses (registry.h)
  // The design's memory-side RPC handlers, registered on a memory node before it serves.
  Status (*register_memory_side)(fabric::MemoryNode&) = nullptr;
  bool memory_limit = false;  // takes the knob limit_mb (MemoryLimitedDesigns)
  const char* baseline = nullptr;  // non-null: a yardstick, not a design; what it is (DesignNote)
  // Its knob table's rows with their defaults (DesignKnobs); null: it takes no knobs.
  std::vector<KnobDoc> (*knobs)() = nullptr;
};

}  // namespace dmindex::designs

// The designs of dmindex::baselines (IndeXY, the store baselines, btree-disk, absl), defined by
// the layer designs_baselines. Weak: a program that links dmindex::core alone has no such
// symbol (the address is null), links none of RocksDB, LMDB and abseil, and its registry
// answers NotSupported naming the target to link. Whoever links the layer is made to pull it
// in (dmindex_layer's LINK_SYMBOL, CMakeLists.txt), since nothing calls it by a strong reference.
extern "C" const std::vector<dmindex::designs::Entry>* dmindex_baseline_designs() __attribute__((weak));
