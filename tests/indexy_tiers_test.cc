// IndeXY's tiers (src/designs/indexy): the protocols that keep one index correct across X and
// Y, driven step by step (no background thread: releases and cleanings happen exactly where a
// test puts them), for every X: updates and deletes of keys only in Y, tombstones until Y has
// the deletion, admission never overwriting a newer value (the authors' code's lost update,
// digest R1), Y written before X unlinks (R2), no resurrection of deleted keys (R3), scans
// merging both tiers; the release policies' choices on a tree with a hot and a cold region;
// and, with the background running, memory held at the limit and nothing lost.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <thread>

#include "api/cluster_access.h"
#include "designs/indexy/indexy_options.h"
#include "designs/indexy/precleaner.h"
#include "designs/indexy/release_policy.h"
#include "designs/indexy/tiers.h"
#include "designs/indexy/x_art.h"
#include "designs/indexy/x_btree.h"
#include "harness_config.h"
#include "indexy_units.h"
#include "tiering/mem_store.h"

namespace dmindex::designs::indexy {
namespace {

std::string K(uint64_t i) { return U64Key(i).str(); }
// "<prefix><i>" (built by insert: GCC 12 warns wrongly about `"v" + std::to_string(i)`, -Wrestrict).
std::string Numbered(char prefix, uint64_t i) {
  std::string v = std::to_string(i);
  v.insert(v.begin(), prefix);
  return v;
}
std::string V(uint64_t i) { return Numbered('v', i); }

std::unique_ptr<XTree> MakeX(XKind kind, const IndexyOptions& o) {
  if (kind == XKind::kArt) return std::make_unique<ArtX>(o.unit_depth, o.sample_shift, o.reclaim_bytes());
  auto b = BtreeX::Make(KeyFormat::kU64, o);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return std::move(b).value();
}

// Tiers over a MemStore, with no background: the test releases and cleans.
class TiersTest : public ::testing::TestWithParam<XKind> {
 protected:
  TiersTest() {
    o_.limit_bytes = 1ull << 30;  // nothing happens by itself
    o_.sample_shift = 0;          // exact counters
    o_.node_bytes = 256;          // B+-tree X: small leaves, many units
    auto mem = std::make_unique<tiering::MemStore>();
    mem_ = mem.get();
    tiers_ = std::make_unique<Tiers>(o_, MakeX(GetParam(), o_), std::move(mem));
    fg_ = tiers_->x().NewWorker();
    bg_ = tiers_->x().NewWorker();
  }

  Status Put(uint64_t k, const std::string& v) { return tiers_->Insert(*fg_, K(k), v); }
  std::optional<std::string> Get(uint64_t k, XWorker* w = nullptr) {
    std::string v;
    Status s = tiers_->Lookup(w != nullptr ? *w : *fg_, K(k), &v);
    EXPECT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
    if (!s.ok()) return std::nullopt;
    return v;
  }
  // Every unit of X, in key order.
  std::vector<XUnit> Units() { return AllUnits(*bg_); }
  // Releases all of X to Y; returns the entries unlinked.
  uint64_t ReleaseAll() {
    uint64_t entries = 0;
    for (const XUnit& u : Units()) {
      auto r = bg_->Release(u, *tiers_);
      EXPECT_TRUE(r.ok() || r.status().IsNotFound()) << r.status().ToString();
      if (r.ok()) entries += r->entries;
    }
    while (bg_->Reclaim() > 0) std::this_thread::yield();
    return entries;
  }
  uint64_t CleanAll() {
    auto n = bg_->Clean(Units(), *tiers_);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : 0;
  }
  std::map<std::string, std::string> ScanAll() {
    std::vector<KeyValue> out;
    KeyRange all;
    all.start = K(0);
    EXPECT_TRUE(tiers_->Scan(*fg_, all, 1u << 30, &out).ok());
    std::map<std::string, std::string> m;
    for (auto& kv : out) {
      EXPECT_TRUE(m.emplace(kv.key, kv.value).second) << "a key twice";
    }
    return m;
  }

  IndexyOptions o_;
  tiering::MemStore* mem_ = nullptr;
  std::unique_ptr<Tiers> tiers_;
  std::unique_ptr<XWorker> fg_, bg_;
};

TEST_P(TiersTest, ReleasedKeysAreUpdatedDeletedAndNeverResurrect) {
  for (uint64_t k = 1; k <= 400; ++k) ASSERT_TRUE(Put(k, V(k)).ok());
  EXPECT_EQ(ReleaseAll(), 400u);
  EXPECT_EQ(tiers_->x().entries(), 0u);
  EXPECT_EQ(mem_->size(), 400u);  // the dirty entries went to Y first
  // A key only in Y: update, delete, and NotFound for keys that never were.
  ASSERT_TRUE(tiers_->Update(*fg_, K(10), "new10").ok());
  EXPECT_EQ(Get(10), "new10");
  ASSERT_TRUE(tiers_->Delete(*fg_, K(20)).ok());
  EXPECT_EQ(Get(20), std::nullopt);
  EXPECT_TRUE(tiers_->Delete(*fg_, K(20)).IsNotFound());
  EXPECT_TRUE(tiers_->Update(*fg_, K(20), "x").IsNotFound());
  EXPECT_TRUE(tiers_->Update(*fg_, K(1000), "x").IsNotFound());
  EXPECT_TRUE(tiers_->Delete(*fg_, K(1000)).IsNotFound());
  // Read back (admitted, clean), then changed in X, released again: the newest value wins.
  EXPECT_EQ(Get(30), "v30");
  ASSERT_TRUE(Put(30, "new30").ok());
  // The deletion of 20 and the update of 10 must reach Y, and 20 must not come back.
  EXPECT_EQ(ReleaseAll(), 3u);
  EXPECT_EQ(mem_->size(), 399u);
  EXPECT_EQ(Get(20), std::nullopt);
  EXPECT_EQ(Get(10), "new10");
  EXPECT_EQ(Get(30), "new30");
  // Deleting an admitted key leaves a tombstone (Y has a copy), which cleaning turns into a
  // deletion in Y and then drops.
  EXPECT_EQ(Get(40), "v40");
  ASSERT_TRUE(tiers_->Delete(*fg_, K(40)).ok());
  EXPECT_EQ(Get(40), std::nullopt);
  EXPECT_GT(CleanAll(), 0u);
  std::string v;
  EXPECT_TRUE(mem_->Get(K(40), &v).IsNotFound());
  EXPECT_EQ(Get(40), std::nullopt);
  ReleaseAll();
  EXPECT_EQ(Get(40), std::nullopt);
  // A key inserted and deleted while never in Y leaves nothing behind.
  ASSERT_TRUE(Put(5000, "x").ok());
  ASSERT_TRUE(tiers_->Delete(*fg_, K(5000)).ok());
  ReleaseAll();
  EXPECT_TRUE(mem_->Get(K(5000), &v).IsNotFound());
  const auto all = ScanAll();
  EXPECT_EQ(all.size(), 398u);
  EXPECT_EQ(all.count(K(20)), 0u);
  EXPECT_EQ(all.count(K(40)), 0u);
  EXPECT_EQ(all.at(K(10)), "new10");
}

// Y refusing every call (a full disk, a failing device): a release fails with the store's
// error and unlinks nothing, so every key stays readable from X; once Y works again, the same
// release succeeds.
// X's hits and misses (IndexStats::cache_hits / cache_misses) count every point operation
// alike: an update or delete that X answers is a hit, one that must read Y a miss, as for
// lookups.
TEST_P(TiersTest, HitsAndMissesCountWritesAsReads) {
  for (uint64_t k = 1; k <= 100; ++k) ASSERT_TRUE(Put(k, V(k)).ok());
  ASSERT_EQ(ReleaseAll(), 100u);
  ASSERT_TRUE(Put(200, V(200)).ok());  // in X
  const TierCounters before = tiers_->Counters();
  ASSERT_TRUE(tiers_->Update(*fg_, K(200), "a").ok());  // hit
  ASSERT_TRUE(tiers_->Update(*fg_, K(10), "b").ok());   // miss: read from Y, now in X
  ASSERT_TRUE(tiers_->Update(*fg_, K(10), "c").ok());   // hit
  ASSERT_TRUE(tiers_->Delete(*fg_, K(20)).ok());        // miss
  EXPECT_EQ(Get(30), V(30));                            // miss, admitted
  EXPECT_EQ(Get(30), V(30));                            // hit
  ASSERT_TRUE(tiers_->Delete(*fg_, K(30)).ok());        // hit
  const TierCounters after = tiers_->Counters();
  EXPECT_EQ(after.x_answers - before.x_answers, 4u);
  EXPECT_EQ(after.y_reads - before.y_reads, 3u);
}

TEST_P(TiersTest, FailingYKeepsEverythingInXAndReturnsItsError) {
  for (uint64_t k = 1; k <= 400; ++k) ASSERT_TRUE(Put(k, V(k)).ok());
  tiering::MemStoreFaults fail_all;
  fail_all.fail_every = 1;
  mem_->SetFaults(fail_all);
  int failed = 0;
  for (const XUnit& u : Units()) {
    auto r = bg_->Release(u, *tiers_);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsIoError()) << r.status().ToString();
    EXPECT_NE(r.status().message().find("injected failure of write"), std::string::npos) << r.status().ToString();
    ++failed;
  }
  EXPECT_GT(failed, 0);
  EXPECT_EQ(tiers_->x().entries(), 400u);
  EXPECT_EQ(mem_->size(), 0u);
  for (uint64_t k = 1; k <= 400; ++k) ASSERT_EQ(Get(k), V(k)) << k;
  mem_->SetFaults({});
  EXPECT_EQ(ReleaseAll(), 400u);
  EXPECT_EQ(mem_->size(), 400u);
  const auto all = ScanAll();
  ASSERT_EQ(all.size(), 400u);
  for (uint64_t k = 1; k <= 400; ++k) EXPECT_EQ(all.at(K(k)), V(k)) << k;
}

TEST_P(TiersTest, AdmissionNeverOverwritesANewerValue) {
  for (uint64_t k = 1; k <= 100; ++k) ASSERT_TRUE(Put(k, "old").ok());
  ReleaseAll();
  // Between the lookup's read of Y and its admission, a writer puts a new value into X, the
  // background writes it to Y and releases it: X lacks the key again, and Y has the new value.
  auto other = tiers_->x().NewWorker();
  bool raced = false;
  mem_->SetAfterGet([&](std::string_view key) {
    if (raced || key != K(7)) return;
    raced = true;
    ASSERT_TRUE(tiers_->Insert(*other, K(7), "new").ok());
    ReleaseAll();
  });
  EXPECT_EQ(Get(7), "old");  // what Y held when read: the key's value at that instant
  mem_->SetAfterGet({});
  EXPECT_TRUE(raced);
  EXPECT_EQ(Get(7), "new");  // the stale value was not admitted over the new one
  EXPECT_GE(tiers_->Counters().admissions_skipped, 1u);
}

TEST_P(TiersTest, UpdateOfAKeyOnlyInYTriesAgainWhenItMoves) {
  for (uint64_t k = 1; k <= 100; ++k) ASSERT_TRUE(Put(k, "old").ok());
  ReleaseAll();
  auto other = tiers_->x().NewWorker();
  int races = 0;
  mem_->SetAfterGet([&](std::string_view key) {
    if (races >= 2 || key != K(9)) return;
    ++races;
    ASSERT_TRUE(tiers_->Insert(*other, K(9), "mid" + std::to_string(races)).ok());
    ReleaseAll();
  });
  ASSERT_TRUE(tiers_->Update(*fg_, K(9), "mine").ok());
  mem_->SetAfterGet({});
  EXPECT_EQ(races, 2);
  EXPECT_EQ(tiers_->Counters().tier_retries, 2u);
  EXPECT_EQ(Get(9), "mine");
  ReleaseAll();
  EXPECT_EQ(Get(9), "mine");
}

TEST_P(TiersTest, ReleaseWritesYBeforeItUnlinks) {
  for (uint64_t k = 1; k <= 300; ++k) ASSERT_TRUE(Put(k, "v").ok());
  const uint64_t before = tiers_->x().entries();
  uint64_t writes = 0, gone = 0;
  mem_->SetBeforeWrite([&](const tiering::ColdBatch& batch) {
    ++writes;
    // Nothing of this unit has left X yet (every entry is dirty: the batch is the whole unit).
    EXPECT_EQ(tiers_->x().entries(), before - gone) << "write " << writes << " of " << batch.size();
    gone += batch.size();
  });
  ReleaseAll();
  mem_->SetBeforeWrite({});
  EXPECT_GT(writes, 0u);
  EXPECT_EQ(tiers_->x().entries(), 0u);
  EXPECT_EQ(gone, before);
  EXPECT_GE(tiers_->Counters().removals, writes);  // one removal event per unit at least
}

TEST_P(TiersTest, ScansMergeBothTiersAndTombstonesHideY) {
  std::map<std::string, std::string> model;
  for (uint64_t k = 2; k <= 1000; k += 2) {
    ASSERT_TRUE(Put(k, Numbered('y', k)).ok());
    model[K(k)] = Numbered('y', k);
  }
  ReleaseAll();
  for (uint64_t k = 1; k <= 1001; k += 10) {  // odd keys, only in X
    ASSERT_TRUE(Put(k, Numbered('x', k)).ok());
    model[K(k)] = Numbered('x', k);
  }
  for (uint64_t k = 4; k <= 1000; k += 12) {  // Y keys deleted in X (tombstones)
    ASSERT_TRUE(tiers_->Delete(*fg_, K(k)).ok());
    model.erase(K(k));
  }
  for (uint64_t k = 6; k <= 1000; k += 24) {  // Y keys overwritten in X
    if (!model.count(K(k))) continue;
    ASSERT_TRUE(Put(k, "new").ok());
    model[K(k)] = "new";
  }
  EXPECT_EQ(ScanAll(), model);
  // Short scans from every position agree with the model.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    KeyRange r;
    r.start = K(rng() % 1100);
    r.after_start = rng() % 2 == 0;
    if (rng() % 3 == 0) r.end = K(rng() % 1100);
    const size_t count = 1 + rng() % 40;
    std::vector<KeyValue> got;
    ASSERT_TRUE(tiers_->Scan(*fg_, r, count, &got).ok());
    std::vector<KeyValue> want;
    for (auto it = model.lower_bound(r.start); it != model.end() && want.size() < count; ++it) {
      if (!r.Contains(it->first)) {
        if (r.end && it->first >= *r.end) break;
        continue;
      }
      want.push_back({it->first, it->second});
    }
    ASSERT_EQ(got, want) << "scan " << i;
  }
}

// Forwards to a worker, running `before_scan` before its n-th Scan call (between two chunks of
// a merged scan).
class ScanHook final : public XWorker {
 public:
  ScanHook(XWorker& inner, int at, std::function<void()> before_scan)
      : inner_(inner), at_(at), before_scan_(std::move(before_scan)) {}
  void Enter() override { inner_.Enter(); }
  void Exit() override { inner_.Exit(); }
  Status Read(Slice key, XRead* out) override { return inner_.Read(key, out); }
  Status Modify(Slice key, XDecideFn decide) override { return inner_.Modify(key, decide); }
  Status Scan(Slice from, bool inclusive, FunctionRef<bool(const XEntryView&)> visit) override {
    if (++calls_ == at_) before_scan_();
    return inner_.Scan(from, inclusive, visit);
  }
  Status ForEachUnit(std::string_view after, FunctionRef<bool(XUnit&)> visit) override {
    return inner_.ForEachUnit(after, visit);
  }
  void ChangeBits(XUnit& unit, uint8_t set, uint8_t clear) override { inner_.ChangeBits(unit, set, clear); }
  Status Children(const XUnit& unit, std::vector<XUnit>* out) override { return inner_.Children(unit, out); }
  Result<uint64_t> Clean(std::span<const XUnit> units, YSink& y) override { return inner_.Clean(units, y); }
  Result<XReleased> Release(const XUnit& unit, YSink& y) override { return inner_.Release(unit, y); }
  void DecayAccesses() override { inner_.DecayAccesses(); }
  size_t Reclaim() override { return inner_.Reclaim(); }

 private:
  XWorker& inner_;
  const int at_;
  std::function<void()> before_scan_;
  int calls_ = 0;
};

// Y is empty when a scan starts, and X releases everything between its chunks: the second
// chunk finds X empty and must read Y (a scan that decided at its start that Y had nothing
// to offer returned nothing: seen in the harness).
TEST_P(TiersTest, ScanReadsWhatLeftXForYDuringTheScan) {
  for (uint64_t k = 1; k <= 100; ++k) ASSERT_TRUE(Put(k, V(k)).ok());
  // Tombstones for 1..40 (as deletes of keys Y holds leave them), so the first chunk returns
  // nothing and the scan goes on.
  for (uint64_t k = 1; k <= 40; ++k)
    ASSERT_TRUE(fg_->Modify(K(k), [](const XCurrent&) {
      return XDecision::Put({}, xflags::kDirty | xflags::kInY | xflags::kTombstone);
    }).ok());
  EXPECT_EQ(tiers_->Counters().y_writes, 0u);
  ScanHook hook(*fg_, 2, [&] { ReleaseAll(); });
  std::vector<KeyValue> got;
  KeyRange r;
  r.start = K(1);
  ASSERT_TRUE(tiers_->Scan(hook, r, 30, &got).ok());
  std::vector<KeyValue> want;
  for (uint64_t k = 41; k <= 70; ++k) want.push_back({K(k), V(k)});
  EXPECT_EQ(got, want);
  EXPECT_GT(tiers_->Counters().y_scans, 0u);
}

TEST_P(TiersTest, DensityReleasesTheColdRegionAndClockSparesTheAccessed) {
  // Four regions (first key byte 1..4) of 600 keys; regions 1 and 2 are read, 3 and 4 not.
  // Each policy picks a third of X for release; what it picks must come from the cold half.
  auto region_key = [](uint64_t r, uint64_t i) { return (r << 56) | (i * 4099); };
  for (ReleasePolicy p : {ReleasePolicy::kDensity, ReleasePolicy::kClock}) {
    IndexyOptions o = o_;
    o.release = p;
    Tiers tiers(o, MakeX(GetParam(), o), std::make_unique<tiering::MemStore>());
    auto fg = tiers.x().NewWorker(), bg = tiers.x().NewWorker();
    std::string v;
    for (uint64_t r = 1; r <= 4; ++r)
      for (uint64_t i = 1; i <= 600; ++i) ASSERT_TRUE(tiers.Insert(*fg, K(region_key(r, i)), "v").ok());
    auto read_hot = [&] {
      for (uint64_t r = 1; r <= 2; ++r)
        for (uint64_t i = 1; i <= 600; ++i) ASSERT_TRUE(tiers.Lookup(*fg, K(region_key(r, i)), &v).ok());
    };
    for (int round = 0; round < 20; ++round) read_hot();
    const double bpe = static_cast<double>(tiers.x().Bytes().total) / static_cast<double>(tiers.x().entries());
    ReleasePolicyRunner runner(o);
    if (p == ReleasePolicy::kClock) {
      // A first lap clears the reference bits; the hot units are referenced again after it.
      ASSERT_TRUE(runner.Select(*bg, tiers.x().Bytes().total * 10, bpe).ok());
      read_hot();
    }
    auto chosen = runner.Select(*bg, tiers.x().Bytes().total / 3, bpe);
    ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
    ASSERT_FALSE(chosen->empty());
    uint64_t released = 0;
    for (const XUnit& u : *chosen) {
      auto r = bg->Release(u, tiers);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      released += r->entries;
    }
    // What left X: at least a sixth of it, and (but for units straddling the boundary
    // between regions 2 and 3) none of the hot regions.
    std::map<int, uint64_t> in_x;
    ASSERT_TRUE(bg->Scan(K(0), true, [&](const XEntryView& e) {
      ++in_x[static_cast<uint8_t>(e.key[0])];
      return true;
    }).ok());
    EXPECT_GE(released, 2400u / 6) << ReleasePolicyName(p);
    EXPECT_GE(in_x[1] + in_x[2], 1200u * 95 / 100) << ReleasePolicyName(p) << " released hot entries";
  }
}

INSTANTIATE_TEST_SUITE_P(X, TiersTest, ::testing::Values(XKind::kArt, XKind::kBtree),
                         [](const auto& info) { return std::string(XKindName(info.param)); });

// ---- through the public API, with the background running ----

std::unique_ptr<Index> OpenIndexy(const std::string& knobs_text) {
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.design = "indexy";
  o.node_bytes = 256;
  std::string rest = knobs_text;
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string kv = rest.substr(0, colon);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    o.knobs[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  }
  auto index = Index::Open(o, ClusterOver(testing::MakeHarnessFabric({})));
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  return index.ok() ? std::move(index).value() : nullptr;
}

class IndexyBackgroundTest : public ::testing::TestWithParam<std::string> {};

TEST_P(IndexyBackgroundTest, MemoryStaysAtTheLimitAndNothingIsLost) {
  // stall_ms far above anything a working background needs: no writer goes on without room.
  auto index = OpenIndexy(GetParam() + ":y=mem:limit_mb=0.125:stall_ms=20000");
  ASSERT_NE(index, nullptr);
  auto s = std::move(index->OpenSession()).value();
  std::map<uint64_t, uint64_t> model;
  std::mt19937_64 rng(11);
  for (uint64_t i = 0; i < 12000; ++i) {
    const uint64_t k = 1 + rng() % 8000;
    switch (rng() % 8) {
      case 0: {
        Status st = s->Delete(k);
        ASSERT_EQ(st.ok(), model.erase(k) == 1) << st.ToString();
        break;
      }
      case 1: {
        Status st = s->Update(k, i);
        ASSERT_EQ(st.ok(), model.count(k) == 1) << st.ToString();
        if (st.ok()) model[k] = i;
        break;
      }
      case 2: {
        uint64_t v = 0;
        Status st = s->Lookup(k, &v);
        ASSERT_EQ(st.ok(), model.count(k) == 1) << st.ToString();
        if (st.ok()) { ASSERT_EQ(v, model[k]); }
        break;
      }
      default:
        ASSERT_TRUE(s->Insert(k, i).ok());
        model[k] = i;
    }
  }
  const uint64_t limit = *index->GetIntProperty("dmindex.indexy.limit-bytes");
  EXPECT_GT(*index->GetIntProperty("dmindex.indexy.released-entries"), 0u);
  EXPECT_EQ(*index->GetIntProperty("dmindex.indexy.stall-timeouts"), 0u);
  EXPECT_EQ(*index->GetIntProperty("dmindex.indexy.refused-writes"), 0u);
  EXPECT_EQ(*index->GetIntProperty("dmindex.indexy.background-errors"), 0u);
  // The most X ever held: the stall mark plus what one write adds (an entry, a grown node).
  EXPECT_LE(*index->GetIntProperty("dmindex.indexy.x-peak-bytes"), limit * 98 / 100 + 4096);
  for (const auto& [k, v] : model) {
    uint64_t got = 0;
    ASSERT_TRUE(s->Lookup(k, &got).ok()) << k;
    ASSERT_EQ(got, v) << k;
  }
  std::vector<KeyValue> all;
  ASSERT_TRUE(s->Scan(U64Key(0), 1u << 30, &all).ok());
  ASSERT_EQ(all.size(), model.size());
  auto it = model.begin();
  for (const KeyValue& kv : all) {
    ASSERT_EQ(kv.key, U64Key(it->first).str());
    ASSERT_EQ(kv.value, U64Key(it->second).str());
    ++it;
  }
  s.reset();
  EXPECT_TRUE(index->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(Policies, IndexyBackgroundTest,
                         ::testing::Values("x=art:release=density", "x=btree:release=clock"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(IndexyKnobsTest, BadKnobsAreClearErrors) {
  auto bad = [](std::map<std::string, std::string> knobs, const std::string& needle) {
    IndexOptions o;
    o.key_format = KeyFormat::kU64;
    o.design = "indexy";
    o.knobs = std::move(knobs);
    auto index = Index::Open(o, ClusterOver(testing::MakeHarnessFabric({})));
    ASSERT_FALSE(index.ok());
    EXPECT_TRUE(index.status().IsInvalidArgument()) << index.status().ToString();
    EXPECT_NE(index.status().message().find(needle), std::string::npos) << index.status().ToString();
  };
  bad({{"x", "hash"}}, "art or btree");
  bad({{"y", "leveldb"}}, "rocksdb, lmdb, btree or mem");
  bad({{"limit_mb", "0"}}, "limit_mb");
  bad({{"low", "0.99"}}, "above knob high");
  bad({{"release", "lru"}}, "density or clock");
  bad({{"sample", "10"}}, "power of two");
  bad({{"no_such", "1"}}, "unknown knob");
  // LMDB's keys are at most 511 bytes: a bytes index allowing longer ones is refused, named.
  IndexOptions o;
  o.key_format = KeyFormat::kU64;
  o.design = "indexy";
  o.knobs = {{"y", "lmdb"}};
  o.key_format = KeyFormat::kBytes;
  o.max_key_bytes = 1024;
  auto index = Index::Open(o, ClusterOver(testing::MakeHarnessFabric({})));
  ASSERT_FALSE(index.ok());
  EXPECT_TRUE(index.status().IsNotSupported()) << index.status().ToString();
  EXPECT_NE(index.status().message().find("511"), std::string::npos) << index.status().ToString();
}

// Writers on disjoint keys with a tiny limit: every write is checked by its owner at the end,
// after releases, cleanings and admissions ran under them the whole time.
TEST(IndexyConcurrentTest, ConcurrentWritersAtATinyLimitLoseNothing) {
  for (const std::string x : {"art", "btree"}) {
    auto index = OpenIndexy("x=" + x + ":y=mem:limit_mb=0.06");
    ASSERT_NE(index, nullptr);
    constexpr int kThreads = 4;
    std::vector<std::map<uint64_t, uint64_t>> models(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        auto s = std::move(index->OpenSession()).value();
        std::mt19937_64 rng(t);
        auto& model = models[t];
        for (uint64_t i = 0; i < 3000; ++i) {
          const uint64_t k = 1 + (rng() % 1500) * kThreads + t;
          const int op = static_cast<int>(rng() % 6);
          if (op == 0) {
            Status st = s->Delete(k);
            ASSERT_EQ(st.ok(), model.erase(k) == 1) << st.ToString();
          } else if (op == 1) {
            uint64_t v = 0;
            Status st = s->Lookup(k, &v);
            ASSERT_EQ(st.ok(), model.count(k) == 1) << st.ToString();
            if (st.ok()) { ASSERT_EQ(v, model[k]); }
          } else {
            ASSERT_TRUE(s->Insert(k, i).ok());
            model[k] = i;
          }
        }
        for (const auto& [k, v] : model) {
          uint64_t got = 0;
          ASSERT_TRUE(s->Lookup(k, &got).ok()) << k;
          ASSERT_EQ(got, v);
        }
      });
    for (auto& th : threads) th.join();
    EXPECT_GT(*index->GetIntProperty("dmindex.indexy.released-entries"), 0u) << x;
    EXPECT_GT(*index->GetIntProperty("dmindex.indexy.admissions"), 0u) << x;
  }
}

}  // namespace
}  // namespace dmindex::designs::indexy
