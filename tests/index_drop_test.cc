// Index::Drop gives an index's pool memory back (issue 28, item 3; docs/API.md, "Drop"): on
// every design in the pool, in-process and over UCX memory servers, the servers' chunks in use
// return to what they were before the index was created, and an index created after the
// drop reuses the freed chunks (the servers' bump pointers do not move). The drop's crash
// points (alloc/catalog.h: mark, free per memory node, unmark) are each stopped at, and the
// next Drop or opener finishes the drop, freeing nothing twice and leaking nothing.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "alloc/catalog.h"
#include "alloc/index_hold.h"
#include "designs/registry.h"
#include "fabric/memory_node.h"
#include "fabric/rpc.h"
#include "common/runtime.h"
#include "lease/lease.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

// Every design with memory in the pool: xstore's includes what its memory servers keep for
// the index (its partitions' trees, models and records, in chunks of the index's).
const std::vector<std::string> kPoolDesigns = {"naive", "sherman", "rftree", "dex", "xstore"};

// Every memory node's chunk figures, by RPC as any client sees them.
std::vector<fabric::PoolInfo> Pools(fabric::Fabric& f) {
  auto ep = std::move(f.Connect()).value();
  std::vector<fabric::PoolInfo> pools;
  for (uint16_t n = 0; n < f.memory_nodes(); ++n) {
    fabric::RpcReply reply;
    EXPECT_TRUE(ep->Call(n, fabric::rpc_op::kPoolInfo, {}, &reply).ok());
    fabric::PoolInfo info;
    EXPECT_TRUE(fabric::ReadPod(reply, 0, &info));
    pools.push_back(info);
  }
  return pools;
}

uint64_t InUse(const std::vector<fabric::PoolInfo>& pools) {
  uint64_t n = 0;
  for (const auto& p : pools) n += p.chunks_in_use;
  return n;
}

std::vector<uint64_t> InUseByNode(const std::vector<fabric::PoolInfo>& pools) {
  std::vector<uint64_t> n;
  for (const auto& p : pools) n.push_back(p.chunks_in_use);
  return n;
}

std::vector<uint64_t> EverByNode(const std::vector<fabric::PoolInfo>& pools) {
  std::vector<uint64_t> n;
  for (const auto& p : pools) n.push_back(p.chunks_ever);
  return n;
}

IndexOptions Options(const std::string& design, const std::string& name = "dropped") {
  IndexOptions o;
  o.design = design;
  o.name = name;
  // Two DEX compute nodes (every key of the tests in the first), so that a second handle can
  // host the other; no background write-back, so that an idle handle's lease stands still
  // under the test clock (RevokedHolderTest).
  if (design == "dex") o.knobs = {{"partitions", "2"}, {"writeback_ms", "0"}};
  return o;
}

// Opens the index and writes 3,000 keys, some with values out of line (value blocks).
std::unique_ptr<Index> CreateAndLoad(fabric::Fabric& f, const std::string& design,
                                     const std::string& name = "dropped") {
  auto index = designs::MakeIndex(design, f, Options(design, name));
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  if (!index.ok()) return nullptr;
  auto session = (*index)->OpenSession(0);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return nullptr;
  for (int i = 0; i < 3000; ++i) {
    const std::string value = i % 100 == 0 ? std::string(2000, 'v') : "value" + std::to_string(i);
    Status s = (*session)->Insert("key" + std::to_string(i * 7919 % 3000), value);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return nullptr;
  }
  return std::move(index).value();
}

// Every key CreateAndLoad wrote is there with its value.
void ExpectLoaded(Session& s) {
  for (int i = 0; i < 3000; ++i) {
    std::string v;
    ASSERT_TRUE(s.Lookup("key" + std::to_string(i * 7919 % 3000), &v).ok()) << i;
    ASSERT_EQ(v, i % 100 == 0 ? std::string(2000, 'v') : "value" + std::to_string(i)) << i;
  }
}

class IndexDropTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override { fabric_ = testing::MakeTestFabric(std::get<1>(GetParam())); }
  const std::string& design() const { return std::get<0>(GetParam()); }
  std::unique_ptr<fabric::Fabric> fabric_;
};

TEST_P(IndexDropTest, PoolChunksReturnAndASecondIndexReusesThem) {
  const auto before = Pools(*fabric_);
  auto index = CreateAndLoad(*fabric_, design());
  ASSERT_NE(index, nullptr);
  const auto loaded = Pools(*fabric_);
  ASSERT_GT(InUse(loaded), InUse(before)) << "the index took no chunk: nothing to measure";
  Status dropped = index->Drop();
  ASSERT_TRUE(dropped.ok()) << dropped.ToString();
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), InUseByNode(before));
  EXPECT_TRUE(index->Drop().ok()) << "a second Drop is Ok";
  index.reset();
  auto ep = std::move(fabric_->Connect()).value();
  EXPECT_TRUE(alloc::Catalog::Open(*ep, "dropped").status().IsNotFound());

  // The same index again: its chunks are the freed ones (no chunk handed out for the first
  // time), and its drop frees them again.
  auto again = CreateAndLoad(*fabric_, design());
  ASSERT_NE(again, nullptr);
  const auto reloaded = Pools(*fabric_);
  EXPECT_EQ(EverByNode(reloaded), EverByNode(loaded)) << "the second index took chunks never used before";
  {
    auto s = again->OpenSession(0);
    ASSERT_TRUE(s.ok());
    std::string v;
    ASSERT_TRUE((*s)->Lookup("key0", &v).ok());  // the new index reads its own data
    EXPECT_EQ(v, std::string(2000, 'v'));
  }
  ASSERT_TRUE(again->Drop().ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), InUseByNode(before));
}

// Another index on the same memory servers keeps every key and its memory when one is dropped
// (xstore: the same memory server serves both, with an allocator for each).
TEST_P(IndexDropTest, AnotherIndexKeepsItsDataAndMemory) {
  auto kept = CreateAndLoad(*fabric_, design(), "kept");
  ASSERT_NE(kept, nullptr);
  const auto with_kept = Pools(*fabric_);
  auto index = CreateAndLoad(*fabric_, design());
  ASSERT_NE(index, nullptr);
  ASSERT_TRUE(index->Drop().ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), InUseByNode(with_kept));
  auto s = kept->OpenSession(0);
  ASSERT_TRUE(s.ok());
  ExpectLoaded(**s);
  ASSERT_TRUE((*s)->Insert("after", "the drop").ok());  // and it still writes
  s->reset();
  ASSERT_TRUE(kept->Drop().ok());
}


// Another handle holds the index open (another process's is the same to the dropper: a
// registration in the lease table): the drop is refused, naming it, and nothing is lost; once
// it is closed, the drop goes through.
TEST_P(IndexDropTest, ASecondHandleRefusesTheDropUntilItCloses) {
  const auto before = Pools(*fabric_);
  auto index = CreateAndLoad(*fabric_, design());
  ASSERT_NE(index, nullptr);
  IndexOptions second = Options(design());
  if (design() == "dex") second.knobs["first_node"] = "1";
  auto other = designs::MakeIndex(design(), *fabric_, second);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const auto loaded = Pools(*fabric_);
  Status refused = index->Drop();
  ASSERT_TRUE(refused.IsBusy()) << refused.ToString();
  EXPECT_NE(refused.message().find("process " + std::to_string(getpid())), std::string::npos) << refused.ToString();
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), InUseByNode(loaded));
  {
    // The index stays as it was, and the refused handle stays open: it has every key and
    // takes writes.
    auto s = index->OpenSession(0);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ExpectLoaded(**s);
    ASSERT_TRUE((*s)->Insert("after", "the refused drop").ok());
    std::string value;
    ASSERT_TRUE((*s)->Lookup("after", &value).ok());
    EXPECT_EQ(value, "the refused drop");
  }
  other->reset();  // the last other holder closes: the same handle's drop goes through
  Status dropped = index->Drop();
  ASSERT_TRUE(dropped.ok()) << dropped.ToString();
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), InUseByNode(before));
  EXPECT_TRUE(index->OpenSession(0).status().IsInvalidArgument()) << "a dropped handle is closed";
}

std::vector<std::tuple<std::string, std::string>> Params() {
  std::vector<std::tuple<std::string, std::string>> p;
  for (const char* fabric : {"inproc", "ucx-shm"})
    for (const std::string& d : kPoolDesigns) p.emplace_back(d, fabric);
  return p;
}

INSTANTIATE_TEST_SUITE_P(PoolDesigns, IndexDropTest, ::testing::ValuesIn(Params()), [](const auto& info) {
  std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param);
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

// A holder that stalls past its lease is revoked by a forced drop; the memory is then reused by
// another index. The holder, waking up, never answers from it: its reads and writes fail (the
// answer stands only if its lease was live after the read, docs/OPERATIONS.md "Drop").
class RevokedHolderTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { fabric_ = testing::MakeTestFabric("inproc"); }  // the test clock drives this process's leases
  const std::string& design() const { return GetParam(); }
  std::unique_ptr<fabric::Fabric> fabric_;
};

TEST_P(RevokedHolderTest, NeverAnswersFromReusedMemory) {
  // Leases renew only when their holder checks them (no thread); the clock moves on at every
  // read, so the idle holder's lease stands still while the dropper watches it.
  std::atomic<int64_t> now_ms{1000};
  lease::ScopedTestClock clock([&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms += 20)); });
  auto holder = CreateAndLoad(*fabric_, design());
  ASSERT_NE(holder, nullptr);
  auto session = holder->OpenSession(0);
  ASSERT_TRUE(session.ok());
  auto ep = std::move(fabric_->Connect()).value();
  ASSERT_TRUE(alloc::Catalog::Drop(*ep, "dropped", fabric_->memory_nodes()).IsBusy());
  Status forced = alloc::Catalog::Drop(*ep, "dropped", fabric_->memory_nodes(), 0, {.force = true});
  ASSERT_TRUE(forced.ok()) << forced.ToString();
  // Another index takes the freed chunks, with other values under the same keys.
  auto reuser = designs::MakeIndex(design(), *fabric_, Options(design(), "reuser"));
  ASSERT_TRUE(reuser.ok()) << reuser.status().ToString();
  {
    auto s = (*reuser)->OpenSession(0);
    ASSERT_TRUE(s.ok());
    for (int i = 0; i < 3000; ++i) ASSERT_TRUE((*s)->Insert("key" + std::to_string(i), "other" + std::to_string(i)).ok());
  }
  for (int i = 0; i < 3000; i += 101) {
    std::string v;
    Status st = (*session)->Lookup("key" + std::to_string(i), &v);
    EXPECT_FALSE(st.ok()) << "key" << i << " answered " << v;
    EXPECT_FALSE(st.IsNotFound()) << st.ToString();
  }
  EXPECT_FALSE((*session)->Insert("key1", "late").ok());
  session->reset();
  holder.reset();
  auto s = (*reuser)->OpenSession(0);
  ASSERT_TRUE(s.ok());
  std::string v;
  ASSERT_TRUE((*s)->Lookup("key1", &v).ok());
  EXPECT_EQ(v, "other1") << "the revoked holder wrote into the other index";
}

// Index::Drop with DropOptions::force, as `indexes --drop --force`: a second handle of this
// process that stalls (its lease stands still on the test clock) makes a plain drop Busy -
// the dropping handle stays open - and a forced drop fences it and frees the memory. The
// dropping handle's own registration never counts against it.
TEST_P(RevokedHolderTest, TheApisForcedDropFencesAStalledHolderButNeverItself) {
  std::atomic<int64_t> now_ms{1000};
  lease::ScopedTestClock clock([&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms += 20)); });
  const auto before = InUseByNode(Pools(*fabric_));
  auto dropper = CreateAndLoad(*fabric_, design());
  ASSERT_NE(dropper, nullptr);
  IndexOptions second = Options(design());
  if (design() == "dex") second.knobs["first_node"] = "1";
  auto stalled = designs::MakeIndex(design(), *fabric_, second);
  ASSERT_TRUE(stalled.ok()) << stalled.status().ToString();
  Status refused = dropper->Drop();
  ASSERT_TRUE(refused.IsBusy()) << refused.ToString();
  ASSERT_TRUE(dropper->OpenSession(0).ok()) << "a refused drop closed its handle";
  Status forced = dropper->Drop(DropOptions{.force = true});
  ASSERT_TRUE(forced.ok()) << forced.ToString();
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before);
}

INSTANTIATE_TEST_SUITE_P(PoolDesigns, RevokedHolderTest, ::testing::ValuesIn(kPoolDesigns),
                         [](const auto& info) { return info.param; });

// The drop's crash points, stopped at by running its steps one by one as a dropper that died
// would leave them. Each time the next Drop (or, last, the next opener of the name)
// finishes it and the chunks in use are back where they were.
class DropCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fabric_ = testing::MakeTestFabric("inproc");
    ep_ = std::move(fabric_->Connect()).value();
    before_ = InUseByNode(Pools(*fabric_));
  }
  // A loaded sherman index, closed as its process would have it before dying mid-drop.
  uint64_t Load() {
    auto index = CreateAndLoad(*fabric_, "sherman");
    EXPECT_NE(index, nullptr);
    EXPECT_TRUE(index->Close().ok());
    EXPECT_GT(InUse(Pools(*fabric_)), 0u);
    auto entry = alloc::Catalog::Open(*ep_, "dropped");
    EXPECT_TRUE(entry.ok());
    EXPECT_NE(entry->owner, 0u);
    return entry->owner;
  }
  // Load, and the loaded index's entry as an opener reads it.
  alloc::CatalogEntry LoadedEntry() {
    Load();
    auto entry = alloc::Catalog::Open(*ep_, "dropped");
    EXPECT_TRUE(entry.ok()) << entry.status().ToString();
    return entry.ok() ? *entry : alloc::CatalogEntry{};
  }
  // This test registering as a holder of `entry`, as a second handle does when it opens.
  Result<std::unique_ptr<alloc::IndexHold>> Hold(const alloc::CatalogEntry& entry) {
    return alloc::IndexHold::Take(*fabric_, entry, nullptr, std::chrono::milliseconds(2000));
  }
  uint64_t FreeOn(uint16_t node, uint64_t owner) {
    fabric::RpcReply request, reply;
    fabric::AppendPod(&request, owner);
    EXPECT_TRUE(ep_->Call(node, fabric::rpc_op::kFreeOwnedChunks, request, &reply).ok());
    uint64_t freed = 0;
    EXPECT_TRUE(fabric::ReadPod(reply, 0, &freed));
    return freed;
  }
  std::unique_ptr<fabric::Fabric> fabric_;
  std::unique_ptr<fabric::Endpoint> ep_;
  std::vector<uint64_t> before_;
};

TEST_F(DropCrashTest, AfterTheMarkTheNextDropFinishes) {
  Load();
  ASSERT_TRUE(alloc::Catalog::MarkDropping(*ep_, "dropped").ok());
  // Marked: not listed, not openable, its chunks still held.
  EXPECT_TRUE(alloc::Catalog::Open(*ep_, "dropped").status().IsNotFound());
  EXPECT_TRUE(alloc::Catalog::List(*ep_)->empty());
  EXPECT_NE(InUseByNode(Pools(*fabric_)), before_);
  ASSERT_TRUE(alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes()).ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
}

// Committed (holders checked, none) but nothing freed: the next opener of the name finishes
// the drop and creates the index anew.
TEST_F(DropCrashTest, AfterTheCommitTheNextOpenerFinishes) {
  const uint64_t owner = Load();
  auto mark = alloc::Catalog::MarkDropping(*ep_, "dropped");
  ASSERT_TRUE(mark.ok());
  ASSERT_TRUE(alloc::Catalog::CommitDrop(*ep_, *mark).ok());
  EXPECT_TRUE(alloc::Catalog::Open(*ep_, "dropped").status().IsNotFound());
  EXPECT_NE(InUseByNode(Pools(*fabric_)), before_);
  auto index = designs::MakeIndex("sherman", *fabric_, Options("sherman"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_NE(alloc::Catalog::Open(*ep_, "dropped")->owner, owner);
  for (uint16_t n = 0; n < fabric_->memory_nodes(); ++n) EXPECT_EQ(FreeOn(n, owner), 0u) << "left unfreed";
  ASSERT_TRUE((*index)->Drop().ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
}

TEST_F(DropCrashTest, BetweenMemoryNodesTheNextDropFreesTheRestAndNothingTwice) {
  const uint64_t owner = Load();
  auto mark = alloc::Catalog::MarkDropping(*ep_, "dropped");
  ASSERT_TRUE(mark.ok());
  ASSERT_TRUE(alloc::Catalog::CommitDrop(*ep_, *mark).ok());  // no holder: committed
  // The dropper freed the chunks on the first memory node holding some, then died.
  uint16_t node = 0;
  while (node < fabric_->memory_nodes() && FreeOn(node, owner) == 0) ++node;
  ASSERT_LT(node, fabric_->memory_nodes()) << "the index had no chunk";
  EXPECT_EQ(FreeOn(node, owner), 0u) << "freed twice";
  ASSERT_TRUE(alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes()).ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
  for (uint16_t n = 0; n < fabric_->memory_nodes(); ++n) EXPECT_EQ(FreeOn(n, owner), 0u);
}

TEST_F(DropCrashTest, AfterEveryFreeTheNextOpenerFinishesAndCreatesAnew) {
  const uint64_t owner = Load();
  auto mark = alloc::Catalog::MarkDropping(*ep_, "dropped");
  ASSERT_TRUE(mark.ok());
  ASSERT_TRUE(alloc::Catalog::CommitDrop(*ep_, *mark).ok());
  for (uint16_t n = 0; n < fabric_->memory_nodes(); ++n) FreeOn(n, owner);
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
  // The slot is still taken (marked) until someone finishes: the next opener of the name.
  auto index = designs::MakeIndex("sherman", *fabric_, Options("sherman"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto entry = alloc::Catalog::Open(*ep_, "dropped");
  ASSERT_TRUE(entry.ok());
  EXPECT_NE(entry->owner, owner) << "a new index never shares the dropped one's tag";
  auto session = (*index)->OpenSession(0);
  ASSERT_TRUE(session.ok());
  std::string v;
  EXPECT_TRUE((*session)->Lookup("key0", &v).IsNotFound()) << "the new index is empty";
  session->reset();
  ASSERT_TRUE((*index)->Drop().ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
}

// The handshake of an opener and a dropper (alloc/index_hold.h), each order stopped at.
// An opener that read the entry ready before the mark registers after it: it sees the mark and
// backs off, leaving no registration, and the drop goes on.
TEST_F(DropCrashTest, AnOpenerRegisteringAfterTheMarkBacksOff) {
  const auto entry = LoadedEntry();
  auto mark = alloc::Catalog::MarkDropping(*ep_, "dropped");
  ASSERT_TRUE(mark.ok());
  auto hold = Hold(entry);
  EXPECT_TRUE(hold.status().IsNotFound()) << hold.status().ToString();
  EXPECT_TRUE(alloc::HoldersOf(*ep_, entry.owner)->empty()) << "it left its registration";
  ASSERT_TRUE(alloc::Catalog::Settle(*ep_, *mark, fabric_->memory_nodes()).ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
}

// A holder registered before the mark: the dropper sees it, gives the index back and is Busy.
// Between the mark and that, the index cannot be opened.
TEST_F(DropCrashTest, AHolderRegisteredBeforeTheMarkRefusesTheDrop) {
  const auto entry = LoadedEntry();
  auto hold = Hold(entry);
  ASSERT_TRUE(hold.ok()) << hold.status().ToString();
  auto mark = alloc::Catalog::MarkDropping(*ep_, "dropped");
  ASSERT_TRUE(mark.ok());
  EXPECT_TRUE(alloc::Catalog::Open(*ep_, "dropped").status().IsNotFound());
  EXPECT_TRUE(alloc::Catalog::CommitDrop(*ep_, *mark).IsBusy());
  EXPECT_TRUE(alloc::Catalog::FinishDrop(*ep_, *mark, fabric_->memory_nodes()).ok()) << "nothing to finish";
  auto again = alloc::Catalog::Open(*ep_, "dropped");
  ASSERT_TRUE(again.ok()) << "given back";
  EXPECT_EQ(again->owner, entry.owner);
  EXPECT_NE(InUseByNode(Pools(*fabric_)), before_);
  hold->reset();  // closed: the drop goes through
  ASSERT_TRUE(alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes()).ok());
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
}

// A dropper that died after its mark, with a holder registered: the next opener of the name
// settles the mark - the index is given back, and opened with its data, not dropped.
TEST_F(DropCrashTest, AMarkLeftOnAHeldIndexIsGivenBackByTheNextOpener) {
  const auto entry = LoadedEntry();
  auto hold = Hold(entry);
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(alloc::Catalog::MarkDropping(*ep_, "dropped").ok());
  auto index = designs::MakeIndex("sherman", *fabric_, Options("sherman"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(alloc::Catalog::Open(*ep_, "dropped")->owner, entry.owner) << "the same index";
  auto s = (*index)->OpenSession(0);
  ASSERT_TRUE(s.ok());
  ExpectLoaded(**s);
}

// A holder that stopped renewing (dead, or stalled past its lease): a plain drop is refused;
// a forced one waits its lease and a quarter out on the dropper's clock, revokes it - so it
// never writes again - and drops. A holder that renews refuses even a forced drop.
TEST_F(DropCrashTest, AForcedDropWaitsOutAHolderThatStoppedRenewingButNotALiveOne) {
  // The test clock: leases renew only when their holder checks them (no thread), and it moves
  // on only when the dropper (this thread) reads it.
  const auto dropper = std::this_thread::get_id();
  std::atomic<int64_t> now_ms{1000};
  lease::Lease* renewing = nullptr;  // a live holder's lease: renewed every 10th read
  thread_local bool inside = false;
  int reads = 0;
  lease::ScopedTestClock clock([&] {
    if (std::this_thread::get_id() == dropper && !inside) {
      now_ms += 20;
      if (renewing != nullptr && ++reads % 10 == 0) {
        inside = true;
        EXPECT_TRUE(renewing->Renew().ok());
        inside = false;
      }
    }
    return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.load()));
  });
  const auto entry = LoadedEntry();
  auto live = lease::Lease::Claim(*fabric_, lease::LeaseOptions{});
  ASSERT_TRUE(live.ok());
  auto held = alloc::IndexHold::Take(*fabric_, entry, live->get(), {});
  ASSERT_TRUE(held.ok());
  renewing = live->get();
  Status refused = alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes(), 0, {.force = true});
  EXPECT_TRUE(refused.IsBusy()) << refused.ToString();
  renewing = nullptr;
  held->reset();

  auto stopped = Hold(entry);
  ASSERT_TRUE(stopped.ok());
  EXPECT_TRUE(alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes()).IsBusy());
  const int64_t start = now_ms.load();
  Status forced = alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes(), 0, {.force = true});
  ASSERT_TRUE(forced.ok()) << forced.ToString();
  EXPECT_GE(now_ms.load() - start, 2500) << "revoked before its lease and a quarter";
  EXPECT_EQ(InUseByNode(Pools(*fabric_)), before_);
}

// An opener's Drop drops the index it opened, not one created anew under its name since.
TEST_F(DropCrashTest, ADropNeverTakesAnotherIndexOfTheSameName) {
  const uint64_t owner = Load();
  ASSERT_TRUE(alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes()).ok());
  auto index = designs::MakeIndex("sherman", *fabric_, Options("sherman"));
  ASSERT_TRUE(index.ok());
  EXPECT_TRUE(alloc::Catalog::Drop(*ep_, "dropped", fabric_->memory_nodes(), owner).IsNotFound());
  EXPECT_TRUE(alloc::Catalog::Open(*ep_, "dropped").ok());
}

// The memory node's side: a chunk's header names its owner; freeing by owner is exact.
TEST(ChunkOwners, FreeOwnedChunksFreesExactlyTheOwnersChunks) {
  std::vector<std::byte> pool(fabric::kChunkAreaOffset + (8ull << 20));
  fabric::MemoryNodeOptions o;
  o.chunk_bytes = 1 << 20;
  fabric::MemoryNode node(0, pool.data(), pool.size(), o);
  const uint64_t a1 = node.AllocChunk(7).value(), b = node.AllocChunk(9).value();
  const uint64_t none = node.AllocChunk().value(), a2 = node.AllocChunk(7).value();
  EXPECT_EQ(node.OwnerOf(a1 + 4096), 7u);
  EXPECT_EQ(node.OwnerOf(b + (1 << 20) - 8), 9u);
  EXPECT_EQ(node.OwnerOf(none + 100), 0u);
  EXPECT_EQ(node.ChunksOwnedBy(7), 2u);
  EXPECT_EQ(node.FreeOwnedChunks(7).value(), 2u);
  EXPECT_EQ(node.FreeOwnedChunks(7).value(), 0u);
  EXPECT_EQ(node.OwnerOf(a2 + 64), 0u);
  EXPECT_EQ(node.Info().chunks_in_use, 2u);
  EXPECT_TRUE(node.FreeOwnedChunks(0).status().IsInvalidArgument());
  // Freed chunks are handed out again (zeroed past their new header) before new ones.
  const uint64_t again = node.AllocChunk(11).value();
  EXPECT_TRUE(again == a1 || again == a2);
  EXPECT_EQ(node.Info().chunks_ever, 4u);
  for (uint64_t i = fabric::kChunkHeaderBytes; i < (1 << 20); i += 8)
    ASSERT_EQ(pool[again + i], std::byte{0}) << i;
}

}  // namespace
}  // namespace dmindex
