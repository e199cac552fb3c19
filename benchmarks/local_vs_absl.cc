// local_vs_absl: the CPU per operation of `local` (LocalTree<U64Keys>, src/designs/local/)
// against absl::btree_map, one binary, the same random u64 keys (docs/LOCAL.md).
//
//   build/benchmarks/local_vs_absl --benchmark_repetitions=5 --benchmark_report_aggregates_only
//
// Two levels, each run for both:
//  * tree/...: the structure itself, doing the work every Index must do: the key arrives as its
//    8 big-endian bytes and a found value leaves as a std::string. LocalTree's Upsert/Lookup
//    against btree_map<uint64_t, uint64_t>'s insert_or_assign/find with those conversions.
//  * design/...: the registered designs `local` and `absl` through the public Session calls,
//    with 1 and 2 threads sharing one index (absl: one shared mutex; local: optimistic lock
//    coupling).
// Inserts: each iteration is one insert into a structure that grows to kKeys entries and is then
// dropped (outside the timing). Lookups: each iteration is one lookup of a present key, in a
// random order, in a structure of kKeys entries.
#include <absl/container/btree_map.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "designs/local/local_tree.h"
#include "designs/registry.h"
#include "dmindex/index.h"
#include "random_keys.h"
#include "fabric/inproc/inproc_fabric.h"

namespace dmindex {
namespace {

constexpr size_t kKeys = bench::kBenchKeys;
constexpr uint32_t kNodeBytes = 1024;  // IndexOptions' default, what `dmindex bench` gives local

// kKeys distinct random keys (fixed seed) as 8-byte big-endian strings, and a lookup order.
using bench::TheKeys;
using Keys = bench::RandomKeys;

uint64_t Decode(Slice s) {
  uint64_t v;
  std::memcpy(&v, s.data(), 8);
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}

// --- tree level ---

using AbslMap = absl::btree_map<uint64_t, uint64_t>;
using LocalU64 = designs::local::LocalTree<designs::local::U64Keys>;

// The structures under test, made by a benchmark's Setup and dropped by its Teardown, outside
// the timing (Google Benchmark calls both once per run, around all of its threads).
std::unique_ptr<AbslMap> g_map;
std::unique_ptr<LocalU64> g_tree;
std::unique_ptr<Index> g_index;
std::unique_ptr<fabric::InProcFabric> g_fabric;

void AbslMapInsert(AbslMap& map, Slice key, Slice value) { map.insert_or_assign(Decode(key), Decode(value)); }
void AbslMapLookup(const AbslMap& map, Slice key, std::string* value) {
  auto it = map.find(Decode(key));
  if (it == map.end()) return;
  const uint64_t big = std::endian::native == std::endian::little ? __builtin_bswap64(it->second) : it->second;
  value->assign(reinterpret_cast<const char*>(&big), 8);
}

void MakeAbslMap(const benchmark::State&) { g_map = std::make_unique<AbslMap>(); }
void FillAbslMap(const benchmark::State& state) {
  MakeAbslMap(state);
  for (const std::string& k : TheKeys().insert_order) AbslMapInsert(*g_map, k, k);
}
void DropAbslMap(const benchmark::State&) { g_map.reset(); }
void MakeLocalTree(const benchmark::State&) { g_tree = std::make_unique<LocalU64>(kNodeBytes); }
void FillLocalTree(const benchmark::State& state) {
  MakeLocalTree(state);
  LocalU64::Worker worker(*g_tree);
  for (const std::string& k : TheKeys().insert_order) (void)g_tree->Upsert(worker, k, k);
}
void DropLocalTree(const benchmark::State&) { g_tree.reset(); }

// Iterations(kKeys): the structure grows from empty to kKeys entries.
void BM_TreeInsert_Absl(benchmark::State& state) {
  const Keys& keys = TheKeys();
  size_t i = 0;
  for (auto _ : state) {
    const Slice key = keys.insert_order[i++];
    AbslMapInsert(*g_map, key, key);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_TreeInsert_Local(benchmark::State& state) {
  const Keys& keys = TheKeys();
  LocalU64::Worker worker(*g_tree);
  size_t i = 0;
  for (auto _ : state) {
    const Slice key = keys.insert_order[i++];
    benchmark::DoNotOptimize(g_tree->Upsert(worker, key, key));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_TreeLookup_Absl(benchmark::State& state) {
  const Keys& keys = TheKeys();
  std::string value;
  size_t i = 0;
  for (auto _ : state) {
    AbslMapLookup(*g_map, keys.lookup_order[i], &value);
    benchmark::DoNotOptimize(value.data());
    if (++i == kKeys) i = 0;
  }
  if (value.size() != 8) state.SkipWithError("lookup found nothing");
  state.SetItemsProcessed(state.iterations());
}

void BM_TreeLookup_Local(benchmark::State& state) {
  const Keys& keys = TheKeys();
  LocalU64::Worker worker(*g_tree);
  std::string value;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(g_tree->Lookup(worker, keys.lookup_order[i], &value));
    if (++i == kKeys) i = 0;
  }
  if (value.size() != 8) state.SkipWithError("lookup found nothing");
  state.SetItemsProcessed(state.iterations());
}

// --- design level: the registered designs through Session, threads sharing one index ---

void OpenDesign(const std::string& design) {
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  auto f = fabric::InProcFabric::Create(fo);
  if (!f.ok()) std::abort();
  g_fabric = std::move(f).value();
  IndexOptions o;
  o.name = design;
  o.node_bytes = kNodeBytes;
  auto index = designs::MakeIndex(design, *g_fabric, o);
  if (!index.ok()) std::abort();
  g_index = std::move(index).value();
}
void FillDesign(const std::string& design) {
  OpenDesign(design);
  auto s = std::move(g_index->OpenSession(0)).value();
  for (const std::string& k : TheKeys().insert_order) (void)s->Insert(k, k);
}
void DropDesign(const benchmark::State&) {
  g_index.reset();
  g_fabric.reset();
}

// Iterations(kKeys / threads): thread t inserts keys t, t + threads, ...
void BM_DesignInsert(benchmark::State& state) {
  const Keys& keys = TheKeys();
  auto s = std::move(g_index->OpenSession(0)).value();
  size_t i = static_cast<size_t>(state.thread_index());
  const auto step = static_cast<size_t>(state.threads());
  for (auto _ : state) {
    benchmark::DoNotOptimize(s->Insert(keys.insert_order[i], keys.insert_order[i]));
    i += step;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_DesignLookup(benchmark::State& state) {
  const Keys& keys = TheKeys();
  auto s = std::move(g_index->OpenSession(0)).value();
  std::string value;
  size_t i = (kKeys / 2) * static_cast<size_t>(state.thread_index());
  for (auto _ : state) {
    benchmark::DoNotOptimize(s->Lookup(keys.lookup_order[i], &value));
    if (++i == kKeys) i = 0;
  }
  if (value.size() != 8) state.SkipWithError("lookup found nothing");
  state.SetItemsProcessed(state.iterations());
}

constexpr const char* kDesigns[] = {"absl", "local"};
template <int D>
void OpenDesignSetup(const benchmark::State&) { OpenDesign(kDesigns[D]); }
template <int D>
void FillDesignSetup(const benchmark::State&) { FillDesign(kDesigns[D]); }

template <int D>
void RegisterDesign() {
  const std::string d = kDesigns[D];
  for (int threads : {1, 2}) {
    benchmark::RegisterBenchmark(("design/insert/" + d).c_str(), BM_DesignInsert)
        ->Setup(OpenDesignSetup<D>)->Teardown(DropDesign)->Threads(threads)->Iterations(kKeys / threads)->UseRealTime();
    benchmark::RegisterBenchmark(("design/lookup/" + d).c_str(), BM_DesignLookup)
        ->Setup(FillDesignSetup<D>)->Teardown(DropDesign)->Threads(threads)->UseRealTime();
  }
}

void Register() {
  benchmark::RegisterBenchmark("tree/insert/absl", BM_TreeInsert_Absl)
      ->Setup(MakeAbslMap)->Teardown(DropAbslMap)->Iterations(kKeys);
  benchmark::RegisterBenchmark("tree/insert/local", BM_TreeInsert_Local)
      ->Setup(MakeLocalTree)->Teardown(DropLocalTree)->Iterations(kKeys);
  benchmark::RegisterBenchmark("tree/lookup/absl", BM_TreeLookup_Absl)->Setup(FillAbslMap)->Teardown(DropAbslMap);
  benchmark::RegisterBenchmark("tree/lookup/local", BM_TreeLookup_Local)->Setup(FillLocalTree)->Teardown(DropLocalTree);
  RegisterDesign<0>();
  RegisterDesign<1>();
}

}  // namespace
}  // namespace dmindex

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  dmindex::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
