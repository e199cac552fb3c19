// An XStore client that reads a leaf torn the same way twice, with the leaf's lock free
// (docs/SYNCHRONIZATION.md, "Readers of an image that does not validate"). The tree core's
// reader would take the lock for one READ to judge the image; XStore's server cannot judge a
// client's lease (the lease table is on memory node 0, out of its reach), so a client that died
// holding that word would make every server write of the leaf wait 60 s and fail. Instead the
// client asks the memory server, the tree's only writer, to read the leaf (kXStoreReadNode).
//
//  * ATornLeafIsReadByTheServerAndTheClientTakesNoLock - scripted: every READ of the leaf by
//    the client lands its first half and the same stale bytes after it, so two READs in a row
//    are torn alike with the lock free. The lookup answers from the server's image; the client
//    posted no atomic verb and no WRITE (before the change it CASed the lock word).
//  * AClientThatDiesThereLeavesNoLockAndTheServerWritesAtOnce - the same, and the client
//    "dies" right after the READ that finds the leaf torn alike again: its READs and WRITEs
//    fail from there, and of its atomics only the first lands (the CAS of a batch whose READ
//    was lost). No lock word is left held, and the server's next write of that leaf goes
//    through (before the change, the CAS left the word held by the dead client).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "crash_points.h"
#include "designs/registry.h"
#include "designs/xstore/server.h"
#include "fabric/inproc/inproc_fabric.h"
#include "u64_api.h"

namespace dmindex {
namespace {

constexpr uint32_t kLeafBytes = 64 + 24 * 16;  // leaf_slots=16 (the default)

// Every READ of `leaf` (whole) by thread `who` lands its first half and then the same stale
// bytes, so consecutive READs are torn alike; with `die_after` > 0, from that many torn READs
// on every later READ and WRITE of the thread fails, as in a process killed there: of its
// atomic verbs the first still lands (a CAS posted with a READ behind it, the READ lost), no
// later one does.
class TearLeaf final : public fabric::VerbScript {
 public:
  TearLeaf(std::thread::id who, GlobalAddress leaf, uint64_t die_after) : who_(who), leaf_(leaf), die_after_(die_after) {}
  Outcome Run(const fabric::VerbCopy& copy) override {
    if (std::this_thread::get_id() != who_) return Outcome::kPass;
    const fabric::Verb& v = copy.verb();
    if (dead()) return Outcome::kFail;
    if (v.kind == fabric::VerbKind::kWrite) writes_.fetch_add(1);
    if (v.kind != fabric::VerbKind::kRead || v.remote != leaf_ || v.length != kLeafBytes) return Outcome::kPass;
    copy.Copy(0, kLeafBytes / 2);
    std::memset(static_cast<std::byte*>(v.local) + kLeafBytes / 2, 0x5a, kLeafBytes / 2);
    torn_.fetch_add(1);
    return Outcome::kDone;
  }
  AtomicOutcome RunAtomic(const fabric::Verb&) override {
    if (std::this_thread::get_id() != who_) return AtomicOutcome::kPass;
    atomics_.fetch_add(1);
    if (!dead()) return AtomicOutcome::kPass;
    return atomics_after_death_++ == 0 ? AtomicOutcome::kPass : AtomicOutcome::kNotLanded;
  }
  uint64_t torn() const { return torn_.load(); }
  uint64_t atomics() const { return atomics_.load(); }
  uint64_t writes() const { return writes_.load(); }

 private:
  bool dead() const { return die_after_ > 0 && torn_.load() >= die_after_; }
  const std::thread::id who_;
  const GlobalAddress leaf_;
  const uint64_t die_after_;
  std::atomic<uint64_t> torn_{0}, atomics_{0}, writes_{0}, atomics_after_death_{0};
};

// Remembers the address of the last whole-leaf READ.
class LeafReads final : public fabric::VerbScript {
 public:
  Outcome Run(const fabric::VerbCopy& copy) override {
    if (copy.verb().kind == fabric::VerbKind::kRead && copy.verb().length == kLeafBytes) last_ = copy.verb().remote;
    return Outcome::kPass;
  }
  GlobalAddress last() const { return last_; }

 private:
  GlobalAddress last_;
};

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> reader, writer;
  GlobalAddress leaf;  // the leaf holding keys 10, 20, ..., 80
};

Bed MakeBed() {
  Bed b;
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  fo.node.rpc_threads = 2;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  // The server's tree over its local fabric: the scripts see the client's verbs only.
  EXPECT_TRUE(designs::xstore::RegisterXStoreHandlers(b.fabric->node(0)).ok());
  IndexOptions o;
  o.name = "t";
  o.key_format = KeyFormat::kU64;
  o.knobs = {{"retrain", "off"}, {"partitions", "1"}};
  b.index = std::move(designs::MakeIndex("xstore", *b.fabric, o)).value();
  std::vector<testing::U64Pair> loaded;
  for (uint64_t k = 10; k <= 80; k += 10) loaded.push_back({k, 100 + k});
  EXPECT_TRUE(testing::BulkLoadU64(*b.index, loaded).ok());
  b.reader = std::move(b.index->OpenSession()).value();
  b.writer = std::move(b.index->OpenSession()).value();
  uint64_t v = 0;
  EXPECT_TRUE(b.reader->Lookup(50, &v).ok());  // fetches the models
  LeafReads reads;
  b.fabric->SetVerbScript(&reads);
  EXPECT_TRUE(b.reader->Lookup(50, &v).ok());  // one READ: the leaf
  b.fabric->SetVerbScript(nullptr);
  b.leaf = reads.last();
  EXPECT_FALSE(b.leaf.is_null());
  return b;
}

// The reader's lookup of key 50 with every READ of its leaf torn by `tear`.
Status LookUpThroughTears(Bed& b, TearLeaf& tear, uint64_t* value) {
  b.fabric->SetVerbScript(&tear);
  const Status looked_up = b.reader->Lookup(50, value);
  b.fabric->SetVerbScript(nullptr);
  return looked_up;
}

TEST(XStoreTornLeaf, ATornLeafIsReadByTheServerAndTheClientTakesNoLock) {
  Bed b = MakeBed();
  ASSERT_FALSE(b.leaf.is_null());
  TearLeaf tear(std::this_thread::get_id(), b.leaf, 0);
  uint64_t v = 0;
  const Status looked_up = LookUpThroughTears(b, tear, &v);
  ASSERT_TRUE(looked_up.ok()) << looked_up.ToString();
  EXPECT_EQ(v, 150u);
  EXPECT_GE(tear.torn(), 2u) << "the leaf was not read torn twice";
  EXPECT_EQ(tear.atomics(), 0u) << "the client CASed a word (the leaf's lock)";
  EXPECT_EQ(tear.writes(), 0u) << "the client wrote to the pool";
  EXPECT_EQ(testing::HeldLocks(*b.fabric), 0u);
}

TEST(XStoreTornLeaf, AClientThatDiesThereLeavesNoLockAndTheServerWritesAtOnce) {
  Bed b = MakeBed();
  ASSERT_FALSE(b.leaf.is_null());
  // Torn READs: the lookup's, the reader's first look, its look after the lock word (torn
  // alike again, the lock free): it dies there.
  TearLeaf tear(std::this_thread::get_id(), b.leaf, 3);
  uint64_t seen = 0;
  // It "died": Unavailable, or the server's answer.
  if (LookUpThroughTears(b, tear, &seen).ok()) {
    EXPECT_EQ(seen, 150u);
  }
  EXPECT_EQ(tear.torn(), 3u);
  EXPECT_EQ(tear.atomics(), 0u) << "the client took the leaf's lock word";
  // Checked before the write: a word left held would make it wait 60 s and fail.
  ASSERT_EQ(testing::HeldLocks(*b.fabric), 0u) << "the dead client left a lock word held";
  const Status wrote = b.writer->Insert(55, 155);  // the server's write of that leaf
  ASSERT_TRUE(wrote.ok()) << wrote.ToString();
  uint64_t v = 0;
  ASSERT_TRUE(b.writer->Lookup(55, &v).ok());
  EXPECT_EQ(v, 155u);
  EXPECT_EQ(testing::HeldLocks(*b.fabric), 0u);
}

}  // namespace
}  // namespace dmindex
