// Workload generators: operation mix, zipfian shape and scrambling, "latest", key space,
// determinism of per-thread streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "bench/key_space.h"
#include "bench/op_stream.h"
#include "bench/workload_spec.h"
#include "bench/zipfian.h"

namespace dmindex::bench {
namespace {

std::shared_ptr<const StreamPlan> Plan(const WorkloadSpec& spec, uint64_t loaded,
                                       uint32_t threads = 1, uint64_t seed = 7) {
  auto plan = StreamPlan::Make(spec, loaded, threads, seed);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

WorkloadSpec Named(const std::string& name) {
  auto spec = NamedWorkload(name);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

// Least-squares slope of y over x.
double Slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= x.size(), my /= y.size();
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxy / sxx;
}

TEST(BenchGenerators, EveryWorkloadsOperationSharesMatchItsProportions) {
  constexpr int kDraws = 1'000'000;
  for (const std::string& name : WorkloadNames()) {
    WorkloadSpec spec = Named(name);
    OpStream stream(Plan(spec, 10'000), 0);
    std::array<int, kOpKinds> count{};
    for (int i = 0; i < kDraws; ++i) ++count[static_cast<size_t>(stream.Next().kind)];
    for (size_t k = 0; k < kOpKinds; ++k) {
      const double p = spec.Share(static_cast<OpKind>(k));
      const double measured = static_cast<double>(count[k]) / kDraws;
      // Within 1% absolute, and within 5 standard deviations of a binomial draw.
      EXPECT_NEAR(measured, p, 0.01) << name << " " << OpKindName(static_cast<OpKind>(k));
      EXPECT_NEAR(measured, p, 5 * std::sqrt(p * (1 - p) / kDraws) + 1e-9)
          << name << " " << OpKindName(static_cast<OpKind>(k));
    }
  }
}

TEST(BenchGenerators, ZipfianRankFrequenciesFollowTheta) {
  constexpr uint64_t kItems = 10'000;
  constexpr int kDraws = 2'000'000;
  for (double theta : {0.5, 0.8, 0.99}) {
    ZipfianGenerator zipf(kItems, theta);
    Rng rng(3);
    std::vector<int> count(kItems);
    for (int i = 0; i < kDraws; ++i) {
      uint64_t r = zipf.Next(rng);
      ASSERT_LT(r, kItems);
      ++count[r];
    }
    std::vector<double> log_rank, log_freq;
    for (int r = 0; r < 100; ++r) {
      log_rank.push_back(std::log(r + 1.0));
      log_freq.push_back(std::log(static_cast<double>(count[r])));
    }
    EXPECT_NEAR(Slope(log_rank, log_freq), -theta, 0.05) << "theta " << theta;
    // The hottest rank has probability 1 / zeta(n).
    EXPECT_NEAR(static_cast<double>(count[0]) / kDraws, 1.0 / Zeta(kItems, theta), 0.003);
  }
}

TEST(BenchGenerators, ZetaTailApproximationMatchesExactSum) {
  constexpr uint64_t n = 3'000'000;
  for (double theta : {0.2, 0.99}) {
    double exact = 0;
    for (uint64_t i = 1; i <= n; ++i) exact += std::pow(static_cast<double>(i), -theta);
    EXPECT_NEAR(Zeta(n, theta) / exact, 1.0, 1e-10) << theta;
  }
  // Growing a generator extends zeta incrementally: the head's probability is 1 / zeta(n).
  ZipfianGenerator grown(10, 0.9);
  grown.Grow(2'500'000);
  Rng rng(1);
  int zeros = 0;
  for (int i = 0; i < 200'000; ++i) zeros += grown.Next(rng) == 0;
  EXPECT_NEAR(zeros / 200'000.0, 1.0 / Zeta(2'500'000, 0.9), 0.003);
}

TEST(BenchGenerators, ThetaOutsideZeroToOneIsRejected) {
  EXPECT_TRUE(ValidateTheta(0.0).ok());
  EXPECT_TRUE(ValidateTheta(0.99).ok());
  EXPECT_FALSE(ValidateTheta(1.0).ok());
  EXPECT_FALSE(ValidateTheta(-0.1).ok());
  EXPECT_FALSE(ValidateTheta(std::nan("")).ok());
  WorkloadSpec spec = Named("ycsb-a");
  spec.zipfian_theta = 1.2;
  EXPECT_TRUE(StreamPlan::Make(spec, 100, 1, 1).status().IsInvalidArgument());
}

TEST(BenchGenerators, FnvHashIsYcsbs) {
  // FNV-1a 64 of eight zero bytes, as YCSB's Utils.fnvhash64(0) computes it (then Math.abs).
  uint64_t h = 0xCBF29CE484222325ull;
  for (int i = 0; i < 8; ++i) h *= 1099511628211ull;
  const uint64_t expected = static_cast<int64_t>(h) < 0 ? ~h + 1 : h;
  EXPECT_EQ(FnvHash64(0), expected);
  EXPECT_LT(FnvHash64(12345), uint64_t{1} << 63);
}

TEST(BenchGenerators, LatestFavoursRecentInserts) {
  constexpr uint64_t kLoaded = 1000;
  auto plan = Plan(Named("ycsb-d"), kLoaded);
  OpStream stream(plan, 0);
  // Map each key to its position in the thread's visible sequence.
  std::unordered_map<Key, uint64_t> index_of;
  for (uint64_t i = 0; i < kLoaded; ++i) index_of[plan->KeyOf(i)] = i;
  std::vector<uint64_t> ages;
  for (int i = 0; i < 200'000; ++i) {
    Operation op = stream.Next();
    uint64_t visible = kLoaded + stream.inserts();
    stream.Completed(op);
    if (op.kind == OpKind::kInsert) {
      index_of[op.key] = visible - 1;
      continue;
    }
    ASSERT_TRUE(index_of.count(op.key)) << "read of a record that does not exist yet";
    ages.push_back(visible - 1 - index_of[op.key]);
  }
  ASSERT_GT(stream.inserts(), 9000u);
  std::sort(ages.begin(), ages.end());
  // Uniform requests would give a median age of half the visible records (thousands).
  EXPECT_LT(ages[ages.size() / 2], 300u);
  const double newest = std::count(ages.begin(), ages.end(), 0) / double(ages.size());
  const double tenth = std::count(ages.begin(), ages.end(), 10) / double(ages.size());
  EXPECT_GT(newest, 0.05);
  EXPECT_GT(newest, 5 * tenth);
}

// The records `draws` requests of a read-only stream of `spec` go to, as load-order indices.
std::vector<uint64_t> RequestedRecords(const WorkloadSpec& spec, uint64_t loaded, int draws) {
  auto plan = Plan(spec, loaded);
  std::unordered_map<Key, uint64_t> index_of;
  for (uint64_t i = 0; i < loaded; ++i) index_of[plan->KeyOf(i)] = i;
  OpStream stream(plan, 0);
  std::vector<uint64_t> records;
  for (int i = 0; i < draws; ++i) records.push_back(index_of.at(stream.Next().key));
  return records;
}

// YCSB's hotspot: hotspotopnfraction of the requests in the first hotspotdatafraction of
// the loaded records, uniform within each part.
TEST(BenchGenerators, HotspotSendsTheOpFractionToTheDataFraction) {
  constexpr uint64_t kLoaded = 10'000;
  WorkloadSpec spec = Named("ycsb-c");
  spec.request = Distribution::kHotspot;
  spec.hotspot_data_fraction = 0.1;
  spec.hotspot_op_fraction = 0.9;
  constexpr int kDraws = 200'000;
  uint64_t hot = 0;
  std::vector<uint64_t> per_decile(10);
  for (uint64_t r : RequestedRecords(spec, kLoaded, kDraws)) {
    hot += r < kLoaded / 10;
    ++per_decile[r * 10 / kLoaded];
  }
  EXPECT_NEAR(hot / double(kDraws), 0.9, 0.01);
  // The cold nine tenths share the other 10% evenly.
  for (size_t d = 1; d < 10; ++d) EXPECT_NEAR(per_decile[d] / double(kDraws), 0.1 / 9, 0.003) << d;
}

// YCSB's exponential: counted back from the newest record; exponential.percentile % of the
// draws within the newest exponential.frac x loaded records.
TEST(BenchGenerators, ExponentialFavoursTheNewestRecords) {
  constexpr uint64_t kLoaded = 10'000;
  WorkloadSpec spec = Named("ycsb-c");
  spec.request = Distribution::kExponential;
  spec.exponential_percentile = 95;
  spec.exponential_frac = 0.2;
  constexpr int kDraws = 200'000;
  uint64_t within = 0, newest = 0, at_100 = 0;
  for (uint64_t r : RequestedRecords(spec, kLoaded, kDraws)) {
    const uint64_t age = kLoaded - 1 - r;
    within += age < kLoaded / 5;
    newest += age == 0;
    at_100 += age == 100;
  }
  EXPECT_NEAR(within / double(kDraws), 0.95, 0.01);
  EXPECT_GT(newest, at_100);  // monotone decay
  WorkloadSpec bad = spec;
  bad.exponential_percentile = 100;
  EXPECT_TRUE(StreamPlan::Make(bad, 100, 1, 1).status().IsInvalidArgument());
  bad = spec;
  bad.hotspot_op_fraction = 1.5;
  EXPECT_TRUE(StreamPlan::Make(bad, 100, 1, 1).status().IsInvalidArgument());
}

TEST(BenchGenerators, StreamsAreDeterministicPerSeedAndThread) {
  auto take = [](std::shared_ptr<const StreamPlan> plan, uint32_t thread) {
    OpStream s(plan, thread);
    std::vector<std::tuple<int, Key, uint32_t, Value>> ops;
    for (int i = 0; i < 20'000; ++i) {
      Operation op = s.Next();
      ops.emplace_back(static_cast<int>(op.kind), op.key, op.scan_length, op.value);
    }
    return ops;
  };
  for (const char* name : {"ycsb-a", "ycsb-d", "ycsb-e", "insert-only"}) {
    WorkloadSpec spec = Named(name);
    auto a = take(Plan(spec, 5000, 4, 99), 2);
    EXPECT_EQ(a, take(Plan(spec, 5000, 4, 99), 2)) << name;  // same seed, thread: identical
    // Another thread draws other operations (insert-only draws nothing: its records come
    // from the insert counter all threads share, as in YCSB).
    if (spec.Share(OpKind::kInsert) < 1) {
      EXPECT_NE(a, take(Plan(spec, 5000, 4, 99), 3)) << name;
    }
    // Another seed draws other operations (insert-only draws nothing: its keys are the
    // fresh record numbers, whatever the seed).
    if (spec.Share(OpKind::kInsert) < 1) {
      EXPECT_NE(a, take(Plan(spec, 5000, 4, 100), 2)) << name;
    }
  }
}

// shift-c (IndeXY's Fig. 7): every shift_ops operations the requests move by a quarter of the
// loaded records - the same draws as without the shift, rotated by the phase (and back to the
// start after the fourth phase).
TEST(BenchGenerators, ShiftingWorkingSetRotatesTheDrawsByPhase) {
  constexpr uint64_t kLoaded = 4000, kPhaseOps = 1000;
  WorkloadSpec plain = Named("shift-c");
  ASSERT_EQ(plain.shift_phases, 4u);
  ASSERT_EQ(plain.shift_ops, 0u);  // no phases of its own: the bench splits --ops into them
  WorkloadSpec shifted = plain;
  shifted.shift_ops = kPhaseOps;
  auto plain_plan = Plan(plain, kLoaded), shifted_plan = Plan(shifted, kLoaded);
  OpStream a(plain_plan, 0), b(shifted_plan, 0);
  uint64_t moved = 0;
  for (uint64_t i = 0; i < 5 * kPhaseOps; ++i) {
    const Operation p = a.Next(), s = b.Next();
    ASSERT_EQ(s.kind, OpKind::kRead);
    const uint64_t phase = i / kPhaseOps;
    ASSERT_EQ(s.record, (p.record + phase % 4 * (kLoaded / 4)) % kLoaded) << "operation " << i;
    ASSERT_EQ(s.key, shifted_plan->KeyOf(s.record));
    moved += s.record != p.record;
  }
  EXPECT_EQ(moved, 3 * kPhaseOps);  // phases 1-3 of the five moved, 0 and 4 did not
}

// readunit=n: each drawn read is followed by reads of the next n-1 records (wrapping at the
// last existing one), as IndeXY's Fig. 7 reads units of 1, 5 and 10 consecutive keys.
TEST(BenchGenerators, ReadUnitsReadConsecutiveRecords) {
  constexpr uint64_t kLoaded = 1000;
  constexpr uint32_t kUnit = 5;
  WorkloadSpec one = Named("ycsb-c");
  WorkloadSpec units = one;
  units.read_unit = kUnit;
  auto one_plan = Plan(one, kLoaded), units_plan = Plan(units, kLoaded);
  OpStream a(one_plan, 0), b(units_plan, 0);
  bool wrapped = false;
  for (int unit = 0; unit < 2000; ++unit) {
    const Operation first = b.Next();
    ASSERT_EQ(first.record, a.Next().record) << "unit " << unit;  // the unit's start: the same draws
    for (uint32_t k = 1; k < kUnit; ++k) {
      const Operation op = b.Next();
      ASSERT_EQ(op.kind, OpKind::kRead);
      ASSERT_EQ(op.record, (first.record + k) % kLoaded) << "unit " << unit << " read " << k;
      ASSERT_EQ(op.key, units_plan->KeyOf(op.record));
      wrapped |= op.record < first.record;
    }
  }
  EXPECT_TRUE(wrapped) << "no unit started within the last records (the draws are too narrow to test the wrap)";
  units.read_unit = 0;
  EXPECT_TRUE(StreamPlan::Make(units, kLoaded, 1, 1).status().IsInvalidArgument());
}

TEST(BenchGenerators, InsertsTakeFreshDistinctKeysAndExpectedKeysListThem) {
  constexpr uint64_t kLoaded = 2000;
  constexpr uint32_t kThreads = 4;
  auto plan = Plan(Named("insert-only"), kLoaded, kThreads);
  std::vector<RecordPair> load = plan->LoadRecords();
  ASSERT_EQ(load.size(), kLoaded);
  ASSERT_TRUE(std::is_sorted(load.begin(), load.end(),
                             [](auto& a, auto& b) { return a.key < b.key; }));
  std::set<Key> all;
  for (const RecordPair& kv : load) {
    EXPECT_TRUE(ValueMatchesKey(kv.key, kv.value));
    all.insert(kv.key);
  }
  std::vector<uint64_t> inserts(kThreads);
  for (uint32_t t = 0; t < kThreads; ++t) {
    OpStream s(plan, t);
    for (int i = 0; i < 1000 + 100 * static_cast<int>(t); ++i) {
      Operation op = s.Next();
      ASSERT_EQ(op.kind, OpKind::kInsert);
      EXPECT_TRUE(u64::IsValidKey(op.key));
      EXPECT_TRUE(ValueMatchesKey(op.key, op.value));
      EXPECT_TRUE(all.insert(op.key).second) << "insert reused key " << op.key;
    }
    inserts[t] = s.inserts();
  }
  uint64_t total = 0;
  for (uint64_t n : inserts) total += n;
  std::vector<Key> expected = plan->ExpectedKeys(total);
  EXPECT_EQ(expected, std::vector<Key>(all.begin(), all.end()));
}

TEST(BenchGenerators, KeySpaceIsInjectiveAndAvoidsFenceKeys) {
  std::unordered_set<Key> seen;
  for (uint64_t r = 0; r < 1'000'000; ++r) {
    Key k = KeyOfRecord(r, InsertOrder::kHashed);
    ASSERT_TRUE(u64::IsValidKey(k));
    ASSERT_TRUE(seen.insert(k).second) << "records collide at " << r;
  }
  EXPECT_TRUE(u64::IsValidKey(KeyOfRecord(kMaxRecords - 1, InsertOrder::kHashed)));
  EXPECT_FALSE(ValueMatchesKey(KeyOfRecord(1, InsertOrder::kHashed),
                               MakeValue(KeyOfRecord(2, InsertOrder::kHashed), 0)));
}

TEST(BenchGenerators, ScanLengthsStayInRange) {
  WorkloadSpec e = Named("ycsb-e");
  OpStream s(Plan(e, 1000), 0);
  std::map<uint32_t, int> lengths;
  for (int i = 0; i < 100'000; ++i) {
    Operation op = s.Next();
    if (op.kind == OpKind::kScan) ++lengths[op.scan_length];
  }
  EXPECT_EQ(lengths.begin()->first, 1u);
  EXPECT_EQ(lengths.rbegin()->first, 100u);
  EXPECT_EQ(lengths.size(), 100u);
  WorkloadSpec si = Named("dex-si");
  OpStream fixed(Plan(si, 1000), 0);
  for (int i = 0; i < 1000; ++i) {
    Operation op = fixed.Next();
    if (op.kind == OpKind::kScan) {
      EXPECT_EQ(op.scan_length, 100u);
    }
  }
}

TEST(BenchGenerators, WorkloadThatReadsNeedsLoadedKeys) {
  EXPECT_TRUE(StreamPlan::Make(Named("ycsb-c"), 0, 1, 1).status().IsInvalidArgument());
  EXPECT_TRUE(StreamPlan::Make(Named("insert-only"), 0, 1, 1).ok());
  EXPECT_TRUE(NamedWorkload("ycsb-z").status().IsInvalidArgument());
}

}  // namespace
}  // namespace dmindex::bench
