// RF-tree's parts (docs/RFTREE.md): where nodes go (the search-layer log, leaves spread node
// by node), the search-layer cache's snapshot walk (full hits, partial hits where the copy
// ends, poisoned copies), when the cache refreshes (threshold of stale reads, at most one
// refresh in flight, rate limit, budget), and the options it refuses.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "alloc/append_log.h"
#include "alloc/catalog.h"
#include "designs/registry.h"
#include "designs/rftree/slc_snapshot.h"
#include "tree/slotted_layout.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "tree/node_validation.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using Key = uint64_t;
using Value = uint64_t;
using KV = tree::U64BytesKV;
using Layout = tree::NodeLayout<KV>;

constexpr uint32_t kNodeBytes = 1024;

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> session;
};

// An rftree index named "t" of 1 KB nodes on two memory nodes, keys 2, 4, ..., 2n loaded.
Bed MakeBed(uint64_t keys, std::map<std::string, std::string> knobs = {}, uint64_t cache_bytes = 64ull << 20) {
  Bed b;
  fabric::InProcOptions fo;
  fo.memory_nodes = 2;
  fo.pool_bytes = 1ull << 30;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.name = "t";
  o.node_bytes = kNodeBytes;
  o.cache_bytes = cache_bytes;
  o.knobs = std::move(knobs);
  auto made = designs::MakeIndex("rftree", *b.fabric, o);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  b.index = std::move(made).value();
  std::vector<testing::U64Pair> data;
  for (uint64_t k = 1; k <= keys; ++k) data.push_back({2 * k, k});
  EXPECT_TRUE(testing::BulkLoadU64(*b.index, data).ok());
  b.session = std::move(b.index->OpenSession(0)).value();
  return b;
}

uint64_t Property(const Index& index, const char* name) { return index.GetIntProperty(name).value_or(~0ull); }

fabric::VerbCounts Measure(fabric::Fabric& f, const std::function<void()>& op) {
  fabric::VerbCounts before = f.TotalCounts();
  op();
  return f.TotalCounts() - before;
}

// Internal nodes are blocks of the search-layer log's segments; bulk-loaded leaves, in key
// order, alternate between the memory nodes.
TEST(RfTree, InternalNodesLiveInTheLogAndLeavesAlternateMemoryNodes) {
  Bed b = MakeBed(20000);
  auto ep = std::move(b.fabric->Connect()).value();
  auto entry = alloc::Catalog::Open(*ep, "t");
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  alloc::NodeAllocator allocator(2);
  alloc::AppendLog log(entry->aux_word(0), kNodeBytes, 2);
  ASSERT_TRUE(log.Open(*ep, allocator).ok());
  std::vector<std::byte> dir(alloc::AppendLog::kDirectoryBytes);
  ASSERT_TRUE(ep->Read(log.directory(), dir.data(), dir.size()).ok());
  const auto segments = log.Parse(dir.data());
  auto in_log = [&](GlobalAddress a) {
    for (const auto& s : segments)
      if (a.node() == s.base.node() && a.offset() >= s.base.offset() &&
          a.offset() < s.base.offset() + s.used * kNodeBytes && (a.offset() - s.base.offset()) % kNodeBytes == 0)
        return true;
    return false;
  };
  const Layout layout = *Layout::For(kNodeBytes, true);
  const tree::NodeValidator<KV> validator(layout, true);
  uint64_t raw = 0;
  ASSERT_TRUE(ep->Read(entry->root_word, &raw, 8).ok());
  std::vector<std::byte> image(kNodeBytes);
  tree::NodeHeader<KV> h;
  // Down the leftmost path, checking each level's chain of internal nodes.
  GlobalAddress level_start = GlobalAddress::FromRaw(raw);
  uint64_t internal = 0;
  for (;;) {
    ASSERT_TRUE(ep->Read(level_start, image.data(), kNodeBytes).ok());
    ASSERT_TRUE(validator.Decode(image.data(), &h));
    if (h.is_leaf()) break;
    const GlobalAddress down = h.leftmost;
    for (GlobalAddress at = level_start; !at.is_null(); at = h.sibling) {
      ASSERT_TRUE(ep->Read(at, image.data(), kNodeBytes).ok());
      ASSERT_TRUE(validator.Decode(image.data(), &h));
      EXPECT_TRUE(in_log(at)) << "internal node " << at.ToString() << " is not in the log";
      ++internal;
    }
    level_start = down;
  }
  Value v;
  ASSERT_TRUE(b.session->Lookup(2, &v).ok());  // the cache reads the whole log: every internal node
  EXPECT_EQ(internal, Property(*b.index, "dmindex.rftree.slc-nodes"));
  uint64_t leaves = 0;
  int previous = -1;
  for (GlobalAddress at = level_start; !at.is_null(); at = h.sibling, ++leaves) {
    ASSERT_TRUE(ep->Read(at, image.data(), kNodeBytes).ok());
    ASSERT_TRUE(validator.Decode(image.data(), &h));
    EXPECT_FALSE(in_log(at));
    if (previous >= 0) {
      EXPECT_NE(at.node(), previous) << "leaf " << leaves << " on the same memory node as its left neighbour";
    }
    previous = at.node();
  }
  EXPECT_EQ(leaves, (20000 + 30) / 31);
  EXPECT_GT(internal, 10u);
}

// A hand-made copy: root R (level 2) over A and B (level 1); A is in the copy, B is not.
struct Copy {
  Layout layout = *Layout::For(kNodeBytes, true);
  tree::InternalCodec<KV> codec{layout};
  GlobalAddress base{0, 1 << 20};
  GlobalAddress r = base, a = base + kNodeBytes, b = base + 2 * kNodeBytes;
  GlobalAddress leaf(uint64_t i) const { return GlobalAddress(1, 4096 * (i + 1)); }

  designs::rftree::SlcSnapshot<KV> Make(bool with_b) const {
    typename designs::rftree::SlcSnapshot<KV>::Segment s;
    s.base = base;
    s.blocks = 3;
    s.images = std::make_unique<std::byte[]>(3 * kNodeBytes);
    s.headers.resize(3);
    s.valid.assign(3, 0);
    auto build = [&](uint32_t i, uint8_t level, Key low, Key high, GlobalAddress leftmost,
                     std::vector<tree::InternalEntry<KV>> entries, GlobalAddress sibling) {
      tree::NodeHeader<KV> h;
      h.version = 2 + 2 * i;
      h.level = level;
      h.low = low;
      h.high = high;
      h.leftmost = leftmost;
      h.sibling = sibling;
      codec.Build(s.images.get() + i * kNodeBytes, h, entries);
      tree::NodeValidator<KV> v(layout, true);
      s.valid[i] = v.Decode(s.images.get() + i * kNodeBytes, &s.headers[i]) ? 1 : 0;
    };
    build(0, 2, KV::kNegInf, KV::kPosInf, a, {{1000, b}}, {});
    build(1, 1, KV::kNegInf, 1000, leaf(0), {{500, leaf(1)}}, b);
    build(2, 1, 1000, KV::kPosInf, leaf(2), {{1500, leaf(3)}}, {});
    if (!with_b) s.valid[2] = 0;
    std::vector<typename designs::rftree::SlcSnapshot<KV>::Segment> segments;
    segments.push_back(std::move(s));
    return designs::rftree::SlcSnapshot<KV>(layout, r, std::move(segments));
  }
};

TEST(RfTree, SnapshotWalkHitsFullyOrStopsWhereTheCopyEnds) {
  Copy copy;
  auto full = copy.Make(true);
  EXPECT_EQ(full.nodes(), 3u);
  EXPECT_EQ(full.root_level(), 2);
  typename tree::RoutingCache<KV>::Hit hit;
  uint32_t missing = 9;
  ASSERT_TRUE(full.FindChild(700, 1, &hit, &missing));
  EXPECT_EQ(hit.node, copy.a);
  EXPECT_EQ(hit.level, 1);
  EXPECT_EQ(hit.child, copy.leaf(1));
  EXPECT_EQ(missing, 0u);
  ASSERT_TRUE(full.FindChild(1700, 1, &hit, &missing));
  EXPECT_EQ(hit.node, copy.b);
  EXPECT_EQ(hit.child, copy.leaf(3));
  ASSERT_TRUE(full.FindChild(1700, 2, &hit, &missing));  // a separator insertion's parent
  EXPECT_EQ(hit.node, copy.r);
  EXPECT_EQ(hit.child, copy.b);
  EXPECT_FALSE(full.FindChild(1700, 3, &hit, &missing)) << "the tree is lower than level 3";

  // B appended after its segment was read: a walk toward its keys stops at R (partial hit,
  // one level to read remotely); A's keys still hit fully.
  auto partial = copy.Make(false);
  ASSERT_TRUE(partial.FindChild(1700, 1, &hit, &missing));
  EXPECT_EQ(hit.node, copy.r);
  EXPECT_EQ(hit.level, 2);
  EXPECT_EQ(hit.child, copy.b);
  EXPECT_EQ(missing, 1u);
  ASSERT_TRUE(partial.FindChild(10, 1, &hit, &missing));
  EXPECT_EQ(hit.node, copy.a);
  EXPECT_EQ(missing, 0u);

  // A copy whose pointer led off a key's path is no longer used.
  full.Poison();
  EXPECT_FALSE(full.FindChild(700, 1, &hit, &missing));
}

// Leaves the cache has not seen split (appends past the largest key): each lookup of the
// largest key starts at the leaf the cache knows and follows a sibling link per split, all
// counted as stale reads; the operation after the count reaches refresh_hops refreshes, and
// from then on the lookup is one READ.
TEST(RfTreeRefresh, TheCacheRefreshesWhenStaleReadsReachTheThreshold) {
  Bed b = MakeBed(1000, {{"refresh_hops", "100"}});
  Value v;
  ASSERT_TRUE(b.session->Lookup(2, &v).ok());  // fills the cache
  Key next = 2001;
  // The last leaf holds 30 keys (1000 at 31 per leaf in 33 leaves); 60 appends split it at
  // the 10th, 30th and 50th: three splits the cache has not seen.
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(b.session->Insert(next++, 1).ok());
  const uint64_t stale = Property(*b.index, "dmindex.rftree.stale-reads");
  ASSERT_LT(stale, 100u);
  ASSERT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 1u);
  const uint64_t lookups_to_threshold = (100 - stale + 2) / 3;  // 3 hops each
  for (uint64_t i = 0; i < lookups_to_threshold; ++i) {
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(next - 1, &v).ok()); });
    ASSERT_EQ(c.reads, 4u) << "lookup " << i << ": the known leaf and three siblings";
  }
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 1u);
  ASSERT_TRUE(b.session->Lookup(next - 1, &v).ok());  // refreshes first
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 2u);
  auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(next - 1, &v).ok()); });
  EXPECT_EQ(c.reads, 1u) << c.ToString();
}

// At most one refresh per compute node at a time: while one session's refresh is stopped
// on its READ of the log's directory, another session of the compute node neither waits for
// it nor starts its own; it walks the tree without the cache.
TEST(RfTreeRefresh, AtMostOneRefreshRunsPerComputeNode) {
  Bed b = MakeBed(20000);
  auto other = std::move(b.index->OpenSession(0)).value();
  fabric::HeldVerb hold(
      [](const fabric::Verb& v) { return v.kind == fabric::VerbKind::kRead && v.length == alloc::AppendLog::kDirectoryBytes; },
      {{0, alloc::AppendLog::kDirectoryBytes}});
  b.fabric->SetVerbScript(&hold);
  Value v = 0;
  std::thread refresher([&] { EXPECT_TRUE(b.session->Lookup(2, &v).ok()); });
  ASSERT_TRUE(hold.WaitHeld());
  Value w = 0;
  for (Key k = 4; k < 40; k += 2) ASSERT_TRUE(other->Lookup(k, &w).ok());
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 0u) << "a second refresh ran";
  hold.Release();
  refresher.join();
  b.fabric->SetVerbScript(nullptr);
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 1u);
  auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(other->Lookup(4000, &w).ok()); });
  EXPECT_EQ(c.reads, 1u) << "the other session uses the published snapshot: " << c.ToString();
}

// refresh_min_us: however stale, a compute node refreshes at most once per interval. The
// first refresh is never held back, however soon after boot the test runs (runtime::Now()
// counts from boot; this failed in the first minute of a fresh machine: 0 refreshes, 0 stale
// reads - run it under `unshare --time --monotonic=-$(cut -d. -f1 /proc/uptime)` to see).
TEST(RfTreeRefresh, RefreshesAreRateLimited) {
  Bed b = MakeBed(1000, {{"refresh_hops", "1"}, {"refresh_min_us", "60000000"}});
  Value v;
  ASSERT_TRUE(b.session->Lookup(2, &v).ok());
  Key next = 2001;
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(b.session->Insert(next++, 1).ok());
  EXPECT_GE(Property(*b.index, "dmindex.rftree.stale-reads"), 3u);
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 1u);
}

// A search layer larger than the cache's budget is not read: the refresh is skipped (and
// counted) and traversals start at the root.
TEST(RfTreeRefresh, ASearchLayerOverTheBudgetIsNotRead) {
  Bed b = MakeBed(100000, {}, 16 << 10);
  Value v;
  auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(2, &v).ok()); });
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refresh-skipped"), 1u);
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 0u);
  EXPECT_EQ(c.reads, 2u + 4u) << "root word and directory, then root to leaf: " << c.ToString();
}

TEST(RfTree, OptionsAreChecked) {
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  auto fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  auto open = [&](std::map<std::string, std::string> knobs, KeyFormat format = KeyFormat::kU64) {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.name = "opts";
    o.key_format = format;
    o.node_bytes = 1024;  // the u64 format's default size, too small for byte keys (below)
    o.knobs = std::move(knobs);
    return designs::MakeIndex("rftree", *fabric, o);
  };
  EXPECT_TRUE(open({{"refresh_hops", "often"}}).status().IsInvalidArgument());
  EXPECT_TRUE(open({{"lock", "nic"}}).status().IsInvalidArgument());
  EXPECT_TRUE(open({{"slc_chunk_kb", "0"}}).status().IsInvalidArgument());
  EXPECT_TRUE(open({{"no_such_knob", "1"}}).status().IsInvalidArgument());
  Status hocl = open({{"hocl", "on"}}).status();
  EXPECT_TRUE(hocl.IsInvalidArgument());
  EXPECT_NE(hocl.message().find("lock=table"), std::string::npos) << hocl.ToString();
  // Byte keys: the node must hold the largest entries and the trailer (SlottedLayout::
  // MinNodeBytes); 1 KB nodes are too small for the default 255-byte keys, and the error
  // names the size needed.
  Status small = open({}, KeyFormat::kBytes).status();
  EXPECT_TRUE(small.IsInvalidArgument()) << small.ToString();
  const IndexOptions defaults;
  const uint32_t need =
      tree::SlottedLayout::MinNodeBytes(defaults.max_key_bytes, defaults.inline_value_bytes, /*trailer=*/true);
  EXPECT_NE(small.message().find(std::to_string(need)), std::string::npos) << small.ToString();
  EXPECT_NE(small.message().find("trailer"), std::string::npos) << small.ToString();
  auto first = open({});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Status other = open({{"lock", "table"}}).status();
  EXPECT_TRUE(other.IsInvalidArgument()) << "a second opener with another lock protocol: " << other.ToString();
  EXPECT_TRUE(open({{"lock", "inline"}}).ok());
}

}  // namespace
}  // namespace dmindex
