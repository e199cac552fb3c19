// RF-tree's inline version lock on a fabric whose WRITEs land in any order (docs/RFTREE.md,
// "Writes"), on scripted tears (fabric/inproc/verb_script.h): a writer's WRITE is held in the
// middle while others write and read the same leaf.
//  * unlock=after (RF-tree here): the lock word lands after the rest of the leaf, so another
//    writer - and a reader of the torn leaf - waits for it, and no update is lost;
//  * unlock=with_node (the paper's one WRITE of leaf and unlocked lock word): a piece of the
//    first write that lands late overwrites the second writer's leaf for good (trap T1);
//  * a writer whose READ is older than another write fails its version CAS and reads again,
//    instead of writing an old image back (trap T2).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "tree/node_layout.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using Key = uint64_t;
using Value = uint64_t;
using fabric::HeldVerb;
using fabric::VerbKind;
using Layout = tree::NodeLayout<tree::U64BytesKV>;

constexpr uint32_t kNodeBytes = 1024;

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> a, b, reader;
};

// One rftree leaf (the root) holding keys 10, 20, ..., 100 (value = key); every session has
// done one operation, so its compute node's search-layer cache is filled.
Bed MakeBed(const std::string& unlock) {
  Bed bed;
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  bed.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.node_bytes = kNodeBytes;
  o.knobs = {{"unlock", unlock}};
  bed.index = std::move(designs::MakeIndex("rftree", *bed.fabric, o)).value();
  std::vector<testing::U64Pair> data;
  for (Key k = 10; k <= 100; k += 10) data.push_back({k, k});
  EXPECT_TRUE(testing::BulkLoadU64(*bed.index, data).ok());
  bed.a = std::move(bed.index->OpenSession(0)).value();
  bed.b = std::move(bed.index->OpenSession(0)).value();
  bed.reader = std::move(bed.index->OpenSession(0)).value();
  Value v;
  for (Session* s : {bed.a.get(), bed.b.get(), bed.reader.get()}) EXPECT_TRUE(s->Lookup(10, &v).ok());
  return bed;
}

uint64_t Retries(const Index& index) { return index.GetIntProperty("dmindex.retries").value_or(0); }

// Waits (up to 10 s) until the index counted `more` retries beyond `base`: threads that
// cannot proceed are visibly trying.
bool WaitForRetries(const Index& index, uint64_t base, uint64_t more) {
  for (int i = 0; i < 10000 && Retries(index) < base + more; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Retries(index) >= base + more;
}

HeldVerb::Match WriteOfLength(uint32_t length) {
  return [length](const fabric::Verb& v) { return v.kind == VerbKind::kWrite && v.length == length; };
}

// The `n`-th WRITE of `length` bytes (1-based).
HeldVerb::Match NthWriteOfLength(uint32_t length, int n) {
  auto seen = std::make_shared<std::atomic<int>>(0);
  return [length, n, seen](const fabric::Verb& v) {
    return v.kind == VerbKind::kWrite && v.length == length && seen->fetch_add(1) + 1 == n;
  };
}

// Writer a's WRITE of the leaf (all but the lock word) is held after the header landed. (Its
// redo record's copy of those bytes goes first, the same length: the leaf is the second.) Writer
// b, updating another key of the leaf, and a reader of a third key find the leaf locked - the
// reader sees a torn image and the lock word held - and wait; once a's WRITE and then its
// lock word land, both finish and every update is there.
TEST(ScriptedTear, RfTreeWritersAndReadersWaitUntilTheLockWordLandsLast) {
  Bed bed = MakeBed("after");
  HeldVerb hold(NthWriteOfLength(kNodeBytes - Layout::kTrailerBytes, 2), {{0, 64}});
  bed.fabric->SetVerbScript(&hold);
  std::thread a([&] { EXPECT_TRUE(bed.a->Update(50, 555).ok()); });
  ASSERT_TRUE(hold.WaitHeld());
  const uint64_t base = Retries(*bed.index);
  std::atomic<bool> b_done{false}, reader_done{false};
  Value read = 0;
  std::thread b([&] {
    EXPECT_TRUE(bed.b->Update(60, 666).ok());
    b_done = true;
  });
  std::thread reader([&] {
    EXPECT_TRUE(bed.reader->Lookup(70, &read).ok());
    reader_done = true;
  });
  const bool waited = WaitForRetries(*bed.index, base, 8);
  const bool finished_early = b_done || reader_done;
  hold.Release();
  a.join();
  b.join();
  reader.join();
  bed.fabric->SetVerbScript(nullptr);
  EXPECT_TRUE(waited) << "the second writer and the reader never retried";
  EXPECT_FALSE(finished_early) << "an operation on the leaf finished while its lock word was held";
  EXPECT_EQ(read, 70u);
  for (auto [k, want] : {std::pair<Key, Value>{50, 555}, {60, 666}, {70, 70}, {100, 100}}) {
    Value v = 0;
    EXPECT_TRUE(bed.a->Lookup(k, &v).ok()) << k;
    EXPECT_EQ(v, want) << k;
  }
}

// The paper's protocol: one WRITE stores the leaf and its unlocked lock word. Writer a's
// WRITE lands all but one word - the key of slot 0, whose value a's write does not change -
// so the leaf reads as a's complete leaf, unlocked. Writer b inserts key 5, which moves key 10
// to slot 1 and puts 5 in slot 0. Then a's last word lands: key 10 over b's key 5. The slot's
// check word no longer matches: the leaf is corrupt for good.
TEST(ScriptedTear, RfTreePaperSingleWriteUnlockLetsALatePieceCorruptTheLeaf) {
  Bed bed = MakeBed("with_node");
  const Layout layout = *Layout::For(kNodeBytes, true);
  const uint64_t slot0 = layout.SlotOffset(0);
  HeldVerb hold(WriteOfLength(kNodeBytes), {{0, slot0}, {slot0 + 8, kNodeBytes}});
  bed.fabric->SetVerbScript(&hold);
  std::thread a([&] { EXPECT_TRUE(bed.a->Update(50, 555).ok()); });
  ASSERT_TRUE(hold.WaitHeld());
  EXPECT_TRUE(bed.b->Insert(5, 1).ok()) << "b locked the leaf a's WRITE had not finished";
  hold.Release();
  a.join();
  bed.fabric->SetVerbScript(nullptr);
  Value v = 0;
  Status s = bed.reader->Lookup(5, &v);
  EXPECT_TRUE(s.IsCorruption()) << "expected the leaf corrupted by a's late word, got " << s.ToString();
}

// A writer whose READ of the leaf is older than another write must not lock it on that image:
// b's READ completes, then a updates the leaf, then b's READ returns. b's CAS expects the
// version b read, finds a's, fails; b reads again and applies its update to a's leaf.
TEST(ScriptedTear, RfTreeVersionCasRefusesAnImageReadBeforeAnotherWrite) {
  Bed bed = MakeBed("after");
  HeldVerb hold([](const fabric::Verb& v) { return v.kind == VerbKind::kRead && v.length == kNodeBytes; },
                {{0, kNodeBytes}});
  bed.fabric->SetVerbScript(&hold);
  std::thread b([&] { EXPECT_TRUE(bed.b->Update(60, 666).ok()); });
  ASSERT_TRUE(hold.WaitHeld());
  const uint64_t base = Retries(*bed.index);
  EXPECT_TRUE(bed.a->Update(50, 555).ok());
  hold.Release();
  b.join();
  bed.fabric->SetVerbScript(nullptr);
  EXPECT_GT(Retries(*bed.index), base) << "b's lock attempt on its old image did not fail";
  for (auto [k, want] : {std::pair<Key, Value>{50, 555}, {60, 666}}) {
    Value v = 0;
    EXPECT_TRUE(bed.reader->Lookup(k, &v).ok()) << k;
    EXPECT_EQ(v, want) << k;
  }
}

}  // namespace
}  // namespace dmindex
