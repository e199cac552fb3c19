// A persistent pool restored by a new MemoryNode (what `memserver --data-dir` does after a
// restart): the same identity, and a chunk allocator that carries on where the previous
// node left it (chunks handed out stay handed out, freed ones come back first), because its
// state lives in the pool's identity record. And what CheckRestoredPool refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "fabric/memory_node.h"
#include "fabric/pool_identity.h"
#include "fabric/pool_layout.h"

namespace dmindex::fabric {
namespace {

constexpr uint64_t kPoolBytes = kChunkAreaOffset + 8 * (1ull << 20);

MemoryNodeOptions Chunks() {
  MemoryNodeOptions o;
  o.chunk_bytes = 1ull << 20;
  return o;
}

TEST(PoolRestore, AllocatorAndIdentitySurviveTheMemoryNode) {
  std::vector<std::byte> pool(kPoolBytes);  // zeroed, as a new pool file is
  PoolIdentity identity;
  std::vector<uint64_t> held;
  uint64_t freed = 0;
  {
    MemoryNode first(0, pool.data(), pool.size(), Chunks());
    identity = first.identity();
    for (int i = 0; i < 3; ++i) held.push_back(first.AllocChunk().value());
    freed = held[1];
    ASSERT_TRUE(first.FreeChunk(freed).ok());
    held.erase(held.begin() + 1);
    std::memset(pool.data() + held[0], 0x5a, 64);  // a chunk's contents, as a client wrote them
  }
  auto restored = CheckRestoredPool(pool.data(), pool.size(), Chunks().chunk_bytes, "the pool");
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(*restored, identity);

  MemoryNode second(0, pool.data(), pool.size(), Chunks(), *restored);
  EXPECT_EQ(second.identity(), identity);
  EXPECT_EQ(second.Info().chunks_in_use, 2u);
  EXPECT_EQ(static_cast<unsigned char>(pool[held[0]]), 0x5au) << "restoring must not clear the pool";
  // The freed chunk comes back first, zeroed (its free-list link word overwritten by the
  // chunk's header: pool_layout.h); then new ones, never one still held.
  const uint64_t again = second.AllocChunk().value();
  EXPECT_EQ(again, freed);
  uint64_t header[2] = {1, 1};
  std::memcpy(header, pool.data() + again, 16);
  EXPECT_EQ(header[0], kChunkMagic ^ again);
  EXPECT_EQ(header[1], 0u) << "no owner";
  std::set<uint64_t> out(held.begin(), held.end());
  out.insert(again);
  while (true) {
    auto c = second.AllocChunk();
    if (!c.ok()) {
      EXPECT_TRUE(c.status().IsOutOfSpace()) << c.status().ToString();
      break;
    }
    EXPECT_TRUE(out.insert(*c).second) << "chunk " << *c << " handed out twice";
  }
  EXPECT_EQ(out.size(), 8u);
  EXPECT_TRUE(second.FreeChunk(held[0]).ok());
  EXPECT_TRUE(second.FreeChunk(held[0]).IsInvalidArgument()) << "freed twice";
}

TEST(PoolRestore, CheckRestoredPoolRefusesAnotherSizeChunkSizeOrNoIdentity) {
  std::vector<std::byte> pool(kPoolBytes);
  { MemoryNode node(0, pool.data(), pool.size(), Chunks()); }
  auto other_size = CheckRestoredPool(pool.data(), pool.size() - 4096, 1ull << 20, "P");
  EXPECT_TRUE(other_size.status().IsCorruption()) << other_size.status().ToString();
  auto other_chunks = CheckRestoredPool(pool.data(), pool.size(), 2ull << 20, "P");
  EXPECT_TRUE(other_chunks.status().IsInvalidArgument()) << other_chunks.status().ToString();
  EXPECT_NE(other_chunks.status().message().find("--chunk-size 1048576"), std::string::npos);
  std::vector<std::byte> blank(kPoolBytes);
  auto none = CheckRestoredPool(blank.data(), blank.size(), 1ull << 20, "P");
  EXPECT_TRUE(none.status().IsCorruption()) << none.status().ToString();
  EXPECT_NE(none.status().message().find("P holds no valid pool identity"), std::string::npos);
}

// A pool of layout 1 (made before lock words named leases and XStore's memory servers owned
// part of each lock table) is refused by name, never served under this layout.
TEST(PoolRestore, APoolOfTheOlderLayoutIsRefusedByName) {
  std::vector<std::byte> pool(kPoolBytes);
  { MemoryNode node(0, pool.data(), pool.size(), Chunks()); }
  ASSERT_TRUE(CheckRestoredPool(pool.data(), pool.size(), Chunks().chunk_bytes, "P").ok());
  const uint64_t v1 = PoolIdentityRecord::kMagicV1;
  std::memcpy(pool.data() + kPoolIdentityOffset, &v1, sizeof v1);
  auto old = CheckRestoredPool(pool.data(), pool.size(), Chunks().chunk_bytes, "P");
  EXPECT_TRUE(old.status().IsInvalidArgument()) << old.status().ToString();
  EXPECT_NE(old.status().message().find("layout 1"), std::string::npos) << old.status().ToString();
}

}  // namespace
}  // namespace dmindex::fabric
