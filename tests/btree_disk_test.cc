// btree-disk (designs/btreedisk): pages written back on eviction and read back, through the OS
// page cache and with direct I/O (O_DIRECT), with values in the value log; what the harness
// checks with a small pool, here with the file's counters showing the pages went to disk.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "api/cluster_access.h"
#include "harness_config.h"

namespace dmindex {
namespace {

class BtreeDiskTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BtreeDiskTest, EvictedPagesAndLoggedValuesReadBack) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.design = "btree-disk";
  o.knobs = {{"limit_mb", "0.25"}, {"direct", GetParam()}};  // 64 pages of 4 KiB
  o.inline_value_bytes = 16;
  auto index = Index::Open(o, ClusterOver(testing::MakeHarnessFabric({})));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto s = std::move((*index)->OpenSession()).value();
  std::map<uint64_t, std::string> model;
  std::mt19937_64 rng(3);
  for (uint64_t i = 0; i < 6000; ++i) {
    const uint64_t k = 1 + rng() % 1000000;
    // Every tenth value too long for a leaf: it goes to the value log.
    const std::string v = i % 10 == 0 ? std::string(100, static_cast<char>('a' + i % 26)) : U64Key(i).str();
    ASSERT_TRUE(s->Insert(U64Key(k), v).ok());
    model[k] = v;
  }
  for (const auto& [k, v] : model) {
    std::string got;
    ASSERT_TRUE(s->Lookup(U64Key(k), &got).ok()) << k;
    ASSERT_EQ(got, v) << k;
  }
  std::vector<KeyValue> all;
  ASSERT_TRUE(s->Scan(U64Key(1), 1u << 20, &all).ok());
  EXPECT_EQ(all.size(), model.size());
  EXPECT_GT(*(*index)->GetIntProperty("dmindex.btree-disk.page-writes"), 0u);
  EXPECT_GT(*(*index)->GetIntProperty("dmindex.btree-disk.page-reads"), 0u);
  EXPECT_GT(*(*index)->GetIntProperty("dmindex.btree-disk.value-log-bytes"), 0u);
  s.reset();
  EXPECT_TRUE((*index)->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(Io, BtreeDiskTest, ::testing::Values("off", "on"),
                         [](const auto& info) { return info.param == "on" ? std::string("direct") : std::string("cached"); });

TEST(BtreeDiskOptionsTest, PagesTooSmallAndDirectIoOnOddPagesAreNamed) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.design = "btree-disk";
  o.key_format = KeyFormat::kBytes;
  o.max_key_bytes = 1024;
  o.knobs = {{"page_kb", "2"}};
  auto small = Index::Open(o, ClusterOver(testing::MakeHarnessFabric({})));
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("need at least"), std::string::npos) << small.status().ToString();
  IndexOptions d;
  d.key_format = KeyFormat::kU64;
  d.design = "btree-disk";
  d.knobs = {{"page_kb", "1"}, {"direct", "on"}};
  auto odd = Index::Open(d, ClusterOver(testing::MakeHarnessFabric({})));
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("multiple of 4 KiB"), std::string::npos) << odd.status().ToString();
}

}  // namespace
}  // namespace dmindex
