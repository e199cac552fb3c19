// Verbs per operation of the remote tree with byte-string keys (slotted nodes), from
// fabric::VerbCounts snapshot differences, and the fan-out suffix truncation buys. The
// assertions are the claims of docs/SHERMAN.md for the byte format: with the internal-node
// cache warm a lookup is exactly one READ; a write without split is two round trips
// ([CAS + READ leaf], [WRITE record + WRITE slot + WRITE unlock]); a delete writes one check
// word; internal nodes with 23..32-byte YCSB keys keep more than half the 8-byte fan-out.
//
// TreeVerbsBytes.Table and TreeVerbsBytes.FanOut print the tables of docs/SHERMAN.md;
// DMINDEX_FIGURE_KEYS sets the number of keys (default 20000: a tree of height 3; the figures
// in docs/SHERMAN.md are from 1000000, height 4).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <set>

#include "bytes_tree_env.h"

namespace dmindex::testing {
namespace {

using tree::BytesKV;
using tree::TreeOptions;

constexpr uint32_t kNodeBytes = 1024;

uint64_t FigureKeys() {
  const char* env = std::getenv("DMINDEX_FIGURE_KEYS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 20000;
}

uint64_t Mix(uint64_t x) {  // splitmix64: YCSB hashes its key numbers (FNV) the same way
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// YCSB's key shape: "user" and a hashed number, zero-padded to `bytes` (>= 8) in all.
std::string YcsbKey(uint64_t i, size_t bytes) {
  std::string digits = std::to_string(Mix(i));
  std::string k = std::string("user") + std::string(bytes - 4 > digits.size() ? bytes - 4 - digits.size() : 0, '0') + digits;
  return k.substr(0, bytes);
}
// Uniform random bytes.
std::string RandomKey(std::mt19937_64& rng, size_t bytes) {
  std::string k(bytes, '\0');
  for (char& c : k) c = static_cast<char>(rng());
  return k;
}

enum class KeyKind { kYcsb, kRandom };
const char* Name(KeyKind k) { return k == KeyKind::kYcsb ? "ycsb" : "random"; }

std::vector<std::string> MakeKeys(KeyKind kind, size_t bytes, size_t n, uint64_t seed) {
  std::set<std::string> keys;
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; keys.size() < n; ++i)
    keys.insert(kind == KeyKind::kYcsb ? YcsbKey(i + seed * 1000003, bytes) : RandomKey(rng, bytes));
  return {keys.begin(), keys.end()};
}

TreeOptions WithLimits(TreeOptions o) {
  o.node_bytes = kNodeBytes;
  o.max_key_bytes = 128;  // the longest keys a 1 KiB node takes with 8-byte values
  o.inline_value_bytes = 8;
  o.max_value_bytes = 8;
  return o;
}

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<BytesTree> tree;
  std::unique_ptr<BytesTree::Ctx> ctx;
  std::vector<std::string> keys;  // loaded, ascending
};

// `keys` bulk loaded with 8-byte values; the cache warmed by one lookup per 16 keys.
Bed MakeBed(const TreeOptions& o, std::vector<std::string> keys) {
  Bed b;
  b.fabric = MakeBytesFabric({}, 2, 4ull << 30);
  b.tree = MakeBytesTree(*b.fabric, o);
  b.ctx = NewCtx(*b.tree);
  std::vector<BytesEntry> data;
  for (const auto& k : keys) data.push_back({k, "value:00"});
  EXPECT_TRUE(b.tree->BulkLoad(*b.ctx, data).ok());
  std::string v;
  for (size_t i = 0; i < keys.size(); i += 16) EXPECT_TRUE(b.tree->Lookup(*b.ctx, keys[i], &v).ok());
  b.keys = std::move(keys);
  return b;
}

fabric::VerbCounts Measure(fabric::Fabric& f, const std::function<void()>& op) {
  fabric::VerbCounts before = f.TotalCounts();
  op();
  return f.TotalCounts() - before;
}

TEST(TreeVerbsBytes, ShermanCachedLookupIsExactlyOneLeafRead) {
  Bed b = MakeBed(WithLimits(ShermanBytes()), MakeKeys(KeyKind::kYcsb, 32, 50000, 1));
  std::mt19937_64 rng(1);
  for (int i = 0; i < 500; ++i) {
    const std::string& k = b.keys[rng() % b.keys.size()];
    std::string v;
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.tree->Lookup(*b.ctx, k, &v).ok()); });
    ASSERT_EQ(v, "value:00");
    ASSERT_EQ(c.reads, 1u) << c.ToString();
    ASSERT_EQ(c.round_trips, 1u);
    ASSERT_EQ(c.writes + c.atomics() + c.rpcs, 0u);
    ASSERT_EQ(c.read_bytes, kNodeBytes);
  }
  EXPECT_GT(b.tree->Stats().cache_hits, 0u);
}

// Bytes a write of `payload` bytes under a lock adds for its redo record: the 64-byte
// header, the payload's copy, the 8-byte clear (tree/redo_log.h).
uint64_t Redo(uint64_t payload) { return 64 + payload + 8; }

// [CAS lock + READ leaf], [WRITE record + WRITE slot + WRITE unlock]: the record of
// 2 + (key bytes after the leaf's prefix and the 4-byte head) + value bytes, the 16-byte slot
// and the lock word. A delete writes the slot's check word only.
TEST(TreeVerbsBytes, ShermanWriteWithoutSplitTakesTwoRoundTrips) {
  Bed b = MakeBed(WithLimits(ShermanBytes()), MakeKeys(KeyKind::kYcsb, 32, 50000, 2));
  std::mt19937_64 rng(2);
  for (int i = 0; i < 300; ++i) {
    const std::string& k = b.keys[rng() % b.keys.size()];
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.tree->Update(*b.ctx, k, "value:01").ok()); });
    ASSERT_EQ(c.round_trips, 2u) << c.ToString();
    ASSERT_EQ(c.cas, 1u);
    ASSERT_EQ(c.reads, 1u);
    // A leaf whose heap ran out is rewritten whole (1 KiB) once per version.
    if (c.write_bytes > Redo(kNodeBytes)) continue;
    // The record and the slot, each also copied into the holder's redo record (its header,
    // the two copies, its clear: docs/SYNCHRONIZATION.md "Lock takeover and repair"), and
    // the unlock.
    ASSERT_EQ(c.writes, 7u) << c.ToString();
    const uint64_t payload = 16u + 2u + (k.size() - 4) + 8u;
    ASSERT_LE(c.write_bytes, Redo(payload) + payload + 8u) << "redo record, record, slot, unlock";
  }
  for (int i = 0; i < 100; ++i) {
    const std::string& k = b.keys[rng() % b.keys.size()];
    std::string v;
    if (!b.tree->Lookup(*b.ctx, k, &v).ok()) continue;  // deleted before
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.tree->Delete(*b.ctx, k).ok()); });
    ASSERT_EQ(c.round_trips, 2u) << c.ToString();
    ASSERT_EQ(c.writes, 5u) << c.ToString();
    ASSERT_EQ(c.write_bytes, Redo(8) + 8u + 8u) << "redo record, the tombstone's check word, the lock word";
  }
}

TEST(TreeVerbsBytes, NaiveReadsEveryLevelAndPaysARoundTripPerVerb) {
  Bed b = MakeBed(WithLimits(NaiveBytes()), MakeKeys(KeyKind::kRandom, 16, 50000, 3));
  std::mt19937_64 rng(3);
  fabric::VerbCounts first;
  for (int i = 0; i < 200; ++i) {
    const std::string& k = b.keys[rng() % b.keys.size()];
    std::string v;
    auto c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.tree->Lookup(*b.ctx, k, &v).ok()); });
    if (i == 0) first = c;
    ASSERT_EQ(c.reads, first.reads) << "every lookup reads every level";
    ASSERT_EQ(c.round_trips, c.reads);
    ASSERT_GE(c.reads, 3u);
    c = Measure(*b.fabric, [&] { ASSERT_TRUE(b.tree->Update(*b.ctx, k, "value:02").ok()); });
    // Internal levels, then CAS, READ leaf, WRITE redo header, WRITE redo payload, WRITE
    // leaf, WRITE redo clear, WRITE unlock: one round trip each.
    ASSERT_EQ(c.round_trips, first.reads - 1 + 7) << c.ToString();
    ASSERT_EQ(c.write_bytes, Redo(kNodeBytes) + kNodeBytes + 8u) << "whole-leaf write-back";
  }
}

// Children per internal node when the nodes are full (bulk load at fill 1.0), from the
// separators the bulk loader builds: with suffix truncation (the shortest key between two
// leaves) and without (the right leaf's first key). The 8-byte format's is 61.
struct FanOut {
  double truncated = 0, full_keys = 0;
};
FanOut MeasureFanOut(const std::vector<std::string>& keys) {
  FanOut f;
  for (bool truncate : {true, false}) {
    TreeOptions o = WithLimits(ShermanBytes());
    o.suffix_truncation = truncate;
    o.bulk_fill = 1.0;
    auto layout = tree::SlottedLayout::For(o);
    EXPECT_TRUE(layout.ok());
    tree::SlottedLeafCodec leaf(*layout);
    tree::SlottedInternalCodec internal(*layout);
    std::vector<BytesEntry> entries;
    for (const auto& k : keys) entries.push_back({k, "value:00"});
    const auto runs = leaf.PlanRuns(entries, 1.0);
    std::vector<std::string> lows = {""};
    for (size_t j = 1; j + 1 < runs.size(); ++j)
      lows.push_back(leaf.Separator(entries[runs[j] - 1].key, entries[runs[j]].key));
    const auto nodes = internal.PlanRuns(lows, 1.0);
    (truncate ? f.truncated : f.full_keys) = static_cast<double>(lows.size()) / (nodes.size() - 1);
  }
  return f;
}

TEST(TreeVerbsBytes, FanOut) {
  const size_t n = FigureKeys();
  std::cout << "keys=" << n << " node_bytes=" << kNodeBytes << " fill=1.0 (u64 format: 61)\n"
            << "| keys | bytes | children per internal node, suffix truncation | without |\n"
            << "|---|---|---|---|\n";
  for (KeyKind kind : {KeyKind::kYcsb, KeyKind::kRandom}) {
    for (size_t bytes : {8, 16, 23, 32, 64, 128}) {
      if (kind == KeyKind::kYcsb && bytes < 12) continue;  // too few distinct numbers
      FanOut f = MeasureFanOut(MakeKeys(kind, bytes, n, 7));
      std::cout << std::fixed << std::setprecision(1) << "| " << Name(kind) << " | " << bytes << " | "
                << f.truncated << " | " << f.full_keys << " |\n";
      if (kind == KeyKind::kYcsb && (bytes == 23 || bytes == 32)) {
        EXPECT_GT(f.truncated, 61 / 2.0) << bytes << "-byte YCSB keys keep half the 8-byte fan-out";
      }
      EXPECT_GE(f.truncated, f.full_keys);
    }
  }
}

// Averages over random operations on a warm tree, per key size and shape; printed as the
// table of docs/SHERMAN.md.
TEST(TreeVerbsBytes, Table) {
  const uint64_t n = FigureKeys();
  constexpr int kOps = 1000;
  std::cout << "keys=" << n << " ops/row=" << kOps << " node_bytes=" << kNodeBytes
            << " bulk_fill=0.8 values=8B\n"
            << "| design | keys | bytes | op | READs | WRITEs | atomics | round trips | bytes/op |\n"
            << "|---|---|---|---|---|---|---|---|---|\n";
  for (const char* design : {"naive", "sherman"}) {
    for (KeyKind kind : {KeyKind::kRandom, KeyKind::kYcsb}) {
      for (size_t bytes : {8, 16, 32, 64, 128}) {
        if (kind == KeyKind::kYcsb && bytes < 12) continue;
        const TreeOptions o = WithLimits(std::string(design) == "naive" ? NaiveBytes() : ShermanBytes());
        Bed b = MakeBed(o, MakeKeys(kind, bytes, n, 5));
        const std::vector<std::string> fresh = MakeKeys(kind, bytes, kOps, 6);
        std::mt19937_64 rng(4);
        std::vector<BytesEntry> out;
        auto row = [&](const char* op, const std::function<void(int)>& fn) {
          fabric::VerbCounts c = Measure(*b.fabric, [&] { for (int i = 0; i < kOps; ++i) fn(i); });
          auto per = [&](uint64_t x) { return static_cast<double>(x) / kOps; };
          std::cout << std::fixed << std::setprecision(2) << "| " << design << " | " << Name(kind) << " | "
                    << bytes << " | " << op << " | " << per(c.reads) << " | " << per(c.writes) << " | "
                    << per(c.atomics()) << " | " << per(c.round_trips) << " | " << std::setprecision(0)
                    << per(c.bytes()) << " |\n";
        };
        std::string v;
        row("lookup", [&](int) { ASSERT_TRUE(b.tree->Lookup(*b.ctx, b.keys[rng() % n], &v).ok()); });
        row("insert", [&](int i) { ASSERT_TRUE(b.tree->Upsert(*b.ctx, fresh[i], "value:01").ok()); });
        row("update", [&](int) { ASSERT_TRUE(b.tree->Update(*b.ctx, b.keys[rng() % n], "value:02").ok()); });
        row("scan(100)", [&](int) {
          tree::ScanRange<BytesKV> r;
          r.start = b.keys[rng() % n];
          ASSERT_TRUE(b.tree->Scan(*b.ctx, r, 100, &out).ok());
          ASSERT_GT(out.size(), 0u);
        });
      }
    }
  }
}

}  // namespace
}  // namespace dmindex::testing
