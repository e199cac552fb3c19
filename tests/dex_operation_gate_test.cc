// DEX's operation gate (src/designs/dex/operation_gate.h): a maintenance that closes the gate
// returns only once no operation is inside, and no operation passes while it is closed. The
// assertions hold whatever the interleaving: the waits below only give the other thread
// time to get where the invariant is tested, they never decide the outcome.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "designs/dex/operation_gate.h"

namespace dmindex::designs::dex {
namespace {

TEST(DexOperationGate, PassesWhileOpenAndLeavesOnDestruction) {
  OperationGate gate;
  OperationGate::Slot a, b;
  gate.Register(&a);
  gate.Register(&b);
  {
    OperationGate::Pass pa = gate.TryEnter(a);
    OperationGate::Pass pb = gate.TryEnter(b);
    EXPECT_TRUE(pa.entered());
    EXPECT_TRUE(pb.entered());
    EXPECT_TRUE(a.inside.load());
  }
  EXPECT_FALSE(a.inside.load());
  EXPECT_FALSE(b.inside.load());
  { OperationGate::Closed closed(gate); }  // nobody inside: returns at once
  EXPECT_TRUE(gate.TryEnter(a).entered());
  gate.Unregister(&a);
  gate.Unregister(&b);
}

TEST(DexOperationGate, ConcurrentCloseWaitsForTheOperationInsideAndKeepsNewOnesOut) {
  OperationGate gate;
  OperationGate::Slot inside, late;
  gate.Register(&inside);
  gate.Register(&late);
  OperationGate::Pass pass = gate.TryEnter(inside);
  ASSERT_TRUE(pass.entered());
  std::atomic<bool> drained{false}, release{false};
  std::thread maintenance([&] {
    OperationGate::Closed closed(gate);
    drained.store(true);
    while (!release.load()) std::this_thread::yield();
  });
  while (!gate.closed()) std::this_thread::yield();
  // Closing, with an operation inside: the maintenance cannot have drained, and a new
  // operation does not pass (its slot is left outside).
  EXPECT_FALSE(drained.load());
  EXPECT_FALSE(gate.TryEnter(late).entered());
  EXPECT_FALSE(late.inside.load());
  EXPECT_FALSE(drained.load());
  pass = {};  // the operation ends: the maintenance drains
  while (!drained.load()) std::this_thread::yield();
  EXPECT_FALSE(gate.TryEnter(late).entered());  // closed until the maintenance is done
  release.store(true);
  maintenance.join();
  EXPECT_FALSE(gate.closed());
  EXPECT_TRUE(gate.TryEnter(late).entered());
  gate.Unregister(&inside);
  gate.Unregister(&late);
}

}  // namespace
}  // namespace dmindex::designs::dex
