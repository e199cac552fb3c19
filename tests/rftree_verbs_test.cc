// Verbs per operation of RF-tree (docs/RFTREE.md), from fabric::VerbCounts snapshot
// differences, as claims about the design:
//  * with a fresh search-layer cache a lookup is one READ of the leaf;
//  * a write without split under the inline lock is READ, CAS, then [WRITE redo record (header,
//    copy), WRITE leaf, WRITE redo clear, WRITE lock word] in one in-order batch: three round
//    trips, 1024 + 8 + 64 + 1016 + 1016 + 8 + 8 bytes;
//  * under the core's lock table with Sherman's combination it is two round trips;
//  * a refresh is two round trips: [root word, log directory], then every chunk of the log;
//  * after k splits of its leaf's range the cache has not seen, a lookup reads k + 1 leaves.
// RfTreeVerbs.Table measures the table of docs/RFTREE.md beside naive and Sherman, asserts
// it and that the doc shows it (DMINDEX_FIGURE_KEYS=<n>: prints it for n keys instead).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "designs/registry.h"
#include "fabric/inproc/inproc_fabric.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using Key = uint64_t;
using Value = uint64_t;

constexpr uint32_t kNodeBytes = 1024;
constexpr uint32_t kTrailer = 8;

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> session;
  uint64_t keys = 0;
};

// Keys 2, 4, ..., 2n bulk loaded into 1 KB nodes on two memory nodes; one lookup fills the
// search-layer cache. refresh_hops=off unless the knobs say otherwise: the rows measure
// operations, not refreshes.
Bed MakeBed(uint64_t keys, std::map<std::string, std::string> knobs = {}, bool warm = true,
            const std::string& design = "rftree") {
  Bed b;
  fabric::InProcOptions fo;
  fo.memory_nodes = 2;
  fo.pool_bytes = 4ull << 30;
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.node_bytes = kNodeBytes;
  o.knobs = std::move(knobs);
  if (design == "rftree") o.knobs.emplace("refresh_hops", "off");
  b.index = std::move(designs::MakeIndex(design, *b.fabric, o)).value();
  std::vector<testing::U64Pair> data;
  for (uint64_t k = 1; k <= keys; ++k) data.push_back({2 * k, k});
  EXPECT_TRUE(testing::BulkLoadU64(*b.index, data).ok());
  b.session = std::move(b.index->OpenSession(0)).value();
  Value v;
  // Warm: one lookup per leaf fills Sherman's cache as it fills the search-layer cache.
  if (warm) {
    for (uint64_t k = 1; k <= keys; k += 16) EXPECT_TRUE(b.session->Lookup(2 * k, &v).ok());
  }
  b.keys = keys;
  return b;
}

fabric::VerbCounts Measure(fabric::Fabric& f, const std::function<void()>& op) {
  fabric::VerbCounts before = f.TotalCounts();
  op();
  return f.TotalCounts() - before;
}

uint64_t Property(const Index& index, const char* name) { return index.GetIntProperty(name).value_or(~0ull); }

TEST(RfTreeVerbs, FreshCacheLookupIsExactlyOneLeafRead) {
  Bed b = MakeBed(100000);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 500; ++i) {
    Key k = 2 * (1 + rng() % b.keys);
    Value v = 0;
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(k, &v).ok()); });
    ASSERT_EQ(v, k / 2);
    ASSERT_EQ(c.reads, 1u) << c.ToString();
    ASSERT_EQ(c.round_trips, 1u);
    ASSERT_EQ(c.writes + c.atomics() + c.rpcs, 0u);
    ASSERT_EQ(c.read_bytes, kNodeBytes);
  }
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 1u);
}

TEST(RfTreeVerbs, InlineLockWriteIsReadCasAndOneInOrderBatch) {
  Bed b = MakeBed(100000);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 300; ++i) {
    Key k = 2 * (1 + rng() % b.keys);
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Update(k, i).ok()); });
    // READ, CAS, [WRITE redo header, WRITE redo copy, WRITE leaf, WRITE redo clear, WRITE
    // lock word] (tree/redo_log.h: the record covers the leaf up to its trailer)
    ASSERT_EQ(c.round_trips, 3u) << c.ToString();
    ASSERT_EQ(c.reads, 1u);
    ASSERT_EQ(c.cas, 1u);
    ASSERT_EQ(c.writes, 5u);
    ASSERT_EQ(c.read_bytes, kNodeBytes);
    ASSERT_EQ(c.write_bytes, 64u + 2 * (kNodeBytes - kTrailer) + 8u + kTrailer)
        << "the leaf whole and its redo record, its lock word last";
  }
  // An update of an absent key reads the leaf and stops: no lock, no write.
  auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Update(3, 1).IsNotFound()); });
  EXPECT_EQ(c.round_trips, 1u) << c.ToString();
  EXPECT_EQ(c.atomics() + c.writes, 0u);
}

// A leaf split under the inline lock: READ, CAS, the right leaf (its own round trip when the
// placer puts it on the other memory node, not here), [redo, left leaf, redo clear, trailer], then the
// parent in the core's lock table: its CAS + READ at the end of the leaf's batch (behind the
// trailer's release, as a Sherman split's behind the leaf's unlock), then [redo, parent, redo
// clear, unlock] posted without waiting (TreeOptions::post_separator, as Sherman's). Before
// the parent's lock combined, its five WRITEs and its CAS and READ took a round trip each
// (7 instead of 2); before it rode in the leaf's batch and the last batch went unwaited, 5.
TEST(RfTreeVerbs, InlineLockLeafSplitCombinesTheParentsLock) {
  // The first leaf: keys 2..64 in 32 of 40 slots; its parent is in the search-layer cache.
  Bed b = MakeBed(100000);
  for (Key k = 3; k <= 17; k += 2) ASSERT_TRUE(b.session->Insert(k, 1).ok()) << k;  // fills it
  auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Insert(19, 1).ok()); });
  EXPECT_EQ(c.cas, 2u) << c.ToString();
  EXPECT_EQ(c.reads, 2u);
  EXPECT_EQ(c.writes, 11u);  // right leaf; redo header, copy, left leaf, clear, trailer; the parent's five
  // READ, CAS, [right + left leaf batch + CAS + READ parent] (the placer put this right leaf
  // on the leaf's memory node); [parent batch] unwaited: no more than a write that fits
  EXPECT_EQ(c.round_trips, 3u) << c.ToString();
  // The parent got the separator: a key of the right half is one READ away (the lookup reaps
  // the unwaited batch first, which costs no verb).
  Value v = 0;
  c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(64, &v).ok()); });
  EXPECT_EQ(c.round_trips, 1u) << c.ToString();
}

TEST(RfTreeVerbs, TableLockWithCombinationIsTwoRoundTrips) {
  Bed b = MakeBed(100000, {{"lock", "table"}, {"combine", "on"}});
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300; ++i) {
    Key k = 2 * (1 + rng() % b.keys);
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Update(k, i).ok()); });
    // [CAS + READ leaf], [WRITE redo header, WRITE redo copy, WRITE leaf, WRITE redo clear,
    // WRITE unlock] (tree/redo_log.h)
    ASSERT_EQ(c.round_trips, 2u) << c.ToString();
    ASSERT_EQ(c.cas, 1u);
    ASSERT_EQ(c.writes, 5u);
    ASSERT_EQ(c.write_bytes, 64u + 2 * kNodeBytes + 8u + 8u)
        << "the sorted leaf whole, its redo record and the lock word";
  }
}

// The first operation after a bulk load refreshes: [root word, directory], then the log's
// segments in chunks of slc_chunk_kb, all in one unordered batch; then its own leaf READ.
TEST(RfTreeVerbs, RefreshIsTwoRoundTripsOfChunks) {
  for (uint64_t chunk_kb : {16u, 256u}) {
    Bed b = MakeBed(100000, {{"slc_chunk_kb", std::to_string(chunk_kb)}}, /*warm=*/false);
    Value v;
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(2, &v).ok()); });
    const uint64_t nodes = Property(*b.index, "dmindex.rftree.slc-nodes");
    ASSERT_GT(nodes, 60u);
    // Internal nodes alternate between the two memory nodes, one segment each.
    uint64_t chunks = 0;
    for (uint64_t n : {(nodes + 1) / 2, nodes / 2}) chunks += (n * kNodeBytes + (chunk_kb << 10) - 1) / (chunk_kb << 10);
    EXPECT_EQ(c.round_trips, 2u + 1u) << c.ToString();
    EXPECT_EQ(c.reads, 2u + chunks + 1u) << c.ToString();
    EXPECT_EQ(c.read_bytes, 8u + 4096u + nodes * kNodeBytes + kNodeBytes);
    EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 1u);
  }
}

// Leaves the cache has not seen split: appending past the largest key splits the last leaf
// again and again (its right half takes 20 of 40 entries), and a lookup of the largest key
// starts at the leaf the cache knows and follows one sibling link per split. Returns the
// verbs of that lookup after k = 1, 2, ... `max_k` splits.
std::vector<fabric::VerbCounts> LookupsAfterUnrefreshedSplits(uint64_t max_k) {
  Bed b = MakeBed(1000);
  Key next = 2 * b.keys + 1;
  // 1000 keys at 31 per leaf (80% of 39) make 33 leaves of 30 or 31 keys: the last one has 30.
  uint64_t in_last = 30;
  std::vector<fabric::VerbCounts> out;
  for (uint64_t k = 1; k <= max_k; ++k) {
    for (;;) {  // append until the last leaf splits once more
      EXPECT_TRUE(b.session->Insert(next++, 1).ok());
      if (++in_last == 40) {
        in_last = 20;
        break;
      }
    }
    Value v;
    out.push_back(Measure(*b.fabric, [&] { EXPECT_TRUE(b.session->Lookup(next - 1, &v).ok()); }));
  }
  EXPECT_EQ(Property(*b.index, "dmindex.rftree.refreshes"), 1u) << "refresh_hops=off: filled once";
  return out;
}

TEST(RfTreeVerbs, LookupAfterKUnrefreshedSplitsReadsKPlusOneLeaves) {
  const std::vector<fabric::VerbCounts> after = LookupsAfterUnrefreshedSplits(4);
  for (uint64_t k = 1; k <= after.size(); ++k) {
    EXPECT_EQ(after[k - 1].reads, k + 1) << "after " << k << " splits: " << after[k - 1].ToString();
    EXPECT_EQ(after[k - 1].round_trips, k + 1);
    EXPECT_EQ(after[k - 1].read_bytes, (k + 1) * kNodeBytes);
  }
}

// The table of docs/RFTREE.md, "Verbs per operation": averages over random operations on a
// warm tree of 200000 keys, RF-tree beside naive and Sherman in one run. Every count is exact
// and the run deterministic (one session, seeded keys), so the test asserts the table row by
// row, and that docs/RFTREE.md shows these rows. DMINDEX_FIGURE_KEYS=<n> prints the table for
// n keys instead (asserting nothing).
const char* const kTable[] = {
    "| naive | lookup | 4.00 | 0.00 | 0.00 | 4.00 | 4096 |",
    "| naive | update | 4.00 | 5.00 | 1.00 | 10.00 | 6232 |",
    "| naive | insert | 4.00 | 5.00 | 1.00 | 10.00 | 6232 |",
    "| naive | insert (append, splits) | 4.15 | 5.31 | 1.05 | 10.51 | 6551 |",
    "| naive | scan(100) | 7.07 | 0.00 | 0.00 | 7.07 | 7240 |",
    "| sherman | lookup | 1.00 | 0.00 | 0.00 | 1.00 | 1024 |",
    "| sherman | update | 1.00 | 5.00 | 1.00 | 2.00 | 1160 |",
    "| sherman | insert | 1.00 | 5.00 | 1.00 | 2.00 | 1160 |",
    "| sherman | insert (append, splits) | 1.05 | 5.31 | 1.05 | 2.00 | 1475 |",
    "| sherman | scan(100) | 4.93 | 0.00 | 0.00 | 1.11 | 5050 |",
    "| rftree | lookup | 1.00 | 0.00 | 0.00 | 1.00 | 1024 |",
    "| rftree | update | 1.00 | 5.00 | 1.00 | 3.00 | 3144 |",
    "| rftree | insert | 1.00 | 5.00 | 1.00 | 3.00 | 3144 |",
    "| rftree | insert (append, splits) | 51.16 | 5.41 | 1.16 | 53.29 | 54668 |",
    "| rftree | scan(100) | 4.93 | 0.00 | 0.00 | 1.15 | 5052 |",
    "| rftree:refresh_hops=auto | insert (append, splits) | 2.88 | 5.31 | 1.06 | 4.89 | 7034 |",
    "| rftree:lock=table:combine=off | lookup | 1.00 | 0.00 | 0.00 | 1.00 | 1024 |",
    "| rftree:lock=table:combine=off | update | 1.00 | 5.00 | 1.00 | 7.00 | 3160 |",
    "| rftree:lock=table:combine=off | insert | 1.00 | 5.00 | 1.00 | 7.00 | 3160 |",
    "| rftree:lock=table:combine=off | insert (append, splits) | 51.13 | 55.39 | 51.14 | 157.66 | 55461 |",
    "| rftree:lock=table:combine=off | scan(100) | 4.93 | 0.00 | 0.00 | 1.15 | 5052 |",
    "| rftree:lock=table:combine=on:hocl=on | lookup | 1.00 | 0.00 | 0.00 | 1.00 | 1024 |",
    "| rftree:lock=table:combine=on:hocl=on | update | 1.00 | 5.00 | 1.00 | 2.00 | 3160 |",
    "| rftree:lock=table:combine=on:hocl=on | insert | 1.00 | 5.00 | 1.00 | 2.00 | 3160 |",
    "| rftree:lock=table:combine=on:hocl=on | insert (append, splits) | 51.16 | 55.41 | 51.16 | 102.29 | 55484 |",
    "| rftree:lock=table:combine=on:hocl=on | scan(100) | 4.93 | 0.00 | 0.00 | 1.15 | 5052 |",
    "| rftree | SLC refresh (139 internal nodes) | 4 | 0 | 0 | 2 | 146440 |",
    "| rftree | lookup after 1 unrefreshed split(s) of its leaf | 2 | 0 | 0 | 2 | 2048 |",
    "| rftree | lookup after 2 unrefreshed split(s) of its leaf | 3 | 0 | 0 | 3 | 3072 |",
    "| rftree | lookup after 3 unrefreshed split(s) of its leaf | 4 | 0 | 0 | 4 | 4096 |",
    "| rftree | lookup after 4 unrefreshed split(s) of its leaf | 5 | 0 | 0 | 5 | 5120 |",
};

TEST(RfTreeVerbs, Table) {
  const char* env = std::getenv("DMINDEX_FIGURE_KEYS");
  const uint64_t keys = env != nullptr ? std::strtoull(env, nullptr, 10) : 200000;
  const bool assert_table = env == nullptr;
  constexpr int kOps = 2000;
  std::cout << "keys=" << keys << " ops/row=" << kOps << " node_bytes=1024 bulk_fill=0.8\n"
            << "| design | op | READs | WRITEs | atomics | round trips | bytes |\n"
            << "|---|---|---|---|---|---|---|\n";
  std::vector<std::string> rows;
  auto print = [&](const std::string& row) {
    std::cout << row << "\n";
    rows.push_back(row);
  };
  // RF-tree's rows measure operations with a cache filled once (refresh_hops=off, MakeBed):
  // its append row is what splits cost a cache never refreshed; the refresh_hops=auto row
  // adds the refreshes the default makes.
  struct Variant {
    const char* label;
    const char* design;
    std::map<std::string, std::string> knobs;
    bool append_only = false;
  };
  const Variant variants[] = {
      {"naive", "naive", {}},
      {"sherman", "sherman", {}},
      {"rftree", "rftree", {}},
      {"rftree:refresh_hops=auto", "rftree", {{"refresh_hops", "auto"}}, true},
      {"rftree:lock=table:combine=off", "rftree", {{"lock", "table"}, {"combine", "off"}}},
      {"rftree:lock=table:combine=on:hocl=on", "rftree", {{"lock", "table"}, {"combine", "on"}, {"hocl", "on"}}},
  };
  for (const Variant& variant : variants) {
    Bed b = MakeBed(keys, variant.knobs, true, variant.design);
    std::mt19937_64 rng(4);
    std::vector<testing::U64Pair> out;
    auto row = [&](const char* op, int n, const std::function<void()>& fn) {
      fabric::VerbCounts c = Measure(*b.fabric, [&] { for (int i = 0; i < n; ++i) fn(); });
      auto per = [&](uint64_t x) { return static_cast<double>(x) / n; };
      std::ostringstream line;
      line << std::fixed << std::setprecision(2) << "| " << variant.label << " | " << op << " | "
           << per(c.reads) << " | " << per(c.writes) << " | " << per(c.atomics()) << " | "
           << per(c.round_trips) << " | " << std::setprecision(0) << per(c.bytes()) << " |";
      print(line.str());
    };
    Value v;
    Key next = 2 * keys + 1;  // ascending past the largest key: the last leaf splits often
    if (variant.append_only) {
      row("insert (append, splits)", kOps, [&] { ASSERT_TRUE(b.session->Insert(next++, 7).ok()); });
      continue;
    }
    row("lookup", kOps, [&] { ASSERT_TRUE(b.session->Lookup(2 * (1 + rng() % keys), &v).ok()); });
    row("update", kOps, [&] { ASSERT_TRUE(b.session->Update(2 * (1 + rng() % keys), 9).ok()); });
    row("insert", kOps, [&] { ASSERT_TRUE(b.session->Insert(2 * (rng() % keys) + 1, 7).ok()); });
    row("insert (append, splits)", kOps, [&] { ASSERT_TRUE(b.session->Insert(next++, 7).ok()); });
    row("scan(100)", kOps, [&] {
      ASSERT_TRUE(testing::ScanU64(*b.session, 2 * (1 + rng() % keys), 100, &out).ok());
      ASSERT_GT(out.size(), 0u);
    });
  }
  // A refresh of the whole search layer, on a fresh index: its first operation minus a lookup.
  Bed b = MakeBed(keys, {}, /*warm=*/false);
  Value v;
  fabric::VerbCounts c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.session->Lookup(2, &v).ok()); });
  print("| rftree | SLC refresh (" + std::to_string(Property(*b.index, "dmindex.rftree.slc-nodes")) +
        " internal nodes) | " + std::to_string(c.reads - 1) + " | 0 | 0 | " +
        std::to_string(c.round_trips - 1) + " | " + std::to_string(c.bytes() - kNodeBytes) + " |");
  const std::vector<fabric::VerbCounts> after = LookupsAfterUnrefreshedSplits(4);
  for (size_t k = 1; k <= after.size(); ++k) {
    const fabric::VerbCounts& a = after[k - 1];
    print("| rftree | lookup after " + std::to_string(k) + " unrefreshed split(s) of its leaf | " +
          std::to_string(a.reads) + " | 0 | 0 | " + std::to_string(a.round_trips) + " | " +
          std::to_string(a.bytes()) + " |");
  }
  if (!assert_table) return;

  EXPECT_EQ(rows, std::vector<std::string>(std::begin(kTable), std::end(kTable)))
      << "the verbs per operation changed: update kTable and docs/RFTREE.md from the table above";
  std::ifstream doc(std::string(DMINDEX_SOURCE_DIR) + "/docs/RFTREE.md");
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty()) << "docs/RFTREE.md not found";
  for (const char* row : kTable) EXPECT_NE(text.find(row), std::string::npos) << "docs/RFTREE.md lacks: " << row;
}

}  // namespace
}  // namespace dmindex
