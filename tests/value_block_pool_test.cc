// Value blocks over a long update-heavy run (docs/SYNCHRONIZATION.md, "Out-of-line values"):
// every block an update unlinks is retired and, after its grace period, reused, so the pool
// stops growing. Prints pool bytes, bytes in use and retired bytes over the run (the figures
// of docs/results/values.md, "Value blocks over a long update run"); DMINDEX_SOAK=<n> makes the
// run n times longer.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <random>

#include "bytes_tree_env.h"
#include "harness_config.h"

namespace dmindex::testing {
namespace {

TEST(ValueBlockPool, PoolBytesLevelOffOverALongUpdateRun) {
  auto fabric = MakeBytesFabric({}, 2, 1ull << 30);
  tree::TreeOptions o = ShermanBytes();
  o.max_key_bytes = 32;
  o.inline_value_bytes = 64;
  o.value_lease = std::chrono::milliseconds(1);
  auto tree = MakeBytesTree(*fabric, o);
  auto ctx = NewCtx(*tree);

  constexpr uint32_t kKeys = 2000;
  std::mt19937_64 rng(7);
  // Values of 100 to 4000 bytes: out of line, in a dozen size classes.
  auto value = [&](uint64_t stamp) { return std::string(100 + rng() % 3900, static_cast<char>('a' + stamp % 26)); };
  std::vector<BytesEntry> load;
  uint64_t live_value_bytes = 0;
  std::vector<uint64_t> size_of(kKeys);
  for (uint32_t k = 0; k < kKeys; ++k) {
    char key[16];
    std::snprintf(key, sizeof key, "key%06u", k);
    load.push_back({key, value(k), {}});
    size_of[k] = load.back().value.size();
    live_value_bytes += size_of[k];
  }
  ASSERT_TRUE(tree->BulkLoad(*ctx, load).ok());

  const uint64_t updates = 40000ull * SoakFactor();
  constexpr int kSamples = 10;
  std::vector<tree::TreeStats> samples;
  std::cout << "| updates | pool MiB | in use MiB | retired MiB | live value MiB |\n|---|---|---|---|---|\n";
  for (uint64_t i = 0; i < updates; ++i) {
    const uint32_t k = static_cast<uint32_t>(rng() % kKeys);
    std::string v = value(i);
    live_value_bytes += v.size() - size_of[k];
    size_of[k] = v.size();
    ASSERT_TRUE(tree->Update(*ctx, load[k].key, v).ok());
    if ((i + 1) % (updates / kSamples) == 0) {
      samples.push_back(tree->Stats());
      const auto& s = samples.back();
      std::printf("| %llu | %.1f | %.1f | %.2f | %.1f |\n", static_cast<unsigned long long>(i + 1),
                  s.pool_bytes / 1048576.0, s.bytes_in_use / 1048576.0, s.retired_bytes / 1048576.0,
                  live_value_bytes / 1048576.0);
    }
  }
  // Every value still reads back.
  for (uint32_t k = 0; k < kKeys; k += 97) {
    std::string v;
    ASSERT_TRUE(tree->Lookup(*ctx, load[k].key, &v).ok());
    EXPECT_EQ(v.size(), size_of[k]);
  }
  // No leak: over the second half of the run the pool did not grow, and what is in use is
  // the live blocks (within their size classes' rounding, at most 25 % over) plus the leaves
  // and inner nodes and the retired blocks still in their grace period.
  const auto& mid = samples[kSamples / 2 - 1];
  const auto& end = samples.back();
  EXPECT_LE(end.pool_bytes, mid.pool_bytes + (8ull << 20)) << "the pool grew by more than a chunk per memory node";
  const uint64_t nodes_bytes = 400ull * 1024;  // generous: ~2000 keys in 1 KiB leaves
  EXPECT_LE(end.bytes_in_use, live_value_bytes * 5 / 4 + kKeys * 64ull + nodes_bytes + end.retired_bytes * 2)
      << "blocks in use beyond the live values";
}

}  // namespace
}  // namespace dmindex::testing
