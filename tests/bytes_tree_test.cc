// The remote B-link tree with byte-string keys and values (slotted nodes, tree::BytesKV), at
// the tree level, mirroring remote_tree_test.cc: every operation against a reference map with
// keys sharing long prefixes, keys that are prefixes of each other and the longest allowed
// keys; bulk load; a stale cache of another compute node; concurrent inserts into an empty
// tree; and stable keys that must survive torn reads while writers churn their neighbours.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "bytes_tree_env.h"

namespace dmindex::testing {
namespace {

using tree::ScanRange;
using tree::TreeOptions;

struct Config {
  std::string name;
  TreeOptions options;
};
void PrintTo(const Config& c, std::ostream* os) { *os << c.name; }

std::vector<Config> Configs() {
  TreeOptions sorted = ShermanBytes();
  sorted.two_level = false;
  TreeOptions plain = ShermanBytes();
  plain.hocl = false;
  plain.combine = false;
  TreeOptions naive_cache = NaiveBytes();
  naive_cache.cache_bytes = 1 << 20;
  return {{"naive", NaiveBytes()},
          {"sherman", ShermanBytes()},
          {"sherman_sorted_leaves", sorted},
          {"sherman_no_hocl_no_combine", plain},
          {"naive_with_cache", naive_cache}};
}

// Keys of a small alphabet with long shared prefixes and keys that are prefixes of others:
// "k/" then up to `max_len` - 2 bytes of {a, b, \0, \xff}.
std::string ShortAlphabetKey(std::mt19937_64& rng, size_t max_len) {
  static const char kBytes[] = {'a', 'b', '\0', '\xff'};
  std::string k = "k/";
  const size_t len = 1 + rng() % (max_len - 2);
  for (size_t i = 0; i < len; ++i) k.push_back(kBytes[rng() % 4]);
  return k;
}

std::string ValueFor(std::mt19937_64& rng, size_t max_len) {
  std::string v(rng() % (max_len + 1), '\0');  // empty values included
  for (char& ch : v) ch = static_cast<char>(rng());
  return v;
}

class BytesTreeTest : public ::testing::TestWithParam<Config> {
 protected:
  TreeOptions Options(uint32_t node_bytes, uint32_t max_key, uint32_t inline_value,
                      uint32_t compute_nodes = 1) {
    TreeOptions o = GetParam().options;
    o.node_bytes = node_bytes;
    o.max_key_bytes = max_key;
    o.inline_value_bytes = inline_value;
    o.max_value_bytes = inline_value;
    o.compute_nodes = compute_nodes;
    return o;
  }
};

TEST_P(BytesTreeTest, EmptyTreeAnswersNotFoundAndRefusesBadEntries) {
  auto f = MakeBytesFabric();
  auto t = MakeBytesTree(*f, Options(1024, 64, 16));
  auto c = NewCtx(*t);
  std::string v;
  EXPECT_TRUE(t->Lookup(*c, "a", &v).IsNotFound());
  EXPECT_TRUE(t->Update(*c, "a", "x").IsNotFound());
  EXPECT_TRUE(t->Delete(*c, "a").IsNotFound());
  std::vector<BytesEntry> out{{"x", "y"}};
  EXPECT_TRUE(t->Scan(*c, {}, 10, &out).ok());
  EXPECT_TRUE(out.empty());
  Status s = t->Upsert(*c, "", "x");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  s = t->Upsert(*c, std::string(65, 'k'), "x");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("max_key_bytes 64"), std::string::npos) << s.ToString();
  s = t->Upsert(*c, "k", std::string(17, 'v'));
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("16"), std::string::npos) << s.ToString();
  EXPECT_TRUE(t->Upsert(*c, std::string(64, 'k'), std::string(16, 'v')).ok());
  ASSERT_TRUE(t->Lookup(*c, std::string(64, 'k'), &v).ok());
  EXPECT_EQ(v, std::string(16, 'v'));
}

// A node size too small for the longest keys is refused with the size it needs.
TEST(BytesTreeLayout, NodeTooSmallForTheLongestKeysIsRefused) {
  auto f = MakeBytesFabric();
  TreeOptions o;
  o.node_bytes = 1024;
  o.max_key_bytes = 255;
  o.inline_value_bytes = 64;
  auto t = BytesTree::Create(*f, o, GlobalAddress(0, 4096));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(t.status().IsInvalidArgument());
  EXPECT_NE(t.status().message().find("at least"), std::string::npos) << t.status().ToString();
}

TEST_P(BytesTreeTest, RandomOperationsMatchAReferenceMap) {
  auto f = MakeBytesFabric();
  // 448-byte nodes, keys up to 24 bytes: a few entries per leaf, many splits, a tall tree.
  auto t = MakeBytesTree(*f, Options(448, 24, 12));
  auto c = NewCtx(*t);
  std::map<std::string, std::string> ref;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 12000; ++i) {
    const std::string k = ShortAlphabetKey(rng, 24);
    const std::string v = ValueFor(rng, 12);
    switch (rng() % 5) {
      case 0: case 1:
        ASSERT_TRUE(t->Upsert(*c, k, v).ok());
        ref[k] = v;
        break;
      case 2: {
        Status st = t->Update(*c, k, v);
        ASSERT_EQ(st.ok(), ref.count(k) == 1) << st.ToString();
        if (st.ok()) ref[k] = v;
        break;
      }
      case 3: {
        Status st = t->Delete(*c, k);
        ASSERT_EQ(st.ok(), ref.erase(k) == 1) << st.ToString();
        break;
      }
      default: {
        std::string got;
        Status st = t->Lookup(*c, k, &got);
        ASSERT_EQ(st.ok(), ref.count(k) == 1) << st.ToString();
        if (st.ok()) { ASSERT_EQ(got, ref[k]); }
      }
    }
    if (i % 3000 == 2999) {
      auto all = ScanAllBytes(*t, *c, 37);
      ASSERT_EQ(all.size(), ref.size());
      size_t j = 0;
      for (const auto& [k2, v2] : ref) {
        ASSERT_EQ(all[j].key, k2);
        ASSERT_EQ(all[j++].value, v2);
      }
    }
  }
  // Scans starting between keys, after a key, and bounded.
  for (int i = 0; i < 200; ++i) {
    ScanRange<tree::BytesKV> r;
    r.start = ShortAlphabetKey(rng, 24);
    r.after_start = rng() % 2;
    if (rng() % 2) r.end = ShortAlphabetKey(rng, 24);
    std::vector<BytesEntry> out;
    ASSERT_TRUE(t->Scan(*c, r, 20, &out).ok());
    auto it = r.after_start ? ref.upper_bound(r.start) : ref.lower_bound(r.start);
    for (const auto& e : out) {
      ASSERT_TRUE(it != ref.end());
      ASSERT_EQ(e.key, it->first);
      ASSERT_EQ(e.value, it->second);
      ++it;
    }
    const bool at_end = it == ref.end() || (!r.end.empty() && it->first >= r.end);
    if (out.size() < 20) { ASSERT_TRUE(at_end) << "scan stopped early"; }
  }
}

// The longest keys (1 KiB) that differ only in their last byte, and keys that are prefixes
// of each other: fences and separators as long as keys, prefix truncation of whole keys.
TEST_P(BytesTreeTest, LongestKeysAndPrefixChains) {
  auto f = MakeBytesFabric();
  const uint32_t node = tree::SlottedLayout::MinNodeBytes(1024, 8);
  auto t = MakeBytesTree(*f, Options(node, 1024, 8));
  auto c = NewCtx(*t);
  std::map<std::string, std::string> ref;
  const std::string base(1023, 'p');
  for (int i = 0; i < 200; ++i) {
    std::string k = base + static_cast<char>(i);
    ref[k] = std::to_string(i);
    ASSERT_TRUE(t->Upsert(*c, k, ref[k]).ok()) << i;
  }
  for (size_t len = 1; len <= 1023; len += 7) {  // prefixes of the long keys
    std::string k(len, 'p');
    ref[k] = Cat({"p", std::to_string(len)});
    ASSERT_TRUE(t->Upsert(*c, k, ref[k]).ok()) << len;
  }
  for (const auto& [k, v] : ref) {
    std::string got;
    ASSERT_TRUE(t->Lookup(*c, k, &got).ok()) << k.size();
    ASSERT_EQ(got, v);
  }
  std::string got;
  EXPECT_TRUE(t->Lookup(*c, base + '\xff', &got).IsNotFound());
  EXPECT_TRUE(t->Lookup(*c, "q", &got).IsNotFound());
  auto all = ScanAllBytes(*t, *c, 50);
  ASSERT_EQ(all.size(), ref.size());
  size_t j = 0;
  for (const auto& [k, v] : ref) ASSERT_EQ(all[j++].key, k);
}

TEST_P(BytesTreeTest, BulkLoadBuildsASearchableTree) {
  auto f = MakeBytesFabric();
  auto t = MakeBytesTree(*f, Options(1024, 64, 16));
  auto c = NewCtx(*t);
  std::vector<BytesEntry> data;
  auto key = [](uint64_t i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "user%019llu", static_cast<unsigned long long>(i * 3));
    return std::string(buf);
  };
  for (uint64_t i = 1; i <= 30000; ++i) data.push_back({key(i), std::to_string(i)});
  ASSERT_TRUE(t->BulkLoad(*c, data).ok());
  for (uint64_t i = 1; i <= 30000; i += 7) {
    std::string v;
    ASSERT_TRUE(t->Lookup(*c, key(i), &v).ok()) << i;
    ASSERT_EQ(v, std::to_string(i));
    ASSERT_TRUE(t->Lookup(*c, key(i) + "x", &v).IsNotFound());
  }
  std::vector<BytesEntry> out;
  ScanRange<tree::BytesKV> r;
  r.start = key(1000) + "\x01";
  ASSERT_TRUE(t->Scan(*c, r, 100, &out).ok());
  ASSERT_EQ(out.size(), 100u);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].key, key(1001 + i));
  EXPECT_EQ(ScanAllBytes(*t, *c, 1000).size(), 30000u);
  for (uint64_t i = 1; i <= 3000; ++i) ASSERT_TRUE(t->Upsert(*c, key(i) + "+", "n").ok());
  EXPECT_EQ(ScanAllBytes(*t, *c, 1000).size(), 33000u);
  EXPECT_TRUE(t->BulkLoad(*c, data).IsInvalidArgument()) << "not empty";
}

TEST_P(BytesTreeTest, BulkLoadRejectsBadInput) {
  auto f = MakeBytesFabric();
  auto t = MakeBytesTree(*f, Options(1024, 64, 16));
  auto c = NewCtx(*t);
  std::vector<BytesEntry> unsorted = {{"b", ""}, {"a", ""}};
  EXPECT_TRUE(t->BulkLoad(*c, unsorted).IsInvalidArgument());
  std::vector<BytesEntry> dup = {{"a", ""}, {"a", "x"}};
  EXPECT_TRUE(t->BulkLoad(*c, dup).IsInvalidArgument());
  std::vector<BytesEntry> empty_key = {{"", "x"}};
  EXPECT_TRUE(t->BulkLoad(*c, empty_key).IsInvalidArgument());
  std::vector<BytesEntry> long_key = {{std::string(65, 'a'), "x"}};
  EXPECT_TRUE(t->BulkLoad(*c, long_key).IsInvalidArgument());
  std::vector<BytesEntry> one = {{"only", ""}};
  ASSERT_TRUE(t->BulkLoad(*c, one).ok());
  std::string v = "stale";
  ASSERT_TRUE(t->Lookup(*c, "only", &v).ok());
  EXPECT_EQ(v, "");
}

// Compute node 0 caches internal nodes, then compute node 1 splits most of the tree under
// it: node 0's lookups, batched scans and writes must follow sibling links and refresh.
TEST_P(BytesTreeTest, StaleCacheOfAnotherComputeNodeIsHarmless) {
  auto f = MakeBytesFabric();
  auto t = MakeBytesTree(*f, Options(512, 32, 8, 2));
  auto a = NewCtx(*t, 0), b = NewCtx(*t, 1);
  auto key = [](uint64_t k, int d) { return Cat({"key:", std::to_string(10000 + k), "/", std::string(d, '+')}); };
  std::vector<BytesEntry> data;
  for (uint64_t k = 1; k <= 2000; ++k) data.push_back({key(k, 0), "v"});
  ASSERT_TRUE(t->BulkLoad(*a, data).ok());
  ASSERT_EQ(ScanAllBytes(*t, *a, 50).size(), 2000u);  // warms node 0's cache
  std::string v;
  for (uint64_t k = 1; k <= 2000; ++k) ASSERT_TRUE(t->Lookup(*a, key(k, 0), &v).ok());
  for (uint64_t k = 1; k <= 2000; ++k)
    for (int d = 1; d <= 3; ++d) ASSERT_TRUE(t->Upsert(*b, key(k, d), std::to_string(d)).ok());
  for (uint64_t k = 1; k <= 2000; ++k) {
    ASSERT_TRUE(t->Lookup(*a, key(k, 3), &v).ok()) << k;
    ASSERT_EQ(v, "3");
  }
  std::vector<BytesEntry> out;
  for (uint64_t k = 1; k <= 1900; k += 97) {
    ScanRange<tree::BytesKV> r;
    r.start = key(k, 0);
    ASSERT_TRUE(t->Scan(*a, r, 100, &out).ok());
    ASSERT_EQ(out.size(), 100u);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].key, key(k + i / 4, static_cast<int>(i % 4)));
  }
  for (uint64_t k = 1; k <= 2000; k += 7) ASSERT_TRUE(t->Update(*a, key(k, 1), "99").ok());
  ASSERT_TRUE(t->Lookup(*b, key(1996, 1), &v).ok());
  EXPECT_EQ(v, "99");
  EXPECT_EQ(ScanAllBytes(*t, *b, 77).size(), 8000u);
}

// Many threads insert into an EMPTY tree with small nodes: root creation, leaf splits and
// root growth all race (Sherman issue #26).
TEST_P(BytesTreeTest, ConcurrentInsertsIntoAnEmptyTree) {
  auto f = MakeBytesFabric({.tear = false, .delay = true});
  auto t = MakeBytesTree(*f, Options(448, 24, 8, 2));
  constexpr int kThreads = 6, kPerThread = 800;
  auto key = [](int i) { return Cat({"c", std::to_string(i * 7919 % 100003), "/", std::to_string(i)}); };
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      auto c = NewCtx(*t, th % 2);
      for (int i = 0; i < kPerThread; ++i) {
        const int n = i * kThreads + th;
        ASSERT_TRUE(t->Upsert(*c, key(n), std::to_string(n)).ok());
      }
    });
  for (auto& th : threads) th.join();
  auto c = NewCtx(*t, 1);
  for (int n = 0; n < kThreads * kPerThread; ++n) {
    std::string v;
    ASSERT_TRUE(t->Lookup(*c, key(n), &v).ok()) << n;
    ASSERT_EQ(v, std::to_string(n));
  }
  EXPECT_EQ(ScanAllBytes(*t, *c, 300).size(), static_cast<size_t>(kThreads * kPerThread));
}

// Writers churn keys of their own (values of changing lengths, deletes) while readers look
// up bulk-loaded stable keys under torn and delayed verbs: a stable key is never lost or
// wrong (Sherman issue #27), scans see every stable key in their range, writers read their
// own writes.
TEST_P(BytesTreeTest, TornReadsNeverLoseAStableKey) {
  auto f = MakeBytesFabric({.tear = true, .delay = true});
  auto t = MakeBytesTree(*f, Options(1024, 40, 24, 2));
  auto stable = [](uint64_t k) { return Cat({"s/", std::to_string(100000 + k)}); };
  constexpr uint64_t kStable = 3000;
  {
    auto c = NewCtx(*t);
    std::vector<BytesEntry> data;
    for (uint64_t k = 1; k <= kStable; ++k) data.push_back({stable(k), std::to_string(k)});
    ASSERT_TRUE(t->BulkLoad(*c, data).ok());
  }
  std::atomic<int> writers_done{0};
  constexpr int kWriters = 3;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      auto c = NewCtx(*t, w % 2);
      std::mt19937_64 rng(w);
      std::map<std::string, std::string> mine;
      for (int i = 0; i < 1200; ++i) {
        // Between stable keys, owned by this writer: stable(k) + "/w" + suffix.
        const std::string k = stable(1 + rng() % kStable) + Cat({"/", std::to_string(w), std::string(rng() % 8, 'x')});
        const std::string v = ValueFor(rng, 24);
        if (rng() % 4 == 0) {
          ASSERT_EQ(t->Delete(*c, k).ok(), mine.erase(k) == 1);
        } else {
          ASSERT_TRUE(t->Upsert(*c, k, v).ok());
          mine[k] = v;
        }
        std::string got;
        Status st = t->Lookup(*c, k, &got);
        ASSERT_EQ(st.ok(), mine.count(k) == 1) << st.ToString();
        if (st.ok()) { ASSERT_EQ(got, mine[k]); }
      }
      writers_done++;
    });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      auto c = NewCtx(*t, r);
      std::mt19937_64 rng(100 + r);
      std::vector<BytesEntry> out;
      // At least some reads of their own: on a loaded machine the writers may be done before
      // a reader is first scheduled.
      for (int n = 0; writers_done.load() < kWriters || n < 300; ++n) {
        const uint64_t k = 1 + rng() % kStable;
        std::string v;
        ASSERT_TRUE(t->Lookup(*c, stable(k), &v).ok()) << "stable key " << stable(k) << " lost";
        ASSERT_EQ(v, std::to_string(k));
        ScanRange<tree::BytesKV> range;
        range.start = stable(k);
        ASSERT_TRUE(t->Scan(*c, range, 60, &out).ok());
        uint64_t expect = k;
        for (const auto& e : out) {
          if (e.key.size() != stable(1).size()) continue;  // a writer's key
          ASSERT_EQ(e.key, stable(expect)) << "scan skipped a stable key";
          ASSERT_EQ(e.value, std::to_string(expect++));
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_GT(t->Stats().retries, 0u) << "tearing should have forced some re-reads";
}

// Writers, each owning its keys, upsert (values of changing lengths), update and delete them
// while readers look up and scan, all under torn and delayed verbs. Operations are stamped
// from one atomic counter before and after (an order consistent with real time), so every
// answer can be checked against the owner's history of its key: a read that ran over
// [rs, re] may return the value of write i if write i started before re and write i + 1
// had not finished by rs (a single-writer register). Scans are checked key by key over the
// range they covered, also for the keys they did not return (which must have been absent
// at some instant of the scan).
TEST_P(BytesTreeTest, ConcurrentWritesAndReadsAreLinearizablePerKey) {
  auto f = MakeBytesFabric({.tear = true, .delay = true});
  auto t = MakeBytesTree(*f, Options(512, 32, 16, 2));
  constexpr int kWriters = 3, kKeys = 90, kOpsPerWriter = 700;
  auto key = [](int i) { return Cat({"lin/", std::to_string(i * 37 % 101), std::string(i % 7, '~')}); };
  struct Write {
    std::optional<std::string> value;  // nullopt: deleted
    uint64_t start, end;
  };
  std::vector<std::vector<Write>> history(kKeys, {Write{std::nullopt, 0, 0}});
  struct Read {
    int key;
    std::optional<std::string> value;
    uint64_t start, end;
  };
  std::atomic<uint64_t> clock{1};
  std::atomic<int> writers_done{0};
  std::vector<std::vector<Read>> reads(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      auto c = NewCtx(*t, w % 2);
      std::mt19937_64 rng(w + 10);
      for (int i = 0; i < kOpsPerWriter; ++i) {
        const int k = w + kWriters * static_cast<int>(rng() % (kKeys / kWriters));
        auto& h = history[k];
        const bool present = h.back().value.has_value();
        std::string v = Cat({"w", std::to_string(w), ":", std::to_string(i), std::string(rng() % 8, '.')});
        const int op = static_cast<int>(rng() % 3);
        const uint64_t start = clock.fetch_add(1);
        Status st = op == 0 ? t->Upsert(*c, key(k), v) : op == 1 ? t->Update(*c, key(k), v) : t->Delete(*c, key(k));
        const uint64_t end = clock.fetch_add(1);
        if (op != 0 && !present) {
          ASSERT_TRUE(st.IsNotFound()) << st.ToString();
          continue;
        }
        ASSERT_TRUE(st.ok()) << st.ToString();
        h.push_back({op == 2 ? std::nullopt : std::optional<std::string>(v), start, end});
      }
      writers_done++;
    });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      auto c = NewCtx(*t, r);
      std::mt19937_64 rng(100 + r);
      std::vector<BytesEntry> out;
      std::map<std::string, int> index;
      for (int k = 0; k < kKeys; ++k) index[key(k)] = k;
      // At least some reads of their own: on a loaded machine the writers may be done before
      // a reader is first scheduled (reads after the last write are checked all the same).
      for (int n = 0; writers_done.load() < kWriters || n < 400; ++n) {
        if (rng() % 2) {
          const int k = static_cast<int>(rng() % kKeys);
          std::string v;
          const uint64_t start = clock.fetch_add(1);
          Status st = t->Lookup(*c, key(k), &v);
          const uint64_t end = clock.fetch_add(1);
          ASSERT_TRUE(st.ok() || st.IsNotFound()) << st.ToString();
          reads[r].push_back({k, st.ok() ? std::optional<std::string>(v) : std::nullopt, start, end});
          continue;
        }
        ScanRange<tree::BytesKV> range;
        range.start = key(static_cast<int>(rng() % kKeys));
        const size_t count = 1 + rng() % 20;
        const uint64_t start = clock.fetch_add(1);
        Status st = t->Scan(*c, range, count, &out);
        const uint64_t end = clock.fetch_add(1);
        ASSERT_TRUE(st.ok()) << st.ToString();
        // The range the scan covered: to its last key if it filled `count`, else to the end.
        for (auto it = index.lower_bound(range.start); it != index.end(); ++it) {
          if (out.size() == count && it->first > out.back().key) break;
          std::optional<std::string> got;
          for (const auto& e : out)
            if (e.key == it->first) got = e.value;
          reads[r].push_back({it->second, got, start, end});
        }
        for (const auto& e : out) ASSERT_EQ(index.count(e.key), 1u) << "a key nobody wrote: " << e.key;
      }
    });
  for (auto& th : threads) th.join();
  size_t checked = 0;
  for (const auto& rs : reads)
    for (const Read& rd : rs) {
      const auto& h = history[rd.key];
      bool allowed = false;
      for (size_t i = 0; i < h.size() && !allowed; ++i)
        allowed = h[i].value == rd.value && h[i].start < rd.end && (i + 1 == h.size() || h[i + 1].end > rd.start);
      ASSERT_TRUE(allowed) << "key " << key(rd.key) << " read " << (rd.value ? *rd.value : "<absent>")
                           << " over [" << rd.start << ", " << rd.end << "]";
      ++checked;
    }
  EXPECT_GT(checked, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Designs, BytesTreeTest, ::testing::ValuesIn(Configs()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace dmindex::testing
