// Byte-string keys and values at the public API: the key formats' rules and their messages,
// the u64 encoding, readable key printing, the iterator over byte keys that are prefixes of
// one another, the schema stored in the catalog, and the checkers and concurrent workload
// on byte keys (over a map index: the layers above the designs, by themselves).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "alloc/catalog.h"
#include "check/checker.h"
#include "check/workload.h"
#include "common/key_text.h"
#include "map_index.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

IndexOptions Bytes(uint32_t max_key = 255, uint32_t max_value = 1u << 20) {
  IndexOptions o;
  o.key_format = KeyFormat::kBytes;
  o.max_key_bytes = max_key;
  o.max_value_bytes = max_value;
  o.compute_nodes = 8;
  return o;
}

std::unique_ptr<Session> SessionOf(Index& index) { return std::move(index.OpenSession(0)).value(); }

TEST(ApiKeys, U64KeysSortAsTheirIntegers) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 10000; ++i) {
    const uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
    EXPECT_EQ(U64Key(a).str() < U64Key(b).str(), a < b);
    EXPECT_EQ(U64Key::Decode(U64Key(a)), a);
  }
}

TEST(ApiKeys, BytesFormatRulesNameTheirLimits) {
  testing::MapIndex index(Bytes(16, 100));
  auto s = SessionOf(index);
  Status empty = s->Insert("", "v");
  EXPECT_TRUE(empty.IsInvalidArgument());
  EXPECT_NE(empty.message().find("1 .. 16"), std::string::npos) << empty.ToString();
  Status long_key = s->Insert(std::string(17, 'k'), "v");
  EXPECT_TRUE(long_key.IsInvalidArgument());
  EXPECT_NE(long_key.message().find("max_key_bytes = 16"), std::string::npos) << long_key.ToString();
  Status long_value = s->Insert("k", std::string(101, 'v'));
  EXPECT_TRUE(long_value.IsInvalidArgument());
  EXPECT_NE(long_value.message().find("max_value_bytes = 100"), std::string::npos) << long_value.ToString();
  // Nothing was stored by the refused calls; the limits themselves are fine.
  std::string v;
  EXPECT_TRUE(s->Lookup(std::string(16, 'k'), &v).IsNotFound());
  ASSERT_TRUE(s->Insert(std::string(16, 'k'), std::string(100, 'v')).ok());
  ASSERT_TRUE(s->Insert(std::string(1, '\0'), "").ok());  // any byte, an empty value
  ASSERT_TRUE(s->Lookup(std::string(1, '\0'), &v).ok());
  EXPECT_EQ(v, "");
  // The u64 "reserved" integers are ordinary keys in the bytes format.
  EXPECT_TRUE(s->Insert(U64Key(0), "zero").ok());
  EXPECT_TRUE(s->Insert(U64Key(~uint64_t{0}), "max").ok());
}

TEST(ApiKeys, U64FormatTakesEightByteKeysOnly) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  testing::MapIndex index(o);
  auto s = SessionOf(index);
  EXPECT_TRUE(s->Insert("1234567", U64Key(1)).IsInvalidArgument());
  Status reserved = s->Insert(U64Key(0), U64Key(1));
  EXPECT_TRUE(reserved.IsInvalidArgument());
  EXPECT_NE(reserved.message().find("reserved"), std::string::npos);
  ASSERT_TRUE(s->Insert(7, 70).ok());
  uint64_t v = 0;
  ASSERT_TRUE(s->Lookup(7, &v).ok());
  EXPECT_EQ(v, 70u);
  // The integer Lookup reads 8-byte values only.
  ASSERT_TRUE(s->Insert(U64Key(8), "short").ok());
  EXPECT_TRUE(s->Lookup(8, &v).IsInvalidArgument());
}

TEST(ApiKeys, IteratorContinuesAfterKeysThatArePrefixesOfOthers) {
  testing::MapIndex index(Bytes());
  auto s = SessionOf(index);
  // Keys that extend one another by any byte, 0x00 and 0xff included.
  std::vector<std::string> keys = {"a", std::string("a\0", 2), std::string("a\0\0", 3), "a\x01", "ab",
                                   "abc", "a\xff", "b", std::string(255, 'z'), std::string(254, 'z')};
  for (const std::string& k : keys) ASSERT_TRUE(s->Insert(k, "v" + k).ok());
  std::sort(keys.begin(), keys.end());
  for (size_t readahead : {1, 2, 3, 0}) {
    ReadOptions ro;
    ro.readahead = readahead;  // 1: every key continues a batch after the one before
    Iterator it = s->NewIterator(ro);
    std::vector<std::string> got;
    for (it.SeekToFirst(); it.Valid(); it.Next()) {
      got.emplace_back(it.key());
      EXPECT_EQ(it.value(), "v" + got.back());
    }
    ASSERT_TRUE(it.status().ok());
    EXPECT_EQ(got, keys) << "readahead " << readahead;
  }
  ReadOptions ro;
  ro.upper_bound = "ab";  // half-open: "ab" itself is not returned
  Iterator it = s->NewIterator(ro);
  std::vector<std::string> got;
  for (it.Seek(std::string("a\0", 2)); it.Valid(); it.Next()) got.emplace_back(it.key());
  EXPECT_EQ(got, (std::vector<std::string>{std::string("a\0", 2), std::string("a\0\0", 3), "a\x01"}));
}

TEST(ApiKeys, KeysPrintReadably) {
  EXPECT_EQ(KeyText("user42"), "\"user42\"");
  EXPECT_EQ(KeyText(std::string("a\0\xff\\", 4)), "\"a\\x00\\xff\\\\\"");
  EXPECT_EQ(KeyText(U64Key(42), KeyFormat::kU64), "42");
  const std::string text = KeyText(std::string(1000, 'x'));
  EXPECT_LT(text.size(), 120u);
  EXPECT_NE(text.find("(1000 bytes)"), std::string::npos) << text;
}

TEST(ApiKeys, TheCatalogKeepsAnIndexsSchema) {
  auto fabric = testing::MakeTestFabric("inproc");
  auto ep = std::move(fabric->Connect()).value();
  bool created = false;
  alloc::CatalogSpec spec{"sherman", 1024, alloc::KeySchema::Of(Bytes(32))};
  ASSERT_TRUE(alloc::Catalog::OpenOrCreate(*ep, "keys", spec, &created).ok());
  auto again = alloc::Catalog::OpenOrCreate(*ep, "keys", spec, &created);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->schema.format, KeyFormat::kBytes);
  EXPECT_EQ(again->schema.max_key_bytes, 32u);
  spec.schema = alloc::KeySchema::Of(Bytes(64));
  Status other = alloc::Catalog::OpenOrCreate(*ep, "keys", spec, &created).status();
  EXPECT_TRUE(other.IsInvalidArgument());
  EXPECT_NE(other.message().find("byte keys of up to 32 bytes"), std::string::npos) << other.ToString();
  // A u64 opener's byte-format fields do not matter: u64 schemas are fixed.
  IndexOptions a, b;
  a.key_format = b.key_format = KeyFormat::kU64;
  b.max_key_bytes = 7;
  b.inline_value_bytes = 999;
  EXPECT_EQ(alloc::KeySchema::Of(a), alloc::KeySchema::Of(b));
}

TEST(ApiKeys, CheckersAndWorkloadHandleByteKeys) {
  for (uint32_t max_key : {12u, 255u}) {
    testing::MapIndex index(Bytes(max_key, 4096));
    check::WorkloadOptions w;
    w.threads = 4;
    w.keys = 64;
    w.ops_per_thread = 400;
    check::ConcurrentWorkload workload(index, w);
    ASSERT_TRUE(workload.Preload().ok());
    // The keys the workload uses: shared prefixes, extensions by a zero byte, longest keys.
    size_t longest = 0, zero_ended = 0;
    for (uint32_t i = 0; i < w.keys; ++i) {
      const std::string k = workload.KeyAt(i);
      EXPECT_LE(k.size(), max_key);
      longest += k.size() == max_key;
      zero_ended += k.back() == '\0';
    }
    EXPECT_GT(longest, 0u);
    EXPECT_GT(zero_ended, 0u);
    auto report = check::RunCheckedRounds(workload, 3);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->ok()) << report->ToString(3);
    EXPECT_EQ(workload.errors(), 0u) << workload.first_error();
    EXPECT_GT(report->point_ops_checked, 1000u);
    EXPECT_GT(report->scans_checked, 50u);
  }
}

}  // namespace
}  // namespace dmindex
