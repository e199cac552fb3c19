// DEX with byte-string keys and values of any size (issue 12), beyond the shared harness:
//  * RandomOpsMatchMap/*: keys that share long prefixes, extend one another by a zero byte or
//    have the longest length, values from empty to 5000 bytes (inline and out of line),
//    against a std::map, through sessions on every compute node, with partitions on byte
//    boundaries, offloading forced, a 64-node cache, merges; then MultiGet and a full
//    iteration;
//  * U64KeysTakeValuesOfAnySize: the u64 format's values beyond the slot's 8 bytes, also
//    through the offload handler;
//  * UpdatesThatOverflowTheirLeavesSplitThemAndTheirParents: a longer value overflows a
//    slotted leaf on update, also under a parent without room for the separator;
//  * OffloadedInsertsSplitOnTheMemoryServer: the memory-side handler splits slotted leaves at
//    their shortest separators and answers byte-string separators (offload_wire.h);
//  * LongBoundariesRoundTripThroughThePool: a stored map longer than the first READ of
//    partition_store.h, read back by a second opener; a damaged area never validates;
//  * ReplacedValueBlocksWaitForTheLeafsWriteBack: a block an update unlinks in a cached leaf
//    is retired only once the leaf's write-back landed (pending_blocks.h), so a process that
//    takes over after a crash reads the pool's value even after the grace period passed and
//    other values took freed blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "alloc/catalog.h"
#include "designs/dex/dex_admin.h"
#include "designs/dex/partition_store.h"
#include "designs/registry.h"
#include "tree/pool_audit.h"
#include "tree/slotted_layout.h"
#include "tree/value_block.h"
#include "dex_test_env.h"

namespace dmindex {
namespace {

// 64-byte keys, 32-byte inline values in 1 KiB nodes (SlottedLayout::MinNodeBytes), 4 MiB
// chunks (a 1 MiB value's block fits).
IndexOptions BytesOptions(const std::string& name, uint32_t compute_nodes,
                          std::map<std::string, std::string> knobs = {}) {
  IndexOptions o = testing::DexTestOptions(name, compute_nodes, std::move(knobs));
  o.key_format = KeyFormat::kBytes;
  o.max_key_bytes = 64;
  o.inline_value_bytes = 32;
  o.node_bytes = 1024;
  return o;
}

std::unique_ptr<fabric::InProcFabric> MakeFabric() { return testing::DexTestFabric({}, 4 << 20); }

// Number n in one of six shapes: behind a prefix of 0, 20 or 40 bytes, as it is, or extended
// by a zero byte (odd n) or to the longest key (even n).
std::string KeyOf(uint64_t n, uint64_t shape) {
  static const std::string kPrefix(40, 'p');
  std::string k = kPrefix.substr(0, shape % 3 * 20) + std::to_string(n);
  if (shape % 6 >= 3) {
    if (n % 2 == 1) k.push_back('\0');
    else k.resize(64, 'z');
  }
  return k;
}

// prefix followed by n in decimal (appended: GCC 12 warns, falsely, of overlapping copies in
// `"literal" + std::string&&`, -Wrestrict).
std::string Numbered(std::string_view prefix, uint64_t n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

// A whole scan through the iterator returns exactly the model's pairs, in order.
void ExpectScanMatches(Session& s, const std::map<std::string, std::string>& model, const ReadOptions& ro = {}) {
  Iterator iter = s.NewIterator(ro);
  auto m = model.begin();
  for (iter.SeekToFirst(); iter.Valid(); iter.Next(), ++m) {
    ASSERT_NE(m, model.end());
    ASSERT_EQ(iter.key(), Slice(m->first));
    ASSERT_EQ(iter.value(), Slice(m->second));
  }
  ASSERT_TRUE(iter.status().ok()) << iter.status().ToString();
  EXPECT_EQ(m, model.end());
}

std::string ValueOf(uint64_t stamp, uint64_t size_pick) {
  static const size_t kSizes[] = {0, 1, 8, 31, 32, 33, 100, 1000, 5000};
  std::string v(kSizes[size_pick % std::size(kSizes)], '\0');
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<char>((stamp * 131 + i * 7) & 0xff);
  if (v.size() >= 8) std::memcpy(v.data(), &stamp, 8);
  return v;
}

struct RandomCase {
  const char* name;
  uint32_t compute_nodes;
  std::map<std::string, std::string> knobs;
  uint64_t cache_bytes;
};
void PrintTo(const RandomCase& c, std::ostream* os) { *os << c.name; }

class DexBytesRandom : public ::testing::TestWithParam<RandomCase> {};

TEST_P(DexBytesRandom, RandomOpsMatchMap) {
  const RandomCase& c = GetParam();
  auto fabric = MakeFabric();
  IndexOptions o = BytesOptions("dex-bytes", c.compute_nodes, c.knobs);
  o.cache_bytes = c.cache_bytes;
  auto index = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  std::vector<std::unique_ptr<Session>> sessions;
  for (uint32_t i = 0; i < c.compute_nodes; ++i) sessions.push_back(std::move((*index)->OpenSession(i)).value());
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(17);
  for (uint64_t op = 0; op < 12000; ++op) {
    Session& s = *sessions[rng() % sessions.size()];
    const std::string k = KeyOf(rng() % 300, rng() % 6);
    const auto it = model.find(k);
    // Phases of mostly inserts, then of mostly deletes (merges): thresholds of insert,
    // update, delete, lookup; the rest scans.
    const uint64_t dice = rng() % 100;
    const bool growing = (op / 3000) % 2 == 0;
    const uint64_t insert = growing ? 45 : 2, update = insert + 10, erase = update + (growing ? 10 : 48),
                   lookup = erase + 20;
    if (dice < insert) {
      const std::string v = ValueOf(op, rng());
      ASSERT_TRUE(s.Insert(k, v).ok()) << "op " << op;
      model[k] = v;
    } else if (dice < update) {
      const std::string v = ValueOf(op, rng());
      const Status st = s.Update(k, v);
      ASSERT_EQ(st.ok(), it != model.end()) << "op " << op << ": " << st.ToString();
      if (st.ok()) model[k] = v;
    } else if (dice < erase) {
      const Status st = s.Delete(k);
      ASSERT_EQ(st.ok(), it != model.end()) << "op " << op << ": " << st.ToString();
      model.erase(k);
    } else if (dice < lookup) {
      std::string v;
      const Status st = s.Lookup(k, &v);
      ASSERT_EQ(st.ok(), it != model.end()) << "op " << op << " " << KeyText(k) << ": " << st.ToString();
      if (st.ok()) {
        ASSERT_EQ(v, it->second) << "op " << op << " " << KeyText(k);
      }
    } else {
      // From a key or a position between keys (a prefix of one), up to 20 pairs.
      const std::string from = k.substr(0, rng() % (k.size() + 1));
      std::vector<KeyValue> got;
      ASSERT_TRUE(s.Scan(from, 20, &got).ok()) << "op " << op;
      auto m = model.lower_bound(from);
      for (const KeyValue& kv : got) {
        ASSERT_NE(m, model.end()) << "op " << op;
        ASSERT_EQ(kv.key, m->first) << "op " << op << " scan from " << KeyText(from);
        ASSERT_EQ(kv.value, m->second);
        ++m;
      }
      if (got.size() < 20) {
        ASSERT_EQ(m, model.end()) << "op " << op << " scan stopped early";
      }
    }
  }
  // MultiGet of present and absent keys; then everything by one iteration.
  std::vector<std::string> keys;
  for (uint64_t n = 0; n < 300; n += 7) keys.push_back(KeyOf(n, n % 6));
  std::vector<Slice> slices(keys.begin(), keys.end());
  std::vector<std::string> values;
  const std::vector<Status> st = sessions[0]->MultiGet(slices, &values);
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = model.find(keys[i]);
    ASSERT_EQ(st[i].ok(), it != model.end()) << KeyText(keys[i]) << ": " << st[i].ToString();
    if (st[i].ok()) {
      ASSERT_EQ(values[i], it->second);
    }
  }
  ReadOptions ro;
  ro.readahead = 37;
  ExpectScanMatches(*sessions[0], model, ro);
  if (HasFatalFailure()) return;
  const uint64_t offloads = (*index)->GetIntProperty("dmindex.dex.offloads").value_or(0);
  const uint64_t merges = (*index)->GetIntProperty("dmindex.dex.merges").value_or(0);
  if (c.knobs.count("cost_factor")) {
    EXPECT_GT(offloads, 100u) << "offloading was forced";
  }
  EXPECT_GT(merges, 0u) << "the delete phases must have merged nodes";
  std::cout << "[ dex bytes] " << c.name << ": " << model.size() << " keys, " << offloads << " offloads, "
            << merges << " merges\n";
}

INSTANTIATE_TEST_SUITE_P(
    Knobs, DexBytesRandom,
    ::testing::Values(RandomCase{"one_compute_node", 1, {}, 1 << 20},
                      RandomCase{"three_partitions", 3, {{"boundaries", "5,ppppp"}}, 1 << 20},
                      RandomCase{"offload_forced", 1, {{"cost_factor", "1e12"}, {"offload_level", "3"}, {"durability", "none"}}, 0},
                      RandomCase{"three_partitions_small_cache_no_offload", 3,
                                 {{"boundaries", "5,ppppp"}, {"offload", "off"}}, 0}),
    [](const auto& info) { return std::string(info.param.name); });

// The offload handler splits full slotted leaves on the memory server; the compute node
// links the byte-string separators it answers, or the handler links them in the subtree.
TEST(DexBytes, OffloadedInsertsSplitOnTheMemoryServer) {
  auto fabric = MakeFabric();
  IndexOptions o = BytesOptions("dex-offload-splits", 1, {{"cost_factor", "1e12"}, {"explore", "0"}, {"durability", "none"}});
  o.cache_bytes = 0;  // the minimum: 64 nodes, so most leaves are misses
  auto index = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  // "user" + 12 digits, even numbers loaded into full leaves; odd ones inserted between them.
  auto key = [](uint64_t n) {
    char b[32];
    std::snprintf(b, sizeof b, "user%012llu", static_cast<unsigned long long>(n));
    return std::string(b);
  };
  std::vector<KeyValue> load;
  std::map<std::string, std::string> model;
  for (uint64_t n = 0; n < 40000; n += 2) {
    load.push_back({key(n), Numbered("v", n)});
    model[load.back().key] = load.back().value;
  }
  ASSERT_TRUE((*index)->BulkLoad(load).ok());
  auto s = std::move((*index)->OpenSession()).value();
  std::mt19937_64 rng(5);
  for (int i = 0; i < 6000; ++i) {
    const std::string k = key(2 * (rng() % 20000) + 1);
    const std::string v = Numbered("w", i);
    ASSERT_TRUE(s->Insert(k, v).ok()) << k;
    model[k] = v;
  }
  const uint64_t splits = (*index)->GetIntProperty("dmindex.dex.offload-splits").value_or(0);
  EXPECT_GT(splits, 20u) << (*index)->GetIntProperty("dmindex.dex.offloads").value_or(0) << " offloads";
  for (const auto& [k, v] : model) {
    std::string got;
    ASSERT_TRUE(s->Lookup(k, &got).ok()) << k;
    ASSERT_EQ(got, v) << k;
  }
  ExpectScanMatches(*s, model);
}

// The u64 format takes values of any size too: up to 8 bytes in the fixed slot, longer ones
// in blocks - also through the offload handler (forced here), whose request then carries the
// block's reference and whose lookup reply names it.
TEST(DexBytes, U64KeysTakeValuesOfAnySize) {
  for (const bool offload : {false, true}) {
    auto fabric = MakeFabric();
    IndexOptions o = testing::DexTestOptions("dex-u64-values", 1);
    if (offload) {
      o.knobs = {{"cost_factor", "1e12"}, {"offload_level", "3"}, {"durability", "none"}};
      o.cache_bytes = 0;
    }
    auto index = designs::MakeIndex("dex", *fabric, o);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    auto s = std::move((*index)->OpenSession()).value();
    std::map<std::string, std::string> model;
    std::mt19937_64 rng(offload ? 3 : 4);
    static const size_t kSizes[] = {0, 1, 8, 9, 100, 1000, 5000};
    for (uint64_t op = 0; op < 8000; ++op) {
      const std::string k = U64Key(1 + rng() % 1500).str();
      const auto it = model.find(k);
      const uint64_t dice = rng() % 10;
      if (dice < 5) {
        std::string v(kSizes[rng() % std::size(kSizes)], static_cast<char>('a' + op % 26));
        if (v.size() >= 8) std::memcpy(v.data(), &op, 8);
        ASSERT_TRUE(s->Insert(k, v).ok()) << "op " << op;
        model[k] = v;
      } else if (dice < 6) {
        const Status st = s->Delete(k);
        ASSERT_EQ(st.ok(), it != model.end()) << "op " << op << ": " << st.ToString();
        model.erase(k);
      } else {
        std::string v;
        const Status st = s->Lookup(k, &v);
        ASSERT_EQ(st.ok(), it != model.end()) << "op " << op << ": " << st.ToString();
        if (st.ok()) {
          ASSERT_EQ(v, it->second) << "op " << op << " key " << KeyText(k, KeyFormat::kU64);
        }
      }
    }
    ExpectScanMatches(*s, model);
    if (HasFatalFailure()) return;
    if (offload) {
      EXPECT_GT((*index)->GetIntProperty("dmindex.dex.offloads").value_or(0), 100u);
    }
  }
}

// In the slotted format an update can overflow its leaf (a longer value). The leaf splits in
// the cache; when its parent has no room for the separator, the update's restart splits the
// parent first (the descent of an update does not split full nodes on its own, as an
// insert's does): without that, the update retried until its budget ran out.
TEST(DexBytes, UpdatesThatOverflowTheirLeavesSplitThemAndTheirParents) {
  auto fabric = MakeFabric();
  auto index = designs::MakeIndex("dex", *fabric, BytesOptions("dex-grow", 1, {{"offload", "off"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto s = std::move((*index)->OpenSession()).value();
  auto key = [](int i) {
    char b[16];
    std::snprintf(b, sizeof b, "k%07d", i);
    return std::string(b);
  };
  constexpr int kKeys = 12000;
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(s->Insert(key(i), "").ok());  // leaves of empty values
  for (int i = 0; i < kKeys; ++i) {
    const Status st = s->Update(key(i), std::string(32, static_cast<char>('a' + i % 26)));
    ASSERT_TRUE(st.ok()) << key(i) << ": " << st.ToString();
  }
  for (int i = 0; i < kKeys; i += 13) {
    std::string v;
    ASSERT_TRUE(s->Lookup(key(i), &v).ok()) << key(i);
    ASSERT_EQ(v, std::string(32, static_cast<char>('a' + i % 26)));
  }
}

// Boundaries of 200 bytes: a stored map of 7 x 202 bytes, more than the first READ takes.
TEST(DexBytes, LongBoundariesRoundTripThroughThePool) {
  auto fabric = MakeFabric();
  IndexOptions o = BytesOptions("dex-long-map", 8, {{"partitions", "8"}});
  o.max_key_bytes = 255;
  o.inline_value_bytes = 16;
  o.node_bytes = tree::SlottedLayout::MinNodeBytes(255, 16);
  std::vector<std::string> boundaries;
  for (char c = 'b'; c <= 'h'; ++c) boundaries.push_back(std::string(199, c) + '\x01');
  {
    auto index = designs::MakeIndex("dex", *fabric, o);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    auto moved = (*index)->partitioning()->Repartition(boundaries);
    ASSERT_TRUE(moved.ok()) << moved.status().ToString();
    auto s = std::move((*index)->OpenSession()).value();
    for (char c = 'a'; c <= 'h'; ++c) ASSERT_TRUE(s->Insert(std::string(250, c), std::string(1, c)).ok());
    ASSERT_TRUE((*index)->Close().ok() || true);
  }
  // A second opener reads the map back from the pool (two READs) and routes by it.
  auto again = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  Partitioning* parts = (*again)->partitioning();
  ASSERT_NE(parts, nullptr);
  for (uint32_t i = 0; i < 8; ++i) {
    const Route r = parts->RouteKey(std::string(250, static_cast<char>('a' + i)));
    EXPECT_EQ(r.compute_node, i);
    EXPECT_EQ(r.begin, i == 0 ? std::string() : boundaries[i - 1]);
    if (i < 7) {
      ASSERT_TRUE(r.end.has_value());
      EXPECT_EQ(*r.end, boundaries[i]);
    } else {
      EXPECT_FALSE(r.end.has_value());
    }
  }
  auto s = std::move((*again)->OpenSession()).value();
  std::string v;
  ASSERT_TRUE(s->Lookup(std::string(250, 'e'), &v).ok());
  EXPECT_EQ(v, "e");
  // The operator's view, then one byte of the last boundary damaged: the map no longer
  // validates (the checksum covers every area byte, also those past the first READ).
  auto ep = std::move(fabric->Connect()).value();
  auto entry = alloc::Catalog::Open(*ep, "dex-long-map");
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  auto described = designs::dex::DescribeDexIndex(*ep, *entry);
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  EXPECT_NE(described->find("compute node 7: keys [\"hhhh"), std::string::npos) << *described;
  uint64_t raw = 0;
  ASSERT_TRUE(ep->Read(entry->aux_word(0), &raw, 8).ok());
  designs::dex::PartitionStore store(GlobalAddress::FromRaw(raw));
  auto snap = store.Inspect(*ep);
  ASSERT_TRUE(snap.ok() && snap->valid);
  EXPECT_EQ(snap->boundaries, boundaries);
  const uint8_t junk = 0x5a;
  const uint64_t last_byte = designs::dex::PartitionStore::kAreaOff + 7 * 202 - 1;
  ASSERT_TRUE(ep->Write(GlobalAddress::FromRaw(raw) + last_byte, &junk, 1).ok());
  snap = store.Inspect(*ep);
  ASSERT_TRUE(snap.ok());
  EXPECT_FALSE(snap->valid);
}

// An update of an out-of-line value in a cached leaf unlinks the old block there; the pool's
// image of the leaf names it until the leaf is written back. If the block were retired at the
// update, it would be reused 2 x value_lease later, and whoever reads the pool - a process
// taking over after a crash - would find the leaf naming a block that holds another key's
// value.
TEST(DexBytes, ReplacedValueBlocksWaitForTheLeafsWriteBack) {
  auto fabric = MakeFabric();
  // Without the redo log and the background write-back: the pool's own content is the point
  // (with the log, the host replays the new value: tests/dex_durability_test.cc).
  const IndexOptions o = BytesOptions("dex-pending", 1, {{"admission", "1"}, {"offload", "off"},
                                                          {"durability", "none"}, {"writeback_ms", "0"}});
  const std::string old_value(1000, 'o');
  {
    // A first process: the key with its 1000-byte value, and more keys behind it in other
    // leaves, reach the pool (a clean close).
    auto first = designs::MakeIndex("dex", *fabric, o);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto s = std::move((*first)->OpenSession()).value();
    ASSERT_TRUE(s->Insert("key", old_value).ok());
    for (int i = 0; i < 300; ++i) ASSERT_TRUE(s->Insert(Numbered("m", 1000 + i), "small").ok());
  }
  auto dying = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  {
    auto s = std::move((*dying)->OpenSession()).value();
    std::string v;
    ASSERT_TRUE(s->Lookup("key", &v).ok());  // its leaf is cached now (admission=1)
    ASSERT_TRUE(s->Insert("key", std::string(1000, 'n')).ok());
    EXPECT_EQ((*dying)->GetIntProperty("dmindex.dex.pending-value-blocks").value_or(0), 1u);
    // Past the grace period, values of the same size class take blocks (freed ones first),
    // in leaves far from the key's.
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(s->Insert(Numbered("z", i), std::string(1000, 'x')).ok());
  }
  // It dies here, its dirty leaf never written back. The pool alone: the key's leaf names a
  // block that still holds the key's old value.
  auto ep = std::move(fabric->Connect()).value();
  auto entry = alloc::Catalog::Open(*ep, "dex-pending");
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  tree::TreeOptions t;
  t.node_bytes = o.node_bytes;
  t.max_key_bytes = o.max_key_bytes;
  t.inline_value_bytes = o.inline_value_bytes;
  t.max_value_bytes = o.max_value_bytes;
  tree::PoolContent<tree::BytesKV> pool;
  ASSERT_TRUE(tree::AuditPool(*ep, *tree::SlottedLayout::For(t), entry->root_word, &pool).ok());
  const auto in_pool = std::find_if(pool.entries.begin(), pool.entries.end(), [](const auto& e) { return e.key == "key"; });
  ASSERT_NE(in_pool, pool.entries.end());
  ASSERT_FALSE(in_pool->block.is_null());
  std::vector<std::byte> block(in_pool->block.read_bytes);
  ASSERT_TRUE(ep->Read(in_pool->block.addr, block.data(), block.size()).ok());
  std::string in_block;
  // (Asserted: a host would retry such a lookup until its budget ran out, minutes.)
  ASSERT_TRUE(tree::value_block::Decode(block.data(), in_pool->block.read_bytes, tree::value_block::OwnerOf("key"),
                                        in_pool->block.length(), &in_block))
      << "the block the pool's leaf names was reused";
  ASSERT_EQ(in_block, old_value);
  // A process hosting the dead one's compute node reads exactly that.
  uint64_t raw = 0;
  ASSERT_TRUE(ep->Read(entry->aux_word(0), &raw, 8).ok());
  auto snap = designs::dex::PartitionStore(GlobalAddress::FromRaw(raw)).Inspect(*ep);
  ASSERT_TRUE(snap.ok() && snap->leases.size() == 1);
  ASSERT_TRUE(designs::dex::ReleaseDexHost(*ep, *entry, 0, snap->leases[0]).ok());
  auto host = designs::MakeIndex("dex", *fabric, o);
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  std::string v;
  const Status found = std::move((*host)->OpenSession()).value()->Lookup("key", &v);
  ASSERT_TRUE(found.ok()) << found.ToString();
  EXPECT_EQ(v, old_value);
}

}  // namespace
}  // namespace dmindex
