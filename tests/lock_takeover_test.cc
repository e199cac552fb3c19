// Lock takeover with repair (docs/SYNCHRONIZATION.md, "Lock takeover and repair"), crash point
// by crash point: a writer of one index "dies" at its k-th READ or WRITE of an insert, an
// update, a leaf split and an internal split (the WRITE cut after half its bytes; every later
// READ and WRITE of that thread fails, so whatever lock it held stays held, as in a killed
// process), for every k - on naive, sherman (lock-table words) and rftree (inline leaf locks in
// the leaf's trailer; internal nodes in the lock table). Then a writer of another opening of the same index (another lease)
// writes into the same leaf, which makes it take the lock over once the dead lease expired and
// finish the dead write first, and a reader looks up every key. The index must hold every
// acknowledged write (the dead operation's key: its old or its new value) and scan in order.
//
// Time is the lease layer's test clock, moved 20 ms by every read, so a dead lease expires
// after a fixed number of looks: no sleeps, no real timeouts.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/u64.h"
#include "crash_points.h"
#include "designs/registry.h"
#include "dex_test_env.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "fabric/pool_layout.h"
#include "lease/lease.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using testing::DyingThread;
using testing::HeldLocks;

// kLeafSplitUnderParent: a full leaf under a parent with room that the dying process has
// cached, so its split's batch takes the parent's lock behind the leaf's unlock
// (docs/SYNCHRONIZATION_DETAIL.md, "The parent's lock in a split's batch").
// kInternalSplitUnderGrandparent: kInternalSplit with the path cached, so the full parent's
// split takes the grandparent's lock in its batch the same way.
enum class Op { kInsert, kUpdate, kLeafSplit, kInternalSplit, kLeafSplitUnderParent, kInternalSplitUnderGrandparent };

struct Case {
  std::string design;
  Op op;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  static const char* kOps[] = {"Insert",        "Update",         "LeafSplit", "InternalSplit", "LeafSplitUnderParent",
                               "InternalSplitUnderGrandparent"};
  return info.param.design + "_" + kOps[static_cast<int>(info.param.op)];
}

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> dead;   // the process that dies
  std::unique_ptr<Index> taker;  // another process on the same index
  std::unique_ptr<Session> dead_session;  // never used after the death
  std::map<uint64_t, uint64_t> acknowledged;
  uint64_t key = 0, old_value = 0, new_value = 0;  // the dead operation's
  bool key_existed = false;
  bool warm = false;  // the dying process reads the dead key's leaf first (its cache holds the parent)
};

// The tree and the dead operation for `op`: even keys loaded, the operation writes an odd key
// (insert, splits) or an existing one (update).
Bed MakeBed(const Case& c) {
  Bed b;
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  const bool full = c.op != Op::kInsert && c.op != Op::kUpdate;
  // One full leaf (RF-tree's leaves hold one slot more: 7 in 256 - 8 bytes of trailer, where
  // the others' hold 6) / a tree of height 3+ / 8 full leaves under a root with room for 12.
  const uint64_t leaf = c.design == "rftree" ? 7 : 6;
  const uint64_t keys = c.op == Op::kLeafSplit ? leaf : c.op == Op::kLeafSplitUnderParent ? 8 * leaf : 400;
  b.taker = std::move(designs::MakeIndex(c.design, *b.fabric, testing::LockTestOptions(full ? 1.0 : 0.5))).value();
  std::vector<testing::U64Pair> data;
  for (uint64_t k = 1; k <= keys; ++k) data.push_back({2 * k, 2 * k * 10});
  EXPECT_TRUE(testing::BulkLoadU64(*b.taker, data).ok());
  for (const auto& kv : data) b.acknowledged[kv.key] = kv.value;
  b.dead = std::move(designs::MakeIndex(c.design, *b.fabric, testing::LockTestOptions(full ? 1.0 : 0.5))).value();
  b.key = c.op == Op::kUpdate ? 2 * (keys / 2) : 2 * (keys / 2) + 1;
  b.key_existed = b.acknowledged.count(b.key) > 0;
  b.old_value = b.key_existed ? b.acknowledged[b.key] : 0;
  b.new_value = 7'000'000 + b.key;
  b.warm = c.op == Op::kLeafSplitUnderParent || c.op == Op::kInternalSplitUnderGrandparent;
  return b;
}

// Runs the dead operation with the process dying at READ/WRITE `die_at` (0: never); returns
// how many READs and WRITEs it posted and whether it was acknowledged.
uint64_t RunDying(Bed& b, uint64_t die_at, bool* acknowledged) {
  auto session = std::move(b.dead->OpenSession(0)).value();
  uint64_t ignored = 0;
  if (b.warm) {
    EXPECT_TRUE(session->Lookup(b.key - 1, &ignored).ok());
  }
  DyingThread script(std::this_thread::get_id(), die_at);
  b.fabric->SetVerbScript(&script);
  *acknowledged = session->Insert(b.key, b.new_value).ok();
  b.fabric->SetVerbScript(nullptr);
  b.dead_session = std::move(session);  // closed only at the end (before the fabric goes)
  return script.seen();
}

// After the death: the other process writes the dead operation's neighbour (the same leaf),
// then reads everything.
void CheckAfter(Bed& b, bool dead_acknowledged, uint64_t die_at) {
  SCOPED_TRACE("died at verb " + std::to_string(die_at));
  if (dead_acknowledged) b.acknowledged[b.key] = b.new_value;
  auto s = std::move(b.taker->OpenSession(0)).value();
  const uint64_t neighbour = b.key_existed ? b.key + 1 : b.key - 1;  // in the same leaf
  { const Status st = s->Insert(neighbour, 1); ASSERT_TRUE(st.ok()) << st.ToString(); }
  b.acknowledged[neighbour] = 1;
  for (const auto& [k, v] : b.acknowledged) {
    uint64_t got = 0;
    const Status st = s->Lookup(k, &got);
    if (k == b.key && !dead_acknowledged) {
      // In flight when it died: either outcome, nothing else.
      if (b.key_existed) {
        ASSERT_TRUE(st.ok()) << st.ToString();
      }
      if (st.ok()) {
        EXPECT_TRUE(got == b.old_value || got == b.new_value) << got;
      } else {
        EXPECT_TRUE(st.IsNotFound()) << st.ToString();
      }
      continue;
    }
    ASSERT_TRUE(st.ok()) << "key " << k << ": " << st.ToString();
    EXPECT_EQ(got, v) << "key " << k;
  }
  std::vector<testing::U64Pair> all;
  ASSERT_TRUE(testing::ScanU64(*s, 0, 1 << 20, &all).ok());
  for (size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1].key, all[i].key);
  EXPECT_GE(all.size(), b.acknowledged.size() - (dead_acknowledged ? 0 : 1));
  EXPECT_LE(all.size(), b.acknowledged.size() + 1);
  // A write into every leaf (splitting the full ones, so every parent is written too):
  // whatever lock the dead process held is taken over on the way.
  std::vector<uint64_t> loaded;
  for (const auto& [k, v] : b.acknowledged)
    if (k % 2 == 0) loaded.push_back(k);
  for (uint64_t k : loaded) {
    if (k + 1 == b.key || b.acknowledged.count(k + 1) > 0) continue;
    const Status st = s->Insert(k + 1, k);
    ASSERT_TRUE(st.ok()) << "key " << k + 1 << ": " << st.ToString();
  }
}

uint64_t Property(const Index& index, const char* name) { return index.GetIntProperty(name).value_or(0); }

class LockTakeover : public ::testing::TestWithParam<Case> {};

TEST_P(LockTakeover, EveryCrashPointIsRepairedAndLosesNothingAcknowledged) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock([&] {
    return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.fetch_add(20)));
  });
  uint64_t verbs = 0;
  {
    Bed dry = MakeBed(GetParam());
    bool ok = false;
    verbs = RunDying(dry, 0, &ok);
    ASSERT_TRUE(ok);
  }
  ASSERT_GT(verbs, 1u);
  uint64_t left_held = 0;  // crash points that left a lock-table word held for the other process
  uint64_t taken_over = 0, repaired = 0;  // crash points whose lock (table or trailer) the other
                                          // process took over; of them, with a record replayed
  for (uint64_t k = 1; k <= verbs; ++k) {
    Bed b = MakeBed(GetParam());
    bool ok = true;
    RunDying(b, k, &ok);
    left_held += HeldLocks(*b.fabric) > 0;
    CheckAfter(b, ok, k);
    if (HasFatalFailure()) return;
    // A lock left held anywhere - a lock-table word or a leaf's trailer (RF-tree's inline
    // locks) - was in the way of the writes into every leaf, which succeeded: taken over.
    EXPECT_EQ(HeldLocks(*b.fabric), 0u) << "a lock stayed held after the other process wrote everywhere";
    taken_over += Property(*b.taker, "dmindex.locks.takeovers") > 0;
    repaired += Property(*b.taker, "dmindex.locks.repairs") > 0;
  }
  std::cout << GetParam().design << ": " << verbs << " crash points, " << left_held
            << " left a lock-table word held, " << taken_over << " taken over, " << repaired
            << " repaired from a redo record\n";
  EXPECT_GT(taken_over, 0u);
  EXPECT_GT(repaired, 0u) << "no crash point cut a write that its record finished";
  EXPECT_GE(taken_over, left_held);
}

// DEX: the only leaf of a small tree covers both partitions, so it is shared and its writers
// lock it in the lock table under their process's one lease (DEX's host lease). Process A
// (compute node 0) dies at every READ and WRITE of an upsert into that leaf; process B
// (compute node 1) then writes its own key into the same leaf, which takes A's lock over once
// A's lease expired and finishes A's write; no lock stays held.
TEST(LockTakeoverDex, ASharedLeafLockOfADeadProcessIsTakenOver) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock([&] {
    return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.fetch_add(20)));
  });
  const uint64_t upper = u64::kMaxKey / 2 + 10;  // compute node 1's
  struct Dex {
    std::unique_ptr<fabric::InProcFabric> fabric = testing::DexTestFabric();
    std::unique_ptr<Index> a, b;
    std::unique_ptr<Session> sa, sb;
  };
  auto make = [&](Dex* d) {
    const std::map<std::string, std::string> knobs = {{"lease_ms", "100"}, {"durability", "none"}};
    auto a_knobs = knobs;
    a_knobs.emplace("partitions", "2");
    d->a = std::move(designs::MakeIndex("dex", *d->fabric, testing::DexTestOptions("t", 1, a_knobs))).value();
    d->b = std::move(designs::MakeIndex("dex", *d->fabric, testing::DexTestOptions("t", 1, knobs))).value();
    d->sa = std::move(d->a->OpenSession(0)).value();
    d->sb = std::move(d->b->OpenSession(0)).value();
    ASSERT_TRUE(d->sa->Insert(10, 10).ok());
    ASSERT_TRUE(d->sb->Insert(upper, 1).ok());
  };
  auto dying_upsert = [&](Dex& d, uint64_t die_at, bool* ok) {
    DyingThread script(std::this_thread::get_id(), die_at);
    d.fabric->SetVerbScript(&script);
    *ok = d.sa->Insert(20, 777).ok();
    d.fabric->SetVerbScript(nullptr);
    return script.seen();
  };
  uint64_t verbs = 0;
  {
    Dex dry;
    make(&dry);
    if (HasFatalFailure()) return;
    bool ok = false;
    verbs = dying_upsert(dry, 0, &ok);
    ASSERT_TRUE(ok);
  }
  ASSERT_GT(verbs, 1u);
  uint64_t left_held = 0;
  for (uint64_t k = 1; k <= verbs; ++k) {
    SCOPED_TRACE("died at verb " + std::to_string(k));
    Dex d;
    make(&d);
    if (HasFatalFailure()) return;
    bool ok = true;
    dying_upsert(d, k, &ok);
    const uint64_t held = HeldLocks(*d.fabric);
    left_held += held > 0;
    const Status st = d.sb->Insert(upper + 1, 2);
    ASSERT_TRUE(st.ok()) << st.ToString();
    uint64_t v = 0;
    ASSERT_TRUE(d.sb->Lookup(upper, &v).ok());
    EXPECT_EQ(v, 1u);
    EXPECT_EQ(HeldLocks(*d.fabric), 0u) << "the dead process's lock stayed held";
    if (held > 0) {
      EXPECT_GT(d.b->GetIntProperty("dmindex.locks.takeovers").value_or(0), 0u);
    }
    d.sa.reset();  // the dead process's session and index go before the fabric
  }
  std::cout << "dex: " << verbs << " crash points, " << left_held << " left a lock-table word held\n";
  EXPECT_GT(left_held, 0u);
}

INSTANTIATE_TEST_SUITE_P(Designs, LockTakeover,
                         ::testing::Values(Case{"naive", Op::kInsert}, Case{"naive", Op::kUpdate},
                                           Case{"naive", Op::kLeafSplit}, Case{"naive", Op::kInternalSplit},
                                           Case{"sherman", Op::kInsert}, Case{"sherman", Op::kUpdate},
                                           Case{"sherman", Op::kLeafSplit}, Case{"sherman", Op::kInternalSplit},
                                           Case{"sherman", Op::kLeafSplitUnderParent},
                                           Case{"sherman", Op::kInternalSplitUnderGrandparent},
                                           Case{"rftree", Op::kInsert}, Case{"rftree", Op::kUpdate},
                                           Case{"rftree", Op::kLeafSplit}, Case{"rftree", Op::kInternalSplit},
                                           Case{"rftree", Op::kLeafSplitUnderParent},
                                           Case{"rftree", Op::kInternalSplitUnderGrandparent}),
                         CaseName);

}  // namespace
}  // namespace dmindex
