// XStore's server-side writes across a memory-server restart on a persistent pool
// (docs/LOCK_TAKEOVER.md, "A memory server's own locks"). The memory server runs XStore's
// tree; a server killed inside a write leaves its lock word held and the node perhaps torn in
// the pool it restarts on. The restarted server frees every word an earlier incarnation held,
// finishing the write from its redo record first, before it serves anyone.
//
//  * EveryCrashPointIsFinishedOrUndoneAtRestart - the server's write (an insert into a leaf
//    with room, an update, a delete, a leaf split, an internal split) dies at each of its READs
//    and WRITEs (the WRITE cut after half its bytes; in process an RPC runs on its caller's
//    thread, so the in-process fabric's scripted verbs reach the server's tree, which runs over
//    that fabric here). Then the node restarts on its pool, as `memserver --data-dir` after a
//    SIGKILL: it must free exactly the words that were left held, leave none, and serve every
//    acknowledged write (the dead one: its old or its new value) to the client that rode
//    through and to a new opener; a write into every leaf and a scan in order follow.
//  * ARestartFreesOnlyWordsOfEarlierIncarnations - the start frees words naming an earlier
//    server incarnation and no others (its own, a compute process's lease, a word without one);
//    no observer ever fences a memory server's holder; no process claims its lease slot.
//  * RestartsDoNotGrowThePool - 20 restarts, each followed by writes that split leaves: the
//    restarted server carries on cutting its predecessor's chunk and reuses its sessions' redo
//    blocks (server_memory.h), so the chunks handed out and the redo blocks listed stay as
//    they were after the first writes (before, every restart cut a new chunk for a new redo
//    block and leaked both).
//  * ADropFreesWhatEveryIncarnationKept - what the server keeps for an index is in chunks of
//    the index (server_memory.h): after restarts, dropping the index frees every chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "crash_points.h"
#include "designs/registry.h"
#include "designs/xstore/server.h"
#include "fabric/inproc/inproc_fabric.h"
#include "lease/lease.h"
#include "tree/lock_table.h"
#include "tree/lock_word.h"
#include "tree/server_locks.h"
#include "u64_api.h"

namespace dmindex {
namespace {

using testing::DyingThread;
using testing::HeldLocks;

enum class Op { kInsert, kUpdate, kDelete, kLeafSplit, kInternalSplit };

std::string OpName(const ::testing::TestParamInfo<Op>& info) {
  static const char* kNames[] = {"Insert", "Update", "Delete", "LeafSplit", "InternalSplit"};
  return kNames[static_cast<int>(info.param)];
}

constexpr uint64_t kLoaded = 60;      // keys 2, 4, ..., 120, bulk loaded
constexpr uint32_t kNodeBytes = 160;  // leaf_slots=4: 64 + 4 x 24; internal nodes hold 6

IndexOptions Options() {
  IndexOptions o;
  o.name = "t";
  o.key_format = KeyFormat::kU64;
  // No background training (its threads would make the crash points depend on timing);
  // leaves of 4 keys and internal nodes of 6, so that 60 keys make a tree of height 3+.
  o.knobs = {{"retrain", "off"}, {"leaf_slots", "4"}};
  return o;
}

struct Bed {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<Index> index;
  std::unique_ptr<Session> session;
  std::map<uint64_t, uint64_t> acknowledged;
};

// The server's handlers over the in-process fabric itself: its scripts then reach the
// server's tree. What the start freed is its answer; *memory (if asked) what it found of its
// predecessors' allocations.
Result<tree::ServerLockRecovery> StartServer(fabric::InProcFabric& f,
                                             designs::xstore::ServerMemory::Counts* memory = nullptr) {
  auto server = designs::xstore::RegisterXStoreHandlersOver(f.node(0), &f);
  if (!server.ok()) return server.status();
  if (memory != nullptr) {
    auto counts = (*server)->memory();
    if (!counts.ok()) return counts.status();
    *memory = *counts;
  }
  return (*server)->recovered();
}

Bed MakeBed(uint64_t extra = 0) {
  Bed b;
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  fo.node.rpc_threads = 4;  // the server's tree asks its own node for chunks by RPC
  b.fabric = std::move(fabric::InProcFabric::Create(fo)).value();
  EXPECT_TRUE(StartServer(*b.fabric).ok());
  b.index = std::move(designs::MakeIndex("xstore", *b.fabric, Options())).value();
  b.session = std::move(b.index->OpenSession()).value();
  // A bulk load trains the models before it returns; with retrain=off no split queues any
  // training after it, so no thread but the test's ever runs in the server.
  std::vector<testing::U64Pair> loaded;
  for (uint64_t k = 1; k <= kLoaded; ++k) {
    loaded.push_back({2 * k, 20 * k});
    b.acknowledged[2 * k] = 20 * k;
  }
  EXPECT_TRUE(testing::BulkLoadU64(*b.index, loaded).ok());
  for (uint64_t k = 0; k < extra; ++k) {
    EXPECT_TRUE(b.session->Insert(2 * k + 1, 2 * k + 1).ok());
    b.acknowledged[2 * k + 1] = 2 * k + 1;
  }
  return b;
}

// The dead operation: its key, and the value it writes (none: a delete).
struct Dead {
  uint64_t key = 0;
  std::optional<uint64_t> value;
};

Status Run(Session& s, Op op, const Dead& d) {
  switch (op) {
    case Op::kUpdate: return s.Update(d.key, *d.value);
    case Op::kDelete: return s.Delete(d.key);
    default: return s.Insert(d.key, *d.value);
  }
}

// The operation with the caller's thread dying at its READ or WRITE `die_at` (0: never); how
// many it posted, and whether it was acknowledged.
uint64_t RunDying(Bed& b, Op op, const Dead& d, uint64_t die_at, bool* acknowledged) {
  DyingThread script(std::this_thread::get_id(), die_at);
  b.fabric->SetVerbScript(&script);
  *acknowledged = Run(*b.session, op, d).ok();
  b.fabric->SetVerbScript(nullptr);
  return script.seen();
}

// A key's state: its value, or none (absent).
using State = std::optional<uint64_t>;

State LookUp(Session& s, uint64_t key) {
  uint64_t got = 0;
  const Status st = s.Lookup(key, &got);
  EXPECT_TRUE(st.ok() || st.IsNotFound()) << "key " << key << ": " << st.ToString();
  return st.ok() ? State(got) : std::nullopt;
}

// The dead operation of each kind, and how many new keys the bed holds before it (MakeBed).
// Update and delete take a loaded key. The inserts take the next new key, 2 * extra + 1,
// after the first `extra` (they fill leaves from the left): the first whose write is as short
// as any (a leaf with room), the first that posts more verbs (a leaf split), and the first
// that posts more still (the split's parent splits too).
struct Case {
  uint64_t extra = 0;
  Dead dead;
};

Case Choose(Op op) {
  if (op == Op::kUpdate) return {0, {kLoaded, 7'000'000}};
  if (op == Op::kDelete) return {0, {kLoaded + 2, std::nullopt}};
  uint64_t shortest = 0, longer = 0;
  for (uint64_t extra = 0; extra < kLoaded; ++extra) {
    Bed b = MakeBed(extra);
    const Dead d{2 * extra + 1, 7'000'000};
    bool ok = false;
    const uint64_t verbs = RunDying(b, Op::kInsert, d, 0, &ok);
    EXPECT_TRUE(ok);
    if (shortest == 0) shortest = verbs;
    if (op == Op::kInsert && verbs == shortest) return {extra, d};
    if (op == Op::kLeafSplit && verbs > shortest) return {extra, d};
    if (op == Op::kInternalSplit && longer != 0 && verbs > longer) return {extra, d};
    if (verbs > shortest && longer == 0) longer = verbs;
  }
  ADD_FAILURE() << "no insert of this kind among the first " << kLoaded << " new keys";
  return {};
}

// Every acknowledged write is there; the dead operation's key, unless it was acknowledged,
// is as before it (`before`) or as it would have left it, and nothing else.
void ExpectAcknowledged(Session& s, const Bed& b, const Dead& d, bool dead_acknowledged, const State& before,
                        const char* who) {
  SCOPED_TRACE(who);
  for (const auto& [k, v] : b.acknowledged) EXPECT_EQ(LookUp(s, k), State(v)) << "key " << k;
  if (dead_acknowledged) return;
  const State got = LookUp(s, d.key);
  EXPECT_TRUE(got == before || got == d.value) << "key " << d.key << " of the write in flight at the kill";
}

void CheckAfterRestart(Bed& b, const Dead& d, bool dead_acknowledged) {
  const auto it = b.acknowledged.find(d.key);
  const State before = it == b.acknowledged.end() ? std::nullopt : State(it->second);
  b.acknowledged.erase(d.key);
  if (dead_acknowledged && d.value) b.acknowledged[d.key] = *d.value;
  ExpectAcknowledged(*b.session, b, d, dead_acknowledged, before, "the client that rode through");
  std::vector<testing::U64Pair> all;
  ASSERT_TRUE(testing::ScanU64(*b.session, 0, 1 << 20, &all).ok());
  for (size_t i = 1; i < all.size(); ++i) ASSERT_LT(all[i - 1].key, all[i].key);
  EXPECT_GE(all.size(), b.acknowledged.size());
  EXPECT_LE(all.size(), b.acknowledged.size() + (dead_acknowledged ? 0 : 1));
  // A write into every leaf (splitting full ones, so their parents are written too): a lock
  // left held, or a node left torn, would stop one.
  for (uint64_t k = 1; k <= kLoaded; ++k) {
    const uint64_t key = 2 * k + 1;
    if (key == d.key) continue;
    const Status st = b.session->Insert(key, key);
    ASSERT_TRUE(st.ok()) << "key " << key << ": " << st.ToString();
    b.acknowledged[key] = key;
  }
  auto other = designs::MakeIndex("xstore", *b.fabric, Options());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto session = std::move((*other)->OpenSession()).value();
  ExpectAcknowledged(*session, b, d, dead_acknowledged, before, "a new opener");
}

class XStoreServerRestart : public ::testing::TestWithParam<Op> {};

TEST_P(XStoreServerRestart, EveryCrashPointIsFinishedOrUndoneAtRestart) {
  // The clients' leases renew only when a write under a lock finds them due (never: the clock
  // stands still), not from a thread: no verb is in flight while RestartNode swaps the node.
  lease::ScopedTestClock frozen([] { return runtime::Clock::time_point(std::chrono::seconds(1)); });
  const Op op = GetParam();
  const Case c = Choose(op);
  const Dead& d = c.dead;
  ASSERT_NE(d.key, 0u);
  uint64_t verbs = 0;
  {
    Bed dry = MakeBed(c.extra);
    bool ok = false;
    verbs = RunDying(dry, op, d, 0, &ok);
    ASSERT_TRUE(ok);
  }
  ASSERT_GT(verbs, 1u);
  uint64_t left_held = 0, replayed = 0;  // crash points that left a word held; of them, repaired
  for (uint64_t k = 1; k <= verbs; ++k) {
    SCOPED_TRACE("the server died at verb " + std::to_string(k) + " of " + std::to_string(verbs));
    Bed b = MakeBed(c.extra);
    bool ok = true;
    RunDying(b, op, d, k, &ok);
    const uint64_t held = HeldLocks(*b.fabric);
    left_held += held > 0;
    // SIGKILL and restart on the same pool: a new incarnation, which frees what the old held.
    ASSERT_TRUE(b.fabric->RestartNode(0).ok());
    EXPECT_EQ(b.fabric->node(0).incarnation(), 2u);
    auto recovered = StartServer(*b.fabric);
    ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
    EXPECT_EQ(recovered->freed, held) << "every word held at the kill was the server's";
    ASSERT_EQ(HeldLocks(*b.fabric), 0u) << "a lock of the killed server stayed held";
    replayed += recovered->replayed > 0;
    CheckAfterRestart(b, d, ok);
    if (HasFatalFailure()) return;
  }
  std::cout << OpName({op, 0}) << " of key " << d.key << ": " << verbs << " crash points, " << left_held
            << " left a lock word held, " << replayed << " repaired from a redo record\n";
  EXPECT_GT(left_held, 0u);
  EXPECT_GT(replayed, 0u) << "no crash point cut a write that its record finished";
}

INSTANTIATE_TEST_SUITE_P(Writes, XStoreServerRestart,
                         ::testing::Values(Op::kInsert, Op::kUpdate, Op::kDelete, Op::kLeafSplit, Op::kInternalSplit),
                         OpName);

TEST(XStoreServerMemory, RestartsDoNotGrowThePool) {
  lease::ScopedTestClock frozen([] { return runtime::Clock::time_point(std::chrono::seconds(1)); });
  Bed b = MakeBed(8);  // 8 inserts after the bulk load: leaves split, the server has a session
  const uint64_t chunks = b.fabric->node(0).Info().chunks_in_use;
  uint64_t listed = 0, next = 1'000'001;
  for (int restart = 1; restart <= 20; ++restart) {
    SCOPED_TRACE("restart " + std::to_string(restart));
    ASSERT_TRUE(b.fabric->RestartNode(0).ok());
    designs::xstore::ServerMemory::Counts memory;
    ASSERT_TRUE(StartServer(*b.fabric, &memory).ok());
    EXPECT_TRUE(memory.resumed) << "the predecessor's chunk was not carried on";
    if (restart == 1) listed = memory.listed;
    EXPECT_GT(memory.listed, 0u);
    EXPECT_EQ(memory.listed, listed) << "a restart entered new redo blocks";
    // Writes that split leaves (4 keys each) and take a session's redo block.
    for (int i = 0; i < 6; ++i, next += 2) {
      ASSERT_TRUE(b.session->Insert(next, next).ok());
      b.acknowledged[next] = next;
    }
    EXPECT_EQ(b.fabric->node(0).Info().chunks_in_use, chunks) << "the pool grew";
  }
  for (const auto& [k, v] : b.acknowledged) ASSERT_EQ(LookUp(*b.session, k), State(v)) << "key " << k;
  EXPECT_EQ(testing::HeldLocks(*b.fabric), 0u);
}

// What each incarnation of the server kept for the index - its chunks, the one it cut on, its
// redo blocks - is the index's (tagged with its owner tag): dropping the index frees all of
// it, whichever incarnation took it.
TEST(XStoreServerMemory, ADropFreesWhatEveryIncarnationKept) {
  lease::ScopedTestClock frozen([] { return runtime::Clock::time_point(std::chrono::seconds(1)); });
  const uint64_t empty = 0;  // a new pool's chunks in use
  Bed b = MakeBed(8);
  uint64_t next = 1'000'001;
  for (int restart = 1; restart <= 3; ++restart) {
    ASSERT_TRUE(b.fabric->RestartNode(0).ok());
    ASSERT_TRUE(StartServer(*b.fabric).ok());
    for (int i = 0; i < 6; ++i, next += 2) ASSERT_TRUE(b.session->Insert(next, next).ok());
  }
  EXPECT_GT(b.fabric->node(0).Info().chunks_in_use, empty);
  b.session.reset();
  Status dropped = b.index->Drop();
  ASSERT_TRUE(dropped.ok()) << dropped.ToString();
  EXPECT_EQ(b.fabric->node(0).Info().chunks_in_use, empty) << "a chunk of the index outlived its drop";
  // The restarted server forgot it: it keeps memory for no index now.
  designs::xstore::ServerMemory::Counts memory;
  ASSERT_TRUE(b.fabric->RestartNode(0).ok());
  ASSERT_TRUE(StartServer(*b.fabric, &memory).ok());
  EXPECT_EQ(memory.listed, 0u);
  EXPECT_FALSE(memory.resumed);
}

TEST(XStoreServerLocks, ARestartFreesOnlyWordsOfEarlierIncarnations) {
  fabric::InProcOptions fo;
  fo.memory_nodes = 1;
  fo.pool_bytes = 64ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  auto f = std::move(fabric::InProcFabric::Create(fo)).value();
  EXPECT_EQ(f->node(0).incarnation(), 1u);
  auto ep = std::move(f->Connect()).value();
  const auto word = [](uint64_t i) { return GlobalAddress(0, fabric::kLockTableOffset + 8 * i); };
  const GlobalAddress no_record;  // a word that names no redo block: its holder wrote nothing
  const uint64_t words[] = {
      tree::EncodeLockWord(lease::MemoryServerHolder(1), no_record),  // incarnation 1: dead at 3
      tree::EncodeLockWord(lease::MemoryServerHolder(2), no_record),  // incarnation 2: dead at 3
      tree::EncodeLockWord(lease::MemoryServerHolder(3), no_record),  // the restarted server's own
      tree::EncodeLockWord(lease::HolderId{5, 9}, no_record),         // a compute process's lease
      (uint64_t{1} << lease::HolderId::kBits) | 0x2a1,                // a holder without a lease
  };
  for (uint64_t i = 0; i < std::size(words); ++i) ASSERT_TRUE(ep->Write(word(100 * i), &words[i], 8).ok());
  ASSERT_TRUE(f->RestartNode(0).ok());
  ASSERT_TRUE(f->RestartNode(0).ok());
  ASSERT_EQ(f->node(0).incarnation(), 3u);
  auto recovered = tree::FreeLocksOfEarlierIncarnations(*ep, 0, lease::MemoryServerHolder(3));
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  EXPECT_EQ(recovered->freed, 2u);
  EXPECT_EQ(recovered->replayed, 0u);
  for (uint64_t i = 0; i < std::size(words); ++i) {
    uint64_t now = 0;
    ASSERT_TRUE(ep->Read(word(100 * i), &now, 8).ok());
    EXPECT_EQ(now, i < 2 ? 0 : words[i]) << "word " << i;
  }

  // Nobody but the server's successor frees a server's word: an observer never fences it,
  // however long it stands still, and no process claims its slot (all others taken here).
  std::atomic<int64_t> now_ms{0};
  lease::ScopedTestClock clock([&] { return runtime::Clock::time_point(std::chrono::milliseconds(now_ms.load())); });
  lease::LeaseObserver observer;
  for (int i = 0; i < 3; ++i, now_ms += 60'000) {
    auto fenced = observer.FenceIfExpired(*ep, lease::MemoryServerHolder(3));
    ASSERT_TRUE(fenced.ok());
    EXPECT_FALSE(*fenced);
  }
  std::vector<std::unique_ptr<lease::Lease>> leases;
  for (uint32_t i = 0; i + 1 < lease::kSlots; ++i) {
    auto claimed = lease::Lease::Claim(*f, lease::LeaseOptions{});
    ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
    EXPECT_NE((*claimed)->id().slot, lease::kMemoryServerSlot);
    leases.push_back(std::move(claimed).value());
  }
}

// Remembers the address of every READ longer than a word (a lookup with its models cached
// READs only the predicted leaves).
class NodeReads final : public fabric::VerbScript {
 public:
  Outcome Run(const fabric::VerbCopy& copy) override {
    if (copy.verb().kind == fabric::VerbKind::kRead && copy.verb().length > 8) {
      std::lock_guard<std::mutex> g(mu_);
      nodes_.push_back(copy.verb().remote);
    }
    return Outcome::kPass;
  }
  std::vector<GlobalAddress> nodes() const {
    std::lock_guard<std::mutex> g(mu_);
    return nodes_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<GlobalAddress> nodes_;
};

// Counts the verbs posted to any of `words`; CASes on them fail without landing (as if their
// memory server were away), so that a writer that waits on one fails at once instead of after
// a minute.
class WordsOffLimits final : public fabric::VerbScript {
 public:
  explicit WordsOffLimits(std::vector<GlobalAddress> words) : words_(std::move(words)) {}
  Outcome Run(const fabric::VerbCopy& copy) override {
    if (Mine(copy.verb())) touched_.fetch_add(1);
    return Outcome::kPass;
  }
  AtomicOutcome RunAtomic(const fabric::Verb& v) override {
    if (!Mine(v)) return AtomicOutcome::kPass;
    touched_.fetch_add(1);
    return AtomicOutcome::kNotLanded;
  }
  uint64_t touched() const { return touched_.load(); }

 private:
  bool Mine(const fabric::Verb& v) const { return std::find(words_.begin(), words_.end(), v.remote) != words_.end(); }
  const std::vector<GlobalAddress> words_;
  std::atomic<uint64_t> touched_{0};
};

// No dead lock of another index blocks XStore's server (docs/LOCK_TAKEOVER.md, "Other
// indexes"). The server cannot take a word over (it has no access to the lease table), so its
// trees lock in a part of the lock table no compute process's tree hashes onto
// (tree/lock_table.h). Here a compute process holds, under a lease nobody has fenced, the
// words of the processes' part where the leaves a lookup reads hash to; the server's update of
// the lookup's key and an insert next to it go through at once and post no verb to those words
// (before, the server waited on them: a minute, then Unavailable; here their CASes fail at once).
TEST(XStoreServerLocks, AnotherIndexsHeldWordNeverBlocksTheServer) {
  Bed b = MakeBed();
  const uint64_t key = 50;
  ASSERT_EQ(LookUp(*b.session, key), State(b.acknowledged[key]));  // fetches the models
  NodeReads reads;
  b.fabric->SetVerbScript(&reads);
  ASSERT_EQ(LookUp(*b.session, key), State(b.acknowledged[key]));  // the predicted leaves
  b.fabric->SetVerbScript(nullptr);
  ASSERT_FALSE(reads.nodes().empty());
  std::vector<GlobalAddress> words;
  auto ep = std::move(b.fabric->Connect()).value();
  const uint64_t held = tree::EncodeLockWord(lease::HolderId{5, 9}, GlobalAddress());
  for (GlobalAddress leaf : reads.nodes()) {
    words.push_back(tree::LockWordFor(leaf, tree::LockArea::kProcesses));
    ASSERT_TRUE(ep->Write(words.back(), &held, 8).ok());
  }

  WordsOffLimits off(words);
  b.fabric->SetVerbScript(&off);
  const Status updated = b.session->Update(key, 500);
  const Status inserted = b.session->Insert(key + 1, 510);
  b.fabric->SetVerbScript(nullptr);
  ASSERT_TRUE(updated.ok()) << updated.ToString();
  ASSERT_TRUE(inserted.ok()) << inserted.ToString();
  EXPECT_EQ(off.touched(), 0u) << "the server's writes went to compute processes' lock words";
  EXPECT_EQ(LookUp(*b.session, key), State(500));
  EXPECT_EQ(LookUp(*b.session, key + 1), State(510));
  for (GlobalAddress w : words) {
    uint64_t now = 0;
    ASSERT_TRUE(ep->Read(w, &now, 8).ok());
    EXPECT_EQ(now, held) << "a process's word was changed by the server";
  }
}

}  // namespace
}  // namespace dmindex
