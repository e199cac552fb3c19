// The shared retry policy (common/retry.h): backoff stages in order, budgets that run out
// exactly at their limits, and exhausted budgets that say what, where, how often and why.
#include <gtest/gtest.h>

#include <chrono>

#include "common/retry.h"

namespace dmindex {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(Backoff, SpinsThenYieldsThenSleepsWithDoublingSleeps) {
  Backoff b(BackoffStages{3, 2, microseconds(200), microseconds(800)});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(b.stage(), Backoff::Stage::kSpin);
    b.Pause();
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(b.stage(), Backoff::Stage::kYield);
    b.Pause();
  }
  EXPECT_EQ(b.stage(), Backoff::Stage::kSleep);
  // Sleeps of 200, 400, 800 and 800 us: at least 2.2 ms in all (sleeps never end early).
  const auto start = runtime::Now();
  for (int i = 0; i < 4; ++i) b.Pause();
  EXPECT_GE(runtime::Now() - start, microseconds(2200));
  EXPECT_EQ(b.steps(), 9u);
  b.Reset();
  EXPECT_EQ(b.stage(), Backoff::Stage::kSpin);
  EXPECT_EQ(b.steps(), 0u);
}

TEST(Backoff, WithoutASleepStageItKeepsYielding) {
  Backoff b(backoff::kLatchHeld);
  for (int i = 0; i < 1000; ++i) b.Pause();
  EXPECT_EQ(b.stage(), Backoff::Stage::kYield);
}

TEST(RetryBudget, RunsOutExactlyAtItsAttemptLimit) {
  const RetryLimit limit{"restarts", 5, {}, Status::Code::kBusy, "the path kept changing"};
  RetryBudget budget(limit, "insert");
  int allowed = 0;
  while (budget.Spend()) ++allowed;
  EXPECT_EQ(allowed, 4);  // the 5th failed attempt is the last one
  EXPECT_EQ(budget.spent(), 5u);
  const Status s = budget.Exhausted("of key 17 at node 1:0x40");
  EXPECT_TRUE(s.IsBusy());
  EXPECT_EQ(s.message(),
            "insert of key 17 at node 1:0x40: gave up after 5 restarts (limit 5 restarts): "
            "the path kept changing");
}

TEST(RetryBudget, ATimeLimitCountsFromTheFirstFailedAttempt) {
  const RetryLimit limit{"attempts to lock", 0, milliseconds(30), Status::Code::kUnavailable, "holder crashed?"};
  RetryBudget budget(limit, "lock");
  runtime::SleepFor(milliseconds(40));  // before any failure: not counted
  EXPECT_TRUE(budget.Spend());
  const auto first = runtime::Now();
  while (budget.Spend()) runtime::SleepFor(milliseconds(1));
  EXPECT_GE(runtime::Now() - first, milliseconds(30));
  const Status s = budget.Exhausted("node 0:0x80");
  EXPECT_TRUE(s.IsUnavailable());
  EXPECT_NE(s.message().find("lock node 0:0x80: gave up after "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(" ms (limit 30 ms): holder crashed?"), std::string::npos) << s.message();
}

// A timeout option of zero means "do not wait" (a plain RetryLimit's zero time means no limit):
// the regression of a memory-server exit poll that waited forever when asked not to wait.
TEST(RetryBudget, AZeroTimeoutAllowsNoSecondAttempt) {
  RetryBudget zero(TimeLimit("polls", milliseconds(0), Status::Code::kUnavailable, "gone"), "wait");
  EXPECT_FALSE(zero.Spend());
  EXPECT_TRUE(zero.Exhausted("here").IsUnavailable());
  RetryBudget some(TimeLimit("polls", std::chrono::hours(1), Status::Code::kUnavailable, "gone"), "wait");
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(some.Spend());
}

TEST(RetryBudget, EveryNamedLimitBoundsSomethingAndSaysWhat) {
  for (const RetryLimit& l :
       {retry_limits::kTreeRestarts, retry_limits::kLevelHops, retry_limits::kNodeLockHeld,
        retry_limits::kDexOperation, retry_limits::kDexMerge, retry_limits::kDexDraining,
        retry_limits::kPartitionMapLocked, retry_limits::kPartitionMapChanging,
        retry_limits::kPartitionMapCreated, retry_limits::kHostLeaseClaims, retry_limits::kCatalogClaim,
        retry_limits::kFreeFrameRounds, retry_limits::kInvalidateBusyFrame, retry_limits::kFrameBusyWait, retry_limits::kOptimisticRead,
        retry_limits::kLocalTreeRestarts}) {
    EXPECT_TRUE(l.attempts > 0 || l.time.count() > 0) << l.bounds;  // never unbounded
    EXPECT_NE(std::string(l.bounds), "");
    EXPECT_NE(l.code, Status::Code::kOk) << l.bounds;
  }
}

}  // namespace
}  // namespace dmindex
