// DEX's redo log (durability=log) when its records fail or land after what they describe,
// deterministically, with the in-process fabric's scripted verbs (docs/DEX_INTERNALS.md,
// "Durability").
//
// A write to a leaf that lazy admission turned away sends the leaf's page and its redo record
// in one batch: one round trip after the leaf's READ. The page can then reach the pool before
// its record, so whoever reads that leaf's pool image - a lookup's private READ of a leaf
// another operation holds, an offloaded lookup, a scan's batch, a load - must not answer from
// a change whose record has not landed ("Pool images"):
//  * DexUncachedWrite.OnePostForPageAndRecord: the verbs an update of a non-admitted leaf
//    costs.
//  * DexUncachedWrite.AReaderOfThePoolImageWaitsForTheRecord: the record is held in flight
//    after its page landed; a lookup reading the leaf meanwhile (privately: the leaf is
//    busy) answers the new value only once the record landed.
//  * DexUncachedWrite.AFailedBatchIsAnsweredFromOnlyAfterACheckpoint: the record fails (both
//    posts) while the page lands; nobody answers from that leaf - lookups by a load or an
//    offload, a scan by its batch - until a checkpoint, other leaves stay readable, and the
//    next host finds what was answered.
//  * DexCheckpoint.AHeadThatDidNotMoveKeepsAFailedChangeUnanswered: a cached write whose
//    record failed is flushed by the write-back thread's checkpoints, whose head WRITE fails:
//    the change stays unanswered (a replay from the old head would set the key back).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "common/runtime.h"
#include "designs/dex/redo_log.h"
#include "designs/registry.h"
#include "dex_crash_check.h"
#include "dex_log_scripts.h"
#include "dex_test_env.h"

namespace dmindex {
namespace {

using Key = uint64_t;
using Value = uint64_t;
using designs::dex::RedoLog;
using testing::LogOf;
using testing::RecordScript;

// Two compute nodes over keys [0, 20000) (or one over every key), no leaf ever admitted; no
// background write-back unless asked.
IndexOptions Options(const std::string& name, std::map<std::string, std::string> knobs, uint32_t compute_nodes = 2) {
  knobs.emplace("admission", "0");
  knobs.emplace("writeback_ms", "0");
  IndexOptions o = testing::DexTestOptions(name, compute_nodes, std::move(knobs));
  if (compute_nodes > 1) o.knobs["key_space"] = "20000";
  return o;
}

// Even keys 2..600: compute node 0's, in leaves that are never cached.
void Load(Session& s) {
  for (Key k = 2; k <= 600; k += 2) ASSERT_TRUE(s.Insert(k, k).ok());
}

uint64_t Property(const Index& index, const char* name) { return index.GetIntProperty(name).value_or(0); }

TEST(DexUncachedWrite, OnePostForPageAndRecord) {
  auto fabric = testing::DexTestFabric();
  auto index = designs::MakeIndex("dex", *fabric, Options("one-post", {{"offload", "off"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto s = std::move((*index)->OpenSession()).value();
  Load(*s);
  const fabric::VerbCounts before = fabric->TotalCounts();
  for (Key k = 2; k <= 400; k += 2) ASSERT_TRUE(s->Update(k, k + 1).ok());
  const fabric::VerbCounts d = fabric->TotalCounts() - before;
  const uint64_t n = 200;
  // The leaf's READ, then one batch: the page and a one-slot record.
  EXPECT_EQ(d.reads, n);
  EXPECT_EQ(d.writes, 2 * n);
  EXPECT_EQ(d.round_trips, 2 * n);
  EXPECT_EQ(d.rpcs, 0u);
  EXPECT_EQ(Property(**index, "dmindex.dex.log-appends") >= n, true);
}

TEST(DexUncachedWrite, AReaderOfThePoolImageWaitsForTheRecord) {
  auto fabric = testing::DexTestFabric();
  const std::string name = "uncached-inflight";
  auto index = designs::MakeIndex("dex", *fabric, Options(name, {}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const GlobalAddress log = LogOf(*fabric, name, 0);
  auto writer = std::move((*index)->OpenSession()).value();
  auto reader = std::move((*index)->OpenSession()).value();
  Load(*writer);
  // The update's page has landed, its record is held. The reader's lookup finds the leaf
  // held by the writer and READs the pool's image privately: it holds the new value, which it
  // may answer only once the record landed. The hold ends as soon as the reader answers (the
  // failure) or after 300 ms.
  Value seen = 0;
  Status looked_up;
  const bool early = testing::ReadReturnsWhileARecordIsHeld(
      *fabric, log, [&] { return writer->Update(100, 10000); }, [&] { looked_up = reader->Lookup(100, &seen); });
  ASSERT_TRUE(looked_up.ok()) << looked_up.ToString();
  EXPECT_FALSE(early) << "a reader answered from a page whose record was in flight";
  EXPECT_EQ(seen, 10000u);
  EXPECT_GE(Property(**index, "dmindex.dex.record-waits"), 1u);
}

TEST(DexUncachedWrite, AFailedBatchIsAnsweredFromOnlyAfterACheckpoint) {
  struct Case {
    std::string writeback_ms;
    // Every lookup's miss offloaded (the handler reads the leaf): one compute node (with two,
    // these few leaves sit below a root both share, and nothing below a shared node is
    // offloaded), the keys bulk-loaded (leaves that inserts split stay cached).
    bool offload;
  };
  for (const Case& c : {Case{"0", false}, Case{"20", false}, Case{"0", true}}) {
    SCOPED_TRACE("writeback_ms=" + c.writeback_ms + (c.offload ? ", offloading" : ""));
    const bool writes_back = c.writeback_ms != "0";
    auto fabric = testing::DexTestFabric();
    const std::string name = "uncached-failed-" + c.writeback_ms + (c.offload ? "-offload" : "");
    const auto options = [&](std::map<std::string, std::string> knobs) {
      if (c.offload) knobs.insert({{"cost_factor", "1e12"}, {"explore", "0"}});
      return Options(name, std::move(knobs), c.offload ? 1 : 2);
    };
    auto dying = designs::MakeIndex("dex", *fabric, options({{"writeback_ms", c.writeback_ms}}));
    ASSERT_TRUE(dying.ok()) << dying.status().ToString();
    const GlobalAddress log = LogOf(*fabric, name, 0);
    if (c.offload) {
      std::vector<testing::U64Pair> pairs;
      for (Key k = 2; k <= 600; k += 2) pairs.push_back({k, k});
      ASSERT_TRUE((*dying)->BulkLoad(testing::EncodePairs(pairs)).ok());
    }
    auto writer = std::move((*dying)->OpenSession()).value();
    auto reader = std::move((*dying)->OpenSession()).value();
    if (!c.offload) Load(*writer);
    // An update, a delete and an insert, each batch posted twice: the page lands both times,
    // the record neither.
    testing::WritesWhoseRecordsFail(*fabric, log, *writer);
    ASSERT_FALSE(HasFatalFailure());
    // A leaf nobody wrote stays readable meanwhile.
    Value v = 0;
    ASSERT_TRUE(reader->Lookup(500, &v).ok());
    EXPECT_EQ(v, 500u);
    const uint64_t offloads = Property(**dying, "dmindex.dex.offloads");
    const auto told = testing::ToldAboutWritesWhoseRecordsFailed(*reader, writes_back);
    if (c.offload) EXPECT_EQ(Property(**dying, "dmindex.dex.offloads"), offloads + 3) << "not offloaded";
    if (!writes_back) {
      EXPECT_TRUE(told.empty()) << "answered from a page whose record failed";
      ReadOptions ro;
      Iterator it = reader->NewIterator(ro);
      for (it.Seek(U64Key(96)); it.Valid(); it.Next()) {
      }
      EXPECT_TRUE(it.status().IsUnavailable()) << "a scan answered from a page whose record failed: "
                                               << it.status().ToString();
    } else {
      // A checkpoint covered the records: what the pool holds is answered (the pages landed).
      const std::map<Key, std::optional<Value>> written = {{100, 10000}, {120, std::nullopt}, {201, 201}};
      EXPECT_EQ(told, written);
    }
    writer.reset();
    reader.reset();
    // The process dies; the next host finds what the reader was told.
    testing::AckedWrites acked;
    for (Key k = 2; k <= 600; k += 2) acked[k].push_back(k);
    acked[201].push_back(std::nullopt);
    for (const auto& [k, value] : told) acked[k].push_back(value);
    const std::map<Key, std::optional<Value>> in_flight = {{100, 10000}, {120, std::nullopt}, {201, 201}};
    testing::ReleaseLeasesOfTheDead(*fabric, name);
    ASSERT_FALSE(HasFatalFailure());
    auto host = designs::MakeIndex("dex", *fabric, options({}));
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    EXPECT_EQ(testing::CheckNothingAcknowledgedLost(**host, acked, in_flight), 301u);
  }
}

}  // namespace
}  // namespace dmindex

namespace dmindex {
namespace {

// Fails every WRITE into [from, to) from any thread while armed: a memory server that holds
// a compute node's log and stays away.
class FailWrites final : public fabric::VerbScript {
 public:
  FailWrites(GlobalAddress from, GlobalAddress to) : from_(from), to_(to) {}
  void set_armed(bool armed) { armed_.store(armed); }
  int failed() const { return failed_.load(); }
  Outcome Run(const fabric::VerbCopy& c) override {
    const fabric::Verb& v = c.verb();
    if (!armed_.load() || v.kind != fabric::VerbKind::kWrite || v.remote < from_ || !(v.remote < to_))
      return Outcome::kPass;
    failed_.fetch_add(1);
    return Outcome::kFail;
  }

 private:
  const GlobalAddress from_, to_;
  std::atomic<bool> armed_{false};
  std::atomic<int> failed_{0};
};

TEST(DexCheckpoint, AHeadThatDidNotMoveKeepsAFailedChangeUnanswered) {
  auto fabric = testing::DexTestFabric();
  const std::string name = "head-stays";
  auto dying = designs::MakeIndex("dex", *fabric, Options(name, {{"admission", "1"}, {"writeback_ms", "10"}}));
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  const GlobalAddress log = LogOf(*fabric, name, 0);
  auto writer = std::move((*dying)->OpenSession()).value();
  auto reader = std::move((*dying)->OpenSession()).value();
  Load(*writer);
  for (Key k = 2; k <= 600; k += 2) ASSERT_TRUE(writer->Update(k, k).ok());  // every owned leaf cached
  // The log's memory server stops taking writes: the update's record fails, the write-back
  // thread's re-posts fail, and so do its checkpoints' head WRITEs - after their flushes
  // wrote the changed page to the pool.
  FailWrites script(log, log + RedoLog::BlockBytes(256 << 10));
  fabric->SetVerbScript(&script);
  script.set_armed(true);
  ASSERT_FALSE(writer->Update(100, 10000).ok());
  const uint64_t checkpoints = Property(**dying, "dmindex.dex.checkpoints");
  for (int i = 0; i < 2000 && Property(**dying, "dmindex.dex.checkpoints") < checkpoints + 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GE(Property(**dying, "dmindex.dex.checkpoints"), checkpoints + 3) << "the write-back thread flushed nothing";
  Value v = 0;
  const Status s = reader->Lookup(100, &v);
  EXPECT_TRUE(s.IsUnavailable()) << "answered " << (s.ok() ? std::to_string(v) : s.ToString())
                                 << " from a change whose record failed, with the log's head where it was";
  writer.reset();
  reader.reset();
  fabric->SetVerbScript(nullptr);
  // The process dies; the next host replays from the head that never moved.
  testing::AckedWrites acked;
  for (Key k = 2; k <= 600; k += 2) acked[k].push_back(k);
  const std::map<Key, std::optional<Value>> in_flight = {{100, 10000}};
  testing::ReleaseLeasesOfTheDead(*fabric, name);
  ASSERT_FALSE(HasFatalFailure());
  auto host = designs::MakeIndex("dex", *fabric, Options(name, {}));
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  EXPECT_EQ(testing::CheckNothingAcknowledgedLost(**host, acked, in_flight), 300u);
}

}  // namespace
}  // namespace dmindex
