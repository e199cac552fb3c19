// The zipfian rank mappings (zipfianranks) and the cache references computed from a
// workload's distribution (bench/request_mass.h): exact cases in closed form, the others
// against requests drawn by OpStream and caches simulated on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <list>
#include <unordered_map>
#include <vector>

#include "bench/op_stream.h"
#include "bench/property_file.h"
#include "bench/request_mass.h"
#include "bench/workload_spec.h"
#include "bench/zipfian.h"

namespace dmindex::bench {
namespace {

WorkloadSpec ReadOnly(ZipfianRanks ranks, double theta, uint32_t read_unit = 1) {
  auto spec = NamedWorkload("ycsb-c");
  EXPECT_TRUE(spec.ok());
  spec->zipfian_ranks = ranks;
  spec->zipfian_theta = theta;
  spec->read_unit = read_unit;
  return *spec;
}

std::shared_ptr<const StreamPlan> Plan(const WorkloadSpec& spec, uint64_t loaded) {
  auto plan = StreamPlan::Make(spec, loaded, 1, 11);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

std::vector<uint64_t> Draw(const std::shared_ptr<const StreamPlan>& plan, size_t count) {
  OpStream stream(plan, 0);
  std::vector<uint64_t> records(count);
  for (uint64_t& r : records) r = stream.Next().record;
  return records;
}

double EmpiricalTopShare(const std::vector<uint64_t>& records, uint64_t n, uint64_t k) {
  std::vector<double> counts(n, 0);
  for (uint64_t r : records) counts[r] += 1;
  std::sort(counts.begin(), counts.end(), std::greater<>());
  double top = 0;
  for (uint64_t i = 0; i < k; ++i) top += counts[i];
  return top / static_cast<double>(records.size());
}

double SimulatedLruHits(const std::vector<uint64_t>& records, uint64_t k) {
  std::list<uint64_t> order;  // most recent first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
  uint64_t hits = 0;
  for (uint64_t r : records) {
    if (auto it = where.find(r); it != where.end()) {
      ++hits;
      order.splice(order.begin(), order, it->second);
      continue;
    }
    if (where.size() == k) {
      where.erase(order.back());
      order.pop_back();
    }
    order.push_front(r);
    where[r] = order.begin();
  }
  return static_cast<double>(hits) / static_cast<double>(records.size());
}

double SimulatedRandomEvictionHits(const std::vector<uint64_t>& records, uint64_t k) {
  std::vector<uint64_t> held;
  std::unordered_map<uint64_t, size_t> slot;
  Rng rng(5);
  uint64_t hits = 0;
  for (uint64_t r : records) {
    if (slot.count(r)) {
      ++hits;
      continue;
    }
    if (held.size() < k) {
      slot[r] = held.size();
      held.push_back(r);
      continue;
    }
    const size_t victim = rng.Below(k);
    slot.erase(held[victim]);
    held[victim] = r;
    slot[r] = victim;
  }
  return static_cast<double>(hits) / static_cast<double>(records.size());
}

TEST(BenchRequestMass, ClosedForms) {
  // Clustered ranks: the top k records are ranks 0..k-1.
  auto clustered = Plan(ReadOnly(ZipfianRanks::kClustered, 0.7), 10'000);
  EXPECT_NEAR(*TopRecordsShare(*clustered, 1'000), Zeta(1'000, 0.7) / Zeta(10'000, 0.7), 1e-9);
  // Uniform: k / n, and so for every cache.
  WorkloadSpec uniform = ReadOnly(ZipfianRanks::kYcsb, 0.7);
  uniform.request = Distribution::kUniform;
  auto refs = CacheHitReferences(*Plan(uniform, 10'000), 1'000);
  ASSERT_TRUE(refs.has_value());
  EXPECT_NEAR(refs->oracle, 0.1, 1e-9);
  EXPECT_NEAR(refs->lru, 0.1, 1e-6);
  EXPECT_NEAR(refs->random, 0.1, 1e-6);
  // Hotspot: the hot fifth gets its operation share.
  WorkloadSpec hotspot = uniform;
  hotspot.request = Distribution::kHotspot;
  EXPECT_NEAR(*TopRecordsShare(*Plan(hotspot, 10'000), 2'000), 0.8, 1e-9);
  // Hot records all fit: every cache holds them all.
  hotspot.hotspot_op_fraction = 1;
  EXPECT_NEAR(CacheHitReferences(*Plan(hotspot, 10'000), 3'000)->lru, 1.0, 1e-12);
  // Popularity that moves with the inserts has no fixed top.
  WorkloadSpec latest = uniform;
  latest.request = Distribution::kLatest;
  EXPECT_FALSE(TopRecordsShare(*Plan(latest, 10'000), 1'000).has_value());
}

// Each mapping's computed top-k share matches the share the top k records get among drawn
// requests; YCSB's scrambled ranks are much flatter than the same theta over the records.
TEST(BenchRequestMass, MatchesDrawnRequests) {
  constexpr uint64_t n = 2'000, k = 200;
  std::vector<double> shares;
  for (auto [ranks, unit] : {std::pair{ZipfianRanks::kYcsb, 1u}, {ZipfianRanks::kRecords, 1u},
                             {ZipfianRanks::kClustered, 1u}, {ZipfianRanks::kRecords, 5u}}) {
    auto plan = Plan(ReadOnly(ranks, 0.7, unit), n);
    const double computed = *TopRecordsShare(*plan, k);
    EXPECT_NEAR(EmpiricalTopShare(Draw(plan, 2'000'000), n, k), computed, 0.01)
        << ZipfianRanksName(ranks) << " unit " << unit;
    shares.push_back(computed);
  }
  EXPECT_LT(shares[0], 0.5 * shares[1]);  // ycsb vs records at theta 0.7
}

// The characteristic-time estimates against LRU and random-eviction caches run on the drawn
// requests, and the order random <= LRU <= oracle.
TEST(BenchRequestMass, CacheReferencesMatchSimulatedCaches) {
  constexpr uint64_t n = 5'000, k = 500;
  for (ZipfianRanks ranks : {ZipfianRanks::kRecords, ZipfianRanks::kYcsb}) {
    auto plan = Plan(ReadOnly(ranks, 0.9), n);
    const auto refs = CacheHitReferences(*plan, k);
    ASSERT_TRUE(refs.has_value());
    const std::vector<uint64_t> requests = Draw(plan, 1'000'000);
    EXPECT_NEAR(SimulatedLruHits(requests, k), refs->lru, 0.015) << ZipfianRanksName(ranks);
    EXPECT_NEAR(SimulatedRandomEvictionHits(requests, k), refs->random, 0.015) << ZipfianRanksName(ranks);
    EXPECT_LE(refs->random, refs->lru);
    EXPECT_LE(refs->lru, refs->oracle);
  }
}

TEST(BenchRequestMass, ZipfianRanksProperty) {
  WorkloadSpec spec = ReadOnly(ZipfianRanks::kYcsb, 0.7);
  EXPECT_TRUE(ApplyPropertyOverride("zipfianranks=clustered", &spec).ok());
  EXPECT_EQ(spec.zipfian_ranks, ZipfianRanks::kClustered);
  EXPECT_FALSE(ApplyPropertyOverride("zipfianranks=sorted", &spec).ok());
  EXPECT_EQ(NamedWorkload("ycsb-a")->zipfian_ranks, ZipfianRanks::kYcsb);
  EXPECT_EQ(NamedWorkload("shift-c")->zipfian_ranks, ZipfianRanks::kRecords);
  // Clustered: the most requested record is record 0.
  auto plan = Plan(spec, 1'000);
  std::vector<uint64_t> counts(1'000, 0);
  for (uint64_t r : Draw(plan, 100'000)) ++counts[r];
  EXPECT_EQ(std::max_element(counts.begin(), counts.end()) - counts.begin(), 0);
}

}  // namespace
}  // namespace dmindex::bench
