// The simulated fabric keeps the in-process fabric's accounting: with one client thread, the
// same operation stream on every registered design issues exactly the same verbs, round trips
// and bytes whether the fabric is timed by the simulation or not (fabric/network_model.h only
// decides when a verb happens, never what it is).
//
// Where a design's verb stream depends on something other than the operations, that is pinned
// for both runs: DEX decides to offload by comparing measured latencies (offload=off), admits
// leaves at random (admission=1), and evicts at random when its cache is full (a cache larger
// than the index, so it never is); XStore's memory servers retrain models on background
// threads, whose results reach lookups when they are done (retrain=off: the models of the
// bulk load throughout).
#include <gtest/gtest.h>

#include <random>

#include "api/cluster_access.h"
#include "common/runtime.h"
#include "designs/registry.h"
#include "dmindex/index.h"
#include "sim_test_bed.h"

namespace dmindex::testing {
namespace {

// Loads 3000 keys, then runs 4000 seeded operations of every kind; returns the verbs the
// operations issued (the load's excluded) and whether every operation did what it should.
fabric::VerbCounts RunStream(const std::string& design, const std::shared_ptr<fabric::Fabric>& fabric, bool* ok) {
  auto cluster = ClusterOver(fabric);
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.design = design;
  o.name = "acct-" + design;
  o.node_bytes = 512;
  if (design == "dex") o.knobs = {{"offload", "off"}, {"admission", "1"}};
  if (design == "xstore") o.knobs = {{"retrain", "off"}};
  auto index = Index::Open(o, cluster);
  if (!index.ok()) {
    std::fprintf(stderr, "%s: %s\n", design.c_str(), index.status().ToString().c_str());
    *ok = false;
    return {};
  }
  std::vector<KeyValue> load;
  for (uint64_t k = 1; k <= 3000; ++k) load.push_back({U64Key(k * 4).str(), U64Key(k).str()});
  Status loaded = (*index)->BulkLoad(load);
  if (!loaded.ok()) std::fprintf(stderr, "%s: bulk load: %s\n", design.c_str(), loaded.ToString().c_str());
  *ok = loaded.ok();
  auto session = (*index)->OpenSession(0);
  *ok = *ok && session.ok();
  if (!*ok) return {};
  const fabric::VerbCounts before = fabric->TotalCounts();
  std::mt19937_64 rng(7);
  std::vector<KeyValue> scan;
  for (int i = 0; i < 4000; ++i) {
    const uint64_t k = 1 + rng() % 13000;
    uint64_t v;
    Status s;
    switch (rng() % 6) {
      case 0: s = (*session)->Insert(k, i); break;
      case 1: s = (*session)->Update(k, i); break;
      case 2: s = (*session)->Delete(k); break;
      case 3: s = (*session)->Scan(U64Key(k).str(), 20, &scan); break;
      default: s = (*session)->Lookup(k, &v); break;
    }
    if (!s.ok() && !s.IsNotFound()) {
      std::fprintf(stderr, "%s: op %d: %s\n", design.c_str(), i, s.ToString().c_str());
      *ok = false;
    }
  }
  const fabric::VerbCounts used = fabric->TotalCounts() - before;
  session->reset();
  *ok = *ok && (*index)->Close().ok();
  return used;
}

TEST(SimAccounting, OneThreadIssuesTheInProcessFabricsVerbsOnEveryDesign) {
  DMINDEX_SKIP_SIMULATION_UNDER_SANITIZERS();
  Figures f = RunInChild([] {
    Figures out{{"error", 0}};
    // One simulated cluster serves every design in turn, and each keeps its chunks (32 MiB)
    // until the end: rftree alone takes one on every memory node (its leaves go round robin
    // node by node), so the pools must hold a chunk per design per node.
    SimBed bed = SimBed::Make("dex-vldb24", FreeCompute(), 256ull << 20);
    if (!bed.ok()) return Figures{{"error", 1}};
    std::shared_ptr<fabric::Fabric> simulated(std::move(bed.fabric));
    for (const std::string& design : designs::DesignNames()) {
      fabric::InProcOptions o;
      o.memory_nodes = static_cast<uint16_t>(bed.sim->platform().memory.size());
      o.pool_bytes = 64ull << 20;
      o.prepare_node = designs::RegisterMemoryNodeHandlers;
      std::shared_ptr<fabric::Fabric> inproc(fabric::InProcFabric::Create(o).value());
      bool ok_inproc = false, ok_sim = false;
      const fabric::VerbCounts a = RunStream(design, inproc, &ok_inproc);
      fabric::VerbCounts b;
      Status s = bed.sim->Run([&] { b = RunStream(design, simulated, &ok_sim); });
      std::fprintf(stderr, "%-8s in-process %s\n%-8s simulated  %s\n", design.c_str(), a.ToString().c_str(),
                   design.c_str(), b.ToString().c_str());
      if (!ok_inproc || !ok_sim || !s.ok()) out["error"] = 1;
      out[design + "_equal"] = a == b ? 1 : 0;
      out[design + "_verbs"] = static_cast<double>(a.verbs() + a.rpcs);
    }
    return out;
  });
  ASSERT_EQ(f["error"], 0);
  for (const std::string& design : designs::DesignNames()) {
    EXPECT_EQ(f[design + "_equal"], 1) << design;
    // Designs living in this process (local, indexy, the store baselines, btree-disk) issue
    // none; the others must.
    if (designs::SharedAcrossProcesses(design).ok()) {
      EXPECT_GT(f[design + "_verbs"], 100) << design << ": the stream must reach the fabric";
    }
  }
}

}  // namespace
}  // namespace dmindex::testing
