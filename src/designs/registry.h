// The designs dmindex implements, by name. The bench driver and the correctness harness
// reach every design through here, so a new design is one entry in registry.cc (in-memory,
// dmindex::core) or in baselines/baseline_designs.cc (needing a disk store or another
// library, dmindex::baselines). A program that links dmindex::core alone has the first table
// only: there, a design of the second is NotSupported naming the target to link, wherever an
// unknown design is InvalidArgument below.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/knob_table.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "fabric/memory_node.h"

namespace dmindex::designs {

// The designs linked into this program (every one in the dmindex command and the tests).
std::vector<std::string> DesignNames();
// The designs of dmindex::baselines, whether this program links them or not.
std::vector<std::string> BaselineDesigns();
// The designs that take a memory limit as their knob limit_mb (an index larger than memory:
// indexy, the store baselines, btree-disk).
std::vector<std::string> MemoryLimitedDesigns();

// What a registered name is when it is not a design of the literature but a baseline to
// measure the designs against (e.g. `absl`); empty for the designs.
std::string DesignNote(std::string_view design);
// The design's knobs (IndexOptions::knobs) from its knob table, with their defaults, in the
// table's order; empty for a design without knobs. InvalidArgument for an unknown design.
Result<std::vector<KnobDoc>> DesignKnobs(std::string_view design);

// Ok if an index of `design` lives in the memory pool such that several compute processes
// can open it by IndexOptions::name and see each other's writes; NotSupported saying why not
// (e.g. `local` lives in the opening process); InvalidArgument for an unknown design.
Status SharedAcrossProcesses(std::string_view design);

// Whether the design's operations are verbs on the cluster (its index lives in the pool):
// the fabric's fault injection (torn verbs, delays) reaches only those designs.
bool IssuesVerbs(std::string_view design);

// Registers every design's memory-side RPC handlers (DEX offload, ...) on a memory node that
// is about to serve: the one place a memory node learns about designs, in a memory server
// process (dmindex memserver) and in the in-process cluster (InProcOptions::prepare_node).
Status RegisterMemoryNodeHandlers(fabric::MemoryNode& node);

// options.node_bytes, or for kAutoNodeBytes the size the key limits need (options.h).
uint32_t NodeBytesFor(const IndexOptions& options);

// Creates (or opens, if the catalog already holds options.name) an index of `design` on
// `fabric` (options.design is set to it, and node_bytes to NodeBytesFor). InvalidArgument
// if the design cannot honour options.directory or create_if_missing (options.h). The fabric must outlive the index. The public
// entry point, Index::Open (src/api/open.cc), comes through here.
Result<std::unique_ptr<Index>> MakeIndex(std::string_view design, fabric::Fabric& fabric,
                                         const IndexOptions& options);

}  // namespace dmindex::designs
