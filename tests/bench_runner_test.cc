// The bench runner on a test-only index: exact verb accounting over the measured phase,
// every workload passing the final check on a correct index, and the checks catching an
// index that loses inserts or corrupts values; Ctrl-C; determinism of the final key set.
#include <gtest/gtest.h>

#include <thread>

#include "api/cluster_access.h"
#include "bench/runner.h"
#include "bench_test_index.h"
#include "test_fabrics.h"

namespace dmindex::bench {
namespace {

using testing::TestIndex;
using testing::TestIndexFaults;

class BenchRunnerTest : public ::testing::Test {
 protected:
  Result<RunResult> Run(const std::string& workload, RunConfig config,
                        TestIndexFaults faults = {}, const std::string& design = "test-map") {
    auto spec = NamedWorkload(workload);
    EXPECT_TRUE(spec.ok());
    IndexFactory indexes = [faults](const IndexOptions& o,
                                    std::shared_ptr<Cluster> c) -> Result<std::unique_ptr<Index>> {
      if (o.design != "test-map") return Status::InvalidArgument("unknown design");
      if (!o.knobs.empty()) return Status::InvalidArgument("test-map has no knobs");
      return std::unique_ptr<Index>(std::make_unique<TestIndex>(FabricOf(*c), faults, o));
    };
    Runner runner(&dmindex::testing::TestCluster, indexes, interrupt_, progress_);
    return runner.Run(*ParseDesignChoice(design), *spec, config);
  }
  static RunConfig Small(uint64_t ops = 20'000) {
    RunConfig c;
    c.keys = 5000;
    c.warmup_ops = 1000;
    c.ops = ops;
    c.threads = 2;
    return c;
  }

  std::atomic<bool> interrupt_{false};
  Progress progress_{false};
};

TEST_F(BenchRunnerTest, ReadOnlyRunCountsExactlyTheMeasuredVerbs) {
  auto r = Run("ycsb-c", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->error << r->verify_error;
  EXPECT_TRUE(r->verified);
  EXPECT_EQ(r->ops, 20'000u);
  EXPECT_EQ(r->design, "test-map");
  EXPECT_EQ(r->workload, "ycsb-c");
  EXPECT_EQ(r->backend, "inproc");
  // The test index issues one 8-byte READ per lookup; session setup RPCs, warmup and the
  // final check happen outside the measured phase.
  EXPECT_DOUBLE_EQ(r->PerOp(r->verbs.reads), 1.0);
  EXPECT_EQ(r->verbs.writes, 0u);
  EXPECT_EQ(r->verbs.rpcs, 0u);
  EXPECT_DOUBLE_EQ(r->PerOp(r->verbs.round_trips), 1.0);
  EXPECT_DOUBLE_EQ(r->PerOp(r->verbs.bytes()), 8.0);
  ASSERT_TRUE(r->cache_hit_ratio().has_value());
  EXPECT_DOUBLE_EQ(*r->cache_hit_ratio(), 1.0);
  EXPECT_EQ(r->cache_hits, 20'000u);
  EXPECT_EQ(r->cache_bytes, 4096u);
  EXPECT_GT(r->seconds, 0);
  EXPECT_GT(r->throughput_ops(), 0);
  EXPECT_GT(r->p50_us, 0);
  EXPECT_LE(r->p50_us, r->p99_us);
  EXPECT_LE(r->p99_us, r->p999_us);
}

TEST_F(BenchRunnerTest, UpdateHeavyRunSplitsReadsAndWrites) {
  auto r = Run("ycsb-a", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->error << r->verify_error;
  EXPECT_EQ(r->verbs.reads + r->verbs.writes, r->ops);
  EXPECT_NEAR(r->PerOp(r->verbs.writes), 0.5, 0.03);
}

TEST_F(BenchRunnerTest, EveryWorkloadPassesTheCheckOnACorrectIndex) {
  for (const std::string& w : WorkloadNames()) {
    auto r = Run(w, Small(4000));
    ASSERT_TRUE(r.ok()) << w << ": " << r.status().ToString();
    EXPECT_TRUE(r->ok()) << w << ": " << r->error << r->verify_error;
    EXPECT_TRUE(r->verified) << w;
    auto spec = NamedWorkload(w);
    EXPECT_EQ(r->ops, spec->load_phase ? 5000u : 4000u) << w;  // a load phase: the records
    if (spec->Share(OpKind::kInsert) == 1.0) {
      EXPECT_EQ(r->inserted, 5000u) << w;  // warmup included
    }
  }
}

// load-a is YCSB's load phase: nothing is bulk loaded, the measured phase inserts the
// records, and the final check finds every one of them.
TEST_F(BenchRunnerTest, LoadPhaseInsertsTheRecordsIntoAnEmptyIndex) {
  auto r = Run("load-a", Small());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->error << r->verify_error;
  EXPECT_TRUE(r->verified);
  EXPECT_EQ(r->keys, 0u) << "bulk loaded";
  EXPECT_EQ(r->ops, 5000u);
  EXPECT_EQ(r->inserted, 5000u);
  EXPECT_EQ(r->verbs.writes, 5000u) << "one write per insert, all measured";
}

TEST_F(BenchRunnerTest, LostInsertsFailTheFullScanCheck) {
  auto r = Run("insert-only", Small(3000), {.drop_every_nth_insert = 50});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->ok());
  EXPECT_FALSE(r->verified);
  EXPECT_NE(r->verify_error.find("missing"), std::string::npos) << r->verify_error;
}

TEST_F(BenchRunnerTest, CorruptedValuesAreCaught) {
  auto r = Run("ycsb-a", Small(), {.corrupt_every_nth_update = 100});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->ok());
  EXPECT_NE((r->error + r->verify_error).find("never written"), std::string::npos)
      << r->error << r->verify_error;
}

// Byte-string records: binary and YCSB keys, constant and varying values, every workload;
// the checks still catch values that belong to no key.
TEST_F(BenchRunnerTest, ByteRecordsPassTheChecksAndCorruptionIsCaught) {
  RecordShape binary;
  binary.format = KeyFormat::kBytes;
  binary.key_bytes = 40;
  binary.field_bytes = 100;
  RecordShape ycsb = binary;
  ycsb.style = KeyStyle::kYcsb;
  ycsb.key_bytes = 0;
  ycsb.fields = 4;
  ycsb.field_bytes = 50;
  ycsb.field_lengths = FieldLengths::kUniform;
  for (const RecordShape& shape : {binary, ycsb}) {
    for (const char* w : {"ycsb-a", "ycsb-e", "insert-only"}) {
      RunConfig c = Small(4000);
      c.shape = shape;
      auto r = Run(w, c);
      ASSERT_TRUE(r.ok()) << w << ": " << r.status().ToString();
      EXPECT_TRUE(r->ok()) << shape.ToString() << " " << w << ": " << r->error << r->verify_error;
      EXPECT_TRUE(r->verified) << w;
    }
    RunConfig c = Small();
    c.shape = shape;
    auto r = Run("ycsb-a", c, {.corrupt_every_nth_update = 100});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->ok()) << shape.ToString();
    EXPECT_NE((r->error + r->verify_error).find("written to another key"), std::string::npos)
        << r->error << r->verify_error;
  }
}

TEST_F(BenchRunnerTest, SetupErrorsAreStatuses) {
  RunConfig c = Small();
  auto spec = NamedWorkload("ycsb-c");
  Runner runner([]() -> Result<std::shared_ptr<Cluster>> { return Status::Unavailable("no cluster"); },
                nullptr, interrupt_, progress_);
  auto r = runner.Run(*ParseDesignChoice("test-map"), *spec, c);
  EXPECT_TRUE(r.status().IsUnavailable());
  // Knobs reach the index factory, which refuses those it does not know.
  EXPECT_TRUE(Run("ycsb-c", c, {}, "test-map:bogus=1").status().IsInvalidArgument());
  EXPECT_TRUE(Run("ycsb-c", c, {}, "test-map").ok());
}

TEST_F(BenchRunnerTest, InterruptStopsADurationRunAndKeepsWhatWasMeasured) {
  RunConfig c = Small();
  c.ops = 0;
  c.seconds = 120;  // far longer than the test may take: only the interrupt ends it
  // Ctrl-C once the measured phase is under way: more lookups than the whole warm-up holds
  // (not after a fixed sleep, which a loaded machine can spend in the bulk load).
  std::atomic<uint64_t> lookups{0};
  std::atomic<bool> returned{false};
  std::thread ctrl_c([&] {
    while (lookups.load() < c.warmup_ops + 500 && !returned.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    interrupt_.store(true);
  });
  auto r = Run("ycsb-b", c, {.lookups = &lookups});
  returned.store(true);
  ctrl_c.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->interrupted);
  EXPECT_GT(r->ops, 0u);
  EXPECT_LT(r->seconds, 60);
  EXPECT_TRUE(r->verified) << r->verify_error;  // the tree is still checked
}

TEST_F(BenchRunnerTest, SameSeedLeavesTheSameKeySet) {
  std::vector<Key> first, second, other_seed;
  RunConfig c = Small(6000);
  c.threads = 3;
  ASSERT_TRUE(Run("dex-ii", c, {.keys_at_end = &first}).ok());
  ASSERT_TRUE(Run("dex-ii", c, {.keys_at_end = &second}).ok());
  c.seed = 43;
  ASSERT_TRUE(Run("dex-ii", c, {.keys_at_end = &other_seed}).ok());
  EXPECT_GT(first.size(), c.keys);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other_seed);  // another seed, another mix of inserts per thread
}

TEST(BenchDesignChoice, ParsesNameAndKnobs) {
  auto d = ParseDesignChoice("sherman:hocl=off:combine=on");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->name, "sherman");
  EXPECT_EQ(d->label, "sherman:hocl=off:combine=on");
  EXPECT_EQ(d->knobs.size(), 2u);
  EXPECT_EQ(d->knobs.at("hocl"), "off");
  EXPECT_TRUE(ParseDesignChoice("naive")->knobs.empty());
  EXPECT_FALSE(ParseDesignChoice("").ok());
  EXPECT_FALSE(ParseDesignChoice(":a=b").ok());
  EXPECT_FALSE(ParseDesignChoice("x:hocl").ok());
  EXPECT_FALSE(ParseDesignChoice("x:=on").ok());
  EXPECT_FALSE(ParseDesignChoice("x:a=").ok());
  EXPECT_FALSE(ParseDesignChoice("x:a=b:").ok());
}

}  // namespace
}  // namespace dmindex::bench
