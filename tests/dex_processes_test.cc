// DEX with compute nodes in different processes (§4): each process hosts its own compute
// nodes (host leases in the pool), serves only their keys (NotOwner for the rest, with the
// route), and hands keys over by repartitioning: the giver writes its dirty pages back and
// publishes the map, the taker notices when asked for a key it now serves.
//
// Two Index objects opened on one in-process pool stand for two processes: they share
// nothing but the pool, exactly as processes over UCX do (multiprocess_check_test.cc runs the
// same over ucx-shm with real processes).
#include <gtest/gtest.h>

#include <iostream>
#include <thread>

#include "check/checker.h"
#include "check/workload.h"
#include "designs/registry.h"
#include "dex_test_env.h"
#include "fabric/inproc/inproc_fabric.h"
#include "u64_api.h"

namespace dmindex {
namespace {

// This file's tests speak the u64 key format in integers (u64_api.h).
using Key = uint64_t;
using Value = uint64_t;
using KeyValue = ::dmindex::testing::U64Pair;
using ::dmindex::u64::kMinKey;
using ::dmindex::u64::kMaxKey;
using ::dmindex::u64::IsValidKey;


std::unique_ptr<fabric::InProcFabric> MakeFabric(fabric::FaultOptions faults = {}) {
  return testing::DexTestFabric(faults);
}

Result<std::unique_ptr<Index>> OpenProcess(fabric::Fabric& fabric, uint32_t compute_nodes,
                                           std::map<std::string, std::string> knobs) {
  IndexOptions o = testing::DexTestOptions("shared-dex", compute_nodes, std::move(knobs));
  o.knobs.emplace("admission", "1");  // leaves stay cached (and dirty) until handed over
  return designs::MakeIndex("dex", fabric, o);
}

std::unique_ptr<Session> OpenSession(Index& index) { return std::move(index.OpenSession(0)).value(); }

TEST(DexProcesses, EachComputeNodeIsHostedOnce) {
  auto fabric = MakeFabric();
  auto a = OpenProcess(*fabric, 1, {{"partitions", "3"}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = OpenProcess(*fabric, 1, {});  // adopts the stored partition count, claims node 1
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(::dmindex::testing::RouteU64(*(*a)->partitioning(), kMinKey).hosted);
  EXPECT_FALSE(::dmindex::testing::RouteU64(*(*b)->partitioning(), kMinKey).hosted);
  EXPECT_EQ(::dmindex::testing::RouteU64(*(*b)->partitioning(), kMaxKey / 2 + 1).compute_node, 1u);
  EXPECT_TRUE(::dmindex::testing::RouteU64(*(*b)->partitioning(), kMaxKey / 2 + 1).hosted);

  auto taken = OpenProcess(*fabric, 1, {{"first_node", "0"}});
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("hosted by another process"), std::string::npos)
      << taken.status().ToString();
  auto too_many = OpenProcess(*fabric, 2, {});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("no 2 free compute node"), std::string::npos)
      << too_many.status().ToString();
  auto wrong_parts = OpenProcess(*fabric, 1, {{"partitions", "4"}});
  ASSERT_FALSE(wrong_parts.ok());
  EXPECT_NE(wrong_parts.status().message().find("partitioned over 3"), std::string::npos);

  // A closing process gives its compute node back.
  a->reset();
  auto again = OpenProcess(*fabric, 1, {{"first_node", "0"}});
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

// The walk-through of the issue: keys route to their host; a hand-over carries the giver's
// dirty pages to the taker, in both directions; a process cannot take keys it is not given.
TEST(DexProcesses, KeysMoveBetweenProcessesWithTheirWrites) {
  auto fabric = MakeFabric();
  auto a = OpenProcess(*fabric, 1, {{"partitions", "2"}});
  auto b = OpenProcess(*fabric, 1, {});
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<KeyValue> load;
  for (Key k = 1; k <= 4000; ++k) load.push_back({k, k});
  // Equal-width partitions put every loaded key on node 0 (A's); loading rebalances them
  // on leaf fences, moving the upper half to B - A may give them away, it hosts node 0.
  ASSERT_TRUE(::dmindex::testing::BulkLoadU64(*(*a), load).ok());
  const ::dmindex::testing::U64Route r = ::dmindex::testing::RouteU64(*(*a)->partitioning(), 3000);
  ASSERT_EQ(r.compute_node, 1u);
  ASSERT_FALSE(r.hosted);
  const Key boundary = r.begin;
  ASSERT_GT(boundary, 1000u);
  ASSERT_LT(boundary, 3000u);
  auto sa = OpenSession(**a), sb = OpenSession(**b);

  Value v = 0;
  Status s = sa->Lookup(3000, &v);
  ASSERT_TRUE(s.IsNotOwner()) << s.ToString();
  EXPECT_NE(s.message().find("compute node 1"), std::string::npos) << s.ToString();
  ASSERT_TRUE(sb->Lookup(3000, &v).ok());  // B had not seen the new map: it reloads it
  EXPECT_EQ(v, 3000u);
  EXPECT_TRUE(sb->Lookup(10, &v).IsNotOwner());

  // A writes its keys (dirty in its cache), then gives [boundary/2, boundary) to B.
  for (Key k = 1; k < boundary; ++k) ASSERT_TRUE(sa->Update(k, k + 100000).ok());
  for (Key k = 1; k < boundary; k += 2) ASSERT_TRUE(sa->Delete(k).ok());
  const Key half = boundary / 2;
  auto moved = ::dmindex::testing::RepartitionU64(*(*a)->partitioning(), {half});
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_TRUE(sa->Lookup(half, &v).IsNotOwner());
  for (Key k = half; k < boundary; ++k) {
    Status got = sb->Lookup(k, &v);
    if (k % 2 == 1) {
      ASSERT_TRUE(got.IsNotFound()) << k << ": " << got.ToString();
    } else {
      ASSERT_TRUE(got.ok()) << k << ": " << got.ToString();
      ASSERT_EQ(v, k + 100000) << "B lost A's write of key " << k;
    }
    ASSERT_TRUE(sb->Insert(k, k + 200000).ok());
  }
  // B may not take keys back; it may give them.
  auto grab = ::dmindex::testing::RepartitionU64(*(*b)->partitioning(), {1});
  EXPECT_TRUE(grab.status().IsNotOwner()) << grab.status().ToString();
  ASSERT_TRUE(::dmindex::testing::RepartitionU64(*(*b)->partitioning(), {boundary + 100}).ok());
  for (Key k = half; k < boundary + 100; ++k) {
    ASSERT_TRUE(sa->Lookup(k, &v).ok()) << k;
    ASSERT_EQ(v, k < boundary ? k + 200000 : k) << "A lost B's write of key " << k;
  }

  // A scan running into B's keys stops there with what it found, and says so.
  std::vector<KeyValue> out;
  s = ::dmindex::testing::ScanU64(*sa, boundary, 1000, &out);
  ASSERT_TRUE(s.IsNotOwner()) << s.ToString();
  // (A leaf crossing the boundary is shared: its keys beyond it come along.)
  ASSERT_GE(out.size(), 100u);
  ASSERT_LT(out.size(), 1000u);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].key, boundary + i);
  ASSERT_TRUE(::dmindex::testing::ScanU64(*sb, boundary + 100, 10, &out).ok());
  EXPECT_EQ(out.front().key, boundary + 100);

  // Everything written survives both processes closing (dirty pages go back at close).
  sa.reset();
  sb.reset();
  a->reset();
  b->reset();
  auto all = OpenProcess(*fabric, 2, {});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  auto s_all = OpenSession(**all);
  for (Key k = 1; k <= 4000; ++k) {
    Status got = s_all->Lookup(k, &v);
    const bool deleted = k < half && k % 2 == 1;
    ASSERT_EQ(got.ok(), !deleted) << k << ": " << got.ToString();
    if (got.ok()) {
      ASSERT_EQ(v, k < half ? k + 100000 : k < boundary ? k + 200000 : k) << k;
    }
  }
}

// Two processes race on one hot key set with torn and delayed verbs while their hosted
// compute nodes keep handing keys to each other; the merged history must be linearizable
// and scans correct, and the processes must have read each other's writes.
TEST(DexProcesses, RacingProcessesWithRepartitioningAreLinearizable) {
  fabric::FaultOptions faults;
  faults.tear = true;
  faults.delay_probability = 0.02;
  faults.seed = 5;
  auto fabric = MakeFabric(faults);
  check::WorkloadOptions w;
  w.threads = 4;
  w.keys = 96;
  w.key_stride = 4;
  w.ops_per_thread = 1500;
  w.compute_nodes = 2;
  w.repartition_ms = 1;
  w.seed = 17;
  check::WorkloadOptions wb = w;
  w.process = 1;
  wb.process = 2;
  wb.seed = 23;
  // A loader hosting all four compute nodes loads and balances the partitions, and leaves.
  std::map<check::Key, check::Value> loaded;
  {
    auto loader = OpenProcess(*fabric, 4, {{"partitions", "4"}});
    ASSERT_TRUE(loader.ok()) << loader.status().ToString();
    check::ConcurrentWorkload loading(**loader, w);
    ASSERT_TRUE(loading.Preload().ok());
    loaded = loading.start_state();
  }
  auto a = OpenProcess(*fabric, 2, {});
  auto b = OpenProcess(*fabric, 2, {});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
  EXPECT_TRUE(::dmindex::testing::RouteU64(*(*a)->partitioning(), 1).hosted);
  EXPECT_TRUE(::dmindex::testing::RouteU64(*(*b)->partitioning(), w.key_stride * (w.keys - 1)).hosted);
  check::ConcurrentWorkload load_a(**a, w), load_b(**b, wb);
  check::RoundsPlan plan;
  plan.rounds = 4;
  plan.check_each_round = false;  // one process's history alone misses the other's writes
  plan.keep_history = true;
  Result<check::RoundsResult> ra = Status::Aborted("not run"), rb = Status::Aborted("not run");
  std::thread other([&] { rb = check::RunRounds(load_b, plan); });
  ra = check::RunRounds(load_a, plan);
  other.join();
  ASSERT_TRUE(ra.ok() && rb.ok()) << ra.status().ToString() << rb.status().ToString();
  EXPECT_EQ(load_a.errors(), 0u) << load_a.first_error();
  EXPECT_EQ(load_b.errors(), 0u) << load_b.first_error();
  EXPECT_GT(load_a.repartitions() + load_b.repartitions(), 5u);

  size_t cross_reads = 0;
  for (const auto* r : {&*ra, &*rb})
    for (const auto& op : r->history.ops)
      cross_reads += op.kind == check::OpKind::kLookup && op.outcome == check::Outcome::kOk &&
                     op.value.size() == 8 && (u64::Decode(op.value) >> 56) != 0 &&
                     (u64::Decode(op.value) >> 56) != op.process;
  EXPECT_GT(cross_reads, 0u) << "no process read the other's writes";
  std::vector<check::History> histories;
  histories.push_back(check::History::StartingNow(loaded));
  histories.push_back(std::move(ra->history));
  histories.push_back(std::move(rb->history));
  auto merged = check::MergeHistories(std::move(histories));
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const check::CheckReport report = check::CheckHistory(*merged);
  EXPECT_TRUE(report.ok()) << report.ToString(5);
  std::cout << "[ dex processes ] " << merged->ops.size() << " operations, "
            << load_a.repartitions() + load_b.repartitions() << " repartitionings, " << cross_reads
            << " cross-process reads: " << report.ToString(0) << "\n";
}

}  // namespace
}  // namespace dmindex
