// A store index's folder (lmdb, rocksdb under IndexOptions::directory) is never dropped under
// another handle: designs/kvstore/store_hold.h. LMDB is the store several handles - of one
// process or of several - can open at once (RocksDB locks its folder to one handle itself).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "designs/kvstore/store_hold.h"
#include "dmindex/index.h"

namespace dmindex {
namespace {

using designs::StoreHold;

class StoreDropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/dmindex-store-hold-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  IndexOptions Options(bool create = true) const {
    IndexOptions o;
    o.design = "lmdb";
    o.directory = dir_;
    o.name = "held";
    o.create_if_missing = create;
    return o;
  }
  std::string home() const { return dir_ + "/held"; }
  static std::unique_ptr<Index> Open(const IndexOptions& o) {
    auto index = Index::Open(o);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(index).value() : nullptr;
  }
  static Status Put(Index& index, const std::string& key, const std::string& value) {
    auto session = index.OpenSession();
    if (!session.ok()) return session.status();
    return (*session)->Insert(key, value);
  }
  static std::string Get(Index& index, const std::string& key) {
    auto session = index.OpenSession();
    if (!session.ok()) return "(no session: " + session.status().ToString() + ")";
    std::string value;
    Status s = (*session)->Lookup(key, &value);
    return s.ok() ? value : "(" + s.ToString() + ")";
  }

  std::string dir_;
};

TEST_F(StoreDropTest, ASecondHandleInThisProcessRefusesTheDropAndBothKeepWorking) {
  auto a = Open(Options());
  auto b = Open(Options());
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(Put(*a, "k", "a").ok());
  Status refused = a->Drop();
  EXPECT_TRUE(refused.IsBusy()) << refused.ToString();
  EXPECT_TRUE(std::filesystem::exists(home()));
  // The refused handle is open and working, and so is the other.
  EXPECT_EQ(Get(*a, "k"), "a");
  EXPECT_EQ(Get(*b, "k"), "a");
  ASSERT_TRUE(Put(*b, "k2", "b").ok());
  EXPECT_EQ(Get(*a, "k2"), "b");
  // B refuses too: A holds it.
  EXPECT_TRUE(b->Drop().IsBusy());
  b.reset();
  ASSERT_TRUE(a->Drop().ok());
  EXPECT_FALSE(std::filesystem::exists(home()));
  EXPECT_TRUE(Index::Open(Options(/*create=*/false)).status().IsNotFound());
}

TEST_F(StoreDropTest, AHandleInAnotherProcessRefusesTheDropUntilThatProcessDies) {
  auto a = Open(Options());
  ASSERT_TRUE(a);
  ASSERT_TRUE(Put(*a, "k", "parent").ok());
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the index, writes a key, says so, and waits to be killed
    close(ready[0]);
    auto index = Index::Open(Options(/*create=*/false));
    const bool ok = index.ok() && Put(**index, "c", "child").ok();
    const char byte = ok ? 1 : 0;
    if (write(ready[1], &byte, 1) != 1) _exit(2);
    for (;;) pause();
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 1) << "the child could not open the index";
  Status refused = a->Drop(DropOptions{.force = true});  // force does not fence a live process
  EXPECT_TRUE(refused.IsBusy()) << refused.ToString();
  EXPECT_EQ(Get(*a, "c"), "child");
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // The kernel released the dead process's hold with it.
  Status dropped = a->Drop();
  EXPECT_TRUE(dropped.ok()) << dropped.ToString();
  EXPECT_FALSE(std::filesystem::exists(home()));
}

TEST_F(StoreDropTest, ADropAfterCloseNeverTakesAnIndexMadeAnewUnderTheName) {
  auto a = Open(Options());
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->Close().ok());
  auto b = Open(Options());
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->Drop().ok());  // A is closed: it holds nothing
  auto c = Open(Options());     // a new index of the same name
  ASSERT_TRUE(c);
  ASSERT_TRUE(Put(*c, "k", "c").ok());
  c.reset();
  Status late = a->Drop();
  EXPECT_TRUE(late.IsNotFound()) << late.ToString();
  auto again = Open(Options(/*create=*/false));
  ASSERT_TRUE(again);
  EXPECT_EQ(Get(*again, "k"), "c");
}

// Both handles try to take the folder for a drop at once: each sees the other's hold, and
// both keep theirs (an upgrade that failed is still the shared hold it was).
TEST_F(StoreDropTest, TwoHoldsMakingThemselvesExclusiveAtOnceAreBothRefused) {
  std::filesystem::create_directories(home());
  auto first = StoreHold::Take(home());
  auto second = StoreHold::Take(home());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(first->MakeExclusive().IsBusy());
  EXPECT_TRUE(second->MakeExclusive().IsBusy());
  EXPECT_TRUE(first->held() && !first->exclusive());
  // Still shared: a third holder gets in without waiting for anything.
  auto third = StoreHold::Take(home());
  ASSERT_TRUE(third.ok());
  third->Release();
  second->Release();
  EXPECT_TRUE(first->MakeExclusive().ok());
  EXPECT_TRUE(first->RemoveFolder().ok());
  EXPECT_FALSE(std::filesystem::exists(home()));
}

// An opener that meets a drop under way waits for it and then finds the index gone: NotFound
// without create_if_missing, a new empty index with it - never the dropped index's files.
TEST_F(StoreDropTest, AnOpenerMeetingADropUnderWayFindsTheIndexGone) {
  for (const bool create : {false, true}) {
    SCOPED_TRACE(create ? "create_if_missing" : "open only");
    {
      auto a = Open(Options());
      ASSERT_TRUE(a);
      ASSERT_TRUE(Put(*a, "k", "old").ok());
    }
    auto dropper = StoreHold::Take(home());
    ASSERT_TRUE(dropper.ok());
    ASSERT_TRUE(dropper->MakeExclusive().ok());
    Result<std::unique_ptr<Index>> opened = Status::Aborted("not yet");
    std::atomic<bool> done{false};
    std::thread opener([&] {
      opened = Index::Open(Options(create));
      done.store(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // most often it waits on the hold
    EXPECT_FALSE(done.load()) << "an opener went past a drop under way";
    ASSERT_TRUE(dropper->RemoveFolder().ok());
    opener.join();
    if (!create) {
      EXPECT_TRUE(opened.status().IsNotFound()) << opened.status().ToString();
    } else {
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      EXPECT_TRUE(Get(**opened, "k").find("NotFound") != std::string::npos) << Get(**opened, "k");
      ASSERT_TRUE((*opened)->Drop().ok());
    }
  }
}

}  // namespace
}  // namespace dmindex
