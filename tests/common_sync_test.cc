// The blocking waits of common/sync.h (used instead of libstdc++ 12's semaphore, latch, barrier
// and atomic wait, whose wakeups are not correct; see sync.h): what each promises, under
// enough contention that a lost wakeup would leave a thread asleep and the test stuck.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/sync.h"

namespace dmindex {
namespace {

TEST(Semaphore, NeverAdmitsMoreThanItsCountAndWakesEveryWaiter) {
  constexpr uint32_t kSlots = 2, kThreads = 6, kRounds = 3000;
  Semaphore sem(kSlots);
  std::atomic<uint32_t> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (uint32_t i = 0; i < kRounds; ++i) {
        sem.Acquire();
        const uint32_t now = inside.fetch_add(1) + 1;
        for (uint32_t m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
        }
        inside.fetch_sub(1);
        sem.Release();
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_LE(most.load(), kSlots);
  // All slots are back: exactly kSlots can be taken without blocking.
  for (uint32_t i = 0; i < kSlots; ++i) EXPECT_TRUE(sem.TryAcquire());
  EXPECT_FALSE(sem.TryAcquire());
}

TEST(Latch, WaitReturnsOnlyAfterTheLastCountDown) {
  Latch latch(3);
  std::atomic<int> counted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      counted.fetch_add(1);
      latch.CountDown();
    });
  latch.Wait();
  EXPECT_EQ(counted.load(), 3);
  for (std::thread& t : threads) t.join();
  latch.CountDown();  // beyond zero: stays open
  latch.Wait();
}

TEST(Barrier, EachPhaseCompletesOnceWithEveryoneArrivedAndNobodyAhead) {
  constexpr int kThreads = 4, kPhases = 2000;
  std::atomic<int> arrived{0};
  int completions = 0;
  bool everyone_there = true;
  Barrier barrier(kThreads, [&] {
    everyone_there = everyone_there && arrived.load() == kThreads;
    arrived.store(0);
    ++completions;
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int p = 0; p < kPhases; ++p) {
        arrived.fetch_add(1);
        barrier.ArriveAndWait();
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(completions, kPhases);
  EXPECT_TRUE(everyone_there) << "a phase completed before all threads arrived";
}

TEST(ParkingLot, AParkedThreadSeesEveryChangeMadeBeforeAWake) {
  // A ticket lock's now-serving counter, changed without the lot's mutex, as in
  // tree/local_lock_table.cc: each thread parks until it is its turn, then passes the turn on.
  constexpr int kThreads = 4, kTurns = 4000;
  ParkingLot lot;
  std::atomic<int> serving{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int turn = t; turn < kTurns; turn += kThreads) {
        lot.Park([&] { return serving.load() == turn; });
        serving.fetch_add(1);
        lot.Wake();
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(serving.load(), kTurns);
}

}  // namespace
}  // namespace dmindex
