// Sherman's leaf split posts its last batch - the separator's insertion into the parent:
// [WRITE record, WRITE parent, WRITE clear, WRITE unlock] - without waiting for it
// (docs/SYNCHRONIZATION_DETAIL.md, "The separator's batch, unwaited"), and the session's next
// operation, or its close, reaps it. Here that batch fails at each of its verbs (the memory
// node did not answer; in-process fabric, scripted verbs), the split's insert is acknowledged
// all the same, and the failure is found when the batch is reaped and handled as a failed
// waited batch is: the word still names the writer, so the batch is posted again. Afterwards
// no lock is held, every key is there and the parent holds the separator.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "crash_points.h"
#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using testing::HeldLocks;

// Fails the `nth` READ or WRITE (1-based) that one thread posts after its `reads`-th READ:
// with reads = 2 in the split below, the verbs of the parent's batch, which follows the
// READ of the parent. Only that one verb fails: the batch stops there, as a batch whose
// memory node stopped answering does; everything after it passes.
class FailAfterReads final : public fabric::VerbScript {
 public:
  FailAfterReads(std::thread::id who, uint64_t reads, uint64_t nth) : who_(who), reads_(reads), nth_(nth) {}
  Outcome Run(const fabric::VerbCopy& copy) override {
    if (std::this_thread::get_id() != who_) return Outcome::kPass;
    if (seen_reads_ < reads_) {
      seen_reads_ += copy.verb().kind == fabric::VerbKind::kRead;
      return Outcome::kPass;
    }
    if (++after_ != nth_) return Outcome::kPass;
    failed_.fetch_add(1);
    return Outcome::kFail;
  }
  uint64_t failed() const { return failed_.load(); }

 private:
  const std::thread::id who_;
  const uint64_t reads_, nth_;
  uint64_t seen_reads_ = 0, after_ = 0;  // only `who_` changes them
  std::atomic<uint64_t> failed_{0};
};

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> session;
};

// Keys 2, 4, ..., 20000 bulk loaded into 1 KB leaves (32 keys in 40 slots), the parents
// cached by one lookup per leaf, then the first leaf filled (odd keys 3..17) so that the
// insert of 19 splits it with its parent cached: its batch takes the parent's lock.
Bed SplitReady() {
  Bed b;
  fabric::InProcOptions fo;
  fo.pool_bytes = 1ull << 30;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  b.index = std::move(designs::MakeIndex("sherman", *b.fabric, o)).value();
  std::vector<testing::U64Pair> data;
  for (uint64_t k = 1; k <= 10000; ++k) data.push_back({2 * k, k});
  EXPECT_TRUE(testing::BulkLoadU64(*b.index, data).ok());
  b.session = std::move(b.index->OpenSession(0)).value();
  uint64_t v = 0;
  for (uint64_t k = 2; k <= 20000; k += 32) EXPECT_TRUE(b.session->Lookup(k, &v).ok());
  for (uint64_t k = 3; k <= 17; k += 2) EXPECT_TRUE(b.session->Insert(k, k).ok());
  return b;
}

// The split's insert, with verb `nth` of the parent's batch failing: acknowledged, and the
// batch posted again before it returns - no lock is left held by the idle session.
void SplitWithFailingParentBatch(Bed& b, uint64_t nth) {
  FailAfterReads script(std::this_thread::get_id(), 2, nth);
  b.fabric->SetVerbScript(&script);
  const Status st = b.session->Insert(19, 19);
  b.fabric->SetVerbScript(nullptr);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(script.failed(), 1u) << "the parent's batch did not reach verb " << nth;
  EXPECT_EQ(HeldLocks(*b.fabric), 0u) << "the failed batch was left for the next operation";
}

// Every key is there, in order, and a key of the split's right half is one READ away: the
// parent routes to the right node.
void CheckWhole(Bed& b, Session& s) {
  uint64_t v = 0;
  for (uint64_t k = 2; k <= 20000; k += 2) ASSERT_TRUE(s.Lookup(k, &v).ok()) << k;
  for (uint64_t k = 3; k <= 19; k += 2) {
    ASSERT_TRUE(s.Lookup(k, &v).ok()) << k;
    EXPECT_EQ(v, k);
  }
  const fabric::VerbCounts before = b.fabric->TotalCounts();
  ASSERT_TRUE(s.Lookup(64, &v).ok());
  EXPECT_EQ((b.fabric->TotalCounts() - before).round_trips, 1u) << "the parent lacks the separator";
  std::vector<testing::U64Pair> all;
  ASSERT_TRUE(testing::ScanU64(s, 0, 1 << 20, &all).ok());
  EXPECT_EQ(all.size(), 10000u + 9u);
  for (size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1].key, all[i].key);
}

class PostedSeparator : public ::testing::TestWithParam<uint64_t> {};

// The session's next operation finds everything in place.
TEST_P(PostedSeparator, AFailedBatchIsPostedAgainBeforeTheInsertReturns) {
  Bed b = SplitReady();
  SplitWithFailingParentBatch(b, GetParam());
  if (HasFatalFailure()) return;
  uint64_t v = 0;
  ASSERT_TRUE(b.session->Lookup(19, &v).ok());
  EXPECT_EQ(HeldLocks(*b.fabric), 0u);
  CheckWhole(b, *b.session);
}

// A session that closes right after it finds nothing left to reap, and another sees it all.
TEST_P(PostedSeparator, AFailedBatchLeavesNothingForTheSessionsClose) {
  Bed b = SplitReady();
  SplitWithFailingParentBatch(b, GetParam());
  if (HasFatalFailure()) return;
  b.session.reset();
  EXPECT_EQ(HeldLocks(*b.fabric), 0u);
  auto other = std::move(b.index->OpenSession(0)).value();
  CheckWhole(b, *other);
}

// The parent's batch: WRITE record header, WRITE record copy, WRITE parent, WRITE clear,
// WRITE unlock.
INSTANTIATE_TEST_SUITE_P(EachVerb, PostedSeparator, ::testing::Values(1, 2, 3, 4, 5));

}  // namespace
}  // namespace dmindex
