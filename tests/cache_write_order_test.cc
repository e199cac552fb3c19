// The order in which the cache lets pages reach remote memory (docs/DEX.md, "What may reach
// the pool"), with forced interleavings rather than hoped-for ones:
//  * a dirty page is written back while it is still swizzled in its parent: with its write
//    held in flight, the parent cannot be cooled, so it can neither be written back ahead of
//    it nor be evicted (a traversal that then misses the parent could read, or offload over,
//    the child's old remote image). Before the fix cooling unswizzled the page first and
//    wrote it afterwards: the parent cooled (and was written) while the child's write hung;
//  * a page marked precedes_parent (a split narrowed it) is written before its parent, by
//    every write-back of the parent and by a flush, whatever the frames' order;
//  * a page has at most one write-back in flight: a flush holds the page's latch exclusively
//    while its image is on the way, so a parent's write-back cannot write the same page at
//    the same time. Before the fix both latched it shared; each re-encoded the page with its
//    own version, and their WRITEs' pieces interleaved into an image that validated under
//    neither (DEX: "does not validate even under its lock" in a range nobody else writes).
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "cache_test_tree.h"

namespace dmindex::cache {
namespace {

using testing::FabricPages;
using testing::TestLayout;
using testing::TestTree;

std::unique_ptr<BufferManager> MakeCache(size_t frames) {
  static const TestLayout layout;
  CacheOptions o;
  o.page_bytes = testing::kPageBytes;
  o.cache_bytes = frames * testing::kPageBytes;
  o.leaf_admission = 1.0;
  auto bm = BufferManager::Create(o, layout);
  EXPECT_TRUE(bm.ok()) << bm.status().ToString();
  return std::move(bm).value();
}

// Records the order of write-backs (shared by the writers of several threads) and can hold
// the write-back of one page until released.
class WriteLog {
 public:
  struct Event {
    GlobalAddress addr;
    bool done;  // false: started
  };
  void Hold(GlobalAddress a) { held_ = a; }
  void Started(GlobalAddress a) {
    std::unique_lock lock(mu_);
    events_.push_back({a, false});
    cv_.notify_all();
    if (a == held_) cv_.wait(lock, [&] { return released_; });
  }
  void Done(GlobalAddress a) {
    std::lock_guard lock(mu_);
    events_.push_back({a, true});
  }
  void WaitStarted(GlobalAddress a) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return Position(a, false) >= 0; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Whether some page had a second write-back started before its first one was done.
  bool Overlapped() {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < events_.size(); ++i) {
      if (events_[i].done) continue;
      size_t j = i + 1;
      while (j < events_.size() && events_[j].addr != events_[i].addr) ++j;
      if (j < events_.size() && !events_[j].done) return true;
    }
    return false;
  }
  int Count(GlobalAddress a, bool done) {
    std::lock_guard lock(mu_);
    int n = 0;
    for (const Event& e : events_) n += e.addr == a && e.done == done;
    return n;
  }
  // Index of the first such event, -1 if none.
  int Position(GlobalAddress a, bool done) const {
    for (size_t i = 0; i < events_.size(); ++i)
      if (events_[i].addr == a && events_[i].done == done) return static_cast<int>(i);
    return -1;
  }
  int Find(GlobalAddress a, bool done) {
    std::lock_guard lock(mu_);
    return Position(a, done);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Event> events_;
  GlobalAddress held_;
  bool released_ = false;
};

class LoggedWriter final : public PageWriter {
 public:
  LoggedWriter(PageWriter& inner, WriteLog& log) : inner_(inner), log_(log) {}
  Status WriteBack(GlobalAddress addr, const std::byte* page) override {
    log_.Started(addr);
    Status s = inner_.WriteBack(addr, page);
    log_.Done(addr);
    return s;
  }

 private:
  PageWriter& inner_;
  WriteLog& log_;
};

void MarkDirty(BufferFrame* f, bool before_parent) {
  ExclusiveGuard g(f);
  if (before_parent) g.MarkDirtyBeforeParent();
  else g.MarkDirty();
}

TEST(CacheWriteOrder, ADirtyPageLeavesItsParentOnlyAfterItsWriteBack) {
  auto tree = TestTree::Build(4, 3);  // root -> 4 inner -> 16 leaves
  auto bm = MakeCache(64);
  FabricPages pages(*tree->fabric), held_pages(*tree->fabric);
  WriteLog log;
  LoggedWriter writer(pages, log), held_writer(held_pages, log);
  CacheWorker w(*bm, writer);
  uint64_t v = 0;
  ASSERT_TRUE(tree->Access(*bm, w, pages, 0, 0, true, &v).ok());  // leaf 0 dirty
  BufferFrame* leaf = bm->Lookup(tree->levels[0][0]);
  BufferFrame* inner = bm->Lookup(tree->levels[1][0]);
  ASSERT_NE(leaf, nullptr);
  ASSERT_NE(inner, nullptr);
  MarkDirty(inner, false);  // so that cooling it would write it back
  log.Hold(leaf->remote());

  bool leaf_cooled = false;
  Status leaf_status;
  std::thread cooler([&] {
    CacheWorker held(*bm, held_writer);
    leaf_status = bm->Cool(leaf, held, &leaf_cooled);
  });
  log.WaitStarted(leaf->remote());
  // The leaf's write-back is in flight: its parent must still count it as a swizzled child.
  bool inner_cooled = true;
  ASSERT_TRUE(bm->Cool(inner, w, &inner_cooled).ok());
  EXPECT_FALSE(inner_cooled) << "the parent cooled while its child's write-back was in flight";
  EXPECT_EQ(log.Find(inner->remote(), false), -1) << "the parent was written back ahead of its child";
  EXPECT_EQ(inner->load_state(), FrameState::kHot);
  log.Release();
  cooler.join();
  ASSERT_TRUE(leaf_status.ok()) << leaf_status.ToString();
  EXPECT_TRUE(leaf_cooled);
  EXPECT_FALSE(leaf->dirty.load());
  // Now the parent has no swizzled child: it cools, after the child's write is done.
  ASSERT_TRUE(bm->Cool(inner, w, &inner_cooled).ok());
  EXPECT_TRUE(inner_cooled);
  EXPECT_LT(log.Find(leaf->remote(), true), log.Find(inner->remote(), false));
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

TEST(CacheWriteOrder, ASplitChildIsWrittenBeforeItsParent) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64);
  FabricPages pages(*tree->fabric);
  WriteLog log;
  LoggedWriter writer(pages, log);
  CacheWorker w(*bm, writer);
  uint64_t v = 0;
  for (size_t leaf : {0, 1, 5}) ASSERT_TRUE(tree->Access(*bm, w, pages, leaf, 0, false, &v).ok());
  BufferFrame* root = bm->Lookup(tree->root());
  BufferFrame* inner0 = bm->Lookup(tree->levels[1][0]);
  BufferFrame* inner1 = bm->Lookup(tree->levels[1][1]);
  BufferFrame* leaf1 = bm->Lookup(tree->levels[0][1]);
  BufferFrame* leaf5 = bm->Lookup(tree->levels[0][5]);
  // Two levels of marked pages below the root, one plain dirty leaf.
  MarkDirty(leaf1, true);
  MarkDirty(inner0, true);
  MarkDirty(leaf5, false);
  MarkDirty(inner1, false);
  MarkDirty(root, false);
  {
    ExclusiveGuard g(root);
    ASSERT_TRUE(bm->WriteBack(root, w).ok());
  }
  // The root's write-back took its marked child first, and that one its marked child.
  const int l1 = log.Find(leaf1->remote(), true), i0 = log.Find(inner0->remote(), true),
            r = log.Find(root->remote(), false);
  ASSERT_GE(l1, 0);
  ASSERT_GE(i0, 0);
  EXPECT_LT(l1, log.Find(inner0->remote(), false));
  EXPECT_LT(i0, r);
  EXPECT_FALSE(leaf1->dirty.load() || inner0->dirty.load() || root->dirty.load());
  EXPECT_EQ(log.Find(leaf5->remote(), false), -1) << "an unmarked child need not go first";
  EXPECT_TRUE(leaf5->dirty.load());
  ASSERT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();

  // A flush visits frames in their order, but a marked page still goes before its parent.
  MarkDirty(leaf5, true);
  ASSERT_TRUE(bm->FlushDirty(w).ok());
  EXPECT_LT(log.Find(leaf5->remote(), true), log.Find(inner1->remote(), false));
  EXPECT_FALSE(leaf5->dirty.load() || inner1->dirty.load());
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

TEST(CacheWriteOrder, APageHasOneWriteBackInFlight) {
  auto tree = TestTree::Build(4, 3);
  auto bm = MakeCache(64);
  FabricPages pages(*tree->fabric), flush_pages(*tree->fabric);
  WriteLog log;
  LoggedWriter writer(pages, log), flush_writer(flush_pages, log);
  CacheWorker w(*bm, writer);
  uint64_t v = 0;
  ASSERT_TRUE(tree->Access(*bm, w, pages, 1, 0, false, &v).ok());
  BufferFrame* leaf = bm->Lookup(tree->levels[0][1]);
  BufferFrame* inner = bm->Lookup(tree->levels[1][0]);
  ASSERT_NE(leaf, nullptr);
  ASSERT_NE(inner, nullptr);
  // A split narrowed the leaf (its parent's write-back must write it first), and the parent
  // changed too: both a flush and the parent's write-back through want to write the leaf.
  MarkDirty(leaf, true);
  MarkDirty(inner, false);
  const GlobalAddress at = leaf->remote();
  log.Hold(at);
  Status flushed;
  std::thread flusher([&] {
    CacheWorker fw(*bm, flush_writer);
    flushed = bm->FlushDirty(fw, [&](GlobalAddress a) { return a == at; }).status();
  });
  log.WaitStarted(at);
  // The flush's WRITE of the leaf is in flight. Every write-back of a page latches it, so
  // while the latch is taken no second one can start.
  const bool second_could_start = leaf->latch.TryLockShared();
  if (second_could_start) leaf->latch.UnlockShared();
  EXPECT_FALSE(second_could_start) << "a page's latch admits a second write-back while one is in flight";
  Status through;
  std::thread parent_writer([&] {  // as a merge writes a parent through
    ExclusiveGuard g(inner);
    through = bm->WriteBack(inner, w);
  });
  log.Release();
  flusher.join();
  parent_writer.join();
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  ASSERT_TRUE(through.ok()) << through.ToString();
  EXPECT_FALSE(log.Overlapped()) << "two write-backs of one page were in flight at once";
  EXPECT_EQ(log.Count(at, false), 1) << "the parent's write-back wrote the leaf again, though it was clean";
  EXPECT_GE(log.Find(at, true), 0);
  EXPECT_LT(log.Find(at, true), log.Find(inner->remote(), false));
  EXPECT_FALSE(leaf->dirty.load() || inner->dirty.load());
  EXPECT_TRUE(bm->CheckInvariants().ok()) << bm->CheckInvariants().ToString();
}

}  // namespace
}  // namespace dmindex::cache
