// The operations of an ordered store beyond point calls and forward iteration, on every
// design through Index::Open with byte keys (the default): reverse iteration, SeekForPrev,
// lower bounds and prefix mode, DeleteRange, WriteBatch, CompareAndSwap, Drop and options
// from a string. The CompareAndSwap histories under torn verbs and delays are checked in
// index_harness_test.cc; CompareAndSwap's exact verbs per design are ApiOpsCasVerbs.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "dmindex/index.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

std::string Key(char prefix, int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%05d", prefix, n);
  return buf;
}

class ApiOpsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    IndexOptions o;
    o.design = GetParam();
    EmbeddedCluster ec;
    ec.pool_bytes = 256ull << 20;
    auto cluster = Cluster::Open(ec);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = *cluster;
    auto index = Index::Open(o, cluster_);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(index).value();
    auto session = index_->OpenSession();
    ASSERT_TRUE(session.ok());
    session_ = std::move(session).value();
    // Three prefixes with gaps between the keys: a00000.., k00000.., z00000.. step 10.
    for (char p : {'a', 'k', 'z'})
      for (int n = 0; n < 3000; n += 10) Put(Key(p, n), Key(p, n) + "-v");
  }
  void TearDown() override {
    session_.reset();
    if (index_) EXPECT_TRUE(index_->Close().ok());
  }
  void Put(const std::string& k, const std::string& v) {
    ASSERT_TRUE(session_->Insert(k, v).ok()) << k;
    model_[k] = v;
  }
  // Keys from the iterator after `position` went, following `step` (Next or Prev).
  template <typename Step>
  std::vector<std::string> Walk(Iterator& it, Step step, size_t limit = SIZE_MAX) {
    std::vector<std::string> got;
    for (; it.Valid() && got.size() < limit; step(it)) {
      auto m = model_.find(std::string(it.key()));
      EXPECT_TRUE(m != model_.end() && m->second == it.value()) << it.key();
      got.emplace_back(it.key());
    }
    EXPECT_TRUE(it.status().ok()) << it.status().ToString();
    return got;
  }
  std::vector<std::string> ModelBackwards(const std::string& lo, const std::string& hi_inclusive) {
    std::vector<std::string> want;
    for (auto it = model_.upper_bound(hi_inclusive); it != model_.begin();) {
      --it;
      if (it->first < lo) break;
      want.push_back(it->first);
    }
    return want;
  }
  static void Prev(Iterator& it) { it.Prev(); }
  static void Next(Iterator& it) { it.Next(); }

  std::shared_ptr<Cluster> cluster_;
  std::unique_ptr<Index> index_;
  std::unique_ptr<Session> session_;
  std::map<std::string, std::string> model_;
};

TEST_P(ApiOpsTest, SeekToLastThenPrevVisitsEveryKeyDescending) {
  Iterator it = session_->NewIterator();
  it.SeekToLast();
  EXPECT_EQ(Walk(it, Prev), ModelBackwards("", "\xff"));
}

TEST_P(ApiOpsTest, SeekForPrevFindsTheLastKeyAtOrBelowTheTarget) {
  Iterator it = session_->NewIterator();
  it.SeekForPrev(Key('k', 500));  // present
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), Key('k', 500));
  it.SeekForPrev(Key('k', 505));  // between two keys
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), Key('k', 500));
  it.SeekForPrev("k");  // below every k key: the last a key
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), Key('a', 2990));
  it.SeekForPrev("a");  // below every key
  EXPECT_FALSE(it.Valid());
  EXPECT_TRUE(it.status().ok());
}

TEST_P(ApiOpsTest, DirectionChangesAtAnyPosition) {
  Iterator it = session_->NewIterator();
  it.Seek(Key('k', 1000));
  ASSERT_TRUE(it.Valid());
  it.Prev();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), Key('k', 990));
  it.Next();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), Key('k', 1000));
  it.Next();
  EXPECT_EQ(it.key(), Key('k', 1010));
  // A long walk back from the middle crosses from the k keys into the a keys.
  std::vector<std::string> back = Walk(it, Prev, 200);
  std::vector<std::string> want = ModelBackwards("", Key('k', 1010));
  want.resize(200);
  EXPECT_EQ(back, want);
}

TEST_P(ApiOpsTest, LowerAndUpperBoundsHoldBothWays) {
  ReadOptions ro;
  ro.lower_bound = Key('k', 100);
  ro.upper_bound = Key('k', 200);
  Iterator it = session_->NewIterator(ro);
  it.SeekToFirst();
  std::vector<std::string> fwd = Walk(it, Next);
  ASSERT_EQ(fwd.size(), 10u);
  EXPECT_EQ(fwd.front(), Key('k', 100));
  EXPECT_EQ(fwd.back(), Key('k', 190));
  it.SeekToLast();
  std::vector<std::string> back = Walk(it, Prev);
  std::reverse(back.begin(), back.end());
  EXPECT_EQ(back, fwd);
  it.SeekForPrev(Key('z', 0));  // above the upper bound: the last key below it
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), Key('k', 190));
  it.Seek("a");  // below the lower bound: the first key at it
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.key(), Key('k', 100));
}

TEST_P(ApiOpsTest, PrefixModeStaysWithinTheSeekTargetsPrefix) {
  ReadOptions ro;
  ro.prefix_bytes = 1;
  Iterator it = session_->NewIterator(ro);
  it.Seek("k");
  std::vector<std::string> ks = Walk(it, Next);
  ASSERT_EQ(ks.size(), 300u);
  EXPECT_EQ(ks.front(), Key('k', 0));
  EXPECT_EQ(ks.back(), Key('k', 2990));
  it.SeekForPrev("k\xff");
  std::vector<std::string> back = Walk(it, Prev);
  ASSERT_EQ(back.size(), 300u);
  EXPECT_EQ(back.front(), Key('k', 2990));
  EXPECT_EQ(back.back(), Key('k', 0));
  it.Seek("m");  // no key has the prefix "m"
  EXPECT_FALSE(it.Valid());
}

TEST_P(ApiOpsTest, DeleteRangeRemovesExactlyTheHalfOpenRange) {
  uint64_t deleted = 0;
  ASSERT_TRUE(session_->DeleteRange(Key('k', 1000), Key('k', 2000), &deleted).ok());
  EXPECT_EQ(deleted, 100u);
  std::string v;
  EXPECT_TRUE(session_->Lookup(Key('k', 990), &v).ok());
  EXPECT_TRUE(session_->Lookup(Key('k', 1000), &v).IsNotFound());
  EXPECT_TRUE(session_->Lookup(Key('k', 1990), &v).IsNotFound());
  EXPECT_TRUE(session_->Lookup(Key('k', 2000), &v).ok());
  for (int n = 1000; n < 2000; n += 10) model_.erase(Key('k', n));
  Iterator it = session_->NewIterator();
  it.SeekToLast();
  EXPECT_EQ(Walk(it, Prev), ModelBackwards("", "\xff"));
  EXPECT_TRUE(session_->DeleteRange("", "b").IsInvalidArgument());  // an empty begin is no key
}

TEST_P(ApiOpsTest, WriteBatchAppliesInOrderOrNotAtAllWhenInvalid) {
  WriteBatch batch;
  batch.Put("new1", "x");
  batch.Put("new1", "y");  // the later write wins
  batch.Delete(Key('a', 0));
  batch.Delete("absent");  // not an error in a batch
  size_t applied = 0;
  ASSERT_TRUE(session_->Write(batch, &applied).ok());
  EXPECT_EQ(applied, 4u);
  std::string v;
  ASSERT_TRUE(session_->Lookup("new1", &v).ok());
  EXPECT_EQ(v, "y");
  EXPECT_TRUE(session_->Lookup(Key('a', 0), &v).IsNotFound());

  WriteBatch bad;
  bad.Put("new2", "x");
  bad.Put(std::string(300, 'k'), "x");  // longer than max_key_bytes
  EXPECT_TRUE(session_->Write(bad, &applied).IsInvalidArgument());
  EXPECT_EQ(applied, 0u);
  EXPECT_TRUE(session_->Lookup("new2", &v).IsNotFound());
}

TEST_P(ApiOpsTest, CompareAndSwapSwapsOnlyTheExpectedValue) {
  bool swapped = true;
  std::string current;
  Status s = session_->CompareAndSwap(Key('k', 10), "wrong", "new", &swapped, &current);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(swapped);
  EXPECT_EQ(current, Key('k', 10) + "-v");
  ASSERT_TRUE(session_->CompareAndSwap(Key('k', 10), current, "new", &swapped).ok());
  EXPECT_TRUE(swapped);
  std::string v;
  ASSERT_TRUE(session_->Lookup(Key('k', 10), &v).ok());
  EXPECT_EQ(v, "new");
  EXPECT_TRUE(session_->CompareAndSwap("absent", "a", "b", &swapped).IsNotFound());
  EXPECT_TRUE(session_->CompareAndSwap(Key('k', 20), "a", "b", nullptr).IsInvalidArgument());
  EXPECT_FALSE(swapped);
  // A value out of line (larger than inline_value_bytes) compares as one inline does.
  const std::string big(1000, 'b');
  ASSERT_TRUE(session_->Insert("big", big).ok());
  ASSERT_TRUE(session_->CompareAndSwap("big", big, "small", &swapped).ok());
  EXPECT_TRUE(swapped);
  ASSERT_TRUE(session_->CompareAndSwap("big", big, "again", &swapped, &current).ok());
  EXPECT_FALSE(swapped);
  EXPECT_EQ(current, "small");
  // A desired value out of line: swapped in, and one that is not swapped in changes nothing.
  const std::string big2(900, 'c');
  ASSERT_TRUE(session_->CompareAndSwap("big", "small", big2, &swapped).ok());
  EXPECT_TRUE(swapped);
  ASSERT_TRUE(session_->CompareAndSwap("big", "small", std::string(800, 'd'), &swapped, &current).ok());
  EXPECT_FALSE(swapped);
  EXPECT_EQ(current, big2);
  ASSERT_TRUE(session_->Lookup("big", &v).ok());
  EXPECT_EQ(v, big2);
}

// Drop refuses while a session is open; then deletes the index on every design (the pool
// designs' chunks: index_drop_test.cc).
TEST_P(ApiOpsTest, DropDeletesTheIndex) {
  EXPECT_TRUE(index_->Drop().IsInvalidArgument());
  std::string v;
  EXPECT_TRUE(session_->Lookup(Key('a', 0), &v).ok());  // nothing was dropped
  session_.reset();
  Status s = index_->Drop();
  EXPECT_TRUE(index_->OpenSession().status().IsInvalidArgument());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(index_->Drop().ok());  // a second Drop is OK
  EXPECT_TRUE(index_->Close().ok());
  EXPECT_EQ(index_->partitioning(), nullptr);
}

// Threads incrementing one counter by CompareAndSwap: every increment that reported a swap
// is in the final value, exactly (a compare and a swap with a write between them would lose
// one). The harness checks full histories (index_harness_test.cc); this is the short case.
TEST_P(ApiOpsTest, ConcurrentCompareAndSwapLosesNoIncrement) {
  ASSERT_TRUE(session_->Insert("counter", "0").ok());
  constexpr int kThreads = 4, kIncrements = 50;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      auto s = index_->OpenSession();
      if (!s.ok()) return void(++errors);
      for (int done = 0; done < kIncrements;) {
        std::string v;
        bool swapped = false;
        if (!(*s)->Lookup("counter", &v).ok()) return void(++errors);
        if (!(*s)->CompareAndSwap("counter", v, std::to_string(std::stoi(v) + 1), &swapped).ok()) return void(++errors);
        done += swapped ? 1 : 0;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  std::string v;
  ASSERT_TRUE(session_->Lookup("counter", &v).ok());
  EXPECT_EQ(v, std::to_string(kThreads * kIncrements));
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, ApiOpsTest, ::testing::ValuesIn(Index::Designs()),
                         testing::FabricParamName());

TEST(ApiOpsU64, ReverseIterationInTheU64Format) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  auto index = Index::Open(o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto session = (*index)->OpenSession();
  ASSERT_TRUE(session.ok());
  for (uint64_t k = 1; k <= 2000; ++k) ASSERT_TRUE((*session)->Insert(k * 7, k).ok());
  ReadOptions ro;
  ro.prefix_bytes = 7;  // keys 256 apart share no 7-byte prefix
  Iterator it = (*session)->NewIterator(ro);
  it.SeekForPrev(U64Key(1000));
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(U64Key::Decode(it.key()), 994u);
  uint64_t steps = 0, last = 0;
  for (; it.Valid(); it.Prev(), ++steps) last = U64Key::Decode(it.key());
  EXPECT_EQ(last, 770u);  // the first multiple of 7 at or above 768 = 0x300
  EXPECT_EQ(steps, (994u - 770u) / 7 + 1);
  Iterator all = (*session)->NewIterator();
  uint64_t n = 0, expect = 14000;
  for (all.SeekToLast(); all.Valid(); all.Prev(), expect -= 7, ++n) ASSERT_EQ(U64Key::Decode(all.key()), expect);
  EXPECT_EQ(n, 2000u);
}

// A store under a directory: Drop removes its folder, so it cannot be reopened by name.
TEST(ApiOpsDrop, DropRemovesAStoresFolder) {
  char dir[] = "/tmp/dmindex-drop-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  for (const char* design : {"rocksdb", "lmdb"}) {
    IndexOptions o;
    o.design = design;
    o.directory = dir;
    o.name = "dropped";
    auto index = Index::Open(o);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    {
      auto session = (*index)->OpenSession();
      ASSERT_TRUE(session.ok());
      ASSERT_TRUE((*session)->Insert("k", "v").ok());
    }
    ASSERT_TRUE((*index)->Drop().ok()) << design;
    EXPECT_FALSE(std::filesystem::exists(std::string(dir) + "/dropped")) << design;
    o.create_if_missing = false;
    EXPECT_TRUE(Index::Open(o).status().IsNotFound()) << design;
  }
  std::filesystem::remove_all(dir);
}

TEST(ApiOpsOptions, OptionsFromAStringUseTheFlagsParsers) {
  IndexOptions o;
  ASSERT_TRUE(ParseIndexOptions("design=naive;node_bytes=2048;key_format=u64;cache_bytes=16777216;hocl=off", &o).ok());
  EXPECT_EQ(o.design, "naive");
  EXPECT_EQ(o.node_bytes, 2048u);
  EXPECT_EQ(o.key_format, KeyFormat::kU64);
  EXPECT_EQ(o.cache_bytes, 16ull << 20);
  EXPECT_EQ(o.knobs.at("hocl"), "off");
  // A bad value names the item, and changes nothing.
  IndexOptions before = o;
  Status s = ParseIndexOptions("design=sherman;node_bytes=lots", &o);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("node_bytes"), std::string::npos) << s.ToString();
  EXPECT_EQ(o.design, before.design);
  EXPECT_TRUE(ParseIndexOptions("node_bytes", &o).IsInvalidArgument());
  EXPECT_TRUE(ParseIndexOptions("key_format=float", &o).IsInvalidArgument());
  // An unknown knob reaches the design, which refuses it when the index is opened.
  IndexOptions k;
  ASSERT_TRUE(ParseIndexOptions("design=sherman;no_such_knob=1", &k).ok());
  EXPECT_TRUE(Index::Open(k).status().IsInvalidArgument());
  IndexOptions good;
  ASSERT_TRUE(ParseIndexOptions("design=sherman;node_bytes=4096", &good).ok());
  auto index = Index::Open(good);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->options().node_bytes, 4096u);
}

}  // namespace
}  // namespace dmindex

namespace dmindex {
namespace {

struct Verbs {
  uint64_t round_trips = 0, reads = 0, writes = 0, atomics = 0, bytes = 0;
};
Verbs VerbsOf(const Cluster& c) {
  auto get = [&](const char* name) { return c.GetIntProperty(name).value_or(0); };
  return {get("dmindex.fabric.round-trips"), get("dmindex.fabric.reads"), get("dmindex.fabric.writes"),
          get("dmindex.fabric.atomics"), get("dmindex.fabric.bytes")};
}
Verbs Minus(const Verbs& a, const Verbs& b) {
  return {a.round_trips - b.round_trips, a.reads - b.reads, a.writes - b.writes, a.atomics - b.atomics,
          a.bytes - b.bytes};
}
std::string PerOp(const Verbs& v, double ops) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.3f round trips, %.3f READs, %.3f WRITEs, %.3f atomics, %.1f bytes",
                v.round_trips / ops, v.reads / ops, v.writes / ops, v.atomics / ops, v.bytes / ops);
  return buf;
}

// An index of u64 keys 1..keys (value = key) with every 97th key from 1 updated, so that
// caches hold the leaves the verb counts touch; its session is closed before it.
struct WarmU64Index {
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> session;
};
void OpenWarmU64(const std::string& design, decltype(IndexOptions::knobs) knobs, uint64_t keys,
                 WarmU64Index* out) {
  IndexOptions o;
  o.design = design;
  o.key_format = KeyFormat::kU64;
  o.knobs = std::move(knobs);
  auto index = Index::Open(o);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  out->index = std::move(index).value();
  auto session = out->index->OpenSession();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  out->session = std::move(session).value();
  for (uint64_t k = 1; k <= keys; ++k) ASSERT_TRUE(out->session->Insert(k, k).ok());
  for (uint64_t k = 1; k <= keys; k += 97) ASSERT_TRUE(out->session->Update(k, k + 1).ok());
}

// The figures docs/API.md states for sherman's iterators (u64 keys, warm cache, no lease
// renewals in the window): what a reverse step costs next to a forward one.
TEST(ApiOpsVerbs, ShermanReverseSteps) {
  constexpr uint64_t kKeys = 20'000;
  WarmU64Index w;
  ASSERT_NO_FATAL_FAILURE(OpenWarmU64("sherman", {{"lease_ms", "0"}}, kKeys, &w));
  const Cluster& cluster = *w.index->cluster();
  Session& s = *w.session;
  Verbs before;
  for (size_t batch : {size_t{0}, size_t{64}}) {
    ReadOptions ro;
    ro.readahead = batch;
    Iterator fwd = s.NewIterator(ro);
    before = VerbsOf(cluster);
    uint64_t steps = 0;
    for (fwd.SeekToFirst(); fwd.Valid(); fwd.Next()) ++steps;
    const Verbs forward = Minus(VerbsOf(cluster), before);
    ASSERT_EQ(steps, kKeys);
    Iterator back = s.NewIterator(ro);
    before = VerbsOf(cluster);
    steps = 0;
    uint64_t expect = kKeys;
    for (back.SeekToLast(); back.Valid(); back.Prev(), --expect, ++steps) ASSERT_EQ(U64Key::Decode(back.key()), expect);
    const Verbs reverse = Minus(VerbsOf(cluster), before);
    ASSERT_EQ(steps, kKeys);
    std::cout << "[ verbs    ] sherman readahead " << batch << ", per Next: " << PerOp(forward, kKeys) << "\n"
              << "[ verbs    ] sherman readahead " << batch << ", per Prev: " << PerOp(reverse, kKeys) << "\n";
  }
}

// CompareAndSwap's exact verbs, the figures docs/API.md states (u64 keys, 8-byte values,
// warm caches, no background threads in the window): a swap costs exactly an Update's verbs
// (sherman: the compare reads the leaf image the lock already fetched). A compare that fails
// writes nothing on rftree (answered from the leaf READ, docs/RFTREE.md) and dex (no redo
// record; a cache hit costs no verb at all); on xstore it is the same one RPC as a swap.
class ApiOpsCasVerbs : public ::testing::TestWithParam<std::string> {};

TEST_P(ApiOpsCasVerbs, ASwapCostsAnUpdateAndAFailedCompareWritesNothing) {
  const std::string d = GetParam();
  decltype(IndexOptions::knobs) knobs;
  if (d == "sherman" || d == "rftree") knobs["lease_ms"] = "0";  // the docs' figures
  if (d == "dex") {
    knobs["writeback_ms"] = "0";  // no background write-back
    knobs["log_kb"] = "4096";     // 65,536 records: the redo ring never fills (no checkpoint)
  }
  if (d == "xstore") {
    knobs["retrain"] = "off";  // no server-side retraining
    knobs["lease_ms"] = "0";   // no renewals of the handle's registration (the docs' figures)
  }
  constexpr uint64_t kKeys = 20'000;
  WarmU64Index w;
  ASSERT_NO_FATAL_FAILURE(OpenWarmU64(d, std::move(knobs), kKeys, &w));
  const Cluster& cluster = *w.index->cluster();
  Session& s = *w.session;

  Verbs before = VerbsOf(cluster);
  for (uint64_t k = 2; k <= kKeys; k += 97) ASSERT_TRUE(s.Update(k, k + 1).ok());
  const Verbs updates = Minus(VerbsOf(cluster), before);
  before = VerbsOf(cluster);
  uint64_t n = 0;
  for (uint64_t k = 3; k <= kKeys; k += 97, ++n) {
    bool swapped = false;
    ASSERT_TRUE(s.CompareAndSwap(U64Key(k), U64Key(k), U64Key(k + 1), &swapped).ok());
    ASSERT_TRUE(swapped);
  }
  const Verbs cas = Minus(VerbsOf(cluster), before);
  before = VerbsOf(cluster);
  for (uint64_t k = 3; k <= kKeys; k += 97) {
    bool swapped = true;
    std::string current;
    ASSERT_TRUE(s.CompareAndSwap(U64Key(k), U64Key(k), U64Key(k + 2), &swapped, &current).ok());
    ASSERT_FALSE(swapped);
    ASSERT_EQ(current, U64Key(k + 1).str());
  }
  const Verbs failed = Minus(VerbsOf(cluster), before);
  std::cout << "[ verbs    ] " << d << " Update: " << PerOp(updates, n) << "\n"
            << "[ verbs    ] " << d << " CompareAndSwap: " << PerOp(cas, n) << "\n"
            << "[ verbs    ] " << d << " CompareAndSwap, values differ: " << PerOp(failed, n) << "\n";
  EXPECT_EQ(cas.round_trips, updates.round_trips);
  EXPECT_EQ(cas.reads, updates.reads);
  EXPECT_EQ(cas.writes, updates.writes);
  EXPECT_EQ(cas.atomics, updates.atomics);
  if (d == "xstore") {
    // The RPC carries the expected value (4-byte length, 8 bytes) and its reply whether it
    // swapped (1 byte) and the value found (4-byte length, and 8 bytes when it did not swap).
    EXPECT_EQ(cas.bytes, updates.bytes + n * (4 + 8 + 1 + 4));
    EXPECT_EQ(failed.round_trips, updates.round_trips);
    EXPECT_EQ(failed.bytes, cas.bytes + n * 8);
  } else {
    EXPECT_EQ(cas.bytes, updates.bytes);
  }
  if (d == "rftree" || d == "dex") {
    EXPECT_EQ(failed.writes, 0u);
    EXPECT_EQ(failed.atomics, 0u);
  }
  if (d == "rftree") EXPECT_EQ(failed.reads, updates.reads);
  if (d == "dex") EXPECT_EQ(failed.round_trips, 0u);  // a cache hit, and no record to log
}

INSTANTIATE_TEST_SUITE_P(OwnWritePaths, ApiOpsCasVerbs, ::testing::Values("sherman", "rftree", "dex", "xstore"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace dmindex
