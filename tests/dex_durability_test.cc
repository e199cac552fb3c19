// DEX keeps acknowledged writes (durability=log, the default; docs/DEX.md "Durability"),
// deterministically, with the in-process fabric:
//  * DexRedoLog.*: the log alone - records of every size around the ring's end read back in
//    order; a record cut short anywhere (scripted) is stepped over and the ones after it are
//    still found; a stale lap is never taken for the current one.
//  * DexDurability.ACacheHitWriteCostsOneWrite: the verbs a write to a cached leaf costs
//    (one WRITE of one 64-byte record with the log, none without).
//  * DexDurability.DeathInsideTheAppend/*: a process writes, every write acknowledged and
//    most only in its cache; then it "dies" inside one more write's append - before it, after
//    each 8-byte word of the record, or after the record landed but before the
//    acknowledgement - for a leaf in the cache (the append is the operation's round trip) and
//    a leaf that was not admitted (the append rides in the page's batch, after the page:
//    the page has landed when the process dies). Another
//    process takes its compute nodes over and must find every acknowledged write, and for the
//    cut one either outcome.
//  * DexDurability.AWriteIsAnsweredFromOnlyOnceItsRecordLanded: a lookup and a scan that
//    read a write whose record is in flight wait for it to land.
//  * DexDurability.AWriteWhoseRecordFailedIsAnsweredFromOnlyOnceWrittenBack: a write whose
//    record failed is answered from by nobody until a checkpoint wrote it back; what was
//    answered is what the next host finds after the process dies.
//  * DexDurability.LogWrapsUnderLoad: a 4 KiB ring, thousands of writes: the log fills,
//    writers checkpoint (write the pages back, truncate), the ring wraps many times; the
//    process dies and nothing acknowledged is lost.
//  * DexDurability.LongValuesAreWrittenThrough: values whose record would not fit a quarter
//    of the ring go to the pool with their page; a short record voids the key's older ones.
//  * DexDurability.ACheckpointWhoseLeaseEndedBeforeItsHeadWriteMovesNoHead: a writer's
//    checkpoint stalls right before it stores the log's new head while its lease is revoked
//    (as a taker's observer does): the head must not move (a new host may have replayed the
//    log and moved it on since).
//  * DexDurability.BackgroundWriteBackEmptiesTheCache: durability=none, writeback_ms=20:
//    the dirty pages reach the pool without any further operation.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <thread>

#include "alloc/catalog.h"
#include "common/runtime.h"
#include "designs/dex/redo_log.h"
#include "designs/registry.h"
#include "dex_crash_check.h"
#include "dex_log_scripts.h"
#include "dex_test_env.h"
#include "fabric/inproc/verb_script.h"
#include "lease/lease.h"

namespace dmindex {
namespace {

using Key = uint64_t;
using Value = uint64_t;
using designs::dex::RedoLog;
using testing::LogOf;
using testing::RecordScript;

constexpr uint32_t kNodeBytes = 512;

// Fails the first WRITE into [from, to) after `arm()`, having copied only its first `cut`
// bytes (all of it when `cut` is larger): the process dies inside that verb, so every later
// WRITE there fails with nothing landed (a writer posts a failed record once more).
class CutWrite final : public fabric::VerbScript {
 public:
  CutWrite(GlobalAddress from, GlobalAddress to, uint64_t cut) : from_(from), to_(to), cut_(cut) {}
  void arm() { armed_.store(true); }
  bool cut() const { return done_.load(); }
  Outcome Run(const fabric::VerbCopy& c) override {
    const fabric::Verb& v = c.verb();
    if (!armed_.load() || v.kind != fabric::VerbKind::kWrite || v.remote < from_ || !(v.remote < to_))
      return Outcome::kPass;
    if (done_.exchange(true)) return Outcome::kFail;
    c.Copy(0, cut_);
    return Outcome::kFail;
  }

 private:
  const GlobalAddress from_, to_;
  const uint64_t cut_;
  std::atomic<bool> armed_{false}, done_{false};
};

uint64_t Property(const Index& index, const char* name) { return index.GetIntProperty(name).value_or(0); }

// ---- the log alone --------------------------------------------------------------------------

TEST(DexRedoLog, RecordsOfEverySizeWrapAroundTheRing) {
  auto fabric = testing::DexTestFabric();
  auto ep = std::move(fabric->Connect()).value();
  const GlobalAddress block = GlobalAddress(0, 8ull << 20);  // a fresh pool: nobody allocates there
  ASSERT_TRUE(RedoLog::Initialize(*ep, block, 1024).ok());
  auto log = RedoLog::Open(*ep, block);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_EQ(log->capacity(), 1024u);
  std::vector<RedoLog::Record> written;
  uint64_t pos = 0, head = 0;
  std::vector<std::byte> bytes;
  for (int i = 0; i < 60; ++i) {
    RedoLog::Record r{pos, i % 3 == 0 ? RedoLog::Op::kDelete : RedoLog::Op::kPut, "key" + std::to_string(i),
                      std::string(static_cast<size_t>(i * 7 % 150), static_cast<char>('a' + i % 26))};
    if (r.op == RedoLog::Op::kDelete) r.value.clear();
    RedoLog::Encode(pos, r.op, r.key, r.value, &bytes);
    ASSERT_EQ(bytes.size(), RedoLog::RecordBytes(r.key.size(), r.value.size()));
    // Keep the ring's rule: a record never overwrites one the head still needs.
    while (pos + bytes.size() > head + log->capacity()) {
      head += RedoLog::kSlot;
      while (!written.empty() && written.front().pos < head) written.erase(written.begin());
    }
    ASSERT_TRUE(log->WriteHead(*ep, head, nullptr).ok());
    fabric::Verb verbs[2];
    const int n = log->Verbs(pos, bytes, verbs);
    ASSERT_TRUE(ep->Post({verbs, static_cast<size_t>(n)}, fabric::Ordering::kUnordered).ok());
    written.push_back(r);
    pos += bytes.size();
    auto scanned = log->Scan(*ep);
    ASSERT_TRUE(scanned.ok()) << scanned.status().ToString();
    // Records the head moved past but whose slots are still in the ring are of this lap's
    // positions only if at or after the head: exactly the written ones from the head on.
    ASSERT_EQ(scanned->records.size(), written.size()) << "after record " << i;
    for (size_t j = 0; j < written.size(); ++j) {
      EXPECT_EQ(scanned->records[j].pos, written[j].pos);
      EXPECT_EQ(scanned->records[j].op, written[j].op);
      EXPECT_EQ(scanned->records[j].key, written[j].key);
      EXPECT_EQ(scanned->records[j].value, written[j].value);
    }
  }
}

TEST(DexRedoLog, ARecordCutShortIsSteppedOver) {
  auto fabric = testing::DexTestFabric();
  auto ep = std::move(fabric->Connect()).value();
  const GlobalAddress block = GlobalAddress(0, 8ull << 20);  // a fresh pool: nobody allocates there
  const std::string long_value(150, 'v');  // with a 2-byte key: four slots
  const uint64_t record = RedoLog::RecordBytes(2, long_value.size());
  ASSERT_EQ(record, 4 * RedoLog::kSlot);
  // The ring starts as garbage: a cut record's padding (zeros) must not match what is there.
  const std::vector<std::byte> garbage(RedoLog::BlockBytes(4096), std::byte{0xab});
  for (uint64_t cut = 0; cut <= record; cut += 8) {
    ASSERT_TRUE(ep->Write(block, garbage.data(), static_cast<uint32_t>(garbage.size())).ok());
    ASSERT_TRUE(RedoLog::Initialize(*ep, block, 4096).ok());
    auto log = RedoLog::Open(*ep, block);
    ASSERT_TRUE(log.ok());
    std::vector<std::byte> bytes;
    uint64_t pos = 0;
    for (int i = 0; i < 3; ++i) {
      RedoLog::Encode(pos, RedoLog::Op::kPut, "k" + std::to_string(i), long_value, &bytes);
      fabric::Verb verbs[2];
      const int n = log->Verbs(pos, bytes, verbs);
      if (i == 1) {  // the middle one dies after `cut` bytes
        CutWrite script(block, block + RedoLog::BlockBytes(4096), cut);
        script.arm();
        fabric->SetVerbScript(&script);
        const Status s = ep->Post({verbs, static_cast<size_t>(n)}, fabric::Ordering::kUnordered);
        fabric->SetVerbScript(nullptr);
        ASSERT_FALSE(s.ok());
      } else {
        ASSERT_TRUE(ep->Post({verbs, static_cast<size_t>(n)}, fabric::Ordering::kUnordered).ok());
      }
      pos += bytes.size();
    }
    auto scanned = log->Scan(*ep);
    ASSERT_TRUE(scanned.ok());
    const bool whole = cut >= record;
    ASSERT_EQ(scanned->records.size(), whole ? 3u : 2u) << "cut after " << cut << " bytes";
    EXPECT_EQ(scanned->skipped_slots, whole || cut == 0 ? 0u : (cut + RedoLog::kSlot - 1) / RedoLog::kSlot)
        << "cut after " << cut << " bytes";
    EXPECT_EQ(scanned->records.front().key, "k0");
    EXPECT_EQ(scanned->records.back().key, "k2") << "cut after " << cut << " bytes";
  }
}

// ---- whole index ----------------------------------------------------------------------------

IndexOptions Options(const std::string& name, std::map<std::string, std::string> knobs) {
  IndexOptions o = testing::DexTestOptions(name, 2, std::move(knobs));
  o.knobs["key_space"] = "20000";
  return o;
}

TEST(DexDurability, ACacheHitWriteCostsOneWrite) {
  for (const char* durability : {"log", "none"}) {
    SCOPED_TRACE(durability);
    auto fabric = testing::DexTestFabric();
    const std::string name = std::string("hit-") + durability;
    // One compute node: every leaf owned (with two, a leaf crossing the boundary is shared).
    auto index = designs::MakeIndex(
        "dex", *fabric,
        testing::DexTestOptions(name, 1, {{"admission", "1"}, {"writeback_ms", "0"}, {"durability", durability}}));
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    auto s = std::move((*index)->OpenSession()).value();
    for (Key k = 1; k <= 200; ++k) ASSERT_TRUE(s->Insert(k, k).ok());
    for (Key k = 1; k <= 200; ++k) ASSERT_TRUE(s->Update(k, k + 1).ok());  // every leaf cached now
    const fabric::VerbCounts before = fabric->TotalCounts();
    for (Key k = 1; k <= 200; ++k) ASSERT_TRUE(s->Update(k, k + 2).ok());
    const fabric::VerbCounts d = fabric->TotalCounts() - before;
    const bool log = std::string(durability) == "log";
    EXPECT_EQ(d.reads, 0u);
    EXPECT_EQ(d.rpcs, 0u);
    EXPECT_EQ(d.writes, log ? 200u : 0u);
    EXPECT_EQ(d.round_trips, log ? 200u : 0u);
    EXPECT_EQ(d.write_bytes, log ? 200u * RedoLog::kSlot : 0u);
  }
}

struct DeathCase {
  const char* name;
  const char* admission;  // 1: the leaf is cached; 0: it is written back with the record
  uint64_t cut;           // bytes of the record that land (64: all of it)
};
void PrintTo(const DeathCase& c, std::ostream* os) { *os << c.name; }

class DexDurabilityDeath : public ::testing::TestWithParam<DeathCase> {};

TEST_P(DexDurabilityDeath, DeathInsideTheAppend) {
  const DeathCase& c = GetParam();
  auto fabric = testing::DexTestFabric();
  const std::string name = std::string("death-") + c.name;
  testing::AckedWrites acked;
  std::mt19937_64 rng(3);
  auto dying = designs::MakeIndex("dex", *fabric, Options(name, {{"admission", c.admission}, {"writeback_ms", "0"}}));
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  const GlobalAddress log = LogOf(*fabric, name, 0);
  CutWrite script(log + RedoLog::kHeaderBytes, log + RedoLog::BlockBytes(256 << 10), c.cut);
  std::map<Key, std::optional<Value>> in_flight;
  {
    auto s = std::move((*dying)->OpenSession()).value();
    for (Value op = 1; op <= 3000; ++op) {
      const Key k = 1 + rng() % 20000;
      if (rng() % 10 < 7) {
        ASSERT_TRUE(s->Insert(k, op).ok());
        acked[k].push_back(op);
      } else {
        Status d = s->Delete(k);
        ASSERT_TRUE(d.ok() || d.IsNotFound()) << d.ToString();
        if (d.ok()) acked[k].push_back(std::nullopt);
      }
    }
    // The write it dies in: a key of compute node 0 (keys [1, 10000)), written before.
    const Key k = acked.begin()->first;
    ASSERT_LT(k, 10000u);
    fabric->SetVerbScript(&script);
    script.arm();
    const Status last = s->Insert(k, 999'999);
    fabric->SetVerbScript(nullptr);
    ASSERT_TRUE(script.cut()) << "the write appended no record";
    ASSERT_FALSE(last.ok()) << "a write whose record did not land was acknowledged";
    in_flight[k] = 999'999;
  }
  EXPECT_GT(Property(**dying, "dmindex.dex.log-appends"), 1000u);
  // Dead from here on; an operator releases its leases, another process takes over.
  testing::ReleaseLeasesOfTheDead(*fabric, name);
  ASSERT_FALSE(HasFatalFailure());
  auto host = designs::MakeIndex("dex", *fabric, Options(name, {}));
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  EXPECT_GT(Property(**host, "dmindex.dex.replayed-keys"), 0u);
  EXPECT_GT(testing::CheckNothingAcknowledgedLost(**host, acked, in_flight), 1000u);
}

INSTANTIATE_TEST_SUITE_P(
    Cuts, DexDurabilityDeath,
    ::testing::Values(DeathCase{"cached_before", "1", 0}, DeathCase{"cached_word1", "1", 8},
                      DeathCase{"cached_word3", "1", 24}, DeathCase{"cached_header", "1", 32},
                      DeathCase{"cached_word7", "1", 56}, DeathCase{"cached_landed", "1", 64},
                      DeathCase{"transient_before", "0", 0}, DeathCase{"transient_word4", "0", 32},
                      DeathCase{"transient_landed", "0", 64}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(DexDurability, LogWrapsUnderLoad) {
  auto fabric = testing::DexTestFabric();
  testing::AckedWrites acked;
  std::mt19937_64 rng(5);
  auto dying = designs::MakeIndex("dex", *fabric, Options("wrap", {{"log_kb", "4"}, {"writeback_ms", "0"}}));
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  {
    auto s = std::move((*dying)->OpenSession()).value();
    for (Value op = 1; op <= 6000; ++op) {
      const Key k = 1 + rng() % 20000;
      if (rng() % 10 < 8) {
        ASSERT_TRUE(s->Insert(k, op).ok());
        acked[k].push_back(op);
      } else if (s->Delete(k).ok()) {
        acked[k].push_back(std::nullopt);
      }
    }
  }
  // 4 KiB hold 64 records per compute node: thousands of appends went around many times.
  EXPECT_GT(Property(**dying, "dmindex.dex.checkpoints"), 20u);
  testing::ReleaseLeasesOfTheDead(*fabric, "wrap");
  ASSERT_FALSE(HasFatalFailure());
  auto host = designs::MakeIndex("dex", *fabric, Options("wrap", {}));
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  testing::CheckNothingAcknowledgedLost(**host, acked);
}

// One compute node's worth of even keys 2..600 in cached leaves (the last leaf covers the
// boundary of compute node 1's range: shared, not cached; the keys used lie in the middle).
void LoadCached(Session& s) {
  for (Key k = 2; k <= 600; k += 2) ASSERT_TRUE(s.Insert(k, k).ok());
  for (Key k = 2; k <= 600; k += 2) ASSERT_TRUE(s.Update(k, k).ok());  // every owned leaf cached now
}

// A write is applied to its cached page, the latch is released, then its record is appended.
// An operation that read the page in between and answered from it would have acknowledged a
// write that a crash takes back (crash soak seed 350119: an Update answered NotFound after a
// concurrent Delete whose record failed; the process died and the key was back). Readers wait
// for the records of what they read (designs/dex/log_watermark.h).
TEST(DexDurability, AWriteIsAnsweredFromOnlyOnceItsRecordLanded) {
  auto fabric = testing::DexTestFabric();
  const std::string name = "inflight";
  auto index = designs::MakeIndex("dex", *fabric, Options(name, {{"admission", "1"}, {"writeback_ms", "0"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const GlobalAddress log = LogOf(*fabric, name, 0);
  auto writer = std::move((*index)->OpenSession()).value();
  auto reader = std::move((*index)->OpenSession()).value();
  LoadCached(*writer);
  // While the update's record is in flight, the reader looks up the key (and scans over it);
  // neither may answer until the record landed. The hold ends as soon as a reader answers
  // (the failure) or after 300 ms.
  Value seen = 0;
  std::vector<testing::U64Pair> scanned;
  const bool early = testing::ReadReturnsWhileARecordIsHeld(
      *fabric, log, [&] { return writer->Update(100, 10000); },
      [&] {
        EXPECT_TRUE(reader->Lookup(100, &seen).ok());
        ReadOptions ro;
        Iterator it = reader->NewIterator(ro);
        for (it.Seek(U64Key(96)); it.Valid() && scanned.size() < 3; it.Next())
          scanned.push_back({u64::Decode(it.key()), u64::Decode(it.value())});
        EXPECT_TRUE(it.status().ok()) << it.status().ToString();
      });
  EXPECT_FALSE(early) << "a reader answered from a write whose record was in flight";
  EXPECT_EQ(seen, 10000u);
  ASSERT_EQ(scanned.size(), 3u);
  EXPECT_EQ(scanned[0].key, 96u);
  EXPECT_EQ(scanned[2].key, 100u);
  EXPECT_EQ(scanned[2].value, 10000u);
  EXPECT_GE(Property(**index, "dmindex.dex.record-waits"), 1u);
}

// The record of a write fails (its post and the one re-post): the change is in the cache
// only. Nobody answers from it - lookups, scans and writes that would answer NotFound are
// Unavailable - until a checkpoint has written it back; whatever was answered, the next host
// finds after the process dies.
TEST(DexDurability, AWriteWhoseRecordFailedIsAnsweredFromOnlyOnceWrittenBack) {
  for (const char* writeback_ms : {"0", "20"}) {
    SCOPED_TRACE(std::string("writeback_ms=") + writeback_ms);
    auto fabric = testing::DexTestFabric();
    const std::string name = std::string("failed-") + writeback_ms;
    auto dying =
        designs::MakeIndex("dex", *fabric, Options(name, {{"admission", "1"}, {"writeback_ms", writeback_ms}}));
    ASSERT_TRUE(dying.ok()) << dying.status().ToString();
    const GlobalAddress log = LogOf(*fabric, name, 0);
    auto writer = std::move((*dying)->OpenSession()).value();
    auto reader = std::move((*dying)->OpenSession()).value();
    LoadCached(*writer);
    // An update in place (the slot rewrite), a delete and an insert of a new key (the page
    // rebuilt), each failing both posts of its record.
    testing::WritesWhoseRecordsFail(*fabric, log, *writer);
    ASSERT_FALSE(HasFatalFailure());
    const bool writes_back = std::string(writeback_ms) == "20";
    const auto told = testing::ToldAboutWritesWhoseRecordsFailed(*reader, writes_back);
    if (!writes_back) {
      // Nothing wrote the changes back: nothing may be answered from them.
      EXPECT_TRUE(told.empty()) << "answered from a write whose record failed";
      Value v = 0;
      EXPECT_TRUE(reader->Update(120, 1).IsUnavailable()) << "an update answered from a failed delete";
      // Key 100's leaf holds 98 or 102 (or both): that page is not answered from either.
      EXPECT_TRUE(reader->Lookup(98, &v).IsUnavailable() || reader->Lookup(102, &v).IsUnavailable())
          << "the page of a failed update was answered from";
    } else {
      // Written back by now: durable, and answered (the writes took effect).
      const std::map<Key, std::optional<Value>> written = {{100, 10000}, {120, std::nullopt}, {201, 201}};
      EXPECT_EQ(told, written);
    }
    writer.reset();
    reader.reset();
    // The process dies; the next host finds what the reader was told.
    testing::AckedWrites acked;
    for (Key k = 2; k <= 600; k += 2) acked[k].push_back(k);
    const std::map<Key, std::optional<Value>> in_flight = {{100, 10000}, {120, std::nullopt}, {201, 201}};
    acked[201].push_back(std::nullopt);
    for (const auto& [k, value] : told) acked[k].push_back(value);
    testing::ReleaseLeasesOfTheDead(*fabric, name);
    ASSERT_FALSE(HasFatalFailure());
    auto host = designs::MakeIndex("dex", *fabric, Options(name, {}));
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    EXPECT_EQ(testing::CheckNothingAcknowledgedLost(**host, acked, in_flight), 301u);
  }
}

TEST(DexDurability, LongValuesAreWrittenThrough) {
  auto fabric = testing::DexTestFabric();
  auto dying = designs::MakeIndex("dex", *fabric,
                                  Options("long", {{"log_kb", "4"}, {"admission", "1"}, {"writeback_ms", "0"}}));
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  const std::string long_value(3000, 'L');  // its record: 55 slots, over a quarter of 64
  {
    auto s = std::move((*dying)->OpenSession()).value();
    for (Key k = 1; k <= 300; ++k) ASSERT_TRUE(s->Insert(k, k).ok());
    // Key 7: logged short values, then a long one (written through), then key 8 the other
    // way round: the long value's record must void key 7's older records.
    ASSERT_TRUE(s->Insert(U64Key(7), long_value).ok());
    ASSERT_TRUE(s->Insert(U64Key(8), long_value).ok());
    ASSERT_TRUE(s->Insert(8, 88).ok());
  }
  testing::ReleaseLeasesOfTheDead(*fabric, "long");
  ASSERT_FALSE(HasFatalFailure());
  auto host = designs::MakeIndex("dex", *fabric, Options("long", {}));
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  auto s = std::move((*host)->OpenSession()).value();
  std::string v;
  ASSERT_TRUE(s->Lookup(U64Key(7), &v).ok());
  EXPECT_EQ(v, long_value);
  Value n = 0;
  ASSERT_TRUE(s->Lookup(8, &n).ok());
  EXPECT_EQ(n, 88u);
  for (Key k = 9; k <= 300; ++k) {
    ASSERT_TRUE(s->Lookup(k, &n).ok()) << k;
    EXPECT_EQ(n, k);
  }
}

// Holds a checkpoint's head WRITE (a single 8-byte WRITE of one of `heads`) before it goes out
// and runs `stall` there once: the checkpointing process stalled right before storing the head.
class StallBeforeHead final : public fabric::VerbScript {
 public:
  StallBeforeHead(std::vector<GlobalAddress> heads, std::function<void(GlobalAddress)> stall)
      : heads_(std::move(heads)), stall_(std::move(stall)) {}
  Outcome Run(const fabric::VerbCopy&) override { return Outcome::kPass; }
  void BeforePost(std::span<const fabric::Verb> verbs) override {
    if (verbs.size() != 1 || verbs[0].kind != fabric::VerbKind::kWrite || verbs[0].length != 8) return;
    for (const GlobalAddress& h : heads_)
      if (verbs[0].remote == h && !fired_.exchange(true)) stall_(h);
  }
  bool fired() const { return fired_.load(); }

 private:
  const std::vector<GlobalAddress> heads_;
  const std::function<void(GlobalAddress)> stall_;
  std::atomic<bool> fired_{false};
};

TEST(DexDurability, ACheckpointWhoseLeaseEndedBeforeItsHeadWriteMovesNoHead) {
  std::atomic<int64_t> now_ms{1'000'000};
  lease::ScopedTestClock clock([&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.load())); });
  auto fabric = testing::DexTestFabric();
  auto ep = std::move(fabric->Connect()).value();
  auto held = [&] {
    auto table = lease::ReadLeaseTable(*ep);
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    std::vector<lease::HolderId> ids;
    if (table.ok())
      for (const lease::SlotInfo& s : *table) ids.push_back({s.slot, s.state.epoch});
    return ids;
  };
  const auto before = held();
  auto dying = designs::MakeIndex("dex", *fabric, Options("fence", {{"log_kb", "4"}, {"writeback_ms", "0"}}));
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  std::vector<lease::HolderId> theirs;
  for (const lease::HolderId& h : held())
    if (std::none_of(before.begin(), before.end(), [&](const lease::HolderId& b) { return b.slot == h.slot; }))
      theirs.push_back(h);
  ASSERT_FALSE(theirs.empty());
  auto s = std::move((*dying)->OpenSession()).value();
  for (Key k = 1; k <= 20000; k += 97) ASSERT_TRUE(s->Insert(k, k).ok());  // both compute nodes log
  const std::vector<GlobalAddress> heads{LogOf(*fabric, "fence", 0) + 8, LogOf(*fabric, "fence", 1) + 8};

  uint64_t head_at_stall = 0;
  GlobalAddress stalled_head;
  StallBeforeHead stall(heads, [&](GlobalAddress head) {
    stalled_head = head;
    ASSERT_TRUE(ep->Read(head, &head_at_stall, 8).ok());
    lease::LeaseObserver observer;  // a taker's: the slots stand still past the takeover wait
    for (const lease::HolderId& h : theirs) ASSERT_TRUE(observer.FenceIfExpired(*ep, h).ok());
    now_ms += 10'000;
    for (const lease::HolderId& h : theirs) {
      auto fenced = observer.FenceIfExpired(*ep, h);
      ASSERT_TRUE(fenced.ok() && *fenced);
    }
  });
  fabric->SetVerbScript(&stall);
  // Writes fill a 4 KiB ring (64 records) within a few hundred: the writer checkpoints.
  Status last;
  for (Key k = 1; k <= 2000 && !stall.fired(); ++k) last = s->Insert(k * 5, k);
  fabric->SetVerbScript(nullptr);
  ASSERT_TRUE(stall.fired()) << "no checkpoint wrote a head";
  uint64_t head_after = 0;
  ASSERT_TRUE(ep->Read(stalled_head, &head_after, 8).ok());
  EXPECT_EQ(head_after, head_at_stall) << "a checkpoint whose lease was revoked moved the log's head";
  EXPECT_FALSE(s->Insert(3, 3).ok()) << "a process whose lease was revoked still writes";
}

// By default each compute node's log block (header and ring) is as large as its cache
// (docs/DEX.md "Durability"), the ring halved while the block does not fit a memory server's
// chunk; log_kb sets the ring instead.
TEST(DexDurability, TheDefaultRingIsTheCachesSize) {
  auto roomy = testing::DexTestFabric({}, 4 << 20);
  auto index = designs::MakeIndex("dex", *roomy, Options("ring", {{"cache_mb", "1"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(Property(**index, "dmindex.dex.log-ring-bytes"), 2u << 20);  // two nodes, a 1 MiB block each
  auto fixed = designs::MakeIndex("dex", *roomy, Options("fixed", {{"cache_mb", "1"}, {"log_kb", "64"}}));
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_EQ(Property(**fixed, "dmindex.dex.log-ring-bytes"), 2 * RedoLog::BlockBytes(64 << 10));
  auto small = testing::DexTestFabric();  // 1 MiB chunks: a block of 1 MiB + 64 B does not fit
  auto halved = designs::MakeIndex("dex", *small, Options("halved", {{"cache_mb", "1"}}));
  ASSERT_TRUE(halved.ok()) << halved.status().ToString();
  EXPECT_EQ(Property(**halved, "dmindex.dex.log-ring-bytes"), 2u << 19);
}

// A reservation that takes the ring past half full wakes the write-back thread at once, so
// the older half is freed while writers append into the newer one (no writer waits on a full
// ring). Here the period is an hour and the ring never fills: only the wake-up checkpoints.
TEST(DexDurability, AHalfFullRingWakesTheWriteBack) {
  auto fabric = testing::DexTestFabric();
  auto index = designs::MakeIndex(
      "dex", *fabric,
      testing::DexTestOptions("half", 1, {{"log_kb", "4"}, {"admission", "1"}, {"writeback_ms", "3600000"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto s = std::move((*index)->OpenSession()).value();
  const uint64_t slots = 4096 / RedoLog::kSlot;
  for (Key k = 1; k <= slots / 2 + 8; ++k) ASSERT_TRUE(s->Insert(k, k).ok());  // one slot each
  EXPECT_EQ(Property(**index, "dmindex.dex.log-appends"), slots / 2 + 8);
  // The bound is for a loaded machine, not a timing assertion: the hour-long period is what
  // would otherwise pass first.
  for (int i = 0; i < 1000 && Property(**index, "dmindex.dex.checkpoints") == 0; ++i)
    runtime::SleepFor(std::chrono::milliseconds(20));
  EXPECT_GT(Property(**index, "dmindex.dex.checkpoints"), 0u);
}

TEST(DexDurability, BackgroundWriteBackEmptiesTheCache) {
  auto fabric = testing::DexTestFabric();
  auto index = designs::MakeIndex(
      "dex", *fabric, Options("bg", {{"durability", "none"}, {"admission", "1"}, {"writeback_ms", "20"}}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  std::map<Key, Value> want;
  {
    auto s = std::move((*index)->OpenSession()).value();
    for (Key k = 1; k <= 2000; ++k) {
      ASSERT_TRUE(s->Insert(k * 7, k).ok());
      want[k * 7] = k;
    }
  }
  // No further operation: only the background thread can bring the pages to the pool. It
  // runs every 20 ms; the bound here is for a loaded machine, not a timing assertion.
  std::map<Key, Value> pool;
  for (int i = 0; i < 1000 && pool != want; ++i) {
    runtime::SleepFor(std::chrono::milliseconds(20));
    pool = testing::PoolContentOf(*fabric, "bg", kNodeBytes);
  }
  EXPECT_EQ(pool, want);
  EXPECT_GT(Property(**index, "dmindex.dex.checkpoints"), 0u);
}

}  // namespace
}  // namespace dmindex
