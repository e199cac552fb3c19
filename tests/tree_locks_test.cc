// Node locks of the tree core: plain remote CAS locks and HOCL (local lock table with
// hand-over), with and without command combination. Threads of two compute nodes increment a
// counter inside a remote "node" under the lock, read and written with the lock's own verbs:
// any lost update means mutual exclusion or write-before-unlock ordering broke.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "fabric/inproc/inproc_fabric.h"
#include "fabric/pool_layout.h"
#include "tree/lock_table.h"
#include "tree/node_lock.h"

namespace dmindex::tree {
namespace {

struct LockCase {
  bool hocl;
  bool combine;
};

class NodeLockTest : public ::testing::TestWithParam<LockCase> {};

TEST_P(NodeLockTest, CountersUnderTheLockNeverLoseAnUpdate) {
  fabric::InProcOptions fo;
  fo.memory_nodes = 2;
  fo.pool_bytes = 64ull << 20;
  fo.faults.delay_probability = 0.1;  // interleave threads inside lock/read/write sequences
  fo.faults.delay_max_us = 20;
  auto f = std::move(fabric::InProcFabric::Create(fo)).value();
  const GlobalAddress node(1, fabric::kChunkAreaOffset + 64 * 100);  // a 256-byte "node"
  NodeLock lock(GetParam().combine);
  LocalLockTable local0(2, 4), local1(2, 4);
  constexpr int kThreads = 6, kIncrements = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto ep = std::move(f->Connect()).value();
      LocalLockTable* local = GetParam().hocl ? (t % 2 ? &local1 : &local0) : nullptr;
      uint64_t buf[32];
      uint64_t failures = 0;
      for (int i = 0; i < kIncrements; ++i) {
        NodeLock::Held held;
        ASSERT_TRUE(lock.LockAndRead(*ep, local, LockOwner{nullptr, 100u + t}, node, buf, sizeof buf, &held, &failures).ok());
        ASSERT_TRUE(held.held);
        const uint64_t next = buf[0] + 1;
        for (uint64_t& w : buf) w = next;  // the whole node changes: torn reads would show
        fabric::Verb write = fabric::Verb::Write(node, buf, sizeof buf);
        ASSERT_TRUE(lock.WriteAndUnlock(*ep, &held, {&write, 1}).ok());
        ASSERT_FALSE(held.held);
      }
    });
  for (auto& th : threads) th.join();
  auto ep = std::move(f->Connect()).value();
  uint64_t buf[32];
  ASSERT_TRUE(ep->Read(node, buf, sizeof buf).ok());
  for (uint64_t w : buf) EXPECT_EQ(w, static_cast<uint64_t>(kThreads * kIncrements));
  uint64_t word = 1;
  ASSERT_TRUE(ep->Read(LockWordFor(node, LockArea::kProcesses), &word, 8).ok());
  EXPECT_EQ(word, 0u) << "the lock must end free";
  if (GetParam().hocl) { EXPECT_GT(local0.handovers() + local1.handovers(), 0u); }
}

INSTANTIATE_TEST_SUITE_P(Modes, NodeLockTest,
                         ::testing::Values(LockCase{false, false}, LockCase{false, true},
                                           LockCase{true, false}, LockCase{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.hocl ? "hocl" : "cas") +
                                  (info.param.combine ? "_combined" : "_separate");
                         });

TEST(LocalLockTable, HandsOverOnlyToWaitersAndAtMostTheBound) {
  LocalLockTable table(1, 2);
  const GlobalAddress word(0, fabric::kLockTableOffset + 8 * 5);
  EXPECT_FALSE(table.Acquire(word)) << "first owner must take the global lock itself";
  EXPECT_FALSE(table.ShouldHandOver(word)) << "nobody waits";
  table.Release(word, false);
  // Three waiters queue behind an owner: two hand-overs, then the bound forces a release.
  EXPECT_FALSE(table.Acquire(word));
  std::vector<int> got_handover(3, -1);
  std::vector<std::thread> waiters;
  std::atomic<int> order{0};
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&] {
      bool handed = table.Acquire(word);
      int me = order++;
      got_handover[me] = handed;
      bool hand = table.ShouldHandOver(word);
      table.Release(word, hand);
    });
  }
  while (table.Waiting(word) < 3) std::this_thread::yield();  // all three queued
  table.Release(word, true);
  for (auto& w : waiters) w.join();
  EXPECT_EQ(got_handover[0], 1);
  EXPECT_EQ(got_handover[1], 1);
  EXPECT_EQ(got_handover[2], 0) << "the third in a row must take the global lock itself";
  EXPECT_EQ(table.handovers(), 2u);
}

// Many threads queue on one local lock, most of them long enough to block (not just yield):
// every one gets it (no lost wakeup), one at a time (the plain counter is exact; TSan checks
// the accesses are ordered).
TEST(LocalLockTable, EveryQueuedThreadGetsTheLockOneAtATime) {
  LocalLockTable table(1, 4);
  const GlobalAddress word(0, fabric::kLockTableOffset + 8 * 7);
  constexpr int kThreads = 6, kAcquires = 2000;
  uint64_t counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kAcquires; ++i) {
        table.Acquire(word);
        ++counter;
        table.Release(word, table.ShouldHandOver(word));
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter, uint64_t{kThreads} * kAcquires);
  EXPECT_EQ(table.Waiting(word), 0u);
}

// TryAcquire (a leaf split's try at its parent's lock) never waits: it takes a free local
// lock, with the hand-over state Acquire would report, and refuses an owned one.
TEST(LocalLockTable, TryAcquireTakesOnlyAFreeLock) {
  LocalLockTable table(1, 4);
  const GlobalAddress word(0, fabric::kLockTableOffset + 8 * 9);
  bool handed = true;
  ASSERT_TRUE(table.TryAcquire(word, &handed));
  EXPECT_FALSE(handed) << "nobody handed the global lock over";
  EXPECT_FALSE(table.TryAcquire(word, &handed)) << "owned";
  EXPECT_EQ(table.Waiting(word), 0u) << "a refused try leaves no ticket behind";
  table.Release(word, true);  // keeps the global lock for the next local owner
  ASSERT_TRUE(table.TryAcquire(word, &handed));
  EXPECT_TRUE(handed);
  table.Release(word, false);
  // Racing tries and acquires: at most one owner at a time, every acquire served.
  constexpr int kThreads = 4, kRounds = 2000;
  std::atomic<int> owners{0}, most{0};
  uint64_t counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        bool h = false;
        if (t % 2 == 0) table.Acquire(word);
        else if (!table.TryAcquire(word, &h)) continue;
        const int now = ++owners;
        most = std::max(most.load(), now);
        ++counter;
        --owners;
        table.Release(word, false);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(most.load(), 1);
  EXPECT_GE(counter, uint64_t{kThreads / 2} * kRounds);
  EXPECT_EQ(table.Waiting(word), 0u);
}

}  // namespace
}  // namespace dmindex::tree
