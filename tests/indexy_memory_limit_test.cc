// IndeXY's memory limit when Y fails (src/designs/indexy/memory_budget.h): a write that would
// start while X is at its limit is not made until release makes room, and when a release round
// that began while the writer waited failed (MemStore's injected faults), the writer gets
// OutOfSpace naming the limit and Y's error; X never goes past the limit but by the write under
// way, and every write the index acknowledged stays readable (in X, dirty) until Y takes it.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <random>
#include <thread>

#include "designs/indexy/tier_worker.h"
#include "designs/indexy/tiers.h"
#include "designs/indexy/x_art.h"
#include "designs/indexy/x_btree.h"
#include "indexy_units.h"
#include "tiering/mem_store.h"

namespace dmindex::designs::indexy {
namespace {

using namespace std::chrono_literals;

std::string K(uint64_t i) { return U64Key(i).str(); }
std::string V(uint64_t i) { return U64Key(i * 7 + 1).str(); }

tiering::MemStoreFaults FailEveryCall() {
  tiering::MemStoreFaults f;
  f.fail_every = 1;
  return f;
}

class MemoryLimitTest : public ::testing::TestWithParam<XKind> {
 protected:
  // limit_kb of X, writers waiting at most stall_ms between the stall mark and the limit.
  void Make(uint64_t limit_kb, uint64_t stall_ms) {
    o_.limit_bytes = limit_kb << 10;
    o_.stall_ms = stall_ms;
    o_.node_bytes = 256;
    std::unique_ptr<XTree> x;
    if (GetParam() == XKind::kArt) {
      x = std::make_unique<ArtX>(o_.unit_depth, o_.sample_shift, o_.reclaim_bytes());
    } else {
      auto b = BtreeX::Make(KeyFormat::kU64, o_);
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      x = std::move(b).value();
    }
    auto mem = std::make_unique<tiering::MemStore>();
    mem_ = mem.get();
    tiers_ = std::make_unique<Tiers>(o_, std::move(x), std::move(mem));
    fg_ = tiers_->x().NewWorker();
  }
  uint64_t used() const { return tiers_->budget().used(); }
  // Every key of `model` reads back its value, through X (and Y once it works again).
  void ExpectAll(const std::map<uint64_t, uint64_t>& model) {
    for (const auto& [k, v] : model) {
      std::string got;
      ASSERT_TRUE(tiers_->Lookup(*fg_, K(k), &got).ok()) << k;
      ASSERT_EQ(got, V(v)) << k;
    }
  }
  void ExpectScanIs(const std::map<uint64_t, uint64_t>& model) {
    std::vector<KeyValue> all;
    KeyRange r;
    r.start = K(0);
    ASSERT_TRUE(tiers_->Scan(*fg_, r, 1u << 30, &all).ok());
    ASSERT_EQ(all.size(), model.size());
    auto it = model.begin();
    for (const KeyValue& kv : all) {
      ASSERT_EQ(kv.key, K(it->first));
      ASSERT_EQ(kv.value, V(it->second));
      ++it;
    }
  }

  IndexyOptions o_;
  tiering::MemStore* mem_ = nullptr;
  std::unique_ptr<Tiers> tiers_;
  std::unique_ptr<XWorker> fg_;
};

// No background thread: the test plays it (RoundBegins / RoundEnded), so which round a waiting
// writer takes as its own is scripted exactly.
TEST_P(MemoryLimitTest, AWriterAtTheLimitTakesOnlyTheFailureOfARoundBegunWhileItWaited) {
  Make(16, 0);
  std::map<uint64_t, uint64_t> model;
  // Past the limit without the budget (straight into X), as writers under way could take it.
  for (uint64_t k = 1; used() < o_.limit_bytes; ++k) {
    const std::string value = V(k);  // the decision refers to it
    ASSERT_TRUE(fg_->Modify(K(k), [&](const XCurrent&) { return XDecision::Put(value, xflags::kDirty); }).ok());
    model[k] = k;
  }
  MemoryBudget& budget = tiers_->budget();
  const uint64_t stale = budget.RoundBegins();  // began before the writer: not its failure
  auto w = tiers_->x().NewWorker();
  auto writer = std::async(std::launch::async, [&] { return tiers_->Insert(*w, K(1'000'000), "new"); });
  while (budget.waiting() == 0) std::this_thread::yield();
  budget.RoundEnded(stale, Status::IoError("stale failure"));
  EXPECT_EQ(writer.wait_for(50ms), std::future_status::timeout) << "a round begun before the wait failed it";
  budget.RoundEnded(budget.RoundBegins(), Status::IoError("the disk is on fire"));
  const Status refused = writer.get();
  EXPECT_TRUE(refused.IsOutOfSpace()) << refused.ToString();
  EXPECT_NE(refused.message().find("memory limit"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.message().find("the disk is on fire"), std::string::npos) << refused.ToString();
  EXPECT_EQ(budget.Stats().refused, 1u);
  std::string v;
  EXPECT_TRUE(tiers_->Lookup(*fg_, K(1'000'000), &v).IsNotFound()) << "a refused write was made";
  ExpectAll(model);

  // The next writer waits while rounds fail to free anything with no error of their own
  // (units that left X meanwhile), and writes once a round made room.
  auto second = std::async(std::launch::async, [&] { return tiers_->Update(*w, K(1), V(99)); });
  while (budget.waiting() == 0) std::this_thread::yield();
  budget.RoundEnded(budget.RoundBegins(), Status::Ok());
  EXPECT_EQ(second.wait_for(50ms), std::future_status::timeout) << "a writer went on at the limit";
  auto bg = tiers_->x().NewWorker();
  const std::vector<XUnit> units = AllUnits(*bg);
  const uint64_t round = budget.RoundBegins();
  for (size_t i = 0; i < units.size() / 2; ++i) {
    auto r = bg->Release(units[i], *tiers_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  // Nobody else is inside an operation: the epochs free what the releases retired.
  while (used() >= o_.stall_bytes()) {
    bg->Reclaim();
    std::this_thread::yield();
  }
  budget.RoundEnded(round, Status::Ok());
  ASSERT_TRUE(second.get().ok());
  model[1] = 99;
  ExpectAll(model);
  ExpectScanIs(model);
}

// With the background running and Y refusing every call: one writer fills X until a write is
// refused, X having gone no further than the limit; later writes of every kind are refused
// too; all acknowledged writes read back. Once Y works, writes go on and release makes room.
TEST_P(MemoryLimitTest, FailingYRefusesWritesAtTheLimitAndLosesNothing) {
  Make(32, 5);
  TierWorker background(*tiers_);
  mem_->SetFaults(FailEveryCall());
  std::map<uint64_t, uint64_t> model;
  Status refused;
  uint64_t k = 1;
  for (; k < 100'000; ++k) {
    refused = tiers_->Insert(*fg_, K(k), V(k));
    if (!refused.ok()) break;
    model[k] = k;
  }
  ASSERT_TRUE(refused.IsOutOfSpace()) << refused.ToString();
  EXPECT_NE(refused.message().find("injected failure of write"), std::string::npos) << refused.ToString();
  // A single writer: X passed the limit by its last write at most (an entry and the nodes it grew).
  const BudgetStats m = tiers_->budget().Stats();
  EXPECT_GE(m.peak_bytes, o_.limit_bytes);
  EXPECT_LE(m.peak_bytes, o_.limit_bytes + 2560) << "limit " << o_.limit_bytes;
  EXPECT_EQ(m.refused, 1u);
  EXPECT_GT(background.Counters().errors, 0u);
  std::string v;
  EXPECT_TRUE(tiers_->Lookup(*fg_, K(k), &v).IsNotFound());
  EXPECT_TRUE(tiers_->Insert(*fg_, K(k), V(k)).IsOutOfSpace());
  EXPECT_TRUE(tiers_->Update(*fg_, K(1), V(5)).IsOutOfSpace());
  EXPECT_TRUE(tiers_->Delete(*fg_, K(2)).IsOutOfSpace());
  EXPECT_EQ(tiers_->budget().Stats().refused, 4u);
  EXPECT_EQ(mem_->size(), 0u);
  ExpectAll(model);  // X answers: no key left it

  mem_->SetFaults({});
  for (uint64_t more = k; more < k + 2000; ++more) {
    ASSERT_TRUE(tiers_->Insert(*fg_, K(more), V(more)).ok()) << more;
    model[more] = more;
  }
  EXPECT_GT(mem_->size(), 0u);
  EXPECT_EQ(tiers_->budget().Stats().refused, 4u);
  ExpectAll(model);
  ExpectScanIs(model);
}

// Writers on disjoint keys while Y fails and then recovers: each write either succeeded (and
// is then read back at the end) or was refused with OutOfSpace, or - an update or delete of a
// key only in Y - failed reading Y with its IoError; neither kind changed anything.
TEST_P(MemoryLimitTest, ConcurrentWritersWhileYFailsLoseNoAcknowledgedWrite) {
  Make(16, 2);
  TierWorker background(*tiers_);
  constexpr int kThreads = 3;
  std::atomic<bool> stop{false};
  std::atomic<int> done{0};
  std::vector<std::map<uint64_t, uint64_t>> models(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto w = tiers_->x().NewWorker();
      std::mt19937_64 rng(t);
      auto& model = models[t];
      uint64_t k_now = 0;
      // Ok: made. OutOfSpace (refused at the limit), IoError (Y failed a read): not made.
      auto made = [&](const Status& s) {
        EXPECT_TRUE(s.ok() || s.IsOutOfSpace() || s.IsIoError() || s.IsNotFound()) << s.ToString();
        if (s.IsNotFound()) {
          EXPECT_EQ(model.count(k_now), 0u) << k_now;
        }
        return s.ok();
      };
      for (uint64_t i = 1; !stop.load() && i < 200'000; ++i) {
        const uint64_t k = 1 + (rng() % 2000) * kThreads + t;
        k_now = k;
        switch (rng() % 4) {
          case 0:
            if (made(tiers_->Delete(*w, K(k)))) {
              ASSERT_EQ(model.erase(k), 1u) << k;
            }
            break;
          case 1:
            if (made(tiers_->Update(*w, K(k), V(i)))) {
              ASSERT_EQ(model.count(k), 1u) << k;
              model[k] = i;
            }
            break;
          default:
            if (made(tiers_->Insert(*w, K(k), V(i)))) model[k] = i;
        }
      }
      done.fetch_add(1);
    });
  // Y works until X was released to it, then fails until writers were refused, then works.
  while (background.Counters().released_units == 0 && done.load() < kThreads) std::this_thread::sleep_for(1ms);
  mem_->SetFaults(FailEveryCall());
  while (tiers_->budget().Stats().refused < 5 && done.load() < kThreads) std::this_thread::sleep_for(1ms);
  mem_->SetFaults({});
  std::this_thread::sleep_for(100ms);
  stop = true;
  for (auto& th : threads) th.join();
  std::map<uint64_t, uint64_t> all;
  for (const auto& m : models) all.insert(m.begin(), m.end());
  ExpectAll(all);
  ExpectScanIs(all);
  EXPECT_GE(tiers_->budget().Stats().refused, 5u);
}

INSTANTIATE_TEST_SUITE_P(X, MemoryLimitTest, ::testing::Values(XKind::kArt, XKind::kBtree),
                         [](const auto& info) { return std::string(XKindName(info.param)); });

}  // namespace
}  // namespace dmindex::designs::indexy
