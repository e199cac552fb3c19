// A RemoteTree of byte-string keys and values (tree::BytesKV) on an in-process fabric, for
// the tests of the slotted node format at the tree level: the tree core's designs as
// TreeOptions (naive: every technique off; sherman: cache, HOCL, combination, two-level
// leaves), without the public API's adapter.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "alloc/node_allocator.h"
#include "fabric/inproc/inproc_fabric.h"
#include "tree/remote_tree.h"

namespace dmindex::testing {

using BytesTree = tree::RemoteTree<tree::BytesKV>;
using BytesEntry = tree::LeafEntry<tree::BytesKV>;

// Concatenation without operator+ on two temporaries (GCC 12 warns falsely on it, -Wrestrict).
inline std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s.append(p);
  return s;
}

inline tree::TreeOptions NaiveBytes() { return tree::TreeOptions{}; }
inline tree::TreeOptions ShermanBytes() {
  tree::TreeOptions o;
  o.cache_bytes = 16 << 20;
  o.hocl = true;
  o.combine = true;
  o.two_level = true;
  return o;
}

struct FabricFaults {
  bool tear = false;   // READs/WRITEs torn into 64-byte pieces
  bool delay = false;  // some round trips held back
};

inline std::unique_ptr<fabric::InProcFabric> MakeBytesFabric(FabricFaults f = {}, uint16_t memory_nodes = 2,
                                                             uint64_t pool_bytes = 1ull << 30) {
  fabric::InProcOptions o;
  o.memory_nodes = memory_nodes;
  o.pool_bytes = pool_bytes;
  o.node.chunk_bytes = 4 << 20;
  o.faults.tear = f.tear;
  o.faults.delay_probability = f.delay ? 0.05 : 0.0;
  o.faults.delay_max_us = 30;
  return std::move(fabric::InProcFabric::Create(o)).value();
}

// A tree whose root word is a fresh (zero) word of the pool (its address to *root_word).
inline std::unique_ptr<BytesTree> MakeBytesTree(fabric::Fabric& f, const tree::TreeOptions& o,
                                                GlobalAddress* root_word_out = nullptr) {
  auto ep = f.Connect();
  EXPECT_TRUE(ep.ok()) << ep.status().ToString();
  alloc::NodeAllocator words(f.memory_nodes());
  auto root_word = words.Allocate(**ep, 64);
  EXPECT_TRUE(root_word.ok()) << root_word.status().ToString();
  if (root_word_out != nullptr) *root_word_out = *root_word;
  auto t = BytesTree::Create(f, o, *root_word);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

inline std::unique_ptr<BytesTree::Ctx> NewCtx(BytesTree& t, uint32_t compute_node = 0) {
  auto c = t.NewContext(compute_node);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

// Every entry of the tree, by scans of `chunk` entries each continuing after the last key
// (the iterator's rule), checked to be strictly ascending.
inline std::vector<BytesEntry> ScanAllBytes(const BytesTree& t, BytesTree::Ctx& c, size_t chunk) {
  std::vector<BytesEntry> all, batch;
  tree::ScanRange<tree::BytesKV> r;
  for (;;) {
    Status s = t.Scan(c, r, chunk, &batch);
    EXPECT_TRUE(s.ok()) << s.ToString();
    for (auto& e : batch) {
      if (!all.empty()) { EXPECT_LT(all.back().key, e.key); }
      all.push_back(std::move(e));
    }
    if (batch.size() < chunk || !s.ok()) return all;
    r.start = all.back().key;
    r.after_start = true;
  }
}

}  // namespace dmindex::testing
