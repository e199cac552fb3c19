// The in-process fabric: memory nodes are regions of this process. The embedded default
// and the test bed: it counts every verb (as every backend does), can add modelled network
// cost, and can inject the faults real RDMA shows (torn multi-cache-line reads and writes,
// delayed verbs, a memory node that stops answering) at random, or, for deterministic tests,
// at the instants a test script chooses (verb_script.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "fabric/fabric.h"
#include "fabric/inproc/verb_script.h"
#include "fabric/memory_node.h"
#include "fabric/network_model.h"

namespace dmindex::fabric {

struct FaultOptions {
  // READs and WRITEs longer than `tear_piece` bytes are carried out in tear_piece-sized
  // pieces (aligned to absolute addresses) in random order, yielding the CPU between pieces
  // so concurrent verbs interleave. Models NICs that split large READs into cache-line DMA
  // reads with no ordering among them (Ziegler et al., SIGMOD'23). Unordered batches are
  // also executed in random order.
  bool tear = false;
  uint32_t tear_piece = 64;
  // With this probability a round trip is held back for a random time up to delay_max_us
  // before it executes.
  double delay_probability = 0.0;
  uint32_t delay_max_us = 50;
  uint64_t seed = 42;
};

struct InProcOptions {
  uint16_t memory_nodes = 1;
  // Pool bytes per memory node. Reserved with mmap and touched lazily, so a large pool
  // costs only what is used.
  uint64_t pool_bytes = 4ull << 30;
  MemoryNodeOptions node;
  // Modelled network: every round trip costs round_trip_ns plus bytes at bandwidth_gbps
  // (0 = unlimited). Waiting yields the CPU, so other threads make progress meanwhile.
  uint64_t round_trip_ns = 0;
  double bandwidth_gbps = 0.0;
  FaultOptions faults;
  // Times verbs and RPCs instead of round_trip_ns and bandwidth_gbps (which must then be 0):
  // a simulated platform (src/sim/). The regions, memory nodes, checks, faults and accounting
  // stay this fabric's.
  std::shared_ptr<NetworkModel> network;
  // Run on each memory node before it serves, as a memory server process does before it
  // listens: registers the designs' memory-side RPC handlers (designs::RegisterMemoryNodeHandlers;
  // the fabric layer cannot name designs, so its creator passes them in). Empty: none.
  std::function<Status(MemoryNode&)> prepare_node;
};

class InProcFabric final : public Fabric {
 public:
  static Result<std::unique_ptr<InProcFabric>> Create(const InProcOptions& options);
  ~InProcFabric() override;

  uint16_t memory_nodes() const override { return static_cast<uint16_t>(nodes_.size()); }
  const char* backend_name() const override {
    return options_.network ? options_.network->name() : "inproc";
  }

  MemoryNode& node(uint16_t id) { return *nodes_[id]; }
  const InProcOptions& options() const { return options_; }

  // Tests: memory node `id`'s server restarts on a persistent pool, as a `memserver
  // --data-dir` process killed and started again: its MemoryNode (handlers, their threads)
  // goes away and a new one serves the same bytes, with the pool's identity and its next
  // incarnation, prepared by prepare_node as at creation. Only while no verb or RPC is in
  // flight; endpoints stay valid.
  Status RestartNode(uint16_t id);

  // Fault injection that can be switched during a run.
  void SetNodeDown(uint16_t id, bool down);
  bool IsNodeDown(uint16_t id) const;
  void SetFaults(const FaultOptions& faults);
  FaultOptions faults() const;
  // Deterministic tests: every READ and WRITE is first offered to `script` (verb_script.h);
  // nullptr removes it. Not owned: remove it before destroying it; removal returns once no
  // thread still runs a script (ScriptSlot).
  void SetVerbScript(VerbScript* script) { script_.Set(script); }

 protected:
  Result<std::unique_ptr<Endpoint>> DoConnect() override;

 private:
  friend class InProcEndpoint;
  explicit InProcFabric(const InProcOptions& options);

  InProcOptions options_;
  struct Region {
    std::byte* base = nullptr;
    uint64_t size = 0;
  };
  std::vector<Region> regions_;
  std::vector<std::unique_ptr<MemoryNode>> nodes_;
  std::unique_ptr<std::atomic<bool>[]> down_;
  // Read on every verb, changed only between test phases: plain atomics suffice.
  std::atomic<bool> tear_{false};
  std::atomic<uint32_t> tear_piece_{64};
  std::atomic<double> delay_probability_{0.0};
  std::atomic<uint32_t> delay_max_us_{0};
  std::atomic<uint64_t> seed_counter_{0};
  ScriptSlot script_;
  uint64_t base_seed_ = 42;
};

}  // namespace dmindex::fabric
