// DEX's miss policy (issue 26, item 3; docs/DEX.md "How the pieces fit"): nodes that keep
// missing without being cached become hot and are read in (MissCounts, OffloadPolicy::Hot);
// an offloaded lookup registers nothing; a lookup of a leaf another operation is fetching or
// holds reads its own copy instead of waiting. The concurrent cases are scripted: the first
// operation's READ (HeldVerb) or RPC (a network model that holds it) stays in flight while the
// second one runs, so each test shows the second one finishing without the first.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "designs/dex/offload.h"
#include "dex_test_env.h"
#include "dex_u64_tree.h"
#include "fabric/inproc/inproc_fabric.h"
#include "fabric/inproc/verb_script.h"
#include "fabric/network_model.h"

namespace dmindex {
namespace {

using designs::dex::MissCounts;
using designs::dex::OffloadPolicy;
using Key = uint64_t;
using Value = uint64_t;

GlobalAddress Node(uint64_t i) { return GlobalAddress(0, 4096 + i * 512); }

TEST(DexPolicy, MissCountsHalveEveryWindow) {
  MissCounts counts(16);  // 1024 slots, the floor
  counts.Count(Node(1));
  counts.Count(Node(1));
  counts.Count(Node(1));
  EXPECT_EQ(counts.Of(Node(1)), 3u);
  EXPECT_EQ(counts.Of(Node(2)), 0u);
  // The 1024th miss counted ends the window: every count is halved.
  for (uint64_t i = 0; i < 1021; ++i) counts.Count(Node(1000 + i % 7));
  EXPECT_EQ(counts.Of(Node(1)), 1u);
  // Counts saturate instead of wrapping.
  for (int i = 0; i < 300; ++i) counts.Count(Node(5));
  EXPECT_GE(counts.Of(Node(5)), 127u);
}

TEST(DexPolicy, RepeatedOffloadsOfANodeMakeItHot) {
  // l_o = 2000 ns, l_p = 2100 ns, l_s = 200 ns, c = 1.5: a leaf's path costs 3300 ns to READ,
  // an offload 2100, so the cost model offloads every leaf miss (exploration off).
  OffloadPolicy policy(true, 2, /*explore=*/0.0, /*cost_factor=*/1.5, /*local_search_ns=*/200, 64);
  policy.RecordRead(2000);
  policy.RecordOffload(2100);
  std::mt19937_64 rng(1);
  const GlobalAddress leaf = Node(1), inner = Node(2);
  EXPECT_TRUE(policy.Decide(0, leaf, rng));
  policy.CountMiss(leaf);
  EXPECT_FALSE(policy.Hot(0, leaf));  // one offload is cheaper than reading the leaf in
  EXPECT_TRUE(policy.Decide(0, leaf, rng));
  policy.CountMiss(leaf);
  // Two offloads (4200 ns) cost more than one READ of the path (3300): read it in now.
  EXPECT_TRUE(policy.Hot(0, leaf));
  EXPECT_FALSE(policy.Decide(0, leaf, rng));
  EXPECT_TRUE(policy.Decide(0, Node(3), rng)) << "another node is not hot";
  // A level-1 node's path is two READs (6600 ns): four offloads pay for it, three do not.
  for (int i = 0; i < 3; ++i) policy.CountMiss(inner);
  EXPECT_FALSE(policy.Hot(1, inner));
  EXPECT_TRUE(policy.Decide(1, inner, rng));
  policy.CountMiss(inner);
  EXPECT_TRUE(policy.Hot(1, inner));
  EXPECT_FALSE(policy.Decide(1, inner, rng));
  // A cost factor that makes every miss an offload (the tests' way to force offloading) never
  // finds a node hot.
  OffloadPolicy forced(true, 2, 0.0, 1e12, 200, 64);
  forced.RecordRead(2000);
  forced.RecordOffload(2100);
  for (int i = 0; i < 100; ++i) forced.CountMiss(leaf);
  EXPECT_FALSE(forced.Hot(0, leaf));
  EXPECT_TRUE(forced.Decide(0, leaf, rng));
}

// A tree of `n` keys 1..n (value 7k) in one compute node, every inner node cached.
struct Loaded {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::unique_ptr<testing::U64DexTree> tree;
};

Loaded Load(std::unique_ptr<fabric::InProcFabric> fabric, std::map<std::string, std::string> knobs, Key n) {
  Loaded l;
  l.fabric = std::move(fabric);
  auto tree = testing::U64DexTree::Open(*l.fabric, testing::DexTestOptions("dex-policy", 1, std::move(knobs)));
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  if (!tree.ok()) return l;
  l.tree = std::move(tree).value();
  auto w = l.tree->NewWorker(0);
  EXPECT_TRUE(w.ok());
  std::vector<testing::U64Pair> records;
  for (Key k = 1; k <= n; ++k) records.push_back({k, 7 * k});
  EXPECT_TRUE(testing::U64BulkLoad(*l.tree, **w, records).ok());
  testing::U64Workers ws(*l.tree, 0);
  for (Key k = 1; k <= n; ++k) {  // inner nodes are admitted on their first READ
    Value v = 0;
    EXPECT_TRUE(testing::U64Lookup(*l.tree, ws, k, &v).ok());
  }
  return l;
}

// Runs `op` on a thread of its own and waits for it. Without the behaviour under test it
// would wait for the held operation; the bound only keeps such a failure from hanging.
bool FinishesAlone(const std::function<void()>& op, std::thread* t) {
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto d = std::make_shared<Done>();  // outlives this call if the wait gives up
  *t = std::thread([d, op] {
    op();
    std::lock_guard l(d->mu);
    d->done = true;
    d->cv.notify_all();
  });
  std::unique_lock l(d->mu);
  return d->cv.wait_for(l, std::chrono::seconds(60), [&] { return d->done; });
}

// policy=lfu: a missed leaf the cache's sketch finds worth a frame is READ and admitted, not
// offloaded - here every leaf, since the cache has never-used frames (WorthAdmitting). The
// paper's policy with a cost model that offloads every miss (cost_factor=1e12) caches no leaf
// and offloads every lookup.
TEST(DexPolicy, UnderLfuALeafWorthAFrameIsReadInNotOffloaded) {
  for (const char* policy : {"lfu", "random"}) {
    SCOPED_TRACE(policy);
    // Inner nodes READ and cached (offload_level=0), no exploration: only leaves are offloaded.
    Loaded l = Load(testing::DexTestFabric(),
                    {{"offload_level", "0"}, {"cost_factor", "1e12"}, {"explore", "0"}, {"policy", policy}}, 2000);
    ASSERT_NE(l.tree, nullptr);
    const uint64_t offloads = l.tree->compute_node(0).offload.offloads.load();
    testing::U64Workers ws(*l.tree, 0);
    const fabric::VerbCounts before = l.fabric->TotalCounts();
    for (Key k = 1; k <= 2000; ++k) {
      Value v = 0;
      ASSERT_TRUE(testing::U64Lookup(*l.tree, ws, k, &v).ok());
      ASSERT_EQ(v, 7 * k);
    }
    const fabric::VerbCounts after = l.fabric->TotalCounts();
    if (std::string(policy) == "lfu") {
      EXPECT_EQ(offloads, 0u);
      EXPECT_EQ(after.reads, before.reads) << "every leaf was admitted by the first pass";
      EXPECT_EQ(after.rpcs, before.rpcs);
    } else {
      EXPECT_EQ(offloads, 2000u);
      EXPECT_EQ(after.rpcs - before.rpcs, 2000u) << "no leaf was cached";
      EXPECT_EQ(after.reads, before.reads);
    }
  }
}

TEST(DexPolicy, ALookupReadsALeafBeingFetchedItself) {
  // Leaves never admitted, no offloading: every lookup READs its leaf into a frame registered
  // as loading, which used to make a second lookup of that leaf wait for the first.
  Loaded l = Load(testing::DexTestFabric(), {{"admission", "0"}, {"offload", "off"}}, 2000);
  ASSERT_TRUE(l.tree);
  std::atomic<bool> armed{false};
  fabric::HeldVerb hold(
      [&](const fabric::Verb& v) { return armed.load() && v.kind == fabric::VerbKind::kRead && v.length == 512; }, {});
  l.fabric->SetVerbScript(&hold);
  armed = true;
  testing::U64Workers first_ws(*l.tree, 0), second_ws(*l.tree, 0);
  const Key k = 1234;
  Value first_v = 0, second_v = 0;
  Status first_s, second_s;
  std::thread first([&] { first_s = testing::U64Lookup(*l.tree, first_ws, k, &first_v); });
  ASSERT_TRUE(hold.WaitHeld());  // the leaf's READ is in flight; the leaf is registered
  std::thread second;
  const bool alone = FinishesAlone([&] { second_s = testing::U64Lookup(*l.tree, second_ws, k, &second_v); }, &second);
  hold.Release();
  second.join();
  first.join();
  l.fabric->SetVerbScript(nullptr);
  EXPECT_TRUE(alone) << "the second lookup waited for the first one's READ";
  ASSERT_TRUE(second_s.ok()) << second_s.ToString();
  EXPECT_EQ(second_v, 7 * k);
  ASSERT_TRUE(first_s.ok()) << first_s.ToString();
  EXPECT_EQ(first_v, 7 * k);
  EXPECT_EQ(l.tree->compute_node(0).offload.private_reads.load(), 1u);
  EXPECT_EQ(l.tree->Stats().retries, 0u);
  EXPECT_TRUE(l.tree->compute_node(0).bm->CheckInvariants().ok());
}

// A network model that carries verbs at once and holds the first RPC after Arm() before it
// is served, until Release().
class HeldCall final : public fabric::NetworkModel {
 public:
  const char* name() const override { return "inproc"; }
  Status Post(std::span<const fabric::Verb>, fabric::Ordering, const std::function<Status()>& land) override {
    return land();
  }
  Status Call(uint16_t, size_t, const fabric::RpcReply*, const std::function<Status()>& serve) override {
    {
      std::unique_lock l(mu_);
      if (armed_ && !taken_) {
        taken_ = true;
        cv_.notify_all();
        cv_.wait(l, [&] { return released_; });
      }
    }
    return serve();
  }
  void Arm() {
    std::lock_guard l(mu_);
    armed_ = true;
  }
  bool WaitHeld() {
    std::unique_lock l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(60), [&] { return taken_; });
  }
  void Release() {
    std::lock_guard l(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, taken_ = false, released_ = false;
};

TEST(DexPolicy, AnOffloadedLookupRegistersNothing) {
  auto model = std::make_shared<HeldCall>();
  fabric::InProcOptions fo;
  fo.memory_nodes = 2;
  fo.pool_bytes = 256ull << 20;
  fo.node.chunk_bytes = 1 << 20;
  fo.network = model;
  fo.prepare_node = designs::RegisterMemoryNodeHandlers;
  auto fabric = fabric::InProcFabric::Create(fo);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  // Every leaf miss offloaded (inner nodes are READ and cached), leaves never admitted.
  Loaded l = Load(std::move(fabric).value(),
                  {{"offload_level", "0"}, {"cost_factor", "1e12"}, {"explore", "0"}, {"admission", "0"}}, 2000);
  ASSERT_TRUE(l.tree);
  auto& policy = l.tree->compute_node(0).offload;
  const uint64_t offloads_before = policy.offloads.load();
  ASSERT_GT(offloads_before, 0u);
  model->Arm();
  testing::U64Workers first_ws(*l.tree, 0), second_ws(*l.tree, 0);
  const Key k = 777;
  Value first_v = 0, second_v = 0;
  Status first_s, second_s;
  std::thread first([&] { first_s = testing::U64Lookup(*l.tree, first_ws, k, &first_v); });
  ASSERT_TRUE(model->WaitHeld());  // the first lookup's offload is in flight
  std::thread second;
  const bool alone = FinishesAlone([&] { second_s = testing::U64Lookup(*l.tree, second_ws, k, &second_v); }, &second);
  model->Release();
  second.join();
  first.join();
  EXPECT_TRUE(alone) << "the second lookup waited for the first one's offload";
  ASSERT_TRUE(second_s.ok()) << second_s.ToString();
  ASSERT_TRUE(first_s.ok()) << first_s.ToString();
  EXPECT_EQ(second_v, 7 * k);
  EXPECT_EQ(first_v, 7 * k);
  EXPECT_EQ(policy.offloads.load() - offloads_before, 2u) << "both lookups were offloaded";
  EXPECT_EQ(l.tree->Stats().retries, 0u);
  EXPECT_TRUE(l.tree->compute_node(0).bm->CheckInvariants().ok());
}

}  // namespace
}  // namespace dmindex
