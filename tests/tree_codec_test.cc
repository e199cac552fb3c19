// Node codecs, check words and validation of the shared tree core: every way a torn or
// foreign image can look must fail validation, every consistent image must pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "tree/node_validation.h"
#include "tree/split.h"
#include "tree/tree_options.h"

namespace dmindex::tree {
namespace {

using KV = U64KV;
using Layout = NodeLayout<KV>;
using Entry = LeafEntry<KV>;

Layout MakeLayout(uint32_t bytes = 1024) { return std::move(Layout::For(bytes)).value(); }

std::vector<Entry> Entries(size_t n, uint64_t first = 10, uint64_t step = 10) {
  std::vector<Entry> e;
  for (size_t i = 0; i < n; ++i) e.push_back({first + i * step, 1000 + i, {}});
  return e;
}

NodeHeader<KV> LeafHeader(uint64_t version) {
  NodeHeader<KV> h;
  h.version = version;
  h.low = 5;
  h.high = 100000;
  h.sibling = GlobalAddress(1, 4096 * 100);
  return h;
}

TEST(NodeLayout, DerivesFanOutFromNodeSize) {
  Layout l = MakeLayout(1024);
  EXPECT_EQ(Layout::kHeaderBytes, 64u);
  EXPECT_EQ(l.leaf_capacity, (1024u - 64) / 24);
  EXPECT_EQ(l.internal_capacity, (1024u - 64) / 16);
  EXPECT_GT(MakeLayout(4096).leaf_capacity, l.leaf_capacity);
  EXPECT_TRUE(Layout::For(100).status().IsInvalidArgument());    // not a multiple of 64
  EXPECT_TRUE(Layout::For(128).status().IsInvalidArgument());    // too small for 4 entries
  EXPECT_TRUE(Layout::For(1 << 20).status().IsInvalidArgument());
  // One rule and one limit for node sizes, the same from every layer that checks them.
  EXPECT_EQ(Layout::For(1 << 20).status().message(),
            "node_bytes 1048576: expected a multiple of 64 in [192, 65536]");
  EXPECT_TRUE(Layout::For(kMaxNodeBytes).ok());
  EXPECT_TRUE(Layout::For(Layout::MinNodeBytes() / 64 * 64 + 64).ok());
}

TEST(HeaderCodec, RoundTripsAndDetectsDamage) {
  Layout l = MakeLayout();
  std::vector<std::byte> img(l.node_bytes);
  NodeHeader<KV> h = LeafHeader(77);
  h.level = 3;
  h.count = 12;
  h.leftmost = GlobalAddress(0, 8192);
  HeaderCodec<KV>::Write(h, img.data());
  NodeHeader<KV> back;
  ASSERT_TRUE(HeaderCodec<KV>::Read(img.data(), &back, true));
  EXPECT_EQ(back.version, 77u);
  EXPECT_EQ(back.level, 3);
  EXPECT_EQ(back.count, 12);
  EXPECT_EQ(back.low, 5u);
  EXPECT_EQ(back.high, 100000u);
  EXPECT_EQ(back.sibling, h.sibling);
  EXPECT_EQ(back.leftmost, h.leftmost);
  for (uint32_t byte = 0; byte < Layout::kHeaderBytes; ++byte) {
    auto damaged = img;
    damaged[byte] ^= std::byte{0x10};
    EXPECT_FALSE(HeaderCodec<KV>::Read(damaged.data(), &back, true)) << "byte " << byte;
  }
  std::vector<std::byte> zero(l.node_bytes);
  EXPECT_FALSE(HeaderCodec<KV>::Read(zero.data(), &back, true)) << "fresh memory is no node";
  EXPECT_TRUE(HeaderCodec<KV>::Read(zero.data(), &back, false)) << "validation off accepts";
}

TEST(LeafCodec, SortedAndUnsortedFindAndCollect) {
  Layout l = MakeLayout();
  NodeValidator<KV> v(l, true);
  const auto& leaf = v.leaf();
  auto entries = Entries(20);
  for (bool unsorted : {false, true}) {
    std::vector<std::byte> img(l.node_bytes);
    leaf.Build(img.data(), LeafHeader(9), entries, unsorted);
    NodeHeader<KV> h;
    ASSERT_TRUE(v.Decode(img.data(), &h));
    EXPECT_EQ(h.unsorted(), unsorted);
    for (size_t i = 0; i < entries.size(); ++i) {
      int slot = leaf.Find(img.data(), h, entries[i].key);
      ASSERT_GE(slot, 0);
      EXPECT_EQ(leaf.ValueAt(img.data(), slot), entries[i].value);
      EXPECT_LT(leaf.Find(img.data(), h, entries[i].key + 1), 0);
    }
    std::vector<Entry> back;
    leaf.Collect(img.data(), h, &back);
    ASSERT_EQ(back.size(), entries.size());
    for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i].key, entries[i].key);
    EXPECT_EQ(leaf.InsertSlot(img.data(), h, 999), unsorted ? 20 : -1);
  }
}

TEST(LeafCodec, EntryWriteKeepsLeafValidAndUnordered) {
  Layout l = MakeLayout();
  NodeValidator<KV> v(l, true);
  const auto& leaf = v.leaf();
  std::vector<std::byte> img(l.node_bytes);
  leaf.Build(img.data(), LeafHeader(9), Entries(3), true);
  NodeHeader<KV> h;
  ASSERT_TRUE(v.Decode(img.data(), &h));
  leaf.EncodeSlot(img.data(), 7, 15, 555, h.version);  // between keys 10 and 20, slot 7
  leaf.EncodeTomb(img.data(), 0, 10, h.version);       // delete key 10
  ASSERT_TRUE(v.Decode(img.data(), &h));
  std::vector<Entry> back;
  leaf.Collect(img.data(), h, &back);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].key, 15u);
  EXPECT_EQ(back[0].value, 555u);
  EXPECT_EQ(leaf.Find(img.data(), h, 10), -1);
  EXPECT_TRUE(leaf.TombAt(img.data(), 0));
  EXPECT_FALSE(leaf.LiveAt(img.data(), 0));
}

// Within one version a key keeps its slot: a deleted key is re-inserted into its tombstone,
// other keys take empty slots only, and with none left the leaf must be rewritten whole. So a
// READ spanning a delete and re-insert cannot combine two slots holding the key.
TEST(LeafCodec, ADeletedKeyKeepsItsSlotUntilTheNextVersion) {
  Layout l = MakeLayout();
  NodeValidator<KV> v(l, true);
  const auto& leaf = v.leaf();
  std::vector<std::byte> img(l.node_bytes);
  NodeHeader<KV> h = LeafHeader(9);
  leaf.Build(img.data(), h, Entries(3), true);  // keys 10, 20, 30 in slots 0..2
  ASSERT_TRUE(v.Decode(img.data(), &h));
  leaf.EncodeTomb(img.data(), 0, 10, h.version);
  leaf.EncodeTomb(img.data(), 1, 20, h.version);
  EXPECT_EQ(leaf.InsertSlot(img.data(), h, 20), 1) << "a re-insert takes its own tombstone";
  EXPECT_EQ(leaf.InsertSlot(img.data(), h, 25), 3) << "a new key skips other keys' tombstones";
  for (uint32_t i = 3; i < leaf.capacity(); ++i) leaf.EncodeSlot(img.data(), i, 100 + i, 1, h.version);
  ASSERT_TRUE(v.Decode(img.data(), &h));
  EXPECT_EQ(leaf.InsertSlot(img.data(), h, 25), -1) << "only tombstones left: rewrite whole";
  EXPECT_EQ(leaf.InsertSlot(img.data(), h, 10), 0);

  // A tombstone and a live entry of the same key and value differ only in the flag, which
  // the check covers: flipping it invalidates the slot.
  leaf.EncodeSlot(img.data(), 2, 30, 0, h.version);
  auto flipped = img;
  flipped[l.SlotOffset(2) + Layout::kSlotCheckOff] ^= std::byte{1};
  EXPECT_FALSE(v.Decode(flipped.data(), &h));
}

TEST(LeafCodec, SlotOfAnotherVersionOrPositionFails) {
  Layout l = MakeLayout();
  NodeValidator<KV> v(l, true);
  std::vector<std::byte> a(l.node_bytes), b(l.node_bytes);
  v.leaf().Build(a.data(), LeafHeader(1), Entries(10), true);
  v.leaf().Build(b.data(), LeafHeader(2), Entries(10), true);  // same entries, new version
  NodeHeader<KV> h;
  ASSERT_TRUE(v.Decode(a.data(), &h));
  for (uint32_t slot = 0; slot < l.leaf_capacity; ++slot) {  // empty slots are checked too
    auto mixed = a;
    std::copy_n(b.begin() + l.SlotOffset(slot), Layout::kSlotBytes, mixed.begin() + l.SlotOffset(slot));
    EXPECT_FALSE(v.Decode(mixed.data(), &h)) << "slot " << slot;
  }
  auto moved = a;  // slot 1's bytes copied into slot 2
  std::copy_n(a.begin() + l.SlotOffset(1), Layout::kSlotBytes, moved.begin() + l.SlotOffset(2));
  EXPECT_FALSE(v.Decode(moved.data(), &h));
}

// Every mix of 64-byte pieces (the fabric's tear unit) and 8-byte words of two versions of a
// node fails validation unless all pieces come from one version.
TEST(NodeValidator, RejectsEveryTornMixOfTwoVersions) {
  Layout l = MakeLayout();
  NodeValidator<KV> v(l, true);
  std::mt19937_64 rng(7);
  std::vector<std::byte> leaf_a(l.node_bytes), leaf_b(l.node_bytes);
  v.leaf().Build(leaf_a.data(), LeafHeader(1), Entries(30), true);
  auto more = Entries(31);
  more[3].value = 4;
  v.leaf().Build(leaf_b.data(), LeafHeader(2), more, true);
  std::vector<std::byte> int_a(l.node_bytes), int_b(l.node_bytes);
  std::vector<InternalEntry<KV>> children;
  for (uint64_t i = 0; i < 40; ++i) children.push_back({100 + i, GlobalAddress(0, 4096 * (i + 2))});
  NodeHeader<KV> ih = LeafHeader(5);
  ih.level = 1;
  ih.leftmost = GlobalAddress(1, 4096);
  v.internal().Build(int_a.data(), ih, children);
  ih.version = 6;
  children[7].child = GlobalAddress(1, 64 * 999);
  v.internal().Build(int_b.data(), ih, children);
  for (auto [a, b] : {std::pair{&leaf_a, &leaf_b}, std::pair{&int_a, &int_b}}) {
    for (uint32_t unit : {64u, 8u}) {
      const uint32_t pieces = l.node_bytes / unit;
      for (int trial = 0; trial < 2000; ++trial) {
        std::vector<std::byte> mixed(l.node_bytes);
        int from_b = 0;
        for (uint32_t p = 0; p < pieces; ++p) {
          bool take_b = rng() % 2;
          from_b += take_b;
          const auto& src = take_b ? *b : *a;
          std::copy_n(src.begin() + p * unit, unit, mixed.begin() + p * unit);
        }
        NodeHeader<KV> h;
        bool ok = v.Decode(mixed.data(), &h);
        // A mix is only acceptable if it equals one of the versions on every byte that
        // matters; pieces past the used entries of an internal node are not relied on.
        if (ok) {
          EXPECT_TRUE(from_b == 0 || from_b == static_cast<int>(pieces) ||
                      std::equal(mixed.begin(), mixed.begin() + 64 + 41 * 16, a->begin()) ||
                      std::equal(mixed.begin(), mixed.begin() + 64 + 41 * 16, b->begin()))
              << "accepted a torn image, unit " << unit;
        }
      }
    }
  }
}

// A lookup that validates only the slots its binary search reads (DEX's offloaded lookups,
// Leaf::FindValidated) answers, whenever it accepts a torn mix of two versions, what the
// header's version answers - also when the versions differ where keys moved (an insert
// shifted every slot after it). An unsorted leaf is validated whole.
TEST(LeafCodec, FindValidatedAnswersAsTheHeadersVersionOnEveryTornMix) {
  Layout l = MakeLayout();
  NodeValidator<KV> v(l, true);
  std::mt19937_64 rng(11);
  std::vector<std::byte> a(l.node_bytes), b(l.node_bytes);
  ASSERT_TRUE(v.leaf().Build(a.data(), LeafHeader(1), Entries(30), false));
  auto shifted = Entries(30);
  shifted.insert(shifted.begin() + 4, Entry{45, 77, {}});  // every slot from 4 on moves
  ASSERT_TRUE(v.leaf().Build(b.data(), LeafHeader(2), shifted, false));
  int accepted = 0, rejected = 0;
  for (uint32_t unit : {64u, 8u, 24u}) {
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<std::byte> mixed(l.node_bytes);
      for (uint32_t p = 0; p * unit < l.node_bytes; ++p) {
        const auto& src = rng() % 2 ? b : a;
        const uint32_t len = std::min(unit, l.node_bytes - p * unit);
        std::copy_n(src.begin() + p * unit, len, mixed.begin() + p * unit);
      }
      NodeHeader<KV> h;
      if (!v.DecodeHeader(mixed.data(), &h)) continue;
      const auto& whole = h.version == 1 ? a : b;
      NodeHeader<KV> wh;
      ASSERT_TRUE(v.Decode(whole.data(), &wh));
      for (uint64_t key = 0; key <= 320; key += 5) {
        int slot = -2;
        if (!v.leaf().FindValidated(mixed.data(), h, key, true, &slot)) {
          ++rejected;
          continue;
        }
        ++accepted;
        const int expect = v.leaf().Find(whole.data(), wh, key);
        ASSERT_EQ(slot, expect) << "key " << key << ", version " << h.version << ", unit " << unit;
        if (slot >= 0) {
          EXPECT_EQ(v.leaf().ValueAt(mixed.data(), h, static_cast<uint32_t>(slot)),
                    v.leaf().ValueAt(whole.data(), wh, static_cast<uint32_t>(slot)));
        }
      }
    }
  }
  EXPECT_GT(accepted, 0);  // both outcomes happen: the test exercises the lazy path
  EXPECT_GT(rejected, 0);
  // Untorn images: every key answers as Find does.
  NodeHeader<KV> h;
  ASSERT_TRUE(v.Decode(b.data(), &h));
  for (uint64_t key = 0; key <= 320; ++key) {
    int slot = -2;
    ASSERT_TRUE(v.leaf().FindValidated(b.data(), h, key, true, &slot));
    EXPECT_EQ(slot, v.leaf().Find(b.data(), h, key));
  }
}

// DEX writes cached leaves back by restamping them (new version, check words re-encoded)
// instead of collecting and building: the image must be the one Build makes of the same
// entries, for byte values inline, empty and out of line, and every slot count.
TEST(LeafCodec, RestampIsTheBuildOfTheSameEntries) {
  using BKV = U64BytesKV;
  const auto layout = std::move(NodeLayout<BKV>::For(512)).value();
  const FixedLeafCodec<BKV> leaf(layout);
  const NodeValidator<BKV> validator(layout, true);
  for (uint32_t n = 0; n <= layout.leaf_capacity; n += 3) {
    std::vector<LeafEntry<BKV>> entries;
    for (uint32_t i = 0; i < n; ++i) {
      LeafEntry<BKV> e{10 + 7 * i, std::string(i % 9, static_cast<char>('a' + i)), {}};
      if (i % 4 == 3) e = {10 + 7 * i, "", {GlobalAddress(1, 64 * (100 + i)), 1024, false}};
      entries.push_back(e);
    }
    NodeHeader<BKV> h;
    h.version = 0x1234;
    h.low = 5;
    h.high = 100000;
    std::vector<std::byte> old_image(layout.node_bytes), restamped, built(layout.node_bytes);
    ASSERT_TRUE(leaf.Build(old_image.data(), h, entries, false));
    NodeHeader<BKV> decoded;
    ASSERT_TRUE(validator.Decode(old_image.data(), &decoded));
    restamped = old_image;
    leaf.Restamp(restamped.data(), decoded, 0x9876);
    h.version = 0x9876;
    ASSERT_TRUE(leaf.Build(built.data(), h, entries, false));
    EXPECT_EQ(restamped, built) << n << " entries";
    ASSERT_TRUE(validator.Decode(restamped.data(), &decoded));
    EXPECT_EQ(decoded.version, 0x9876u);
  }
}

TEST(InternalCodec, RoutesKeysToChildren) {
  Layout l = MakeLayout();
  NodeValidator<KV> v(l, true);
  std::vector<InternalEntry<KV>> children = {{100, GlobalAddress(0, 6400)}, {200, GlobalAddress(1, 6400)}};
  NodeHeader<KV> h;
  h.version = 3;
  h.level = 1;
  h.leftmost = GlobalAddress(0, 640);
  std::vector<std::byte> img(l.node_bytes);
  v.internal().Build(img.data(), h, children);
  ASSERT_TRUE(v.Decode(img.data(), &h));
  EXPECT_EQ(v.internal().ChildFor(img.data(), h, 1), GlobalAddress(0, 640));
  EXPECT_EQ(v.internal().ChildFor(img.data(), h, 99), GlobalAddress(0, 640));
  EXPECT_EQ(v.internal().ChildFor(img.data(), h, 100), GlobalAddress(0, 6400));
  EXPECT_EQ(v.internal().ChildFor(img.data(), h, 199), GlobalAddress(0, 6400));
  EXPECT_EQ(v.internal().ChildFor(img.data(), h, 200), GlobalAddress(1, 6400));
  EXPECT_TRUE(v.internal().HasSeparator(img.data(), h, 200));
  EXPECT_FALSE(v.internal().HasSeparator(img.data(), h, 150));
  img[64 + 3] ^= std::byte{1};  // a separator changed without a new body check
  EXPECT_FALSE(v.Decode(img.data(), &h));
}

TEST(Split, HalvesLeavesAndPushesUpTheMiddleSeparator) {
  auto entries = Entries(41);
  LeafSplit<KV> s = SplitLeaf<KV>(entries);
  EXPECT_EQ(s.left.size() + s.right.size(), 41u);
  EXPECT_EQ(s.separator, s.right.front().key);
  EXPECT_LT(s.left.back().key, s.separator);
  std::vector<InternalEntry<KV>> children;
  for (uint64_t i = 0; i < 61; ++i) children.push_back({10 * (i + 1), GlobalAddress(0, 64 * (i + 1))});
  InternalSplit<KV> is = SplitInternal<KV>(children);
  EXPECT_EQ(is.left.size() + is.right.size() + 1, 61u);
  EXPECT_EQ(is.separator, children[30].key);
  EXPECT_EQ(is.right_leftmost, children[30].child);
  EXPECT_LT(is.left.back().key, is.separator);
  EXPECT_LT(is.separator, is.right.front().key);
}

TEST(TreeOptions, KnobsOverrideDefaultsAndRejectNonsense) {
  IndexOptions io;
  io.key_format = KeyFormat::kU64;
  io.cache_bytes = 32 << 20;
  TreeOptions defaults;
  defaults.cache_bytes = 1;
  defaults.hocl = true;
  auto o = ResolveTreeOptions(io, defaults);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->cache_bytes, 32u << 20);
  io.knobs = {{"cache_mb", "off"}, {"hocl", "off"}, {"combine", "on"}, {"two_level", "1"},
              {"validation", "false"}, {"handover", "3"}};
  o = ResolveTreeOptions(io, defaults);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->cache_bytes, 0u);
  EXPECT_FALSE(o->hocl);
  EXPECT_TRUE(o->combine);
  EXPECT_TRUE(o->two_level);
  EXPECT_FALSE(o->validate);
  EXPECT_EQ(o->handover_max, 3u);
  io.knobs = {{"cache_mb", "5"}};
  EXPECT_EQ(ResolveTreeOptions(io, {})->cache_bytes, 5u << 20);
  for (auto bad : std::vector<std::pair<std::string, std::string>>{
           {"hocl", "maybe"}, {"cache_mb", "-1"}, {"cache_mb", "12x"}, {"nope", "on"}, {"handover", ""}}) {
    io.knobs = {bad};
    EXPECT_TRUE(ResolveTreeOptions(io, {}).status().IsInvalidArgument()) << bad.first << "=" << bad.second;
  }
  io.knobs.clear();
  io.bulk_fill = 0;
  EXPECT_TRUE(ResolveTreeOptions(io, {}).status().IsInvalidArgument());
}

// Every design reads knobs through common/knobs.h: the same rules as command-line values, and
// errors that name the knob, the value and what was expected.
TEST(TreeOptions, KnobErrorsNameTheKnobValueAndRange) {
  IndexOptions io;
  io.key_format = KeyFormat::kU64;
  auto message = [&](std::string knob, std::string value) {
    io.knobs = {{knob, value}};
    return ResolveTreeOptions(io, {}).status().message();
  };
  EXPECT_EQ(message("hocl", "maybe"), "knob hocl: 'maybe': expected on or off");
  EXPECT_EQ(message("handover", "2000000"), "knob handover: '2000000': expected a whole number in [0, 1048576]");
  EXPECT_NE(message("cache_mb", "-1").find("knob cache_mb: '-1': expected a whole number"), std::string::npos);
  EXPECT_EQ(message("nope", "1"),
            "unknown knob 'nope' (known: cache_mb, hocl, handover, combine, two_level, lease_ms, validation)");
}

}  // namespace
}  // namespace dmindex::tree
