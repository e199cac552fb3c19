// Fault injection of the in-process fabric: it must really tear, delay and fail, or the
// tests of the index designs built on it prove nothing.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "fabric/inproc/inproc_fabric.h"
#include "fabric/rpc.h"

namespace dmindex::fabric {
namespace {

std::unique_ptr<InProcFabric> MakeFabric(FaultOptions faults = {}) {
  InProcOptions o;
  o.memory_nodes = 2;
  o.pool_bytes = 16ull << 20;
  o.node.chunk_bytes = 1 << 20;
  o.faults = faults;
  auto f = InProcFabric::Create(o);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(f).value();
}

GlobalAddress FirstChunk(uint16_t node) { return {node, kChunkAreaOffset}; }

// A writer keeps rewriting a 1 KB node with every word equal to a round number; a naive
// reader that accepts whatever one READ returns counts how often the words disagree.
int CountTornReads(InProcFabric& f, int reads) {
  constexpr size_t kWords = 128;
  GlobalAddress node = FirstChunk(0);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto ep = std::move(f.Connect()).value();
    std::array<uint64_t, kWords> buf;
    for (uint64_t r = 1; !stop.load(std::memory_order_relaxed); ++r) {
      buf.fill(r);
      ASSERT_TRUE(ep->Write(node, buf.data(), sizeof buf).ok());
    }
  });
  auto ep = std::move(f.Connect()).value();
  int torn = 0;
  std::array<uint64_t, kWords> buf;
  for (int i = 0; i < reads; ++i) {
    EXPECT_TRUE(ep->Read(node, buf.data(), sizeof buf).ok());
    for (uint64_t w : buf)
      if (w != buf[0]) {
        ++torn;
        break;
      }
  }
  stop = true;
  writer.join();
  return torn;
}

TEST(InProcFaults, TornReadInjectionReallyTears) {
  FaultOptions faults;
  faults.tear = true;
  auto f = MakeFabric(faults);
  EXPECT_GT(CountTornReads(*f, 3000), 0) << "a naive reader never saw a torn node";
}

TEST(InProcFaults, WordsAreNeverTornEvenWhenNodesAre) {
  FaultOptions faults;
  faults.tear = true;
  auto f = MakeFabric(faults);
  GlobalAddress w = FirstChunk(1);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto ep = std::move(f->Connect()).value();
    for (uint64_t r = 0; !stop; ++r) {
      uint64_t v = (r % 2) ? ~0ull : 0;
      ASSERT_TRUE(ep->Write(w, &v, 8).ok());
    }
  });
  auto ep = std::move(f->Connect()).value();
  for (int i = 0; i < 20000; ++i) {
    uint64_t v;
    ASSERT_TRUE(ep->Read(w, &v, 8).ok());
    ASSERT_TRUE(v == 0 || v == ~0ull) << std::hex << v;
  }
  stop = true;
  writer.join();
}

TEST(InProcFaults, NodeThatStopsAnsweringGivesErrorsNotHangs) {
  auto f = MakeFabric();
  auto ep = std::move(f->Connect()).value();
  uint64_t v = 1;
  ASSERT_TRUE(ep->Write(FirstChunk(1), &v, 8).ok());
  f->SetNodeDown(1, true);
  Status s = ep->Read(FirstChunk(1), &v, 8);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  RpcReply reply;
  EXPECT_TRUE(ep->Call(1, rpc_op::kPing, {}, &reply).IsUnavailable());
  EXPECT_TRUE(ep->Read(FirstChunk(0), &v, 8).ok()) << "the other node still answers";
  f->SetNodeDown(1, false);
  EXPECT_TRUE(ep->Read(FirstChunk(1), &v, 8).ok());
  EXPECT_EQ(v, 1u);
}

// An unwaited batch to a node that stopped answering is posted all the same; its failure is
// what Reap returns, and a batch to a node that answers lands.
TEST(InProcFaults, AnUnwaitedBatchsFailureIsFoundWhenItIsReaped) {
  auto f = MakeFabric();
  auto ep = std::move(f->Connect()).value();
  const uint64_t v = 7;
  Verb write[] = {Verb::Write(FirstChunk(1), &v, 8)};
  f->SetNodeDown(1, true);
  ASSERT_TRUE(ep->PostUnwaited(write, Ordering::kInOrder, nullptr).ok());
  const Status reaped = ep->Reap();
  EXPECT_TRUE(reaped.IsUnavailable()) << reaped.ToString();
  f->SetNodeDown(1, false);
  uint64_t back = 0;
  ASSERT_TRUE(ep->Read(FirstChunk(1), &back, 8).ok());
  EXPECT_EQ(back, 0u) << "the failed batch wrote nothing";
  ASSERT_TRUE(ep->PostUnwaited(write, Ordering::kInOrder, nullptr).ok());
  EXPECT_TRUE(ep->Reap().ok());
  ASSERT_TRUE(ep->Read(FirstChunk(1), &back, 8).ok());
  EXPECT_EQ(back, 7u);
}

TEST(InProcFaults, InjectedDelayAndModelledLatencySlowVerbsDown) {
  InProcOptions o;
  o.pool_bytes = 16ull << 20;
  o.round_trip_ns = 200'000;  // 200 us per round trip
  auto f = std::move(InProcFabric::Create(o)).value();
  auto ep = std::move(f->Connect()).value();
  uint64_t v;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(ep->Read(FirstChunk(0), &v, 8).ok());
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(us, 2000);
}

// Scripted tears (verb_script.h): a held READ returns the pieces copied before the pause as
// they were then and the rest as it is at the release.
TEST(InProcFaults, HeldReadCombinesPiecesFromBeforeAndAfterWrites) {
  auto f = MakeFabric();
  GlobalAddress node = FirstChunk(0);
  auto writer = std::move(f->Connect()).value();
  std::array<uint64_t, 16> old_words, new_words, got;
  old_words.fill(1);
  new_words.fill(2);
  ASSERT_TRUE(writer->Write(node, old_words.data(), sizeof old_words).ok());
  HeldVerb hold(HeldVerb::At(VerbKind::kRead, node), {{0, 16}, {64, 72}});
  f->SetVerbScript(&hold);
  Status read;
  std::thread reader([&] {
    auto ep = std::move(f->Connect()).value();
    read = ep->Read(node, got.data(), sizeof got);
  });
  const bool held = hold.WaitHeld();
  if (held) {
    EXPECT_TRUE(writer->Write(node, new_words.data(), sizeof new_words).ok());
  }
  hold.Release();
  reader.join();
  f->SetVerbScript(nullptr);
  ASSERT_TRUE(held);
  ASSERT_TRUE(read.ok()) << read.ToString();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], i < 2 || i == 8 ? 1u : 2u) << "word " << i;
}

// A held WRITE lands the chosen pieces only; failed, it never lands the rest: the state a
// reader meets when a writer stops in the middle of publishing a node.
TEST(InProcFaults, FailedHeldWriteLandsOnlyItsFirstPieces) {
  auto f = MakeFabric();
  GlobalAddress node = FirstChunk(1);
  auto ep = std::move(f->Connect()).value();
  std::array<uint64_t, 16> words, got;
  words.fill(7);
  HeldVerb hold(HeldVerb::At(VerbKind::kWrite, node), {{64, 128}});
  f->SetVerbScript(&hold);
  Status wrote;
  std::thread writer([&] {
    auto wep = std::move(f->Connect()).value();
    wrote = wep->Write(node, words.data(), sizeof words);
  });
  const bool held = hold.WaitHeld();
  if (held) {
    EXPECT_TRUE(ep->Read(node, got.data(), sizeof got).ok());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i >= 8 ? 7u : 0u) << "word " << i;
  }
  hold.Fail();
  writer.join();
  f->SetVerbScript(nullptr);
  ASSERT_TRUE(held);
  EXPECT_TRUE(wrote.IsUnavailable()) << wrote.ToString();
  ASSERT_TRUE(ep->Read(node, got.data(), sizeof got).ok());
  EXPECT_EQ(got[0], 0u) << "the rest never landed";
  EXPECT_EQ(got[15], 7u);
}

// A test's script lives on its stack; a design's background thread may have picked it up just
// before the test removed it (CI's TSan run: DEX's write-back thread still inside a script
// the test had removed and its next loop iteration rebuilt at the same address). Removing a
// script returns only once no thread runs it.
TEST(InProcFaults, RemovingAScriptWaitsForTheThreadStillRunningIt) {
  auto f = MakeFabric();
  GlobalAddress node = FirstChunk(0);
  HeldVerb hold(HeldVerb::At(VerbKind::kWrite, node), {});
  f->SetVerbScript(&hold);
  std::thread writer([&] {
    auto ep = std::move(f->Connect()).value();
    uint64_t word = 5;
    EXPECT_TRUE(ep->Write(node, &word, sizeof word).ok());
  });
  ASSERT_TRUE(hold.WaitHeld());
  std::atomic<bool> removed{false};
  std::thread remover([&] {
    f->SetVerbScript(nullptr);
    removed.store(true);
  });
  // However long the writer stays inside the script, the removal has not returned: a false
  // here is the bug whatever the machine's load (the sleep only gives it the chance to show).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(removed.load()) << "the script was removed while a thread was running it";
  hold.Release();
  writer.join();
  remover.join();
  EXPECT_TRUE(removed.load());
  // Removed: a verb now passes untouched, and no count is left behind.
  auto ep = std::move(f->Connect()).value();
  uint64_t word = 6, got = 0;
  ASSERT_TRUE(ep->Write(node, &word, sizeof word).ok());
  ASSERT_TRUE(ep->Read(node, &got, sizeof got).ok());
  EXPECT_EQ(got, 6u);
  f->SetVerbScript(nullptr);  // returns at once
}

TEST(InProcFaults, InvalidOptionsAreRejected) {
  InProcOptions o;
  o.pool_bytes = 1000;
  EXPECT_TRUE(InProcFabric::Create(o).status().IsInvalidArgument());
  o = {};
  o.memory_nodes = 0;
  EXPECT_TRUE(InProcFabric::Create(o).status().IsInvalidArgument());
  o = {};
  o.node.chunk_bytes = 1000;
  EXPECT_TRUE(InProcFabric::Create(o).status().IsInvalidArgument());
}

}  // namespace
}  // namespace dmindex::fabric
