// Scripted tears (fabric/inproc/verb_script.h) against slotted leaves: a reader's READ of a
// Sherman leaf of byte-string keys is held after chosen pieces while entry writes land, then
// copies the rest, so its image combines slots and records from before and after them - the
// READs docs/SYNCHRONIZATION.md ("Slotted nodes") argues about. Where each write lands is
// predicted with the codec itself (SlottedLeafCodec::WriteEntry on a copy of the leaf).
#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

#include "bytes_tree_env.h"
#include "tree/node_validation.h"

namespace dmindex::testing {
namespace {

using fabric::HeldVerb;
using tree::BytesKV;
using tree::EntryWrite;
using tree::WriteOp;

constexpr uint32_t kNodeBytes = 1024;

std::string Key(int k) { return Cat({"key/", std::to_string(1000 + k)}); }

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<BytesTree> tree;
  std::unique_ptr<BytesTree::Ctx> writer, reader;
  GlobalAddress leaf;
  tree::SlottedLayout layout;
};

// One Sherman leaf (also the root) holding keys 10, 20, ..., 100 with value "v<k>", then
// key 10 deleted (its slot is its tombstone).
Bed MakeBed() {
  Bed b;
  b.fabric = MakeBytesFabric({}, 1, 64ull << 20);
  tree::TreeOptions o = ShermanBytes();
  o.node_bytes = kNodeBytes;
  o.max_key_bytes = 64;
  o.inline_value_bytes = 16;
  o.max_value_bytes = 16;
  GlobalAddress root_word;
  b.tree = MakeBytesTree(*b.fabric, o, &root_word);
  b.layout = *tree::SlottedLayout::For(o);
  b.writer = NewCtx(*b.tree);
  b.reader = NewCtx(*b.tree);
  std::vector<BytesEntry> data;
  for (int k = 10; k <= 100; k += 10) data.push_back({Key(k), Cat({"v", std::to_string(k)})});
  EXPECT_TRUE(b.tree->BulkLoad(*b.writer, data).ok());
  EXPECT_TRUE(b.tree->Delete(*b.writer, Key(10)).ok());
  uint64_t raw = 0;
  EXPECT_TRUE(b.writer->ep.Read(root_word, &raw, 8).ok());
  b.leaf = GlobalAddress::FromRaw(raw);
  return b;
}

// The leaf as it is now, decoded.
struct Image {
  std::vector<std::byte> bytes;
  tree::NodeHeader<BytesKV> h;
};
Image ReadLeaf(Bed& b) {
  Image img{std::vector<std::byte>(kNodeBytes), {}};
  EXPECT_TRUE(b.writer->ep.Read(b.leaf, img.bytes.data(), kNodeBytes).ok());
  tree::NodeValidator<BytesKV> v(b.layout, true);
  EXPECT_TRUE(v.Decode(img.bytes.data(), &img.h));
  return img;
}

// Where an entry write of `op` on the leaf's current image would land (first region: the
// record, or the check word of a delete).
EntryWrite Predict(Bed& b, WriteOp op, const std::string& key, const std::string& value) {
  Image img = ReadLeaf(b);
  tree::SlottedLeafCodec codec(b.layout);
  return codec.WriteEntry(img.bytes.data(), img.h, op, key, value);
}

// Runs `read` on a reader thread whose READ of the leaf copies everything but the `late`
// byte ranges, is held while `writes` run here, then copies the late ranges and completes.
bool ReadAcrossWrites(Bed& b, std::vector<HeldVerb::Range> late, const std::function<void()>& read,
                      const std::function<void()>& writes) {
  std::sort(late.begin(), late.end(), [](auto& x, auto& y) { return x.from < y.from; });
  std::vector<HeldVerb::Range> first;
  uint64_t at = 0;
  for (const auto& r : late) {
    if (r.from > at) first.push_back({at, r.from});
    at = std::max(at, r.to);
  }
  first.push_back({at, kNodeBytes});
  HeldVerb hold(HeldVerb::At(fabric::VerbKind::kRead, b.leaf), first);
  b.fabric->SetVerbScript(&hold);
  std::thread reader(read);
  const bool held = hold.WaitHeld();
  if (held) writes();
  hold.Release();
  reader.join();
  b.fabric->SetVerbScript(nullptr);
  return held;
}

HeldVerb::Range SlotRange(const Image& img, int slot) {
  const uint64_t off = tree::SlottedLeafCodec::SlotOff(img.h, static_cast<uint32_t>(slot));
  return {off, off + tree::SlottedLayout::kSlotBytes};
}
int SlotOf(Bed& b, const std::string& key) {
  Image img = ReadLeaf(b);
  tree::SlottedLeafCodec codec(b.layout);
  return codec.Find(img.bytes.data(), img.h, key);
}
int FirstEmptySlot(Bed& b) {
  Image img = ReadLeaf(b);
  tree::SlottedLeafCodec codec(b.layout);
  for (uint32_t s = 0; s < img.h.count; ++s)
    if (codec.EmptyAt(img.bytes.data(), img.h, s)) return static_cast<int>(s);
  return -1;
}

// The duplicate key of issue 9, slotted: the reader copies key 50's slot before key 50 is
// deleted and re-inserted, and the first empty slot and the heap bytes the re-insert's record
// takes after. Unless the re-insert goes back to key 50's own slot, the image holds key 50
// twice, both copies valid for the unchanged version.
TEST(BytesScriptedTear, ScanAcrossDeleteAndReinsertReturnsTheKeyOnce) {
  Bed b = MakeBed();
  const Image before = ReadLeaf(b);
  const int empty = FirstEmptySlot(b);
  ASSERT_GE(empty, 0);
  // The re-insert's record lands where a write into the leaf after the delete would put it.
  ASSERT_TRUE(b.tree->Delete(*b.writer, Key(50)).ok());
  const EntryWrite reinsert = Predict(b, WriteOp::kUpsert, Key(50), "new50");
  ASSERT_TRUE(b.tree->Upsert(*b.writer, Key(50), "v50").ok());  // back as it was (same slot)
  ASSERT_EQ(reinsert.outcome, EntryWrite::Outcome::kWritten);
  const auto rec = reinsert.regions[0];
  std::vector<BytesEntry> got;
  Status scanned;
  ASSERT_TRUE(ReadAcrossWrites(
      b, {SlotRange(before, empty), {rec.offset, rec.offset + rec.length}},
      [&] { scanned = b.tree->Scan(*b.reader, {}, 100, &got); },
      [&] {
        EXPECT_TRUE(b.tree->Delete(*b.writer, Key(50)).ok());
        EXPECT_TRUE(b.tree->Upsert(*b.writer, Key(50), "new50").ok());
      }))
      << "the scan never READ the leaf";
  ASSERT_TRUE(scanned.ok()) << scanned.ToString();
  std::vector<std::string> keys;
  for (size_t i = 0; i < got.size(); ++i) {
    keys.push_back(got[i].key);
    if (i > 0) { EXPECT_LT(got[i - 1].key, got[i].key) << "keys not strictly ascending at " << i; }
  }
  std::vector<std::string> expect;
  for (int k = 20; k <= 100; k += 10) expect.push_back(Key(k));
  EXPECT_EQ(keys, expect);
}

// Key 50's slot copied last: it then points at a record the READ copied before the write
// landed, which fails its check - the reader reads again and answers the new value. With
// the record copied last too, the image validates at once, with the new value; with an
// unrelated slot copied last, the old one. Each was true at an instant inside the READ.
TEST(BytesScriptedTear, LookupAcrossDeleteAndReinsertSeesOneInstantOfTheKey) {
  for (int variant = 0; variant < 3; ++variant) {
    Bed b = MakeBed();
    const Image before = ReadLeaf(b);
    const int slot50 = SlotOf(b, Key(50));
    ASSERT_GE(slot50, 0);
    ASSERT_TRUE(b.tree->Delete(*b.writer, Key(50)).ok());
    const EntryWrite reinsert = Predict(b, WriteOp::kUpsert, Key(50), "new50");
    ASSERT_TRUE(b.tree->Upsert(*b.writer, Key(50), "v50").ok());
    const auto rec = reinsert.regions[0];
    std::vector<HeldVerb::Range> late;
    if (variant == 0) late = {SlotRange(before, slot50)};
    if (variant == 1) late = {SlotRange(before, slot50), {rec.offset, rec.offset + rec.length}};
    if (variant == 2) late = {SlotRange(before, slot50 == 0 ? 1 : 0)};
    const uint64_t retries_before = b.tree->Stats().retries;
    std::string v;
    Status found;
    ASSERT_TRUE(ReadAcrossWrites(b, late, [&] { found = b.tree->Lookup(*b.reader, Key(50), &v); },
                                 [&] {
                                   EXPECT_TRUE(b.tree->Delete(*b.writer, Key(50)).ok());
                                   EXPECT_TRUE(b.tree->Upsert(*b.writer, Key(50), "new50").ok());
                                 }));
    ASSERT_TRUE(found.ok()) << found.ToString();
    EXPECT_EQ(v, variant == 2 ? "v50" : "new50") << "variant " << variant;
    if (variant == 0) { EXPECT_GT(b.tree->Stats().retries, retries_before) << "the torn slot was read again"; }
  }
}

// Heap reuse: key 20 moves to a new record, and key 30's insert takes the bytes key 20's old
// record held (best fit: same length). A READ that copied key 20's old slot before and those
// bytes after holds key 20's slot pointing at key 30's record. Its check word (bound to the
// slot word and the record bytes) fails: the reader never answers key 30's bytes for key 20.
TEST(BytesScriptedTear, ReusedHeapBytesAreNeverReadAsAnotherKeysRecord) {
  Bed b = MakeBed();
  ASSERT_TRUE(b.tree->Delete(*b.writer, Key(30)).ok());  // key 30 comes back below
  const Image before = ReadLeaf(b);
  tree::SlottedLeafCodec codec(b.layout);
  const int slot20 = codec.Find(before.bytes.data(), before.h, Key(20));
  ASSERT_GE(slot20, 0);
  const auto word = tree::slotted::SlotWord::Unpack(
      tree::LoadAt<uint64_t>(before.bytes.data(), tree::SlottedLeafCodec::SlotOff(before.h, slot20)));
  // Predict: the update of key 20 and then key 30's re-insert (same key and value lengths).
  Image sim = before;
  EntryWrite upd = codec.WriteEntry(sim.bytes.data(), sim.h, WriteOp::kUpsert, Key(20), "x20");
  EntryWrite ins = codec.WriteEntry(sim.bytes.data(), sim.h, WriteOp::kUpsert, Key(30), "y30");
  ASSERT_EQ(upd.outcome, EntryWrite::Outcome::kWritten);
  ASSERT_EQ(ins.outcome, EntryWrite::Outcome::kWritten);
  ASSERT_EQ(ins.regions[0].offset, word.offset) << "key 30's record reuses key 20's old bytes";
  ASSERT_EQ(ins.regions[0].length, upd.regions[0].length);
  for (bool scan : {false, true}) {
    Bed fresh = scan ? MakeBed() : Bed{};
    Bed& t = scan ? fresh : b;
    if (scan) { ASSERT_TRUE(t.tree->Delete(*t.writer, Key(30)).ok()); }
    const uint64_t retries_before = t.tree->Stats().retries;
    std::string v;
    std::vector<BytesEntry> got;
    Status st;
    ASSERT_TRUE(ReadAcrossWrites(
        t, {{word.offset, word.offset + upd.regions[0].length}},
        [&] {
          st = scan ? t.tree->Scan(*t.reader, {}, 100, &got) : t.tree->Lookup(*t.reader, Key(20), &v);
        },
        [&] {
          EXPECT_TRUE(t.tree->Upsert(*t.writer, Key(20), "x20").ok());
          EXPECT_TRUE(t.tree->Upsert(*t.writer, Key(30), "y30").ok());
        }));
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_GT(t.tree->Stats().retries, retries_before) << "the image with the reused bytes was rejected";
    if (!scan) {
      EXPECT_EQ(v, "x20");
      continue;
    }
    std::map<std::string, std::string> seen;
    for (const auto& e : got) EXPECT_TRUE(seen.emplace(e.key, e.value).second) << e.key << " twice";
    EXPECT_EQ(seen[Key(20)], "x20");
    EXPECT_EQ(seen[Key(30)], "y30");
  }
}

}  // namespace
}  // namespace dmindex::testing
