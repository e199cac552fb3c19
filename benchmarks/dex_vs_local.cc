// dex_vs_local: DEX's hit path against `local`, the CPU per operation of one thread on the
// in-process fabric (no latency), the same 1 M random u64 keys, one binary (docs/results/
// dex-hit-path.md; issue 26 item 2: DEX fully cached within 1.25x of local).
//
//   build/benchmarks/dex_vs_local --benchmark_repetitions=5 --benchmark_report_aggregates_only
//
// Each design is loaded with kKeys keys, then (DEX) every key is looked up once with leaf
// admission 1, so every node is in the cache before the timing starts; the benchmark checks
// that the timed loop missed nothing (Index::Stats' cache misses unchanged), so it measures
// the hit path and only it. Operations: a lookup of a present key, and an update of a present
// key (same-size value), in a random order. DEX runs with durability=none (the paper's: no
// redo log record per write) and with its default durability=log.
//
// Profiling the timed loops alone (not the load): with DMX_PERF_CTL naming perf's control
// fifo, each benchmark enables perf's events for its timed loop only:
//   mkfifo /tmp/ctl
//   DMX_PERF_CTL=/tmp/ctl perf record --control fifo:/tmp/ctl -D -1 -- build/benchmarks/dex_vs_local
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "designs/registry.h"
#include "dmindex/index.h"
#include "random_keys.h"
#include "fabric/inproc/inproc_fabric.h"

namespace dmindex {
namespace {

constexpr size_t kKeys = bench::kBenchKeys;
constexpr uint32_t kNodeBytes = 1024;  // IndexOptions' default

using bench::TheKeys;
using Keys = bench::RandomKeys;

struct Variant {
  const char* label;
  const char* design;
  std::map<std::string, std::string> knobs;
};
const Variant kVariants[] = {
    {"local", "local", {}},
    {"dex", "dex", {{"admission", "1"}, {"durability", "none"}}},
    {"dex-log", "dex", {{"admission", "1"}}},
};

std::unique_ptr<fabric::InProcFabric> g_fabric;

void Must(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "dex_vs_local: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}
std::unique_ptr<Index> g_index;

uint64_t CacheMisses() { return g_index->Stats().cache_misses; }

// Tells perf (DMX_PERF_CTL: its --control fifo) to sample while it lives; no-op without it.
class PerfWindow {
 public:
  PerfWindow() { Send("enable\n"); }
  ~PerfWindow() { Send("disable\n"); }

 private:
  static void Send(const char* command) {
    const char* fifo = std::getenv("DMX_PERF_CTL");
    if (fifo == nullptr) return;
    if (std::FILE* f = std::fopen(fifo, "w")) {
      std::fputs(command, f);
      std::fclose(f);
    }
  }
};

int g_loaded = -1;  // the variant g_index holds

void Drop() {
  g_index.reset();
  g_fabric.reset();
  g_loaded = -1;
}

// Loads variant V unless it is loaded already: its lookups and updates (and every
// repetition of them) share one load.
template <int V>
void Load(const benchmark::State&) {
  if (g_loaded == V) return;
  Drop();
  g_loaded = V;
  const Variant& v = kVariants[V];
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 1ull << 30;
  auto f = fabric::InProcFabric::Create(fo);
  Must(f.status(), "fabric");
  g_fabric = std::move(f).value();
  IndexOptions o;
  o.name = v.design;
  o.key_format = KeyFormat::kU64;
  o.node_bytes = kNodeBytes;
  o.cache_bytes = 512ull << 20;  // several times the tree: nothing is evicted
  o.knobs = v.knobs;
  auto index = designs::MakeIndex(v.design, *g_fabric, o);
  Must(index.status(), "index");
  g_index = std::move(index).value();
  auto s = std::move(g_index->OpenSession(0)).value();
  const Keys& keys = TheKeys();
  for (const std::string& k : keys.insert_order)
    Must(s->Insert(k, k), "load");
  std::string value;
  for (int pass = 0; pass < 2; ++pass)  // admission 1: the first pass admits, the second checks
    for (const std::string& k : keys.lookup_order)
      Must(s->Lookup(k, &value), "warm-up lookup");
}

void BM_Lookup(benchmark::State& state) {
  const Keys& keys = TheKeys();
  auto s = std::move(g_index->OpenSession(0)).value();
  const uint64_t misses = CacheMisses();
  std::string value;
  size_t i = 0;
  {
    PerfWindow perf;
    for (auto _ : state) {
      benchmark::DoNotOptimize(s->Lookup(keys.lookup_order[i], &value));
      if (++i == kKeys) i = 0;
    }
  }
  if (value.size() != 8) state.SkipWithError("lookup found nothing");
  if (CacheMisses() != misses) state.SkipWithError("the timed loop missed the cache");
  state.SetItemsProcessed(state.iterations());
}

void BM_Update(benchmark::State& state) {
  const Keys& keys = TheKeys();
  auto s = std::move(g_index->OpenSession(0)).value();
  const uint64_t misses = CacheMisses();
  size_t i = 0;
  {
    PerfWindow perf;
    for (auto _ : state) {
      benchmark::DoNotOptimize(s->Update(keys.lookup_order[i], keys.lookup_order[i]));
      if (++i == kKeys) i = 0;
    }
  }
  if (CacheMisses() != misses) state.SkipWithError("the timed loop missed the cache");
  state.SetItemsProcessed(state.iterations());
}

template <int V>
void RegisterVariant() {
  const std::string label = kVariants[V].label;
  benchmark::RegisterBenchmark(("lookup/" + label).c_str(), BM_Lookup)->Setup(Load<V>);
  benchmark::RegisterBenchmark(("update/" + label).c_str(), BM_Update)->Setup(Load<V>);
}

}  // namespace
}  // namespace dmindex

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  dmindex::RegisterVariant<0>();
  dmindex::RegisterVariant<1>();
  dmindex::RegisterVariant<2>();
  benchmark::RunSpecifiedBenchmarks();
  dmindex::Drop();
  benchmark::Shutdown();
  return 0;
}
