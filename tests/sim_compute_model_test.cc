// The compute model's options and calibration files (sim/compute_model.h): what the command
// line and platforms/compute-calibration.txt may say, and how a design finds its costs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/compute_model.h"
#include "test_fabrics.h"

namespace dmindex::sim {
namespace {

constexpr size_t kVerb = static_cast<size_t>(CallKind::kVerb);
constexpr size_t kClock = static_cast<size_t>(CallKind::kClock);

TEST(SimComputeModel, ComputeOptionsParseAndNameWhatIsWrong) {
  auto measured = ParseComputeOptions("measured");
  ASSERT_TRUE(measured.ok());
  EXPECT_EQ(measured->mode, ComputeMode::kMeasured);
  auto modelled = ParseComputeOptions("modelled:verb=900:clock=40");
  ASSERT_TRUE(modelled.ok()) << modelled.status().ToString();
  EXPECT_EQ(modelled->mode, ComputeMode::kModelled);
  EXPECT_EQ(modelled->cycles[kVerb], 900);
  EXPECT_EQ(modelled->cycles[kClock], 40);
  EXPECT_TRUE(modelled->overridden[kVerb]);
  EXPECT_FALSE(modelled->overridden[static_cast<size_t>(CallKind::kRpc)]);
  for (const char* bad : {"modeled", "measured:verb=1", "modelled:verb", "modelled:bogus=1", "modelled:verb=-1",
                          "modelled:verb=nan"}) {
    auto r = ParseComputeOptions(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsInvalidArgument()) << bad;
  }
  EXPECT_NE(ParseComputeOptions("modelled:bogus=1").status().message().find("kinds: clock"), std::string::npos);
}

TEST(SimComputeModel, ACalibrationGivesEachDesignItsOwnCostsAndTheDefaultOtherwise) {
  const std::string path = ::testing::TempDir() + "/calibration-" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream out(path);
    out << "# a comment\n"
        << "default clock=100 verb=200\n"
        << "design sherman verb=7000\n"
        << "design dex:offload=off clock=3000\n";
  }
  auto c = Calibration::Read(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->For("sherman")[kVerb], 7000);
  EXPECT_EQ(c->For("sherman")[kClock], 100);           // omitted: the default line's
  EXPECT_EQ(c->For("sherman:hocl=off")[kVerb], 7000);  // a label falls back to its design's name
  EXPECT_EQ(c->For("dex:offload=off")[kClock], 3000);
  EXPECT_EQ(c->For("dex")[kClock], 100);                // no line of its own: the default
  EXPECT_EQ(c->For("dex")[static_cast<size_t>(CallKind::kRpc)], DefaultModelledCompute().cycles[static_cast<size_t>(CallKind::kRpc)]);

  // What Learn records reads back the same (rounded to whole cycles); rare kinds keep the default.
  ComputeProfile p;
  for (int i = 0; i < 2000; ++i) p.Add(CallKind::kVerb, 1000 + (i % 2));
  p.Add(CallKind::kThread, 1e9);
  Calibration learned = *c;
  learned.Learn("naive", p);
  EXPECT_EQ(learned.For("naive")[kVerb], 1000.5);
  EXPECT_EQ(learned.For("naive")[static_cast<size_t>(CallKind::kThread)], learned.fallback[static_cast<size_t>(CallKind::kThread)]);
  { std::ofstream(path) << learned.Format(); }
  auto again = Calibration::Read(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->For("naive")[kVerb], 1001);
  EXPECT_EQ(again->For("sherman")[kVerb], 7000);

  // Per workload: label@workload, then name@workload, then the label's and the name's lines.
  ComputeProfile ro, below_zero;
  for (int i = 0; i < 2000; ++i) ro.Add(CallKind::kVerb, 300);
  for (int i = 0; i < 2000; ++i) below_zero.Add(CallKind::kClock, -100);
  learned.Learn("naive@dex-ro", ro);
  learned.Learn("sherman:hocl=off@dex-ro", below_zero);
  EXPECT_EQ(learned.For("naive", "dex-ro")[kVerb], 300);
  EXPECT_EQ(learned.For("naive:x=1", "dex-ro")[kVerb], 300);  // the name's line for that workload
  EXPECT_EQ(learned.For("naive", "dex-wi")[kVerb], 1000.5);   // no line for dex-wi: the design's
  EXPECT_EQ(learned.For("naive")[kVerb], 1000.5);
  EXPECT_EQ(learned.For("sherman:hocl=off", "dex-ro")[kClock], 0);  // a measured residual below zero
  EXPECT_EQ(learned.For("sherman", "dex-ro")[kVerb], 7000);
  { std::ofstream(path) << learned.Format(); }
  auto per_workload = Calibration::Read(path);
  ASSERT_TRUE(per_workload.ok()) << per_workload.status().ToString();
  EXPECT_EQ(per_workload->For("naive", "dex-ro")[kVerb], 300);

  for (const char* bad : {"design\n", "design x verb\n", "default verb=x\n", "nonsense\n", "design x bogus=1\n"}) {
    { std::ofstream(path) << bad; }
    auto r = Calibration::Read(path);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(path + ":"), std::string::npos) << r.status().ToString();
  }
  EXPECT_FALSE(Calibration::Read(path + ".missing").ok());
  std::filesystem::remove(path);
}

TEST(SimComputeModel, TheShippedCalibrationReads) {
  auto c = Calibration::Read(DMINDEX_SOURCE_DIR "/platforms/compute-calibration.txt");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (const char* design : {"sherman", "dex", "naive"}) EXPECT_TRUE(c->designs.count(design)) << design;
}

TEST(SimComputeModel, CalibrateOutNeedsMeasuredSimulation) {
  testing::ToolRun run = testing::RunTool("bench --ops 10 --calibrate-out /tmp/x.txt");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--calibrate-out"), std::string::npos) << run.output;
  run = testing::RunTool("bench --fabric sim --compute modelled --ops 10 --calibrate-out /tmp/x.txt");
  EXPECT_EQ(run.exit_code, 2) << run.output;
}

}  // namespace
}  // namespace dmindex::sim
