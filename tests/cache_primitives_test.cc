// The building blocks of the compute-side cache: swips, the hybrid latch, the mapping
// table and the cooling map, alone and under concurrency.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "cache/buffer_frame.h"
#include "cache/cooling_map.h"
#include "cache/guards.h"
#include "cache/mapping_table.h"
#include "cache/swip.h"

namespace dmindex::cache {
namespace {

TEST(Swip, TagBitSeparatesLocalFramesFromRemoteAddresses) {
  BufferFrame f;
  const GlobalAddress a(3, 0x12340);
  const Swip remote = Swip::Remote(a), local = Swip::Local(&f);
  EXPECT_FALSE(remote.swizzled());
  EXPECT_EQ(remote.remote(), a);
  EXPECT_TRUE(local.swizzled());
  EXPECT_EQ(local.frame(), &f);
  EXPECT_NE(remote.raw(), local.raw());
  EXPECT_TRUE(Swip::Representable(a));
  EXPECT_FALSE(Swip::Representable(GlobalAddress(0x8000, 64)));
  uint64_t word = 0;
  Swip::Store(&word, local);
  EXPECT_EQ(Swip::Load(&word), local);
}

TEST(VersionLock, ExclusiveInvalidatesOptimisticReaders) {
  BufferFrame f;
  OptimisticGuard g(&f);
  ASSERT_TRUE(g.valid());
  EXPECT_TRUE(g.Validate());
  { ExclusiveGuard x(&f); }
  EXPECT_FALSE(g.Validate());
  OptimisticGuard g2(&f);
  EXPECT_TRUE(g2.Validate());
  // Upgrading a stale read fails; a fresh one succeeds.
  EXPECT_FALSE(ExclusiveGuard::TryUpgrade(g).owns());
  ExclusiveGuard up = ExclusiveGuard::TryUpgrade(g2);
  EXPECT_TRUE(up.owns());
  // While held exclusively, optimistic reads cannot start.
  EXPECT_FALSE(OptimisticGuard(&f).valid());
  OptimisticGuard after = up.Downgrade();
  EXPECT_TRUE(after.Validate());
}

TEST(VersionLock, SharedHoldersBlockWritersButNotOptimisticReaders) {
  BufferFrame f;
  OptimisticGuard g(&f);
  {
    SharedGuard s1(&f);
    SharedGuard s2(&f);
    EXPECT_FALSE(ExclusiveGuard::TryLock(&f).owns());
    EXPECT_FALSE(ExclusiveGuard::TryUpgrade(g).owns());
    EXPECT_TRUE(g.Validate());  // readers change nothing
  }
  EXPECT_TRUE(ExclusiveGuard::TryLock(&f).owns());
}

// Writers keep two words equal under the exclusive latch; optimistic readers that validate
// must never see them differ (the seqlock property the cache's traversal relies on).
TEST(VersionLock, ValidatedOptimisticReadsAreConsistent) {
  BufferFrame f;
  alignas(8) uint64_t words[2] = {0, 0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> validated{0}, inconsistent{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      for (uint64_t i = 1; i <= 20000; ++i) {
        ExclusiveGuard x(&f);
        std::atomic_ref<uint64_t>(words[0]).store(i, std::memory_order_relaxed);
        std::atomic_ref<uint64_t>(words[1]).store(i, std::memory_order_relaxed);
      }
    });
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      while (!stop.load()) {
        OptimisticGuard g(&f);
        if (!g.valid()) continue;
        const uint64_t a = std::atomic_ref<uint64_t>(words[0]).load(std::memory_order_relaxed);
        const uint64_t b = std::atomic_ref<uint64_t>(words[1]).load(std::memory_order_relaxed);
        if (!g.Validate()) continue;
        validated.fetch_add(1);
        if (a != b) inconsistent.fetch_add(1);
      }
    });
  threads[0].join();
  threads[1].join();
  // On 2 cores the readers may not have been scheduled while the writers ran; let them
  // finish some validated reads before stopping, so the count below cannot be zero by luck.
  while (validated.load() < 100) std::this_thread::yield();
  stop = true;
  threads[2].join();
  threads[3].join();
  EXPECT_GE(validated.load(), 100u);
  EXPECT_EQ(inconsistent.load(), 0u);
}

TEST(MappingTable, ConcurrentInsertOfOneAddressHasOneWinner) {
  MappingTable table(1024);
  constexpr int kThreads = 8, kAddrs = 500;
  std::vector<BufferFrame> frames(kThreads);
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int a = 0; a < kAddrs; ++a)
        if (table.TryInsert(GlobalAddress(0, 64 * (a + 1)), &frames[t]) == nullptr) wins++;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wins.load(), kAddrs);
  EXPECT_EQ(table.size(), size_t{kAddrs});
  BufferFrame* owner = table.Lookup(GlobalAddress(0, 64));
  ASSERT_NE(owner, nullptr);
  EXPECT_FALSE(table.Erase(GlobalAddress(0, 64), owner == &frames[0] ? &frames[1] : &frames[0]));
  EXPECT_TRUE(table.Erase(GlobalAddress(0, 64), owner));
  EXPECT_EQ(table.Lookup(GlobalAddress(0, 64)), nullptr);
}

// Frames whose node ids all hash to one bucket: with one bucket every id does.
TEST(CoolingMap, FullBucketEvictsItsOldestEntryFirst) {
  CoolingMap map(1);  // one bucket of six slots
  ASSERT_EQ(map.buckets(), 1u);
  std::vector<BufferFrame> frames(8);
  for (size_t i = 0; i < frames.size(); ++i) frames[i].set_remote(GlobalAddress(0, 64 * (i + 1)));
  bool listed = false;
  for (size_t i = 0; i < 6; ++i) {
    frames[i].latch.Lock();
    EXPECT_EQ(map.Push(&frames[i], &listed), nullptr);
    EXPECT_TRUE(listed);
    frames[i].latch.Unlock();
  }
  EXPECT_EQ(map.size(), 6u);
  // Frame 0 is busy (latched elsewhere): the oldest latchable one, frame 1, goes instead.
  frames[0].latch.Lock();
  frames[6].latch.Lock();
  BufferFrame* victim = map.Push(&frames[6], &listed);
  EXPECT_TRUE(listed);
  EXPECT_EQ(victim, &frames[1]);
  EXPECT_TRUE(victim->latch.locked());  // handed over latched, for eviction
  victim->latch.Unlock();
  frames[6].latch.Unlock();
  frames[0].latch.Unlock();
  // Removal keeps FIFO order of the rest: oldest is now frame 0, then 2.
  frames[3].latch.Lock();
  EXPECT_TRUE(map.Remove(&frames[3]));
  EXPECT_FALSE(map.Remove(&frames[3]));
  frames[3].latch.Unlock();
  BufferFrame* oldest = map.PopOldest(0);
  EXPECT_EQ(oldest, &frames[0]);
  oldest->latch.Unlock();
  oldest = map.PopOldest(0);
  EXPECT_EQ(oldest, &frames[2]);
  oldest->latch.Unlock();
  EXPECT_EQ(map.size(), 3u);  // frames 4, 5, 6
}

TEST(CoolingMap, ConcurrentPushAndPopNeverDuplicateOrLose) {
  CoolingMap map(60);  // ten buckets
  constexpr int kThreads = 4, kFramesPerThread = 200;
  std::vector<BufferFrame> frames(kThreads * kFramesPerThread);
  for (size_t i = 0; i < frames.size(); ++i) frames[i].set_remote(GlobalAddress(1, 64 * (i + 1)));
  std::atomic<int> listed_total{0}, out_total{0};
  std::vector<std::vector<BufferFrame*>> out(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < kFramesPerThread; ++i) {
        BufferFrame* f = &frames[t * kFramesPerThread + i];
        f->latch.Lock();
        bool listed = false;
        BufferFrame* victim = map.Push(f, &listed);
        f->latch.Unlock();
        if (listed) listed_total++;
        if (victim) {
          out[t].push_back(victim);
          victim->latch.Unlock();
        }
        if (rng() % 3 == 0)
          if (BufferFrame* v = map.PopOldest(rng())) {
            out[t].push_back(v);
            v->latch.Unlock();
          }
      }
    });
  for (auto& th : threads) th.join();
  std::set<BufferFrame*> seen;
  for (auto& v : out)
    for (BufferFrame* f : v) {
      EXPECT_TRUE(seen.insert(f).second) << "a frame left the map twice";
      out_total++;
    }
  // Whatever is still listed comes out exactly once too.
  while (BufferFrame* v = map.PopOldest(0, map.buckets())) {
    EXPECT_TRUE(seen.insert(v).second);
    v->latch.Unlock();
    out_total++;
  }
  EXPECT_EQ(out_total.load(), listed_total.load());
  EXPECT_EQ(map.size(), 0u);
}

}  // namespace
}  // namespace dmindex::cache
