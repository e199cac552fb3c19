// DEX's in-place searches of cached u64 pages (NodePageLayout::ChildIndexInPlace,
// SeparatorInPlace, FindInPlace; docs/SYNCHRONIZATION.md, "DEX's cached pages"): on a
// well-formed page they answer what the codecs answer on a copy, and on any bytes at all -
// a page torn by a writer, a count beyond the node - they read only inside the node and
// answer an index inside it (the page sits at the very end of its allocation, so a read past
// it is a heap overflow under ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "designs/dex/node_pages.h"
#include "tree/node_validation.h"

namespace dmindex::designs::dex {
namespace {

using KV = U64Format;
using Layout = tree::NodeLayout<KV>;

class DexPageSearchTest : public ::testing::Test {
 protected:
  DexPageSearchTest()
      : layout_(Layout::For(1024).value()), pages_(layout_), codecs_(layout_, true),
        page_(new std::byte[layout_.node_bytes]) {}

  // Sorted distinct odd keys (even keys are absent), `n` of them.
  std::vector<uint64_t> Keys(uint32_t n) {
    std::vector<uint64_t> k;
    while (k.size() < n) {
      k.push_back((rng_() % 100000) * 2 + 1);
      std::sort(k.begin(), k.end());
      k.erase(std::unique(k.begin(), k.end()), k.end());
    }
    return k;
  }

  const Layout layout_;
  const NodePageLayout<KV> pages_;
  const tree::NodeValidator<KV> codecs_;
  std::unique_ptr<std::byte[]> page_;  // exactly one node
  std::mt19937_64 rng_{7};
};

TEST_F(DexPageSearchTest, InternalSearchInPlaceAnswersAsTheCodec) {
  for (uint32_t n : {0u, 1u, 2u, 17u, layout_.internal_capacity}) {
    std::vector<tree::InternalEntry<KV>> entries;
    for (uint64_t k : Keys(n)) entries.push_back({k, GlobalAddress::FromRaw(k * 64)});
    tree::NodeHeader<KV> h;
    h.level = 1;
    h.low = 0;
    h.high = KV::kPosInf;
    ASSERT_TRUE(codecs_.internal().Build(page_.get(), h, entries));
    h.count = static_cast<uint16_t>(n);
    for (uint64_t key = 1; key < 200002; key += 97) {
      const int idx = pages_.ChildIndexInPlace(page_.get(), n, key);
      ASSERT_EQ(idx, codecs_.internal().ChildIndexFor(page_.get(), h, key)) << n << " " << key;
      if (idx >= 0) {
        EXPECT_EQ(pages_.SeparatorInPlace(page_.get(), static_cast<uint32_t>(idx)),
                  codecs_.internal().KeyAt(page_.get(), static_cast<uint32_t>(idx)));
      }
    }
  }
}

TEST_F(DexPageSearchTest, LeafFindInPlaceAnswersAsTheCodec) {
  for (uint32_t n : {0u, 1u, 3u, 20u, layout_.leaf_capacity}) {
    std::vector<tree::LeafEntry<KV>> entries;
    for (uint64_t k : Keys(n)) entries.push_back({k, "v", {}});
    tree::NodeHeader<KV> h;
    h.low = 0;
    h.high = KV::kPosInf;
    ASSERT_TRUE(codecs_.leaf().Build(page_.get(), h, entries, /*unsorted=*/false));
    h.count = static_cast<uint16_t>(n);
    for (uint64_t key = 1; key < 200002; key += 31) {
      const int slot = pages_.FindInPlace(page_.get(), n, key);
      ASSERT_EQ(slot, codecs_.leaf().Find(page_.get(), h, key)) << n << " " << key;
    }
    for (const auto& e : entries) EXPECT_GE(pages_.FindInPlace(page_.get(), n, e.key), 0);
  }
}

// The descent decodes a cached page's header in place (HeaderInPlace) instead of from a copy:
// on built pages of both kinds and on any bytes at all, field for field what the codec
// decodes from a copy of the page.
TEST_F(DexPageSearchTest, HeaderInPlaceDecodesAsTheCodec) {
  const auto same = [&](const char* what) {
    tree::NodeHeader<KV> in_place, copied;
    pages_.HeaderInPlace(page_.get(), &in_place);
    std::vector<std::byte> copy(page_.get(), page_.get() + layout_.node_bytes);
    codecs_.ReadHeader(copy.data(), &copied);
    EXPECT_EQ(in_place.version, copied.version) << what;
    EXPECT_EQ(in_place.level, copied.level) << what;
    EXPECT_EQ(in_place.flags, copied.flags) << what;
    EXPECT_EQ(in_place.count, copied.count) << what;
    EXPECT_EQ(in_place.sibling, copied.sibling) << what;
    EXPECT_EQ(in_place.leftmost, copied.leftmost) << what;
    EXPECT_EQ(in_place.incarnation, copied.incarnation) << what;
    EXPECT_EQ(in_place.body_check, copied.body_check) << what;
    EXPECT_EQ(in_place.low, copied.low) << what;
    EXPECT_EQ(in_place.high, copied.high) << what;
  };
  tree::NodeHeader<KV> h;
  h.version = 0x1234;
  h.level = 2;
  h.low = 10;
  h.high = 1000000;  // above every key Keys() draws
  h.sibling = GlobalAddress::FromRaw(0x40000);
  h.leftmost = GlobalAddress::FromRaw(0x80000);
  std::vector<tree::InternalEntry<KV>> separators;
  for (uint64_t k : Keys(17)) separators.push_back({k + 10, GlobalAddress::FromRaw(k * 64)});
  ASSERT_TRUE(codecs_.internal().Build(page_.get(), h, separators));
  same("internal");
  h.level = 0;
  h.incarnation = 3;
  std::vector<tree::LeafEntry<KV>> entries;
  for (uint64_t k : Keys(20)) entries.push_back({k + 10, "v", {}});
  ASSERT_TRUE(codecs_.leaf().Build(page_.get(), h, entries, /*unsorted=*/false));
  same("leaf");
  for (int trial = 0; trial < 50; ++trial) {
    for (uint32_t i = 0; i < layout_.node_bytes; i += 8) {
      const uint64_t word = rng_();
      std::memcpy(page_.get() + i, &word, 8);
    }
    same("random bytes");
  }
}

// What a reader may meet between its header copy and its validation: any bytes, and a count
// the node cannot hold (a header from another image). The answers stay inside the node.
TEST_F(DexPageSearchTest, AnyBytesAndAnyCountKeepTheSearchInsideTheNode) {
  for (int trial = 0; trial < 200; ++trial) {
    for (uint32_t i = 0; i < layout_.node_bytes; i += 8) {
      const uint64_t word = rng_();
      std::memcpy(page_.get() + i, &word, 8);
    }
    const uint32_t count = trial % 2 == 0 ? 0xFFFF : static_cast<uint32_t>(rng_() % 0x10000);
    for (int probe = 0; probe < 20; ++probe) {
      const uint64_t key = rng_();
      const int idx = pages_.ChildIndexInPlace(page_.get(), count, key);
      ASSERT_GE(idx, -1);
      ASSERT_LT(idx, static_cast<int>(layout_.internal_capacity));
      (void)pages_.SeparatorInPlace(page_.get(), static_cast<uint32_t>(idx + 1));  // clamped
      const int slot = pages_.FindInPlace(page_.get(), count, key);
      ASSERT_GE(slot, -1);
      ASSERT_LT(slot, static_cast<int>(layout_.leaf_capacity));
    }
  }
}

}  // namespace
}  // namespace dmindex::designs::dex
