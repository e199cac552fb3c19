// Epoch-based reclamation (common/epoch.h): nothing is freed while an operation that could see
// it is running; everything is freed once they end; departing participants hand over.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/epoch.h"

namespace dmindex {
namespace {

struct Tracked {
  std::atomic<int>* frees;
};
void FreeTracked(void* object, void* context) {
  static_cast<std::atomic<int>*>(context)->fetch_add(1);
  delete static_cast<Tracked*>(object);
}

TEST(EpochTest, NothingFreedWhileAReaderMaySeeIt) {
  EpochManager m;
  std::atomic<int> frees{0};
  auto reader = m.Join();
  auto writer = m.Join();
  reader->Enter();  // a reader that may hold a pointer to the object
  writer->Retire(new Tracked{&frees}, FreeTracked, &frees, 16);
  EXPECT_EQ(m.pending_bytes(), 16u);
  for (int i = 0; i < 10; ++i) writer->Reclaim();
  EXPECT_EQ(frees.load(), 0);  // the reader's epoch holds the advance back
  reader->Exit();
  for (int i = 0; i < 3; ++i) writer->Reclaim();
  EXPECT_EQ(frees.load(), 1);
  EXPECT_EQ(m.pending_bytes(), 0u);
}

TEST(EpochTest, ADepartingParticipantsLeftoversAreFreedByOthersOrAtTheEnd) {
  std::atomic<int> frees{0};
  {
    EpochManager m;
    auto keeper = m.Join();
    keeper->Enter();
    {
      auto leaver = m.Join();
      leaver->Retire(new Tracked{&frees}, FreeTracked, &frees, 8);
    }  // leaves with the object pending
    EXPECT_EQ(frees.load(), 0);
    keeper->Exit();
    auto other = m.Join();
    for (int i = 0; i < 3; ++i) other->Reclaim();
    EXPECT_EQ(frees.load(), 1);
    auto again = m.Join();
    again->Retire(new Tracked{&frees}, FreeTracked, &frees, 8);
  }  // the manager frees what is left
  EXPECT_EQ(frees.load(), 2);
}

// Readers dereference a shared object while a writer keeps replacing and retiring it: a freed
// object would be read after free (ASan) or show a poisoned value.
TEST(EpochTest, ConcurrentReadersNeverSeeFreedObjects) {
  struct Obj {
    std::atomic<uint64_t> value;
  };
  EpochManager m;
  std::atomic<Obj*> current{new Obj{{7}}};
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&] {
      auto p = m.Join();
      while (!stop.load()) {
        EpochGuard g(*p);
        Obj* o = current.load(std::memory_order_seq_cst);
        if (o->value.load() != 7) bad.fetch_add(1);
      }
    });
  auto w = m.Join();
  for (int i = 0; i < 20000; ++i) {
    Obj* fresh = new Obj{{7}};
    Obj* old = current.exchange(fresh, std::memory_order_seq_cst);
    w->Retire(
        old,
        [](void* o, void*) {
          static_cast<Obj*>(o)->value.store(0xdead);  // poison before freeing
          delete static_cast<Obj*>(o);
        },
        nullptr, sizeof(Obj));
  }
  stop.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  delete current.load();
}

}  // namespace
}  // namespace dmindex
