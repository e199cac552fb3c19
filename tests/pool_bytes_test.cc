// Every design's memory figures follow its data (issue 26, item 1): Stats().pool_bytes is what
// the index holds in the pool - nodes, value blocks, logs, models; blocks retired and not yet
// freed count, freed ones do not - not the memory servers' chunks it was handed (32 MB each
// here, which made a 5,000-key and a 20,000-key tree look the same size), and for designs in
// this process's memory, Stats().cache_bytes is the index's own bytes. Checked for every
// registered design that keeps its index in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "designs/registry.h"
#include "harness_config.h"
#include "tree/node_layout.h"
#include "tree/redo_log.h"
#include "tree/key_traits.h"

namespace dmindex {
namespace {

constexpr uint32_t kNodeBytes = 1024;
constexpr uint64_t kChunkBytes = 32ull << 20;

// Designs whose memory is a configured budget (a buffer pool, a store's caches, a memory limit)
// rather than the index: their figures do not follow the keys.
bool MemoryIsABudget(const std::string& design) {
  const std::vector<std::string> limited = designs::MemoryLimitedDesigns();
  return std::find(limited.begin(), limited.end(), design) != limited.end();
}

// The B-link tree designs: every pool byte of a u64 index with 8-byte values is a node.
bool NodesOnly(const std::string& design) { return design == "naive" || design == "sherman" || design == "rftree"; }

class PoolBytesTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (MemoryIsABudget(GetParam())) GTEST_SKIP() << GetParam() << "'s memory is a budget it is given, not its data";
    fabric_ = testing::MakeHarnessFabric({}, kChunkBytes);
    IndexOptions o;
    o.name = "pool-bytes";
    o.node_bytes = kNodeBytes;
    o.key_format = KeyFormat::kU64;  // u64 keys, 8-byte values (byte keys are the default now)
    o.max_key_bytes = kU64KeyBytes;
    auto index = designs::MakeIndex(GetParam(), *fabric_, o);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(index).value();
    auto s = index_->OpenSession(0);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(s).value();
    keys_.resize(20'000);
    std::iota(keys_.begin(), keys_.end(), 1);
    std::shuffle(keys_.begin(), keys_.end(), std::mt19937_64(7));
  }
  void TearDown() override {
    session_.reset();
    index_.reset();
  }
  // Inserts keys_[from, to) with 8-byte values.
  void Insert(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) ASSERT_TRUE(session_->Insert(U64Key(keys_[i]), U64Key(i)).ok()) << i;
  }
  // The index's bytes: in the pool for designs that live there, else in this process.
  uint64_t Memory() const {
    const IndexStats s = index_->Stats();
    // DEX's redo logs are rings of a fixed size per compute node (docs/DEX.md, "Durability"):
    // pool bytes, but not the keys'.
    const uint64_t fixed = index_->GetIntProperty("dmindex.dex.log-ring-bytes").value_or(0);
    if (designs::SharedAcrossProcesses(GetParam()).ok()) return s.pool_bytes - fixed;
    EXPECT_EQ(s.pool_bytes, 0u) << "an index in process memory takes nothing from the pool";
    return s.cache_bytes;
  }

  std::unique_ptr<fabric::InProcFabric> fabric_;
  std::unique_ptr<Index> index_;
  std::unique_ptr<Session> session_;
  std::vector<uint64_t> keys_;
};

TEST_P(PoolBytesTest, GrowsWithTheKeys) {
  Insert(0, 5'000);
  const uint64_t small = Memory();
  Insert(5'000, 20'000);
  const uint64_t large = Memory();
  ASSERT_GT(small, 0u);
  // Four times the keys, about four times the bytes (leaves fill differently at each point).
  const double ratio = static_cast<double>(large) / static_cast<double>(small);
  EXPECT_GE(ratio, 3.0) << small << " bytes at 5,000 keys, " << large << " at 20,000";
  EXPECT_LE(ratio, 5.5) << small << " bytes at 5,000 keys, " << large << " at 20,000";
  // Of the order of a key and a value and their share of a node, far below a chunk.
  const double per_key = static_cast<double>(large) / 20'000;
  EXPECT_GE(per_key, 16.0) << large << " bytes";
  EXPECT_LE(per_key, 200.0) << large << " bytes";
  EXPECT_LT(large, kChunkBytes);
  std::cout << "[ memory   ] " << GetParam() << ": " << small << " bytes at 5,000 keys, " << large
            << " at 20,000 (" << per_key << " per key)\n";
}

// The tree designs: whole nodes, as many as leaves of that capacity hold the keys in, at least
// half full (a split leaves two halves), plus the few inner nodes above them.
TEST_P(PoolBytesTest, TreeDesignsCountWholeNodes) {
  if (!NodesOnly(GetParam())) GTEST_SKIP() << GetParam() << " keeps more than fixed-size nodes in the pool";
  Insert(0, 20'000);
  // Besides nodes, each session that took a lock holds a redo block (64 bytes + a node) on
  // that memory node (tree/redo_log.h): a few, each leaving 64 bytes over whole nodes.
  const uint64_t total = index_->Stats().pool_bytes;
  const uint64_t redo_blocks = (total % kNodeBytes) / 64;
  EXPECT_EQ(total % 64, 0u) << total;
  EXPECT_LE(redo_blocks, 4u) << total;
  const uint64_t bytes = total - redo_blocks * tree::RedoBlockBytes(kNodeBytes);
  EXPECT_EQ(bytes % kNodeBytes, 0u) << bytes;
  const uint64_t nodes = bytes / kNodeBytes;
  auto layout = tree::NodeLayout<tree::U64BytesKV>::For(kNodeBytes);
  ASSERT_TRUE(layout.ok());
  const double full_leaves = 20'000.0 / layout->leaf_capacity;
  EXPECT_GE(static_cast<double>(nodes), full_leaves) << nodes << " nodes of " << layout->leaf_capacity << " slots";
  EXPECT_LE(static_cast<double>(nodes), 2.5 * full_leaves + 3) << nodes << " nodes of " << layout->leaf_capacity
                                                                << " slots";
}

std::vector<std::string> Designs() { return designs::DesignNames(); }

INSTANTIATE_TEST_SUITE_P(AllDesigns, PoolBytesTest, ::testing::ValuesIn(Designs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace dmindex
