// The order in which the cache lets pages reach remote memory (docs/DEX.md, "What may reach
// the pool"), with forced interleavings rather than hoped-for ones:
//  * a dirty page is written back while it is still swizzled in its parent: with its write
//    held in flight, the parent cannot be cooled, so it can neither be written back ahead of
//    it nor be evicted (a traversal that then misses the parent could read, or offload over,
//    the child's old remote image). Before the fix cooling unswizzled the page first and
//    wrote it afterwards: the parent cooled (and was written) while the child's write hung;
//  * a page marked precedes_parent (a split narrowed it) is written before its parent, by
//    every write-back of the parent and by a flush, whatever the frames' order.
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

}  // namespace
}  // namespace dmindex::cache
