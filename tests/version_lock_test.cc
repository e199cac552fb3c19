// common/version_lock.h, one thread, every transition: what validates after what, which
// upgrades fail, what the obsolete mark and the shared holders do. (The seqlock property
// under threads: cache_primitives_test's VersionLock.ValidatedOptimisticReadsAreConsistent,
// and the local, ART and cache tests that race their structures.)
#include "common/version_lock.h"

#include <gtest/gtest.h>

namespace dmindex {
namespace {

TEST(VersionLockWord, AReleaseThatChangedSomethingInvalidatesEarlierReads) {
  VersionLock lock;
  const uint64_t v = lock.ReadLock();
  EXPECT_TRUE(lock.Validate(v));
  ASSERT_TRUE(lock.Upgrade(v));
  EXPECT_TRUE(lock.locked());
  uint64_t during = 0;
  EXPECT_FALSE(lock.TryOptimistic(&during));  // a writer holds it
  EXPECT_FALSE(lock.Validate(v));             // nor does a read overlapping the writer validate
  const uint64_t next = lock.Unlock();
  EXPECT_FALSE(lock.locked());
  EXPECT_FALSE(lock.Validate(v));
  EXPECT_EQ(lock.ReadLock(), next);
  EXPECT_NE(next, v);
  EXPECT_FALSE(lock.Upgrade(v));  // a stale version never upgrades
}

TEST(VersionLockWord, AbandonKeepsEarlierReadsValid) {
  VersionLock lock;
  const uint64_t v = lock.ReadLock();
  ASSERT_TRUE(lock.Upgrade(v));
  lock.Abandon(v);
  EXPECT_TRUE(lock.Validate(v));
  EXPECT_TRUE(lock.Upgrade(v));
  lock.Unlock();
}

TEST(VersionLockWord, ObsoleteNodesAreSeenAndNeverLockedLive) {
  VersionLock lock;
  uint64_t v = 0;
  ASSERT_TRUE(lock.ReadLockLive(&v));
  ASSERT_TRUE(lock.LockLive());
  lock.UnlockObsolete();
  EXPECT_TRUE(lock.obsolete());
  EXPECT_FALSE(lock.Validate(v));
  EXPECT_TRUE(VersionLock::IsObsolete(lock.ReadLock()));
  EXPECT_FALSE(lock.ReadLockLive(&v));
  EXPECT_FALSE(lock.LockLive());
  EXPECT_FALSE(lock.locked());
}

TEST(VersionLockWord, SharedHoldersBlockWritersButNotReaders) {
  VersionLock lock;
  const uint64_t v = lock.ReadLock();
  ASSERT_TRUE(lock.TryLockShared());
  ASSERT_TRUE(lock.TryLockShared());
  EXPECT_TRUE(lock.Validate(v));           // shared holders change nothing
  EXPECT_EQ(lock.ReadLock(), v);           // and are not part of the version
  EXPECT_FALSE(lock.Upgrade(v));           // but no writer gets in
  EXPECT_FALSE(lock.TryLock());
  lock.UnlockShared();
  EXPECT_FALSE(lock.TryLock());
  lock.UnlockShared();
  ASSERT_TRUE(lock.TryLock());
  EXPECT_FALSE(lock.TryLockShared());      // nor a shared holder past a writer
  lock.Unlock();
}

}  // namespace
}  // namespace dmindex
