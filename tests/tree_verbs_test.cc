// Verbs per operation of the remote tree designs, from fabric::VerbCounts snapshot
// differences. The assertions are claims about the designs: with Sherman's internal-node
// cache warm, a lookup is exactly one READ (the leaf); with command combination a
// non-splitting write is two round trips ([CAS lock + READ leaf], [WRITE entry + WRITE
// unlock]); the naive tree reads every level and pays one round trip per verb.
//
// TreeVerbs.Table prints the table of docs/SHERMAN.md; DMINDEX_FIGURE_KEYS sets the number
// of bulk-loaded keys (default 200000, which gives the same height-4 tree as 1M keys).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>

#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "u64_api.h"

namespace dmindex {
namespace {

// This file's tests speak the u64 key format in integers (u64_api.h).
using Key = uint64_t;
using Value = uint64_t;
using KeyValue = ::dmindex::testing::U64Pair;
using ::dmindex::u64::kMinKey;
using ::dmindex::u64::kMaxKey;
using ::dmindex::u64::IsValidKey;


uint64_t FigureKeys() {
  const char* env = std::getenv("DMINDEX_FIGURE_KEYS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 200000;
}

// Height (levels incl. leaves) of a bulk-loaded tree of 1 KB nodes at 80% fill: 40 slots
// per leaf -> 32 keys, 61 children per internal node -> 48.
int BulkLoadedHeight(uint64_t keys) {
  uint64_t nodes = (keys + 31) / 32;
  int height = 1;
  for (; nodes > 1; ++height) nodes = (nodes + 47) / 48;
  return height;
}

// Bytes a write of `payload` bytes under a lock adds for its redo record: the 64-byte
// header, the payload's copy, the 8-byte clear (tree/redo_log.h).
uint64_t Redo(uint64_t payload) { return 64 + payload + 8; }

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> session;
  uint64_t keys = 0;
};

// Keys 2, 4, ..., 2n (odd keys are free for inserts), bulk loaded; the cache is warmed by
// one lookup per leaf.
Bed MakeBed(const std::string& design, uint64_t keys, std::map<std::string, std::string> knobs = {}) {
  Bed b;
  fabric::InProcOptions fo;
  fo.memory_nodes = 2;
  fo.pool_bytes = 4ull << 30;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.knobs = std::move(knobs);
  b.index = std::move(designs::MakeIndex(design, *b.fabric, o)).value();
  std::vector<KeyValue> data;
  for (uint64_t k = 1; k <= keys; ++k) data.push_back({2 * k, k});
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*b.index, data).ok());
  b.session = std::move(b.index->OpenSession(0)).value();
  Value v;
  for (uint64_t k = 1; k <= keys; k += 16) EXPECT_TRUE(b.session->Lookup(2 * k, &v).ok());
  b.keys = keys;
  return b;
}

fabric::VerbCounts Measure(fabric::Fabric& f, const std::function<void()>& op) {
  fabric::VerbCounts before = f.TotalCounts();
  op();
  return f.TotalCounts() - before;
}

TEST(TreeVerbs, ShermanCachedLookupIsExactlyOneLeafRead) {
  Bed b = MakeBed("sherman", 100000);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 500; ++i) {
    Key k = 2 * (1 + rng() % b.keys);
    Value v = 0;
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(k, &v).ok()); });
    ASSERT_EQ(v, k / 2);
    ASSERT_EQ(c.reads, 1u) << c.ToString();
    ASSERT_EQ(c.round_trips, 1u);
    ASSERT_EQ(c.writes + c.atomics() + c.rpcs, 0u);
    ASSERT_EQ(c.read_bytes, 1024u);
  }
  EXPECT_GT(b.index->Stats().cache_hits, 0u);
}

TEST(TreeVerbs, ShermanWriteWithoutSplitTakesTwoRoundTrips) {
  Bed b = MakeBed("sherman", 100000);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 300; ++i) {
    Key k = 2 * (1 + rng() % b.keys);
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Update(k, i).ok()); });
    // [CAS + READ], [WRITE redo header, WRITE redo payload, WRITE entry, WRITE redo clear,
    // WRITE unlock] (the redo record: docs/SYNCHRONIZATION.md "Lock takeover and repair")
    ASSERT_EQ(c.round_trips, 2u) << c.ToString();
    ASSERT_EQ(c.cas, 1u);
    ASSERT_EQ(c.reads, 1u);
    ASSERT_EQ(c.writes, 5u);
    ASSERT_EQ(c.write_bytes, Redo(24) + 24u + 8u) << "entry-level write-back: one slot and the lock word";
  }
  // Inserts of new keys into 80%-full leaves: one slot each, no split for the first 8.
  for (uint64_t leaf = 0; leaf < 100; ++leaf) {
    Key k = 2 * (1 + leaf * 500) + 1;
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Insert(k, 1).ok()); });
    ASSERT_LE(c.round_trips, 2u) << c.ToString();
    ASSERT_EQ(c.write_bytes, Redo(24) + 24u + 8u);
  }
}

// A leaf split with the parent cached on the leaf's memory node: the parent's lock CAS and
// READ ride behind the leaf's unlock (docs/SYNCHRONIZATION_DETAIL.md, "The parent's lock in a
// split's batch"), and the parent's batch is posted without waiting for it ("The separator's
// batch, unwaited"):
//   [CAS + READ leaf],
//   [WRITE right leaf, WRITE redo header, WRITE redo copy, WRITE left leaf, WRITE redo clear,
//    WRITE unlock, CAS parent lock, READ parent],
//   unwaited: [WRITE redo header, WRITE redo copy, WRITE parent, WRITE redo clear, WRITE unlock]
// - two waited round trips, every verb of the three batches still issued and counted (three
// round trips before the unwaited post, four before the parent's lock rode in the second
// batch). With combine=off every verb is a round trip of its own, all waited, and the
// parent's lock is taken alone.
TEST(TreeVerbs, ShermanLeafSplitWaitsForTwoRoundTrips) {
  for (const bool combined : {true, false}) {
    SCOPED_TRACE(combined ? "combine=on" : "combine=off");
    // The first leaf: keys 2..64 in 32 of 40 slots; its parent is cached.
    Bed b = MakeBed("sherman", 100000, {{"combine", combined ? "on" : "off"}});
    for (Key k = 3; k <= 17; k += 2) ASSERT_TRUE(b.session->Insert(k, 1).ok()) << k;  // fills it
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Insert(19, 1).ok()); });
    EXPECT_EQ(c.round_trips, combined ? 2u : 2u + 1u + 5u + 2u + 5u) << c.ToString();
    EXPECT_EQ(c.cas, 2u);
    EXPECT_EQ(c.reads, 2u);
    EXPECT_EQ(c.writes, 11u);
    EXPECT_EQ(c.write_bytes, 1024u + Redo(1024) + 1024u + 8u + Redo(1024) + 1024u + 8u);
    // The parent got the separator: a key of the right half is one READ away (the lookup
    // reaps the unwaited batch first, which costs no verb).
    Value v;
    c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(64, &v).ok()); });
    EXPECT_EQ(c.round_trips, 1u) << c.ToString();
    // A write into the right half is a plain write again.
    c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Insert(63, 1).ok()); });
    EXPECT_EQ(c.round_trips, combined ? 2u : 7u) << c.ToString();
  }
}

// A leaf split that fills its parent splits the parent too; that split's batch carries the
// lock and READ of the node above as the leaf's carries the parent's, and the separator's
// batch one level up is unwaited again:
//   [CAS + READ leaf]
//   [WRITE right leaf, .. leaf + unlock, CAS + READ parent]
//   [WRITE right internal, .. parent + unlock, CAS + READ grandparent]
//   unwaited: [record, WRITE grandparent, clear, unlock]
// - three waited round trips (four when the grandparent's lock had a round trip of its own).
TEST(TreeVerbs, ShermanInternalSplitWaitsForOneMoreRoundTrip) {
  // Bulk-loaded parents have 48 of 61 children: the 14th leaf split under the first one
  // splits it. Nine inserts into a leaf of 32 of 40 keys split it once.
  Bed b = MakeBed("sherman", 100000);
  int internal_splits = 0;
  for (Key leaf = 0; leaf < 20 && internal_splits == 0; ++leaf) {
    for (Key k = 64 * leaf + 3; k <= 64 * leaf + 19; k += 2) {
      auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Insert(k, k).ok()) << k; });
      if (c.cas < 3) {
        EXPECT_EQ(c.round_trips, 2u) << k << ": " << c.ToString();
        continue;
      }
      ++internal_splits;
      EXPECT_EQ(c.cas, 3u) << c.ToString();
      EXPECT_EQ(c.reads, 3u) << c.ToString();
      EXPECT_EQ(c.round_trips, 3u) << k << ": " << c.ToString();
    }
  }
  EXPECT_EQ(internal_splits, 1);
  // Every key stays reachable, the new internal node's through its parent: one READ a lookup.
  Value v = 0;
  for (Key k = 2; k <= 64 * 20; k += 2) {
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(k, &v).ok()) << k; });
    ASSERT_EQ(c.reads, 1u) << k << ": " << c.ToString();
  }
}

// The cost of keeping a key in one slot per leaf version (docs/SYNCHRONIZATION.md): a delete
// is one slot WRITE (a tombstone), so is re-inserting the key; a new key takes an empty slot
// (one slot), and only when a leaf's free slots are all other keys' tombstones does an insert
// rewrite the leaf whole, still two round trips, after which the tombstones are empty slots.
TEST(TreeVerbs, ShermanDeletesCostOneSlotAndTombstonesAWholeLeafWriteAtMost) {
  Bed b = MakeBed("sherman", 1000);  // the first leaf: keys 2..64 in 32 of 40 slots
  auto write = [&](const std::function<Status()>& op) {
    fabric::VerbCounts c = Measure(*b.fabric, [&] { ASSERT_TRUE(op().ok()); });
    EXPECT_EQ(c.round_trips, 2u) << c.ToString();
    return c.write_bytes - 8;  // minus the unlock
  };
  auto slot = Redo(24) + 24u, leaf = Redo(1024) + 1024u;
  EXPECT_EQ(write([&] { return b.session->Delete(2); }), slot);
  EXPECT_EQ(write([&] { return b.session->Insert(2, 1); }), slot) << "its own tombstone";
  EXPECT_EQ(write([&] { return b.session->Delete(2); }), slot);
  EXPECT_EQ(write([&] { return b.session->Delete(4); }), slot);
  for (Key k = 3; k <= 17; k += 2)  // 8 new keys fill the 8 empty slots
    EXPECT_EQ(write([&] { return b.session->Insert(k, 1); }), slot) << k;
  EXPECT_EQ(write([&] { return b.session->Insert(19, 1); }), leaf) << "only tombstones left";
  EXPECT_EQ(write([&] { return b.session->Insert(21, 1); }), slot) << "the rewrite freed one";
  Value v;
  for (Key k : {Key{3}, Key{17}, Key{19}, Key{21}, Key{64}})
    EXPECT_TRUE(b.session->Lookup(k, &v).ok()) << k;
  for (Key k : {Key{2}, Key{4}}) EXPECT_TRUE(b.session->Lookup(k, &v).IsNotFound()) << k;
}

TEST(TreeVerbs, NaiveReadsEveryLevelAndPaysARoundTripPerVerb) {
  const uint64_t keys = 100000;
  const int height = BulkLoadedHeight(keys);
  Bed b = MakeBed("naive", keys);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    Key k = 2 * (1 + rng() % b.keys);
    Value v = 0;
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(k, &v).ok()); });
    ASSERT_EQ(c.reads, static_cast<uint64_t>(height)) << c.ToString();
    ASSERT_EQ(c.round_trips, static_cast<uint64_t>(height));
    c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Update(k, i).ok()); });
    // Internal levels, then CAS, READ leaf, WRITE redo header, WRITE redo payload, WRITE
    // leaf, WRITE redo clear, WRITE unlock: one round trip each.
    ASSERT_EQ(c.round_trips, static_cast<uint64_t>(height - 1 + 7)) << c.ToString();
    ASSERT_EQ(c.write_bytes, Redo(1024) + 1024u + 8u) << "whole-leaf write-back";
  }
}

// Averages over random operations on a warm tree; printed as the table of docs/SHERMAN.md.
TEST(TreeVerbs, Table) {
  const uint64_t keys = FigureKeys();
  constexpr int kOps = 2000;
  std::cout << "keys=" << keys << " ops/row=" << kOps << " node_bytes=1024 bulk_fill=0.8\n"
            << "| design | op | READs | WRITEs | atomics | round trips | bytes |\n"
            << "|---|---|---|---|---|---|---|\n";
  for (const char* design : {"naive", "sherman"}) {
    Bed b = MakeBed(design, keys);
    std::mt19937_64 rng(4);
    std::vector<KeyValue> out;
    auto row = [&](const char* op, const std::function<void()>& fn) {
      fabric::VerbCounts c = Measure(*b.fabric, [&] { for (int i = 0; i < kOps; ++i) fn(); });
      auto per = [&](uint64_t x) { return static_cast<double>(x) / kOps; };
      std::cout << std::fixed << std::setprecision(2) << "| " << design << " | " << op << " | "
                << per(c.reads) << " | " << per(c.writes) << " | " << per(c.atomics()) << " | "
                << per(c.round_trips) << " | " << std::setprecision(0) << per(c.bytes()) << " |\n";
    };
    Value v;
    row("lookup", [&] { ASSERT_TRUE(b.session->Lookup(2 * (1 + rng() % keys), &v).ok()); });
    row("insert", [&] { ASSERT_TRUE(b.session->Insert(2 * (rng() % keys) + 1, 7).ok()); });
    Key next = 2 * keys + 1;  // ascending past the largest key: the last leaf splits often
    row("insert (append, splits)", [&] { ASSERT_TRUE(b.session->Insert(next++, 7).ok()); });
    row("update", [&] { ASSERT_TRUE(b.session->Update(2 * (1 + rng() % keys), 9).ok()); });
    row("scan(100)", [&] {
      ASSERT_TRUE(::dmindex::testing::ScanU64(*b.session, 2 * (1 + rng() % keys), 100, &out).ok());
      ASSERT_GT(out.size(), 0u);
    });
  }
}

}  // namespace
}  // namespace dmindex
