// The slotted node format of byte-string keys (tree::BytesKV): header with variable-length
// fences, leaves and internal nodes with prefix truncation, shortest separators, entry writes
// into free heap space, and validation: every consistent image passes, every torn mix of two
// versions fails, and no image - torn, garbage, or validation off - sends a reader outside
// its buffer (images sit right before an inaccessible page).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tree/node_validation.h"

namespace dmindex::tree {
namespace {

using KV = BytesKV;
using Entry = LeafEntry<KV>;
using IEntry = InternalEntry<KV>;
using Header = NodeHeader<KV>;
using L = SlottedLayout;

std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s.append(p);
  return s;
}

L MakeLayout(uint32_t node_bytes = 1024, uint32_t max_key = 64, uint32_t inline_value = 16) {
  auto l = L::For(node_bytes, max_key, inline_value);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return *l;
}

Header LeafHeader(uint64_t version, std::string low = "", std::string high = "") {
  Header h;
  h.version = version;
  h.low = std::move(low);
  h.high = std::move(high);
  h.sibling = high.empty() ? GlobalAddress::Null() : GlobalAddress(1, 4096 * 100);
  return h;
}

// n entries "prefix" + zero-padded number, values of growing length (the first empty).
std::vector<Entry> Entries(size_t n, const std::string& prefix = "user/", size_t value_max = 8) {
  std::vector<Entry> e;
  for (size_t i = 0; i < n; ++i) {
    char num[16];
    std::snprintf(num, sizeof num, "%06zu", 10 * (i + 1));
    e.push_back({prefix + num, std::string(i % (value_max + 1), static_cast<char>('a' + i % 26))});
  }
  return e;
}

// A node-sized buffer whose last byte is followed by an inaccessible page: a read past the
// image faults at once, also without a sanitizer.
class GuardedImage {
 public:
  explicit GuardedImage(uint32_t bytes) : bytes_(bytes) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    map_len_ = ((bytes + page_ - 1) / page_ + 1) * page_;
    void* m = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(m, MAP_FAILED);
    base_ = static_cast<std::byte*>(m);
    EXPECT_EQ(mprotect(base_ + map_len_ - page_, page_, PROT_NONE), 0);
  }
  ~GuardedImage() { munmap(base_, map_len_); }
  std::byte* data() { return base_ + map_len_ - page_ - bytes_; }
  void Load(const std::vector<std::byte>& from) { std::copy(from.begin(), from.end(), data()); }

 private:
  uint32_t bytes_;
  size_t page_ = 0, map_len_ = 0;
  std::byte* base_ = nullptr;
};

TEST(SlottedLayout, MinimumNodeSizeFollowsTheLongestEntries) {
  // 2 Round8(56 + 2K) - 56 + 3 e, e = 16 + 2 + (K - 4) + V, rounded up to 64.
  EXPECT_EQ(L::MinNodeBytes(64, 16), 640u);  // 2 * 184 - 56 + 3 * 94 = 594, up to 640
  EXPECT_TRUE(L::For(1024, 128, 8).ok());
  auto too_small = L::For(1024, 255, 64);
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find(Cat({"at least ", std::to_string(L::MinNodeBytes(255, 64))})),
            std::string::npos) << too_small.status().ToString();
  EXPECT_TRUE(L::For(L::MinNodeBytes(1024, 8), 1024, 8).ok());
  EXPECT_TRUE(L::For(4096, 0, 8).status().IsInvalidArgument());
  EXPECT_TRUE(L::For(4096, 1025, 8).status().IsInvalidArgument());
  EXPECT_TRUE(L::For(4096, 64, 40000).status().IsInvalidArgument());
  EXPECT_TRUE(L::For(1000, 16, 8).status().IsInvalidArgument());  // not a multiple of 64
}

TEST(SlottedHeader, RoundTripsFencesAndDetectsDamage) {
  L l = MakeLayout();
  SlottedHeaderCodec codec(l);
  for (auto [low, high] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"", "m"}, {"user/0042", "user/0057"}, {"abc", "abcd"}, {std::string(60, 'x'), ""}}) {
    std::vector<std::byte> img(l.node_bytes);
    Header h = LeafHeader(77, low, high);
    h.level = 2;
    h.count = 3;
    h.heap_off = l.node_bytes - 8;
    h.leftmost = GlobalAddress(0, 8192);
    SlottedHeaderCodec::Place(&h);
    SlottedHeaderCodec::Write(h, img.data());
    Header back;
    ASSERT_TRUE(codec.Read(img.data(), &back, true)) << low << " " << high;
    EXPECT_EQ(back.low, low);
    EXPECT_EQ(back.high, high);
    EXPECT_EQ(back.prefix, high.empty() ? 0u : slotted::CommonPrefix(low, high));
    EXPECT_EQ(back.version, 77u);
    EXPECT_EQ(back.level, 2);
    EXPECT_EQ(back.count, 3);
    EXPECT_EQ(back.heap_off, l.node_bytes - 8);
    EXPECT_EQ(back.leftmost, h.leftmost);
    for (uint32_t byte = 0; byte < h.slots_off; ++byte) {
      auto damaged = img;
      damaged[byte] ^= std::byte{0x10};
      EXPECT_FALSE(codec.Read(damaged.data(), &back, true)) << "byte " << byte;
    }
  }
  std::vector<std::byte> zero(l.node_bytes);
  Header back;
  EXPECT_FALSE(codec.Read(zero.data(), &back, true)) << "fresh memory is no node";
}

TEST(SlottedLeaf, SortedAndUnsortedFindCollectWithPrefixTruncation) {
  L l = MakeLayout();
  NodeValidator<KV> v(l, true);
  const auto& leaf = v.leaf();
  auto entries = Entries(20);
  for (bool unsorted : {false, true}) {
    std::vector<std::byte> img(l.node_bytes);
    Header h0 = LeafHeader(9, "user/000005", "user/009999");
    ASSERT_TRUE(leaf.Build(img.data(), h0, entries, unsorted));
    Header h;
    ASSERT_TRUE(v.Decode(img.data(), &h));
    EXPECT_EQ(h.unsorted(), unsorted);
    EXPECT_EQ(h.prefix, 7u) << "user/00 is every key's prefix";
    if (unsorted) { EXPECT_GT(h.count, entries.size()) << "empty slots reserved"; }
    for (size_t i = 0; i < entries.size(); ++i) {
      int slot = leaf.Find(img.data(), h, entries[i].key);
      ASSERT_GE(slot, 0) << entries[i].key;
      EXPECT_EQ(leaf.ValueAt(img.data(), h, slot), entries[i].value);
      EXPECT_LT(leaf.Find(img.data(), h, entries[i].key + "0"), 0);
      EXPECT_LT(leaf.Find(img.data(), h, entries[i].key.substr(0, entries[i].key.size() - 1)), 0);
    }
    EXPECT_LT(leaf.Find(img.data(), h, "usex"), 0) << "a key without the node's prefix";
    EXPECT_LT(leaf.Find(img.data(), h, ""), 0);
    std::vector<Entry> back;
    leaf.Collect(img.data(), h, &back);
    ASSERT_EQ(back.size(), entries.size());
    for (size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].key, entries[i].key);
      EXPECT_EQ(back[i].value, entries[i].value);
    }
  }
}

// Keys that are prefixes of each other, keys that differ only past the head, bytes 0 and
// 0xff, the empty value: all found and ordered.
TEST(SlottedLeaf, PrefixKeysZeroBytesAndEmptyValues) {
  L l = MakeLayout(1024, 64, 16);
  NodeValidator<KV> v(l, true);
  std::set<std::string> keys = {"a", "ab", "abc", "abcd", "abcde", "abcdef", std::string("ab\0", 3),
                                std::string("ab\0\0", 4), std::string("ab\0\0\0", 5), "ab\xff",
                                "abcd\xff\xff\xff\xff", "abcdzz", "b", std::string(1, '\0')};
  std::vector<Entry> entries;
  for (const auto& k : keys) entries.push_back({k, k.size() % 2 ? "" : k});
  for (bool unsorted : {false, true}) {
    std::vector<std::byte> img(l.node_bytes);
    ASSERT_TRUE(v.leaf().Build(img.data(), LeafHeader(3), entries, unsorted));
    Header h;
    ASSERT_TRUE(v.Decode(img.data(), &h));
    for (const auto& e : entries) {
      const int slot = v.leaf().Find(img.data(), h, e.key);
      ASSERT_GE(slot, 0) << KeyText(e.key);
      EXPECT_EQ(v.leaf().ValueAt(img.data(), h, slot), e.value);
    }
    for (std::string absent : {std::string("abcd\xff"), std::string("ab\0\0\0\0", 6), std::string("c"),
                               std::string("abcdefg")})
      EXPECT_LT(v.leaf().Find(img.data(), h, absent), 0) << KeyText(absent);
    std::vector<Entry> back;
    v.leaf().Collect(img.data(), h, &back);
    ASSERT_EQ(back.size(), entries.size());
    for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i].key, entries[i].key);
  }
}

TEST(SlottedLeaf, FullNodesFitExactlyAndBuildRefusesMore) {
  L l = MakeLayout(1024, 64, 16);
  NodeValidator<KV> v(l, true);
  Header h = LeafHeader(5, "k", "l");
  std::vector<Entry> entries;
  for (int i = 0; v.leaf().Fits(h, entries); ++i) entries.push_back({Cat({"k", std::to_string(1000 + i)}), "value"});
  entries.pop_back();
  std::vector<std::byte> img(l.node_bytes);
  ASSERT_TRUE(v.leaf().Build(img.data(), h, entries, false));
  Header back;
  ASSERT_TRUE(v.Decode(img.data(), &back));
  EXPECT_EQ(back.count, entries.size());
  entries.push_back({"k9999", "value"});
  auto before = img;
  EXPECT_FALSE(v.leaf().Build(img.data(), h, entries, false));
  EXPECT_EQ(img, before) << "a refused build leaves the image alone";
  entries = {{"j", "x"}};  // outside the fences: no prefix "k"... and below low
  h.low = "ka";
  h.high = "kb";
  EXPECT_FALSE(v.leaf().Fits(h, entries));
}

// Entry writes of an unsorted leaf: the regions the codec names, WRITTEN in order onto the
// old image, give exactly the codec's new image, which validates with the unchanged header;
// a key keeps its slot; a new key never takes another key's tombstone; without room the
// answer is a whole write.
TEST(SlottedLeaf, EntryWritesChangeOnlyTheirRegionsAndKeepKeysInTheirSlots) {
  L l = MakeLayout(1024, 64, 16);
  NodeValidator<KV> v(l, true);
  const auto& leaf = v.leaf();
  std::vector<std::byte> img(l.node_bytes);
  ASSERT_TRUE(leaf.Build(img.data(), LeafHeader(9), Entries(10), true));
  Header h;
  ASSERT_TRUE(v.Decode(img.data(), &h));
  std::map<std::string, std::string> model;
  for (const auto& e : Entries(10)) model[e.key] = e.value;
  std::mt19937_64 rng(3);
  std::map<std::string, int> slot_of;
  int whole = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string key = Cat({"user/", std::to_string(100000 + rng() % 30)});
    const std::string value(rng() % 17, static_cast<char>('A' + rng() % 26));
    const WriteOp op = rng() % 3 == 0 ? WriteOp::kDelete : (rng() % 2 ? WriteOp::kUpsert : WriteOp::kUpdate);
    auto next = img;
    const EntryWrite w = leaf.WriteEntry(next.data(), h, op, key, value);
    const bool present = model.count(key) == 1;
    if (w.outcome == EntryWrite::Outcome::kNotFound) {
      EXPECT_TRUE(op != WriteOp::kUpsert && !present);
      EXPECT_EQ(next, img);
      continue;
    }
    if (w.outcome == EntryWrite::Outcome::kWhole) {  // full: rewrite with a new version
      ++whole;
      ASSERT_NE(op, WriteOp::kDelete) << "a delete only flips its slot's flag";
      ASSERT_TRUE(op == WriteOp::kUpsert || present);
      model[key] = value;
      std::vector<Entry> all;
      for (const auto& [k, val] : model) all.push_back({k, val});
      ASSERT_TRUE(leaf.Build(img.data(), LeafHeader(100 + i), all, true));
      ASSERT_TRUE(v.Decode(img.data(), &h));
      slot_of.clear();
      continue;
    }
    ASSERT_TRUE(op == WriteOp::kUpsert || present);
    auto landed = img;  // the old image, then each region WRITTEN in order
    for (uint32_t r = 0; r < w.count; ++r)
      std::copy_n(next.begin() + w.regions[r].offset, w.regions[r].length, landed.begin() + w.regions[r].offset);
    ASSERT_EQ(landed, next) << "the codec changed bytes outside its regions";
    if (w.count == 2) { EXPECT_GE(w.regions[0].offset, leaf.SlotOff(h, h.count)) << "record first"; }
    img = next;
    Header again;
    ASSERT_TRUE(v.Decode(img.data(), &again)) << "an entry write keeps the leaf valid";
    ASSERT_EQ(again.version, h.version);
    if (op == WriteOp::kDelete) model.erase(key); else model[key] = value;
    // The key's slot never changes within the version.
    for (uint32_t s = 0; s < h.count; ++s) {
      if (leaf.EmptyAt(img.data(), h, s)) continue;
      const std::string k = leaf.KeyAt(img.data(), h, s);
      auto [it, fresh] = slot_of.emplace(k, s);
      EXPECT_EQ(it->second, static_cast<int>(s)) << k << " moved slots";
    }
    std::vector<Entry> back;
    leaf.Collect(img.data(), h, &back);
    ASSERT_EQ(back.size(), model.size());
    for (const auto& e : back) EXPECT_EQ(model[e.key], e.value);
  }
  EXPECT_GT(whole, 0) << "the heap or the slots should have run out at least once";
}

// Splits of a full leaf after inserting a key at every position: both halves fit, the
// separator is the shortest key between them and becomes the fences; nothing is lost.
TEST(SlottedLeaf, SplitsAtEveryInsertPositionYieldShortestSeparatorsAndFittingHalves) {
  L l = MakeLayout(1024, 64, 16);
  NodeValidator<KV> v(l, true);
  const auto& leaf = v.leaf();
  Header h = LeafHeader(1, "item:0000", "item:9");
  std::vector<Entry> full;
  for (int i = 0; ; ++i) {
    full.push_back({Cat({"item:", std::to_string(1000 + 13 * i), "-long-suffix"}), "vv"});
    if (!leaf.Fits(h, full)) {
      full.pop_back();
      break;
    }
  }
  for (size_t pos = 0; pos <= full.size(); ++pos) {
    std::vector<Entry> over = full;
    std::string k = pos < full.size() ? full[pos].key : "item:8999-long-suffix";
    if (pos < full.size()) k.back() = 'w';  // just below full[pos], as long
    over.insert(over.begin() + static_cast<ptrdiff_t>(pos), {k, "new"});
    ASSERT_TRUE(std::is_sorted(over.begin(), over.end(), [](auto& a, auto& b) { return a.key < b.key; }));
    ASSERT_FALSE(leaf.Fits(h, over));
    LeafSplit<KV> s = leaf.Split(h, over);
    ASSERT_FALSE(s.left.empty());
    ASSERT_FALSE(s.right.empty());
    EXPECT_LT(s.left.back().key, s.separator);
    EXPECT_LE(s.separator, s.right.front().key);
    EXPECT_EQ(s.separator, std::string(slotted::ShortestSeparator(s.left.back().key, s.right.front().key)));
    Header lh = h, rh = h;
    lh.high = rh.low = s.separator;
    std::vector<std::byte> a(l.node_bytes), b(l.node_bytes);
    ASSERT_TRUE(leaf.Build(a.data(), lh, s.left, true)) << pos;
    ASSERT_TRUE(leaf.Build(b.data(), rh, s.right, true)) << pos;
    std::vector<Entry> back;
    Header da, db;
    ASSERT_TRUE(v.Decode(a.data(), &da));
    ASSERT_TRUE(v.Decode(b.data(), &db));
    leaf.Collect(a.data(), da, &back);
    leaf.Collect(b.data(), db, &back);
    ASSERT_EQ(back.size(), over.size());
    for (size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i].key, over[i].key);
    EXPECT_LT(s.separator.size(), over[0].key.size()) << "suffix truncation shortens separators";
  }
}

// The worst case the size rule is for: longest keys and values, separators as long as keys.
TEST(SlottedLeaf, SplitOfTheLongestEntriesAlwaysFits) {
  for (uint32_t max_key : {16u, 100u, 255u, 1024u})
  for (bool trailer : {false, true}) {
    const uint32_t value = 8;
    auto made = L::For(L::MinNodeBytes(max_key, value, trailer), max_key, value, trailer);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    const L l = *made;
    NodeValidator<KV> v(l, true);
    const std::string base(max_key - 1, 'z');
    Header h = LeafHeader(1, base + "\x01", base + "\xf0");
    std::vector<Entry> over;
    for (int i = 2; ; ++i) {
      over.push_back({base + static_cast<char>(i), std::string(value, 'v')});
      if (!v.leaf().Fits(h, over)) break;
    }
    LeafSplit<KV> s = v.leaf().Split(h, over);
    Header lh = h, rh = h;
    lh.high = rh.low = s.separator;
    EXPECT_EQ(s.separator.size(), max_key);
    std::vector<std::byte> img(l.node_bytes);
    EXPECT_TRUE(v.leaf().Build(img.data(), lh, s.left, true)) << max_key << " trailer " << trailer;
    EXPECT_TRUE(v.leaf().Build(img.data(), rh, s.right, true)) << max_key << " trailer " << trailer;
  }
}

// RF-tree's trailer (NodeTrailer): the node's last 8 bytes hold the version of every whole
// write and no content - a full leaf or internal node ends its heap before them - and lie
// outside every check word, so the lock bit a writer sets there never tears an image.
TEST(SlottedLayout, TheTrailerHoldsTheVersionAndNoContent) {
  auto made = L::For(1024, 64, 16, /*trailer=*/true);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const L l = *made;
  EXPECT_EQ(l.ContentEnd(), 1016u);
  NodeValidator<KV> v(l, true);
  Header h = LeafHeader(0x5150, "k", "l");
  std::vector<Entry> entries;
  for (int i = 0; v.leaf().Fits(h, entries); ++i) entries.push_back({Cat({"k", std::to_string(1000 + i)}), "v"});
  entries.pop_back();
  const NodeValidator<KV> no_trailer(MakeLayout(1024, 64, 16), true);
  std::vector<Entry> more = entries;
  for (int i = 0; no_trailer.leaf().Fits(h, more); ++i) more.push_back({Cat({"k", std::to_string(5000 + i)}), "v"});
  EXPECT_GE(more.size(), entries.size() + 1) << "the trailer costs the content room";
  std::vector<std::byte> img(l.node_bytes, std::byte{0xee});
  ASSERT_TRUE(v.leaf().Build(img.data(), h, entries, false));
  EXPECT_EQ(LoadAt<uint64_t>(img.data(), l.TrailerOffset()), 0x5150u);
  StoreAt<uint64_t>(img.data(), l.TrailerOffset(), 0x5150 | 1);  // locked: still validates
  Header back;
  ASSERT_TRUE(v.Decode(img.data(), &back));
  std::vector<Entry> got;
  v.leaf().Collect(img.data(), back, &got);
  EXPECT_EQ(got.size(), entries.size());

  Header ih = LeafHeader(0x7170, "k", "l");
  ih.level = 1;
  ih.leftmost = GlobalAddress(1, 64);
  std::vector<IEntry> seps;
  for (int i = 0; v.internal().Fits(ih, seps); ++i) seps.push_back({Cat({"k", std::to_string(1000 + i)}), GlobalAddress(1, 128 + 64 * i)});
  seps.pop_back();
  std::fill(img.begin(), img.end(), std::byte{0xee});
  ASSERT_TRUE(v.internal().Build(img.data(), ih, seps));
  EXPECT_EQ(LoadAt<uint64_t>(img.data(), l.TrailerOffset()), 0x7170u);
  StoreAt<uint64_t>(img.data(), l.TrailerOffset(), 1);
  ASSERT_TRUE(v.Decode(img.data(), &back));
  EXPECT_EQ(back.count, seps.size());
  EXPECT_LE(back.heap_off + 0u, l.ContentEnd());
}

TEST(SlottedInternal, RoutesKeysThroughTruncatedSeparators) {
  L l = MakeLayout(1024, 64, 16);
  NodeValidator<KV> v(l, true);
  const auto& in = v.internal();
  std::vector<IEntry> seps;
  for (int i = 1; i <= 30; ++i) seps.push_back({Cat({"user/00", std::to_string(10 + i)}), GlobalAddress(0, 64 * 100 * i)});
  Header h;
  h.version = 3;
  h.level = 1;
  h.low = "user/000";
  h.high = "user/01";
  h.leftmost = GlobalAddress(1, 6400);
  std::vector<std::byte> img(l.node_bytes);
  ASSERT_TRUE(in.Build(img.data(), h, seps));
  Header d;
  ASSERT_TRUE(v.Decode(img.data(), &d));
  EXPECT_EQ(d.prefix, 6u);
  EXPECT_EQ(in.ChildFor(img.data(), d, "user/000"), h.leftmost);
  EXPECT_EQ(in.ChildFor(img.data(), d, "user/0010"), h.leftmost);
  EXPECT_EQ(in.ChildFor(img.data(), d, "user/0011"), seps[0].child);
  EXPECT_EQ(in.ChildFor(img.data(), d, "user/00115"), seps[0].child);
  EXPECT_EQ(in.ChildFor(img.data(), d, "user/0040"), seps[29].child);
  EXPECT_EQ(in.ChildFor(img.data(), d, "user/009"), seps[29].child);
  EXPECT_EQ(in.ChildFor(img.data(), d, "a"), h.leftmost) << "left of the prefix";
  EXPECT_EQ(in.ChildFor(img.data(), d, "z"), seps[29].child) << "right of the prefix";
  EXPECT_TRUE(in.HasSeparator(img.data(), d, "user/0025"));
  EXPECT_FALSE(in.HasSeparator(img.data(), d, "user/00255"));
  std::vector<IEntry> back;
  in.Collect(img.data(), d, &back);
  ASSERT_EQ(back.size(), seps.size());
  for (size_t i = 0; i < seps.size(); ++i) {
    EXPECT_EQ(back[i].key, seps[i].key);
    EXPECT_EQ(in.KeyAt(img.data(), d, i), seps[i].key);
  }
  img[d.slots_off + 3] ^= std::byte{1};  // a slot changed without a new body check
  EXPECT_FALSE(v.Decode(img.data(), &d));
  // The split moves a middle separator up, halves fit.
  while (in.Fits(h, seps)) seps.push_back({seps.back().key + "5", GlobalAddress(0, 64)});
  InternalSplit<KV> s = in.Split(h, seps);
  EXPECT_LT(s.left.back().key, s.separator);
  EXPECT_LT(s.separator, s.right.front().key);
  EXPECT_EQ(s.left.size() + s.right.size() + 1, seps.size());
}

// Every mix of 64-byte pieces and 8-byte words of two whole versions fails validation
// unless all relied-on pieces come from one version; an accepted image then shows exactly
// that version's entries.
TEST(SlottedValidator, RejectsEveryTornMixOfTwoVersions) {
  L l = MakeLayout(1024, 64, 16);
  NodeValidator<KV> v(l, true);
  std::mt19937_64 rng(7);
  auto collect = [&](const std::vector<std::byte>& img) {
    Header h;
    std::vector<Entry> out;
    if (v.Decode(img.data(), &h)) v.leaf().Collect(img.data(), h, &out);
    std::vector<std::string> keys;
    for (auto& e : out) keys.push_back(e.key + "=" + e.value);
    return keys;
  };
  for (bool unsorted : {false, true}) {
    std::vector<std::byte> a(l.node_bytes), b(l.node_bytes);
    ASSERT_TRUE(v.leaf().Build(a.data(), LeafHeader(1, "user/", "user0"), Entries(18), unsorted));
    auto more = Entries(19);
    more[3].value = "changed";
    ASSERT_TRUE(v.leaf().Build(b.data(), LeafHeader(2, "user/", "user0"), more, unsorted));
    const auto ka = collect(a), kb = collect(b);
    for (uint32_t unit : {64u, 8u}) {
      for (int trial = 0; trial < 2000; ++trial) {
        std::vector<std::byte> mixed(l.node_bytes);
        for (uint32_t p = 0; p < l.node_bytes / unit; ++p)
          std::copy_n((rng() % 2 ? b : a).begin() + p * unit, unit, mixed.begin() + p * unit);
        Header h;
        if (!v.Decode(mixed.data(), &h)) continue;
        const auto got = collect(mixed);
        EXPECT_TRUE(got == ka || got == kb) << "accepted a torn image, unit " << unit;
      }
    }
  }
}

// Structured garbage: random bytes, torn mixes of many versions, and valid headers over
// random slots, with validation on and off. Decode and every accessor stay inside the image
// (a read past it faults on the guard page), and an image validation accepts is one of the
// versions it was made from.
TEST(SlottedValidator, FuzzedImagesNeverLeadOutsideTheBuffer) {
  L l = MakeLayout(1024, 64, 16);
  NodeValidator<KV> checked(l, true), unchecked(l, false);
  std::mt19937_64 rng(11);
  std::vector<std::vector<std::byte>> versions;
  for (uint64_t ver = 1; ver <= 6; ++ver) {
    std::vector<std::byte> img(l.node_bytes);
    auto e = Entries(5 + ver * 3, Cat({"k/", std::string(ver, 'p')}), 16);
    if (ver % 2) {
      ASSERT_TRUE(checked.leaf().Build(img.data(), LeafHeader(ver, "k/", "k0"), e, ver % 3 == 0));
    } else {
      std::vector<IEntry> seps;
      for (auto& x : e) seps.push_back({x.key, GlobalAddress(0, 64 * ver)});
      Header h = LeafHeader(ver, "k/", "k0");
      h.level = 1;
      ASSERT_TRUE(checked.internal().Build(img.data(), h, seps));
    }
    versions.push_back(img);
  }
  GuardedImage guarded(l.node_bytes);
  std::vector<std::byte> img(l.node_bytes);
  int accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    switch (trial % 4) {
      case 0:  // random bytes
        for (auto& b : img) b = static_cast<std::byte>(rng());
        break;
      case 1:  // a torn mix of several versions, in 8-byte words
        for (uint32_t w = 0; w < l.node_bytes / 8; ++w)
          std::copy_n(versions[rng() % versions.size()].begin() + w * 8, 8, img.begin() + w * 8);
        break;
      case 2: {  // one version with random words overwritten
        img = versions[rng() % versions.size()];
        for (int k = 0; k < 4; ++k) StoreAt(img.data(), static_cast<uint32_t>(rng() % (l.node_bytes / 8)) * 8, rng());
        break;
      }
      default: {  // a valid header over random slot words (only validation stands between)
        img = versions[rng() % versions.size()];
        Header h;
        ASSERT_TRUE(unchecked.ReadHeader(img.data(), &h));
        for (uint32_t off = h.slots_off; off + 8 <= l.node_bytes; off += 8)
          if (rng() % 3 == 0) StoreAt(img.data(), off, rng() & (rng() % 2 ? 0xffffffffffffull : ~0ull));
      }
    }
    guarded.Load(img);
    for (const NodeValidator<KV>* v : {&checked, &unchecked}) {
      Header h;
      if (!v->Decode(guarded.data(), &h)) continue;
      if (v == &checked) {
        ++accepted;
        const bool is_version = std::any_of(versions.begin(), versions.end(), [&](const auto& x) {
          return std::equal(x.begin(), x.begin() + h.slots_off, img.begin());
        });
        EXPECT_TRUE(is_version) << "validation accepted a header no writer wrote";
      }
      // Every accessor a reader uses, on whatever the decoder accepted.
      if (h.is_leaf()) {
        std::vector<Entry> out;
        v->leaf().Collect(guarded.data(), h, &out);
        (void)v->leaf().Find(guarded.data(), h, "k/pp");
        (void)v->leaf().Find(guarded.data(), h, out.empty() ? std::string("k/") : out.front().key);
        for (uint32_t s = 0; s < h.count; ++s)
          if (v->leaf().LiveAt(guarded.data(), h, s)) (void)v->leaf().ValueAt(guarded.data(), h, s);
      } else {
        std::vector<IEntry> out;
        v->internal().Collect(guarded.data(), h, &out);
        (void)v->internal().ChildFor(guarded.data(), h, "k/ppp");
        (void)v->internal().HasSeparator(guarded.data(), h, "k/p");
      }
    }
  }
  EXPECT_GT(accepted, 100) << "the mixes should include untorn images";
}

}  // namespace
}  // namespace dmindex::tree
