// XStore (src/designs/xstore, docs/XSTORE.md) beyond the shared harness: what its learned
// cache costs in verbs, and that it stays correct when the models are stale.
//
//  * BulkLoadedLookupsAreOneRoundTrip / RandomKeysReadMoreLeavesInOneRoundTrip - after a bulk
//    load every lookup (present or absent key) is exactly one round trip and no RPC (values
//    inline); sequential keys read one leaf per lookup, random ones a few, in that one trip.
//  * SlotReadReadsTheHeaderAndAFewSlots - slot_read=on: bytes per lookup well under a leaf.
//  * StaleModelWithRetrainingOffStaysCorrect - retrain=off, then as many inserts as loaded keys
//    and deletes of half: most leaves split under the model; every answer stays right (the
//    stale model costs speculative reads and fallbacks, counted), scans too.
//  * KeysInsertedAfterTrainingAreNeverReportedAbsent - the trap without fence keys (T2): a key
//    inserted into a leaf split off right of the predicted ones is found, and an absent key
//    next to it is absent, deterministically.
//  * RetrainingRestoresOneRoundTripLookups - retrain=on: after the inserts and the memory
//    servers' background retraining, a client's lookups are back to one round trip: the
//    stale sub-models it held are refetched (directory word read along with the leaves).
//  * ExpansionDoublesTheSubModels - keys per sub-model past expand_at: the server trains a
//    set with twice the sub-models in the background; clients switch to it.
//  * TornSlotReadIsReadWhole - scripted: slot_read's header and slot READs land on either side
//    of a server write that moves the key to another slot; the slots fail against the header's
//    version and the leaf is read whole: the lookup answers right and counts the retry.
//  * TornOrForeignModelRecordsAreRefused - a sub-model blob torn between two generations, or
//    of another sub-model or model set, never decodes into a model a client would use.
//  * ConcurrentOpsWhileModelsRetrainAndExpandAreLinearizable - the harness's checked workload
//    under torn and delayed verbs with sub-models of 4 keys: the memory servers retrain and
//    expand all through the run (asserted by their counters), clients fetch the new models
//    while they read; the history is linearizable and scans are correct.
//  * YcsbByteKeys, ByteKeysTheProjectionCannotTellApart - the bytes format: YCSB's user<n>
//    keys (64-bit hashes in decimal) one round trip per lookup; keys that agree on the digits
//    the projection holds after their common prefix fall back to the server (counted) and
//    stay correct.
//  * ByteKeysOutsideTheTrainedAlphabetStayFound - keys inserted after training with bytes the
//    projection's alphabet lacks, or outside its prefix, through retraining and expansion.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include <thread>

#include "api/cluster_access.h"
#include "check/workload.h"
#include "designs/xstore/pool_format.h"
#include "fabric/inproc/verb_script.h"
#include "harness_config.h"

namespace dmindex {
namespace {

struct Counts {
  uint64_t round_trips = 0, reads = 0, rpcs = 0, bytes = 0;
};

class XStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Index> Open(std::map<std::string, std::string> knobs, KeyFormat format = KeyFormat::kU64,
                              const fabric::FaultOptions& faults = {}) {
    auto f = testing::MakeHarnessFabric(faults, 4 << 20);
    fabric_ = f.get();
    cluster_ = ClusterOver(std::move(f));
    IndexOptions o = testing::HarnessIndexOptions("xstore-test", format);
    o.design = "xstore";
    o.knobs = std::move(knobs);
    if (format == KeyFormat::kBytes) {
      o.max_key_bytes = 64;
      o.inline_value_bytes = 16;
      o.node_bytes = 1024;
    }
    auto index = Index::Open(o, cluster_);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(index).value() : nullptr;
  }
  Counts Now() const {
    auto get = [this](const char* n) { return cluster_->GetIntProperty(n).value_or(0); };
    return {get("dmindex.fabric.round-trips"), get("dmindex.fabric.reads"), get("dmindex.fabric.rpcs"),
            get("dmindex.fabric.bytes")};
  }
  static uint64_t Property(const Index& index, const std::string& name) {
    return index.GetIntProperty("dmindex.xstore." + name).value_or(~uint64_t{0});
  }
  // YCSB's keys: "user" and a hashed record number (insertorder=hashed: a 64-bit hash, 1 to 20
  // digits, half of them 20 digits starting with '1'), as bench makes them; values their rank.
  static std::map<std::string, std::string> YcsbKeys(int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::map<std::string, std::string> model;
    for (int i = 0; i < n; ++i) model["user" + std::to_string(rng())] = std::to_string(i);
    return model;
  }
  static std::vector<KeyValue> Sorted(const std::map<std::string, std::string>& model) {
    std::vector<KeyValue> sorted;
    for (const auto& [k, v] : model) sorted.push_back({k, v});
    return sorted;
  }
  // A full scan returns exactly `model`.
  static void ExpectScanIs(Session& s, const std::map<std::string, std::string>& model) {
    std::vector<KeyValue> all;
    ASSERT_TRUE(s.Scan("", 100'000, &all).ok());
    ASSERT_EQ(all.size(), model.size());
    EXPECT_TRUE(std::equal(all.begin(), all.end(), model.begin(),
                           [](const KeyValue& a, const auto& b) { return a.key == b.first && a.value == b.second; }));
  }
  static std::vector<KeyValue> U64Pairs(const std::vector<uint64_t>& keys) {
    std::vector<KeyValue> v;
    for (uint64_t k : keys) v.push_back({U64Key(k).str(), U64Key(k * 3).str()});
    std::sort(v.begin(), v.end(), [](const KeyValue& a, const KeyValue& b) { return a.key < b.key; });
    return v;
  }
  // Bulk loads `keys` (values k * 3), then looks up every key and the absent key after it
  // (each must answer right) and returns the verbs those lookups took: per lookup.
  struct PerLookup {
    double round_trips, reads, rpcs, bytes;
  };
  PerLookup LoadAndLookUpEveryKey(Index& index, const std::vector<uint64_t>& keys) {
    EXPECT_TRUE(index.BulkLoad(U64Pairs(keys)).ok());
    auto s = std::move(index.OpenSession(0)).value();
    uint64_t v = 0;
    // The first lookup into each partition fetches its model set (prefetch).
    EXPECT_TRUE(s->Lookup(keys.front(), &v).ok());
    EXPECT_TRUE(s->Lookup(keys.back(), &v).ok());
    const Counts before = Now();
    for (uint64_t k : keys) {
      EXPECT_TRUE(s->Lookup(k, &v).ok()) << k;
      EXPECT_EQ(v, k * 3) << k;
      EXPECT_TRUE(s->Lookup(k + 1, &v).IsNotFound()) << k + 1;
    }
    const Counts after = Now();
    const double n = 2.0 * keys.size();
    return {(after.round_trips - before.round_trips) / n, (after.reads - before.reads) / n,
            (after.rpcs - before.rpcs) / n, (after.bytes - before.bytes) / n};
  }
  fabric::InProcFabric* fabric_ = nullptr;  // the cluster's, for scripts
  std::shared_ptr<Cluster> cluster_;
};

TEST_F(XStoreTest, BulkLoadedLookupsAreOneRoundTrip) {
  auto index = Open({});
  ASSERT_NE(index, nullptr);
  std::vector<uint64_t> keys;
  for (uint64_t i = 1; i <= 20'000; ++i) keys.push_back(i * 8);
  const PerLookup per = LoadAndLookUpEveryKey(*index, keys);
  EXPECT_EQ(per.round_trips, 1.0);
  EXPECT_EQ(per.rpcs, 0.0);
  EXPECT_EQ(Property(*index, "fallbacks"), 0u);
  // Evenly spaced keys: nearly exact models, one leaf for most lookups.
  EXPECT_LT(per.reads, 1.15);
  std::cout << "[ xstore   ] sequential keys: " << per.reads << " leaves and " << per.bytes
            << " bytes per lookup, client memory " << index->Stats().cache_bytes << " bytes\n";
}

TEST_F(XStoreTest, RandomKeysReadMoreLeavesInOneRoundTrip) {
  auto index = Open({});
  ASSERT_NE(index, nullptr);
  std::mt19937_64 rng(5);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 20'000; ++i) keys.push_back(2 + rng() % (uint64_t{1} << 62) * 2);  // even keys
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const PerLookup per = LoadAndLookUpEveryKey(*index, keys);
  EXPECT_EQ(per.round_trips, 1.0);
  EXPECT_EQ(per.rpcs, 0.0);
  EXPECT_GT(per.reads, 1.0);
  EXPECT_LT(per.reads, 8.0);
  std::cout << "[ xstore   ] random keys: " << per.reads << " leaves and " << per.bytes << " bytes per lookup\n";
}

// Scans of 100 entries over sub-models of 8 keys: every scan crosses several sub-models'
// intervals, and its leaves are still READ in one batch (the run goes on through the tables of
// the sub-models after the predicted one), the entries exact. One partition: a scan that
// crosses partitions reads each one's leaves in a batch of its own.
TEST_F(XStoreTest, ScansAcrossSubModelsAreOneRoundTrip) {
  auto index = Open({{"keys_per_model", "8"}, {"expand_at", "off"}, {"partitions", "1"}});
  ASSERT_NE(index, nullptr);
  std::vector<uint64_t> keys;
  for (uint64_t i = 1; i <= 4'000; ++i) keys.push_back(i * 8);
  ASSERT_TRUE(index->BulkLoad(U64Pairs(keys)).ok());
  auto s = std::move(index->OpenSession(0)).value();
  std::vector<KeyValue> out;
  ASSERT_TRUE(s->Scan(U64Key(keys[0]), 100, &out).ok());  // fetches the model set
  const Counts before = Now();
  int scans = 0;
  for (size_t i = 0; i + 100 < keys.size(); i += 97, ++scans) {
    ASSERT_TRUE(s->Scan(U64Key(keys[i] - 3), 100, &out).ok());  // starts between two keys
    ASSERT_EQ(out.size(), 100u);
    for (size_t j = 0; j < out.size(); ++j) ASSERT_EQ(out[j].key, U64Key(keys[i + j]).str());
  }
  const Counts after = Now();
  EXPECT_EQ(after.round_trips - before.round_trips, static_cast<uint64_t>(scans));
  EXPECT_EQ(after.rpcs - before.rpcs, 0u);
}

TEST_F(XStoreTest, SlotReadReadsTheHeaderAndAFewSlots) {
  auto index = Open({{"slot_read", "on"}});
  ASSERT_NE(index, nullptr);
  std::vector<uint64_t> keys;
  for (uint64_t i = 1; i <= 20'000; ++i) keys.push_back(i * 8);
  const PerLookup per = LoadAndLookUpEveryKey(*index, keys);
  EXPECT_LT(per.bytes, 256.0);  // a whole 16-slot leaf is 448 bytes
  EXPECT_LT(per.round_trips, 1.05);
  std::cout << "[ xstore   ] slot_read: " << per.bytes << " bytes per lookup, " << Property(*index, "slot-misses")
            << " of " << 2 * keys.size() << " lookups read a whole leaf\n";
}

TEST_F(XStoreTest, StaleModelWithRetrainingOffStaysCorrect) {
  for (const char* slot_read : {"off", "on"}) {
    auto index = Open({{"retrain", "off"}, {"slot_read", slot_read}});
    ASSERT_NE(index, nullptr);
    std::mt19937_64 rng(11);
    std::map<uint64_t, uint64_t> model;
    for (int i = 0; i < 5'000; ++i) model[1 + rng() % 1'000'000] = 0;
    std::vector<uint64_t> loaded;
    for (auto& [k, v] : model) loaded.push_back(k), v = k * 3;
    ASSERT_TRUE(index->BulkLoad(U64Pairs(loaded)).ok());
    auto s = std::move(index->OpenSession(0)).value();
    uint64_t v = 0;
    ASSERT_TRUE(s->Lookup(loaded[0], &v).ok());
    for (int i = 0; i < 5'000; ++i) {
      const uint64_t k = 1 + rng() % 1'000'000;
      ASSERT_TRUE(s->Insert(k, k + 7).ok());
      model[k] = k + 7;
    }
    for (size_t i = 0; i < loaded.size(); i += 2) {
      ASSERT_TRUE(s->Delete(loaded[i]).ok());
      model.erase(loaded[i]);
    }
    for (uint64_t k = 1; k <= 1'000'000; k += 97) {
      Status st = s->Lookup(k, &v);
      auto it = model.find(k);
      ASSERT_EQ(st.ok(), it != model.end()) << "key " << k << ": " << st.ToString();
      if (st.ok()) {
        ASSERT_EQ(v, it->second) << k;
      }
    }
    for (const auto& [k, want] : model) {
      ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
      ASSERT_EQ(v, want) << k;
    }
    std::vector<KeyValue> all;
    ASSERT_TRUE(s->Scan(U64Key(1), 100'000, &all).ok());
    ASSERT_EQ(all.size(), model.size());
    auto it = model.begin();
    for (const KeyValue& kv : all) {
      ASSERT_EQ(U64Key::Decode(kv.key), it->first);
      ASSERT_EQ(U64Key::Decode(kv.value), it->second);
      ++it;
    }
    EXPECT_EQ(Property(*index, "trainings"), 2u);  // one per partition, at the bulk load
    EXPECT_EQ(Property(*index, "retrains"), 0u);
    EXPECT_GT(Property(*index, "invalidations"), 0u);
    EXPECT_GT(Property(*index, "speculative-reads"), 0u);
    std::cout << "[ xstore   ] stale model, slot_read=" << slot_read << ": " << Property(*index, "lookups")
              << " lookups, " << Property(*index, "invalidations") << " met a split leaf, "
              << Property(*index, "speculative-reads") << " speculative reads, " << Property(*index, "fallbacks")
              << " fallbacks\n";
  }
}

TEST_F(XStoreTest, KeysInsertedAfterTrainingAreNeverReportedAbsent) {
  auto index = Open({{"retrain", "off"}, {"partitions", "1"}});
  ASSERT_NE(index, nullptr);
  std::vector<uint64_t> keys;
  for (uint64_t i = 1; i <= 400; ++i) keys.push_back(i * 1000);
  ASSERT_TRUE(index->BulkLoad(U64Pairs(keys)).ok());
  auto s = std::move(index->OpenSession(0)).value();
  // Fill the gap after key 200000 until its leaf has split several times: the new keys live
  // in leaves the model has never seen, right of the leaf it predicts.
  for (uint64_t k = 200'001; k < 200'001 + 64; ++k) ASSERT_TRUE(s->Insert(k, k).ok());
  uint64_t v = 0;
  for (uint64_t k = 200'001; k < 200'001 + 64; ++k) {
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, k);
  }
  EXPECT_TRUE(s->Lookup(200'001 + 64, &v).IsNotFound());
  EXPECT_TRUE(s->Lookup(200'999, &v).IsNotFound());
  ASSERT_TRUE(s->Lookup(201'000, &v).ok());
  EXPECT_GT(Property(*index, "invalidations"), 0u);
}

TEST_F(XStoreTest, RetrainingRestoresOneRoundTripLookups) {
  auto index = Open({{"expand_at", "off"}});
  ASSERT_NE(index, nullptr);
  std::mt19937_64 rng(3);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 10'000; ++i) keys.push_back(1 + rng() % (uint64_t{1} << 40));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  ASSERT_TRUE(index->BulkLoad(U64Pairs(keys)).ok());
  auto s = std::move(index->OpenSession(0)).value();
  uint64_t v = 0;
  ASSERT_TRUE(s->Lookup(keys[0], &v).ok());  // this client holds the models trained at the load
  std::vector<uint64_t> inserted;
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t k = 1 + rng() % (uint64_t{1} << 40);
    ASSERT_TRUE(s->Insert(k, k * 3).ok());
    inserted.push_back(k);
  }
  // Wait for the background retraining: a second handle's Close asks the memory servers.
  {
    IndexOptions o = index->options();
    auto other = Index::Open(o, cluster_);
    ASSERT_TRUE(other.ok());
    auto os = std::move((*other)->OpenSession(0)).value();
    ASSERT_TRUE(os->Lookup(keys[0], &v).ok());
    os.reset();
    ASSERT_TRUE((*other)->Close().ok());
  }
  EXPECT_GT(Property(*index, "retrains"), 0u);
  // The first pass meets split leaves and refetches the sub-models; the second is direct.
  for (uint64_t k : inserted) ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
  const Counts before = Now();
  for (uint64_t k : inserted) {
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, k * 3);
  }
  const Counts after = Now();
  EXPECT_LT(double(after.round_trips - before.round_trips) / inserted.size(), 1.02);
  EXPECT_EQ(after.rpcs - before.rpcs, 0u);
}

TEST_F(XStoreTest, ExpansionDoublesTheSubModels) {
  auto index = Open({{"keys_per_model", "50"}, {"expand_at", "100"}, {"partitions", "1"}});
  ASSERT_NE(index, nullptr);
  std::vector<uint64_t> keys;
  for (uint64_t i = 1; i <= 2'000; ++i) keys.push_back(i * 1'000);
  ASSERT_TRUE(index->BulkLoad(U64Pairs(keys)).ok());
  auto s = std::move(index->OpenSession(0)).value();
  uint64_t v = 0;
  ASSERT_TRUE(s->Lookup(keys[0], &v).ok());
  EXPECT_EQ(Property(*index, "models"), 40u);
  std::mt19937_64 rng(9);
  std::map<uint64_t, uint64_t> model;
  for (uint64_t k : keys) model[k] = k * 3;
  for (int i = 0; i < 20'000; ++i) {
    const uint64_t k = 1 + rng() % 2'000'000;
    ASSERT_TRUE(s->Insert(k, k).ok());
    model[k] = k;
    if (i % 64 == 0) {
      ASSERT_TRUE(s->Lookup(k, &v).ok());  // reads along, across expansions
    }
  }
  s.reset();
  ASSERT_TRUE(index->Close().ok());  // waits for the background training
  // The servers' counters as they are now (a closed handle's properties are the ones it had
  // when Close began, before the training it waited for).
  auto index2 = Index::Open(index->options(), cluster_);
  ASSERT_TRUE(index2.ok());
  EXPECT_GE(Property(**index2, "expansions"), 1u);
  auto s2 = std::move((*index2)->OpenSession(0)).value();
  for (const auto& [k, want] : model) {
    ASSERT_TRUE(s2->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, want);
  }
  EXPECT_GE(Property(**index2, "models"), 80u);
}

TEST_F(XStoreTest, TornSlotReadIsReadWhole) {
  auto index = Open({{"slot_read", "on"}, {"partitions", "1"}, {"retrain", "off"}});
  ASSERT_NE(index, nullptr);
  // One leaf of 8 keys: 10, 20, ..., 80.
  std::vector<uint64_t> keys;
  for (uint64_t k = 10; k <= 80; k += 10) keys.push_back(k);
  ASSERT_TRUE(index->BulkLoad(U64Pairs(keys)).ok());
  auto reader = std::move(index->OpenSession(0)).value();
  auto writer = std::move(index->OpenSession(0)).value();
  uint64_t v = 0;
  ASSERT_TRUE(reader->Lookup(50, &v).ok());  // fetches the models
  // Hold the lookup's READ of the predicted slots (a multiple of 24 bytes) before any byte.
  fabric::HeldVerb hold([](const fabric::Verb& verb) { return verb.kind == fabric::VerbKind::kRead && verb.length % 24 == 0; },
                        {});
  fabric_->SetVerbScript(&hold);
  const uint64_t retries = index->Stats().retries;
  Status looked_up;
  std::thread lookup([&] { looked_up = reader->Lookup(50, &v); });
  ASSERT_TRUE(hold.WaitHeld());
  // Its header READ is done; the server now rewrites the leaf: 50 moves two slots right.
  ASSERT_TRUE(writer->Insert(11, 1).ok());
  ASSERT_TRUE(writer->Insert(12, 2).ok());
  hold.Release();
  lookup.join();
  fabric_->SetVerbScript(nullptr);
  ASSERT_TRUE(looked_up.ok()) << looked_up.ToString();
  EXPECT_EQ(v, 150u);
  EXPECT_GT(index->Stats().retries, retries);
}

TEST(XStoreRecords, TornOrForeignModelRecordsAreRefused) {
  using namespace designs::xstore;
  SubModelRecord a;
  a.epoch = 3;
  a.id = 7;
  a.generation = 1;
  a.model.line.slope = 0.5;
  a.model.pages = 4;
  a.table = {1, 2, 3, 4};
  SubModelRecord b = a;
  b.generation = 2;
  b.table = {5, 6, 7, 8};
  const std::vector<std::byte> ea = a.Encode(), eb = b.Encode();
  SubModelRecord out;
  ASSERT_TRUE(SubModelRecord::Decode(ea.data(), static_cast<uint32_t>(ea.size()), &out));
  EXPECT_EQ(out.generation, 1u);
  EXPECT_EQ(out.table, a.table);
  // Any 64-byte piece of one generation in the other: refused.
  for (size_t at = 0; at < ea.size(); at += 64) {
    std::vector<std::byte> torn = ea;
    std::copy(eb.begin() + at, eb.begin() + std::min(eb.size(), at + 64), torn.begin() + at);
    if (torn == ea || torn == eb) continue;
    EXPECT_FALSE(SubModelRecord::Decode(torn.data(), static_cast<uint32_t>(torn.size()), &out)) << at;
  }
  // A READ of the wrong length (a stale directory word naming reused memory): refused.
  EXPECT_FALSE(SubModelRecord::Decode(ea.data(), static_cast<uint32_t>(ea.size() - 8), &out));
  // Zero memory is no record.
  std::vector<std::byte> zero(ea.size());
  EXPECT_FALSE(SubModelRecord::Decode(zero.data(), static_cast<uint32_t>(zero.size()), &out));
  ModelSetRecord set;
  set.epoch = 2;
  set.top = learned::TopModel({{10, 0.0}, {20, 0.5}}, 5);
  set.prefix = "user";
  set.alphabet = {1, 2, 3, 4};
  const std::vector<std::byte> es = set.Encode();
  ModelSetRecord set_out;
  ASSERT_TRUE(ModelSetRecord::Decode(es.data(), static_cast<uint32_t>(es.size()), &set_out));
  EXPECT_EQ(set_out.prefix, "user");
  EXPECT_EQ(set_out.alphabet, set.alphabet);
  ASSERT_EQ(set_out.top.knots().size(), 2u);
  EXPECT_EQ(set_out.top.knots()[1].x, 20u);
  EXPECT_EQ(set_out.top.knots()[1].y, 0.5);
  std::vector<std::byte> flipped = es;
  flipped[20] ^= std::byte{1};
  EXPECT_FALSE(ModelSetRecord::Decode(flipped.data(), static_cast<uint32_t>(flipped.size()), &set_out));
}

TEST_F(XStoreTest, ConcurrentOpsWhileModelsRetrainAndExpandAreLinearizable) {
  auto index = Open({{"keys_per_model", "4"}, {"expand_at", "8"}, {"train_threads", "2"}}, KeyFormat::kU64,
                    testing::HarnessFaults());
  ASSERT_NE(index, nullptr);
  check::WorkloadOptions w = testing::HarnessWorkload();
  w.keys = 512;
  check::ConcurrentWorkload workload(*index, w);
  ASSERT_TRUE(workload.Preload().ok());
  auto report = check::RunCheckedRounds(workload, testing::HarnessRounds());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(workload.errors(), 0u) << workload.first_error();
  EXPECT_TRUE(report->ok()) << report->ToString();
  EXPECT_GT(report->scans_checked, 0u);
  ASSERT_TRUE(index->Close().ok());  // waits for the background training
  auto now = Index::Open(index->options(), cluster_);  // the servers' counters now (above)
  ASSERT_TRUE(now.ok());
  EXPECT_GT(Property(**now, "retrains"), 0u);
  EXPECT_GT(Property(**now, "expansions"), 0u);
  EXPECT_GT(Property(*index, "model-fetches"), 2u);  // clients picked up retrained models
  std::cout << "[ xstore   ] " << report->ToString(0) << "; " << Property(**now, "retrains") << " retrains, "
            << Property(**now, "expansions") << " expansions, " << Property(*index, "model-fetches")
            << " model fetches, " << Property(*index, "fallbacks") << " fallbacks\n";
}

TEST_F(XStoreTest, YcsbByteKeys) {
  auto index = Open({}, KeyFormat::kBytes);
  ASSERT_NE(index, nullptr);
  // Byte by byte YCSB's keys fill the model keys in clumps (10 of 256 values per byte); the
  // projection's alphabet and the top model's segments make them one round trip per lookup.
  std::map<std::string, std::string> model = YcsbKeys(10'000, 1);
  std::mt19937_64 rng(2);
  const std::vector<KeyValue> sorted = Sorted(model);
  ASSERT_TRUE(index->BulkLoad(sorted).ok());
  auto s = std::move(index->OpenSession(0)).value();
  std::string v;
  ASSERT_TRUE(s->Lookup(sorted.front().key, &v).ok());
  ASSERT_TRUE(s->Lookup(sorted.back().key, &v).ok());
  const Counts before = Now();
  for (const auto& [k, want] : model) {
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, want);
    ASSERT_TRUE(s->Lookup(k + "0", &v).IsNotFound()) << k;
  }
  const Counts after = Now();
  EXPECT_EQ(after.round_trips - before.round_trips, 2 * model.size());
  EXPECT_EQ(Property(*index, "fallbacks"), 0u);
  for (int i = 0; i < 3'000; ++i) {
    const std::string k = "user" + std::to_string(rng());
    ASSERT_TRUE(s->Insert(k, "new").ok());
    model[k] = "new";
  }
  for (const auto& [k, want] : model) {
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, want);
  }
  ExpectScanIs(*s, model);
}

// Keys that agree on the digits the projection holds after their common prefix have one model
// key: a sub-model cannot tell them apart, its prediction spans all their leaves, and the
// lookup goes to the server. Here each partition (two memory nodes: a bulk load splits the
// keys at their median) holds keys of two first letters, so its common prefix is empty, and
// 24 bytes follow the letter in every key: an alphabet of some 20 byte values holds 14 digits.
TEST_F(XStoreTest, ByteKeysTheProjectionCannotTellApart) {
  auto index = Open({}, KeyFormat::kBytes);
  ASSERT_NE(index, nullptr);
  std::map<std::string, std::string> model;
  for (int i = 0; i < 1'500; ++i) {
    // Appended, not `"literal" + std::string`: GCC 12 warns (-Wrestrict, a false positive) on that.
    const std::string n = std::to_string(i);
    for (const char* letter : {"a", "b", "c", "d"})
      model[std::string(letter).append("-same-for-24-bytes-here").append(n)] = std::string(letter).append(n);
  }
  ASSERT_TRUE(index->BulkLoad(Sorted(model)).ok());
  auto s = std::move(index->OpenSession(0)).value();
  std::string v;
  for (const auto& [k, want] : model) {
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, want);
  }
  EXPECT_TRUE(s->Lookup("a-same-for-24-bytes-herex", &v).IsNotFound());
  EXPECT_GT(Property(*index, "wide-predictions"), 0u);
  EXPECT_GT(Property(*index, "fallbacks"), 0u);
  std::vector<KeyValue> all;
  ASSERT_TRUE(s->Scan("a-same-for-24-bytes-here1", 50, &all).ok());
  ASSERT_EQ(all.size(), 50u);
  EXPECT_EQ(all.front().key, model.lower_bound("a-same-for-24-bytes-here1")->first);
}

// Keys inserted after training with bytes the model set's alphabet lacks (letters among
// digits, control bytes), or outside its prefix: the projection saturates them in order, so
// the models stay sound while they serve (the client reads them one-sidedly or speculates),
// through the retrainings their splits queue and the expansions that fit a new prefix and
// alphabet. Every key is found with its value, absent ones are not, a full scan is exact.
TEST_F(XStoreTest, ByteKeysOutsideTheTrainedAlphabetStayFound) {
  auto index = Open({{"keys_per_model", "20"}, {"expand_at", "30"}, {"partitions", "1"}}, KeyFormat::kBytes);
  ASSERT_NE(index, nullptr);
  std::map<std::string, std::string> model = YcsbKeys(2'000, 11);
  std::mt19937_64 rng(12);
  const std::vector<KeyValue> sorted = Sorted(model);
  ASSERT_TRUE(index->BulkLoad(sorted).ok());
  auto s = std::move(index->OpenSession(0)).value();
  std::string v;
  ASSERT_TRUE(s->Lookup(sorted.front().key, &v).ok());  // the models of the load
  const std::string odd = std::string("az\x01\x7f\xff", 5);
  for (int i = 0; i < 2'000; ++i) {
    std::string k = i % 10 == 0 ? (i % 20 == 0 ? "usa" : "v") : "user";
    const std::string n = std::to_string(rng());
    for (char c : n) k.push_back(rng() % 4 == 0 ? odd[rng() % odd.size()] : c);
    ASSERT_TRUE(s->Insert(k, "new" + n).ok());
    model[k] = "new" + n;
    if (i % 16 == 0) {
      ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;  // reads along, across retrainings
      ASSERT_EQ(v, "new" + n);
    }
  }
  for (const auto& [k, want] : model) {
    ASSERT_TRUE(s->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, want);
    ASSERT_TRUE(s->Lookup(k + "a", &v).IsNotFound()) << k;
  }
  s.reset();
  ASSERT_TRUE(index->Close().ok());  // waits for the background training
  auto index2 = Index::Open(index->options(), cluster_);  // the servers' counters now (above)
  ASSERT_TRUE(index2.ok());
  EXPECT_GT(Property(**index2, "retrains"), 0u);
  EXPECT_GE(Property(**index2, "expansions"), 1u);
  auto s2 = std::move((*index2)->OpenSession(0)).value();
  for (const auto& [k, want] : model) {
    ASSERT_TRUE(s2->Lookup(k, &v).ok()) << k;  // the expanded set's projection
    ASSERT_EQ(v, want);
  }
  ExpectScanIs(*s2, model);
}

TEST_F(XStoreTest, BadKnobsAreRefused) {
  cluster_ = ClusterOver(testing::MakeHarnessFabric({}));
  IndexOptions o = testing::HarnessIndexOptions("bad");
  o.design = "xstore";
  for (const auto& [knob, value] : std::vector<std::pair<std::string, std::string>>{
           {"leaf_slots", "2"}, {"partitions", "3"}, {"hocl", "on"}, {"speculate", "x"}, {"expand_at", "-1"},
           {"top_segments", "0"}}) {
    o.knobs = {{knob, value}};
    Status st = Index::Open(o, cluster_).status();
    EXPECT_TRUE(st.IsInvalidArgument()) << knob << "=" << value << ": " << st.ToString();
    EXPECT_NE(st.message().find(knob), std::string::npos) << st.message();
  }
  o.key_format = KeyFormat::kBytes;
  o.node_bytes = 1024;
  o.max_key_bytes = 64;
  o.knobs = {{"slot_read", "on"}};
  EXPECT_TRUE(Index::Open(o, cluster_).status().IsInvalidArgument());
}

}  // namespace
}  // namespace dmindex
