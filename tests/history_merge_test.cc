// Histories of several processes: rebasing onto one clock, merging, the file format, and the
// final-state check - each shown to accept what is right and reject what is wrong.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "check/checker.h"
#include "check/history_file.h"
#include "common/u64.h"

namespace dmindex::check {
namespace {

// Keys and values named by integers: the u64 format's 8-byte strings.
Key K(uint64_t k) { return U64Key(k).str(); }
using IntMap = std::map<uint64_t, uint64_t>;
std::map<Key, Value> M(const IntMap& m) {
  std::map<Key, Value> out;
  for (const auto& [k, v] : m) out[K(k)] = K(v);
  return out;
}

Operation Op(OpKind kind, uint64_t key, uint64_t value, int64_t invoke, int64_t response,
             uint32_t process = 0, Outcome outcome = Outcome::kOk) {
  Operation op;
  op.kind = kind;
  op.outcome = outcome;
  op.process = process;
  op.key = K(key);
  if (kind == OpKind::kInsert || kind == OpKind::kUpdate || kind == OpKind::kLookup) op.value = K(value);
  op.invoke_ns = invoke;
  op.response_ns = response;
  return op;
}

History At(int64_t origin, std::vector<Operation> ops, const IntMap& initial = {}) {
  History h{std::move(ops), M(initial)};
  h.clock_origin_ns = origin;
  return h;
}

bool Names(const CheckReport& r, const std::string& kind, uint64_t key) {
  for (const Violation& v : r.violations)
    if (v.kind == kind && v.key == K(key)) return true;
  return false;
}

TEST(MergeHistories, RebasesOntoTheEarliestOriginAndOrdersByInvocation) {
  // Process 2 started 1000 ns after process 1: its time 0 is process 1's time 1000.
  History p1 = At(5000, {Op(OpKind::kInsert, 7, 1, 0, 100, 1), Op(OpKind::kLookup, 7, 2, 1500, 1600, 1)});
  History p2 = At(6000, {Op(OpKind::kInsert, 7, 2, 0, 100, 2)});
  auto merged = MergeHistories({p2, p1});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->clock_origin_ns, 5000);
  ASSERT_EQ(merged->ops.size(), 3u);
  EXPECT_EQ(merged->ops[0].process, 1u);
  EXPECT_EQ(merged->ops[1].process, 2u);
  EXPECT_EQ(merged->ops[1].invoke_ns, 1000);
  EXPECT_EQ(merged->ops[1].response_ns, 1100);
  EXPECT_EQ(merged->ops[2].invoke_ns, 1500);
  // Process 1 read the value process 2 wrote: linearizable only together.
  EXPECT_TRUE(CheckHistory(*merged).ok()) << CheckHistory(*merged).ToString();
  EXPECT_TRUE(Names(CheckHistory(p1), "not linearizable", 7));
  // Had process 2 written only after the read returned, the read would be a violation.
  auto late = MergeHistories({At(6700, {Op(OpKind::kInsert, 7, 2, 0, 100, 2)}), p1});
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(Names(CheckHistory(*late), "not linearizable", 7));
}

TEST(MergeHistories, UnitesInitialStatesAndRejectsDisagreement) {
  auto merged = MergeHistories({At(1, {}, {{3, 30}}), At(2, {}, {}), At(3, {}, {{3, 30}, {4, 40}})});
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->initial, M({{3, 30}, {4, 40}}));
  auto bad = MergeHistories({At(1, {}, {{3, 30}}), At(2, {}, {{3, 31}})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("key 3"), std::string::npos) << bad.status().ToString();
}

TEST(AppendHistory, KeepsTheInitialStateAndRebases) {
  History run = At(100, {Op(OpKind::kInsert, 1, 10, 0, 10)}, {{1, 5}});
  AppendHistory(&run, At(200, {Op(OpKind::kDelete, 1, 0, 0, 10)}, {{1, 10}, {9, 9}}));
  EXPECT_EQ(run.initial, M({{1, 5}}));
  ASSERT_EQ(run.ops.size(), 2u);
  EXPECT_EQ(run.ops[1].invoke_ns, 100);
  EXPECT_EQ(run.ops[1].kind, OpKind::kDelete);
}

TEST(HistoryFile, RoundTripsEveryField) {
  Operation scan = Op(OpKind::kScan, 2, 0, 30, 40, 3);
  scan.scan_count = 5;
  // Byte keys and values of any bytes and sizes, empty values included.
  scan.scan_result = {{K(3), K(~uint64_t{0})}, {std::string("b\0\xff\n\"", 5), ""}, {"user1", std::string(3000, 'v')}};
  scan.scan_after = true;  // an iterator's batch: after key 2, below "z"
  scan.scan_end = "z";
  HistoryFile file{"sherman:hocl=off", "idx", 3,
                   At(-77, {Op(OpKind::kUpdate, u64::kMaxKey, 0xff00000000000001, 1, 2, 3, Outcome::kNotFound),
                            Op(OpKind::kDelete, 4, 0, 5, 6, 3, Outcome::kUnknown), scan},
                      {{4, 44}})};
  file.history.ops[0].thread = 254;
  const std::string path = ::testing::TempDir() + "/history_" + std::to_string(getpid()) + ".json";
  ASSERT_TRUE(WriteHistoryFile(path, file).ok());
  auto read = ReadHistoryFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->design, file.design);
  EXPECT_EQ(read->index, file.index);
  EXPECT_EQ(read->process, 3u);
  EXPECT_EQ(read->history.clock_origin_ns, -77);
  EXPECT_EQ(read->history.initial, file.history.initial);
  ASSERT_EQ(read->history.ops.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Operation &a = file.history.ops[i], &b = read->history.ops[i];
    EXPECT_EQ(Describe(a), Describe(b));
    EXPECT_EQ(a.thread, b.thread);
    EXPECT_EQ(a.process, b.process);
    EXPECT_EQ(a.value, b.value);
    EXPECT_EQ(a.scan_result, b.scan_result);
    EXPECT_EQ(a.scan_after, b.scan_after);
    EXPECT_EQ(a.scan_end, b.scan_end);
  }
  EXPECT_EQ(Describe(read->history.ops[0]).substr(0, 7), "C3.T254");

  std::ofstream(path) << "{\"format\": \"dmindex-history\", \"version\": 3, \"ops\": [[9]]}";
  auto bad = ReadHistoryFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path), std::string::npos);
  std::ofstream(path) << "not json";
  EXPECT_FALSE(ReadHistoryFile(path).ok());
  std::remove(path.c_str());
  EXPECT_FALSE(ReadHistoryFile(path).ok());
}

TEST(CheckFinalState, AcceptsTheLastAcknowledgedWriteOrAnyOverlappingOne) {
  History h = At(0, {Op(OpKind::kInsert, 1, 10, 0, 10), Op(OpKind::kUpdate, 1, 11, 20, 30),
                     // Key 2: two overlapping last writes, either may be last.
                     Op(OpKind::kInsert, 2, 20, 0, 50), Op(OpKind::kInsert, 2, 21, 10, 20, 1),
                     // Key 3: deleted last; key 4 untouched from the initial state.
                     Op(OpKind::kInsert, 3, 30, 0, 10), Op(OpKind::kDelete, 3, 0, 20, 30),
                     Op(OpKind::kLookup, 4, 40, 0, 10)},
                 {{4, 40}});
  EXPECT_TRUE(CheckFinalState(h, M({{1, 11}, {2, 20}, {4, 40}})).ok());
  EXPECT_TRUE(CheckFinalState(h, M({{1, 11}, {2, 21}, {4, 40}})).ok());
}

TEST(CheckFinalState, NamesTheKeyOfALostWriteOrDelete) {
  History h = At(0, {Op(OpKind::kInsert, 1, 10, 0, 10), Op(OpKind::kUpdate, 1, 11, 20, 30),
                     Op(OpKind::kInsert, 3, 30, 0, 10), Op(OpKind::kDelete, 3, 0, 20, 30),
                     // A failed Update or Delete is no write: key 5 keeps 50.
                     Op(OpKind::kInsert, 5, 50, 0, 10), Op(OpKind::kDelete, 6, 0, 20, 30, 0, Outcome::kNotFound)},
                 {});
  EXPECT_TRUE(CheckFinalState(h, M({{1, 11}, {5, 50}})).ok());
  auto wrong = [&](const IntMap& final_state, uint64_t key) {
    CheckReport r = CheckFinalState(h, M(final_state));
    EXPECT_TRUE(Names(r, "wrong final state", key)) << r.ToString();
    EXPECT_EQ(r.violations.size(), 1u) << r.ToString();
  };
  wrong({{1, 10}, {5, 50}}, 1);           // the older value: the last update was lost
  wrong({{5, 50}}, 1);                    // the key vanished
  wrong({{1, 11}, {3, 30}, {5, 50}}, 3);  // the acknowledged delete was lost
  wrong({{1, 11}, {5, 50}, {6, 1}}, 6);   // a key that was never written
  wrong({{1, 11}}, 5);
}

TEST(CheckFinalState, WritesOfUnknownOutcomeMayOrMayNotHaveHappened) {
  History h = At(0, {Op(OpKind::kInsert, 1, 10, 0, 10), Op(OpKind::kUpdate, 1, 11, 20, 30, 0, Outcome::kUnknown),
                     Op(OpKind::kInsert, 2, 20, 0, 10, 0, Outcome::kUnknown)},
                 {});
  EXPECT_TRUE(CheckFinalState(h, M({{1, 10}})).ok());
  EXPECT_TRUE(CheckFinalState(h, M({{1, 11}, {2, 20}})).ok());
  EXPECT_TRUE(Names(CheckFinalState(h, M({{1, 12}})), "wrong final state", 1));
}

}  // namespace
}  // namespace dmindex::check
