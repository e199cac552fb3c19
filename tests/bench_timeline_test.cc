// The bench driver's timeline and scheduled repartitioning, piece by piece: interval
// sampling (late samples included), the dip-and-recovery summary, boundaries read back
// through Index::RouteKey, the planned move, and how all of it is reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "bench/repartition_plan.h"
#include "bench/report.h"
#include "bench/timeline.h"
#include "u64_api.h"

namespace dmindex::bench {
namespace {

TEST(BenchTimeline, IntervalsAreContiguousAndLateSamplesCloseLongerOnes) {
  TimelineRecorder rec(0.1, 1.0);
  EXPECT_FALSE(rec.Due(0.05));
  EXPECT_TRUE(rec.Due(0.1));
  rec.Sample(0.1, {.ops = 100, .round_trips = 10});
  rec.Sample(0.35, {.ops = 400, .round_trips = 40});  // woke late: 0.2 and 0.3 were missed
  EXPECT_DOUBLE_EQ(rec.next_due_s(), 0.4);
  for (uint64_t k = 4; k <= 9; ++k)
    rec.Sample(static_cast<double>(k) / 10.0, {.ops = 400 + 100 * (k - 3), .round_trips = 40 + 10 * (k - 3)});
  EXPECT_FALSE(rec.Due(1.0)) << "the phase's own end closes the last interval";
  auto t = rec.Finish(1.003, {.ops = 1020, .round_trips = 102});
  ASSERT_EQ(t.size(), 9u);  // 0.1, 0.35, 0.4 ... 0.9, end
  uint64_t ops = 0, rtt = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_DOUBLE_EQ(t[i].start_s, i ? t[i - 1].end_s : 0.0);
    ops += t[i].ops;
    rtt += t[i].round_trips;
  }
  EXPECT_EQ(ops, 1020u);
  EXPECT_EQ(rtt, 102u);
  EXPECT_DOUBLE_EQ(t[1].throughput_ops(), 300 / 0.25);
  EXPECT_DOUBLE_EQ(t[1].round_trips_per_op(), 0.1);
  EXPECT_NEAR(t.back().end_s, 1.003, 1e-12);
  // A phase that ends after a number of operations has no planned end: sampling goes on.
  TimelineRecorder open(0.1, 0);
  EXPECT_TRUE(open.Due(5.0));
}

// The cache's hits and misses per interval (IndeXY's X after a shift of the working set).
TEST(BenchTimeline, CacheHitRatioPerInterval) {
  TimelineRecorder rec(0.1, 1.0);
  rec.Sample(0.1, {.ops = 100, .cache_hits = 90, .cache_misses = 10});
  rec.Sample(0.2, {.ops = 200, .cache_hits = 120, .cache_misses = 80});  // the working set moved: 30 of 100 hit
  auto t = rec.Finish(0.25, {.ops = 250, .cache_hits = 160, .cache_misses = 90});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(*t[0].cache_hit_ratio(), 0.9);
  EXPECT_DOUBLE_EQ(*t[1].cache_hit_ratio(), 0.3);
  EXPECT_DOUBLE_EQ(*t[2].cache_hit_ratio(), 0.8);
  TimelineRecorder none(0.1, 1.0);
  EXPECT_FALSE(none.Finish(0.05, {.ops = 10})[0].cache_hit_ratio().has_value());
}

// The phase's final totals come from another count than the live samples (the workers' own
// tallies, the fabric's counts after the phase): one behind the last sample adds nothing to
// the last interval, it does not wrap around.
TEST(BenchTimeline, FinalTotalsBehindTheLastSampleAddNothing) {
  TimelineRecorder rec(0.1, 1.0);
  rec.Sample(0.1, {.ops = 100, .round_trips = 50, .rpcs = 5, .cache_hits = 9, .memory_bytes = 4096});
  auto t = rec.Finish(0.15, {.ops = 99, .round_trips = 49, .rpcs = 5, .cache_hits = 8, .memory_bytes = 2048});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].ops, 0u);
  EXPECT_EQ(t[1].round_trips, 0u);
  EXPECT_EQ(t[1].rpcs, 0u);
  EXPECT_EQ(t[1].cache_hits, 0u);
  EXPECT_EQ(t[1].memory_bytes, 2048u) << "memory is a level: the last interval ends with it";
  EXPECT_EQ(t[0].memory_bytes, 4096u);
}

std::vector<TimelineInterval> Steps(const std::vector<double>& mops) {
  std::vector<TimelineInterval> t;
  for (size_t i = 0; i < mops.size(); ++i)
    t.push_back({i / 10.0, (i + 1) / 10.0, static_cast<uint64_t>(mops[i] * 1e5), 0});
  return t;
}

TEST(BenchTimeline, DipAndRecoveryAroundAnEvent) {
  // 1 Mops/s for a second; the event runs 1.00-1.15 s; then 0.1, 0.5, 0.85, 0.95, 1.0, 1.0.
  auto t = Steps({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.1, 0.5, 0.85, 0.95, 1, 1});
  DipAndRecovery d = SummarizeDip(t, 1.0, 1.15);
  EXPECT_NEAR(d.before_ops, 1e6, 1);
  EXPECT_NEAR(d.lowest_ops, 1e5, 1);
  EXPECT_NEAR(d.lowest_end_s, 1.1, 1e-9);
  ASSERT_TRUE(d.recovered_s.has_value());
  EXPECT_NEAR(*d.recovered_s, 1.4, 1e-9);  // 0.85 is below 90%; 0.95 is not
  EXPECT_NEAR(*d.after_ops, (0.95 + 1 + 1) / 3 * 1e6, 1);
  // Never back: no recovery, and the lowest interval is searched to the end.
  d = SummarizeDip(Steps({1, 1, 0.5, 0.3, 0.6}), 0.2, 0.25);
  EXPECT_FALSE(d.recovered_s.has_value());
  EXPECT_NEAR(d.lowest_ops, 3e5, 1);
}

// Routes like DEX: compute node i serves [b[i-1], b[i]); Repartition installs new boundaries.
class FakePartitioned final : public Index, public Partitioning {
 public:
  explicit FakePartitioned(std::vector<Key> b, bool partitioned = true)
      : Index("fake", testing::U64Options()), b_(std::move(b)), partitioned_(partitioned) {}
  uint32_t partitions() const override { return static_cast<uint32_t>(b_.size() + 1); }
  Route RouteKey(Slice encoded) const override {
    const Key key = u64::Decode(encoded);
    const uint32_t owner = static_cast<uint32_t>(std::upper_bound(b_.begin(), b_.end(), key) - b_.begin());
    Route r{owner, u64::Encode(owner == 0 ? kMinKey : b_[owner - 1]), std::nullopt, true};
    if (owner < b_.size()) r.end = u64::Encode(b_[owner]);
    return r;
  }
  Result<double> Repartition(std::vector<std::string> b) override {
    b_.clear();
    for (const std::string& k : b) b_.push_back(u64::Decode(k));
    ++repartitions;
    return 0.001;
  }
  int repartitions = 0;

 private:
  Status DoBulkLoad(std::span<const dmindex::KeyValue>) override { return Status::Ok(); }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t) override {
    return Status::NotSupported("no sessions");
  }
  IndexStats DoStats() const override { return {}; }
  Partitioning* DoPartitioning() override { return partitioned_ ? this : nullptr; }

  std::vector<Key> b_;
  const bool partitioned_;
};

TEST(BenchRepartitionPlan, BoundariesReadBackThroughRouteKey) {
  EXPECT_EQ(*RoutedBoundaries(FakePartitioned({100, 200}), 3), (std::vector<Key>{100, 200}));
  EXPECT_EQ(*RoutedBoundaries(FakePartitioned({100, 100}), 3), (std::vector<Key>{100, 100}));
  EXPECT_EQ(*RoutedBoundaries(FakePartitioned({kMinKey, 50}), 3), (std::vector<Key>{kMinKey, 50}));
  EXPECT_EQ(*RoutedBoundaries(FakePartitioned({100, kMaxKey}), 3), (std::vector<Key>{100, kMaxKey}));
  auto none = RoutedBoundaries(FakePartitioned({}, false), 2);
  EXPECT_EQ(none.status().code(), Status::Code::kNotSupported);
  EXPECT_NE(none.status().message().find("no logical partitions"), std::string::npos);
  // More compute nodes than the index routes to: not the next partition in key order.
  EXPECT_FALSE(RoutedBoundaries(FakePartitioned({100, 200}), 2).ok());
}

TEST(BenchRepartitionPlan, MovesAShareOfTheGiversLoadedKeys) {
  std::vector<RecordPair> loaded;
  for (Key k = 1; k <= 300; ++k) loaded.push_back({k, k});
  FakePartitioned index({101, 201});
  RepartitionSpec spec;  // node 0 gives half of its keys to node 1
  auto move = PrepareRepartition(index, spec, 3, loaded);
  ASSERT_TRUE(move.ok()) << move.status().ToString();
  EXPECT_EQ(move->from_keys, 100u);
  EXPECT_EQ(move->moved_keys, 50u);
  EXPECT_EQ(move->initial, (std::vector<Key>{101, 201}));
  EXPECT_EQ(move->after, (std::vector<Key>{51, 201}));  // node 1 now begins at key 51
  EXPECT_EQ(index.repartitions, 0) << "nothing moves before at_s without a scale-out";

  spec.scale_out = true;  // node 1 first gives all of its range to node 0
  move = PrepareRepartition(index, spec, 3, loaded);
  ASSERT_TRUE(move.ok()) << move.status().ToString();
  EXPECT_EQ(index.repartitions, 1);
  EXPECT_EQ(move->initial, (std::vector<Key>{201, 201}));
  EXPECT_EQ(move->from_keys, 200u);
  EXPECT_EQ(move->after, (std::vector<Key>{101, 201}));

  FakePartitioned left({101, 201});
  spec = RepartitionSpec{2.0, 1, 0, 0.25, false};  // node 1 gives its lowest quarter to node 0
  move = PrepareRepartition(left, spec, 3, loaded);
  ASSERT_TRUE(move.ok());
  EXPECT_EQ(move->after, (std::vector<Key>{126, 201}));
  spec = RepartitionSpec{2.0, 2, 1, 1.0, false};  // the last node gives everything
  move = PrepareRepartition(left, spec, 3, loaded);
  ASSERT_TRUE(move.ok());
  EXPECT_EQ(move->moved_keys, 100u);
  EXPECT_EQ(move->after, (std::vector<Key>{101, kMaxKey})) << "the last node keeps only kMaxKey";
  FakePartitioned tail({101, 201});
  spec = RepartitionSpec{2.0, 1, 2, 0.5, true};  // the last node scales out
  move = PrepareRepartition(tail, spec, 3, loaded);
  ASSERT_TRUE(move.ok());
  EXPECT_EQ(move->initial, (std::vector<Key>{101, kMaxKey})) << "the last node keeps only kMaxKey";
  EXPECT_EQ(move->after, (std::vector<Key>{101, 201}));

  spec = RepartitionSpec{2.0, 0, 1, 0.001, false};
  auto none = PrepareRepartition(left, spec, 3, loaded);
  EXPECT_TRUE(none.status().IsInvalidArgument());
  EXPECT_NE(none.status().message().find("moves no key"), std::string::npos);
  spec = RepartitionSpec{2.0, 0, 2, 0.5, false};
  EXPECT_TRUE(PrepareRepartition(left, spec, 3, loaded).status().IsInvalidArgument());
  FakePartitioned flat({}, false);
  EXPECT_EQ(PrepareRepartition(flat, RepartitionSpec{}, 2, loaded).status().code(),
            Status::Code::kNotSupported);
}

RunResult WithTimeline() {
  RunResult r;
  r.design = "dex";
  r.workload = "dex-wi";
  r.ops = 1'600'000;
  r.seconds = 1.6;
  r.verified = true;
  r.timeline_interval_s = 0.1;
  r.timeline = Steps({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.1, 0.5, 0.85, 0.95, 1, 1});
  RepartitionOutcome p;
  p.spec = RepartitionSpec{1.0, 0, 1, 0.5, true};
  p.move = {{201, 201}, {101, 201}, 200, 100};
  p.ran = true;
  p.start_s = 1.0;
  p.end_s = 1.15;
  p.reported_s = 0.149;
  p.dip = SummarizeDip(r.timeline, p.start_s, p.end_s);
  r.repartition = p;
  return r;
}

TEST(BenchTimelineReport, TableMarksTheRepartitioningAndSummarizesIt) {
  EXPECT_EQ(FormatTimeline({RunResult{}}), "");
  const std::string text = FormatTimeline({WithTimeline()});
  EXPECT_NE(text.find("dex dex-wi Mops/s"), std::string::npos) << text;
  EXPECT_NE(text.find("0.100*"), std::string::npos) << text;  // the interval 1.0-1.1 s
  EXPECT_NE(text.find("1.000 "), std::string::npos) << text;
  EXPECT_NE(text.find("hands 100 of its 200 bulk-loaded keys to scale-out compute node 1"),
            std::string::npos) << text;
  EXPECT_NE(text.find("back to >= 90% by 1.40 s"), std::string::npos) << text;
  size_t rows = 0;
  for (char c : text) rows += c == '\n';
  EXPECT_EQ(rows, 1 + 1 + 16 + 1u);  // title, header, intervals, summary
}

TEST(BenchTimelineReport, JsonAndCsvCarryTheTimelineAndTheMove) {
  const std::vector<RunResult> results = {WithTimeline(), RunResult{}};
  nlohmann::ordered_json j = ToJson(results[0]);
  ASSERT_EQ(j["timeline"].size(), 16u);
  EXPECT_NEAR(j["timeline"][10]["throughput_ops"].get<double>(), 1e5, 1e-3);
  EXPECT_EQ(j["repartition"]["moved_keys"], 100);
  EXPECT_EQ(j["repartition"]["boundaries_after"][0], 101);
  EXPECT_NEAR(j["repartition"]["recovered_s"].get<double>(), 1.4, 1e-9);
  EXPECT_TRUE(ToJson(results[1])["repartition"].is_null());
  EXPECT_TRUE(ToJson(results[1])["timeline_interval_s"].is_null());

  const auto path = std::filesystem::temp_directory_path() / ("dmx_tl_" + std::to_string(getpid()) + ".csv");
  ASSERT_TRUE(WriteCsv(path.string(), results).ok());
  std::ifstream in(path);
  std::string header, first, second;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  std::filesystem::remove(path);
  for (const char* column : {"timeline_throughput_ops", "timeline_round_trips_per_op",
                             "repartition_start_s", "repartition_boundaries_after"})
    EXPECT_NE(header.find(std::string(",") + column + ","), std::string::npos) << column;
  // The run without a repartitioning adds the column its null lands in.
  EXPECT_EQ(header.substr(header.rfind(',') + 1), "repartition");
  const auto commas = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  EXPECT_EQ(commas(first), commas(header));
  EXPECT_EQ(commas(second), commas(header)) << "a run without a timeline fills the same columns";
  EXPECT_NE(first.find(",101 201,"), std::string::npos) << first;
}

}  // namespace
}  // namespace dmindex::bench
