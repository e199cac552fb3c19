// Torn READs produced on purpose (fabric/inproc/verb_script.h) instead of hoped for: each test
// holds a reader's READ of a Sherman leaf after chosen pieces, runs writes, then lets the READ
// copy the rest, so the image combines pieces from before and after those writes exactly as
// docs/SYNCHRONIZATION.md ("Why an accepted image never lies") says a READ may.
#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "tree/node_layout.h"
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


using Layout = tree::NodeLayout<tree::U64BytesKV>;
using fabric::HeldVerb;

constexpr uint32_t kNodeBytes = 1024;

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> writer;
  std::unique_ptr<Session> reader;
};

// One Sherman leaf (it is also the root) holding keys 10, 20, ..., 100 in slots 0..9 with
// value = key, then key 10 deleted: slot 0 is the lowest slot without a live key.
Bed MakeBed() {
  Bed b;
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.node_bytes = kNodeBytes;
  b.index = std::move(designs::MakeIndex("sherman", *b.fabric, o)).value();
  std::vector<KeyValue> data;
  for (Key k = 10; k <= 100; k += 10) data.push_back({k, k});
  EXPECT_TRUE(::dmindex::testing::BulkLoadU64(*b.index, data).ok());
  b.writer = std::move(b.index->OpenSession(0)).value();
  b.reader = std::move(b.index->OpenSession(0)).value();
  EXPECT_TRUE(b.writer->Delete(10).ok());
  return b;
}

// Runs `read` on a reader thread whose READ of the leaf is held after copying every byte but
// those of slot `late_slot`; while it is held, `writes` run on this thread; then the READ
// copies that slot and completes. False if the READ was never held.
bool ReadAcrossWrites(Bed& b, uint32_t late_slot, const std::function<void()>& read,
                      const std::function<void()>& writes) {
  Layout l = std::move(Layout::For(kNodeBytes)).value();
  const uint64_t from = l.SlotOffset(late_slot), to = from + Layout::kSlotBytes;
  HeldVerb hold([](const fabric::Verb& v) {
                  return v.kind == fabric::VerbKind::kRead && v.length == kNodeBytes;
                },
                {{0, from}, {to, kNodeBytes}});
  b.fabric->SetVerbScript(&hold);
  std::thread reader(read);
  const bool held = hold.WaitHeld();
  if (held) writes();
  hold.Release();
  reader.join();
  b.fabric->SetVerbScript(nullptr);
  return held;
}

// Key 50 lives in slot 4; slot 0 is free (key 10 was deleted).
void DeleteAndReinsert50(Bed& b) {
  EXPECT_TRUE(b.writer->Delete(50).ok());
  EXPECT_TRUE(b.writer->Insert(50, 5001).ok());
}

// The duplicate key of issue 9: the reader copies slot 4 (key 50, old value) before key 50 is
// deleted and re-inserted, and slot 0 after. Both copies carry the node's unchanged version.
// Unless a re-inserted key goes back to its own slot, the re-insert lands in slot 0 (the
// lowest free one) and the image holds key 50 twice.
TEST(ScriptedTear, ShermanScanAcrossDeleteAndReinsertReturnsTheKeyOnce) {
  Bed b = MakeBed();
  std::vector<KeyValue> got;
  Status scanned;
  ASSERT_TRUE(ReadAcrossWrites(b, 0, [&] { scanned = ::dmindex::testing::ScanU64(*b.reader, 1, 100, &got); },
                               [&] { DeleteAndReinsert50(b); }))
      << "the scan never READ the leaf";
  ASSERT_TRUE(scanned.ok()) << scanned.ToString();
  std::vector<Key> keys;
  for (size_t i = 0; i < got.size(); ++i) {
    keys.push_back(got[i].key);
    if (i > 0) {
      EXPECT_LT(got[i - 1].key, got[i].key) << "keys not strictly ascending at " << i;
    }
    if (got[i].key == 50) {
      EXPECT_EQ(got[i].value, 50u) << "slot 4 was copied before the delete";
    }
  }
  EXPECT_EQ(keys, (std::vector<Key>{20, 30, 40, 50, 60, 70, 80, 90, 100}));
}

// The same tear under lookups. Key 50 has one slot, so the answer is whichever content of that
// slot the READ copied, each true at an instant inside the READ: the old value when slot 4 is
// copied before the delete, the new one when it is copied after the re-insert.
TEST(ScriptedTear, ShermanLookupAcrossDeleteAndReinsertSeesOneInstantOfTheKey) {
  for (uint32_t late_slot : {0u, 4u}) {
    Bed b = MakeBed();
    Value v = 0;
    Status found;
    ASSERT_TRUE(ReadAcrossWrites(b, late_slot, [&] { found = b.reader->Lookup(50, &v); },
                                 [&] { DeleteAndReinsert50(b); }));
    ASSERT_TRUE(found.ok()) << found.ToString();
    EXPECT_EQ(v, late_slot == 4 ? 5001u : 50u) << "slot " << late_slot << " copied last";
  }
}

}  // namespace
}  // namespace dmindex
