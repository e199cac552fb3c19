// Proof that the harness can fail: the checkers on hand-made histories (linearizable ones
// pass, non-linearizable ones are reported with the offending key), and the harness's
// concurrent phase on deliberately broken designs, which must be caught.
#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "api/cluster_access.h"
#include "check/checker.h"
#include "check/workload.h"
#include "designs/registry.h"
#include "harness_config.h"

namespace dmindex::check {
namespace {

// The histories below name keys and values by integers: the u64 format's 8-byte strings.
Key K(uint64_t k) { return U64Key(k).str(); }
Value V(uint64_t v) { return U64Key(v).str(); }

Operation Op(OpKind kind, uint64_t key, uint64_t value, Outcome outcome, int64_t invoke,
             int64_t response, uint32_t thread = 0) {
  Operation op;
  op.kind = kind;
  op.key = K(key);
  if (kind == OpKind::kInsert || kind == OpKind::kUpdate || (kind == OpKind::kLookup && outcome == Outcome::kOk))
    op.value = V(value);
  op.outcome = outcome;
  op.invoke_ns = invoke;
  op.response_ns = response;
  op.thread = thread;
  return op;
}
Operation Put(uint64_t k, uint64_t v, int64_t from, int64_t to, uint32_t t = 0) {
  return Op(OpKind::kInsert, k, v, Outcome::kOk, from, to, t);
}
Operation Get(uint64_t k, uint64_t v, int64_t from, int64_t to, uint32_t t = 1) {
  return Op(OpKind::kLookup, k, v, Outcome::kOk, from, to, t);
}
Operation Miss(OpKind kind, uint64_t k, int64_t from, int64_t to, uint32_t t = 1) {
  return Op(kind, k, 0, Outcome::kNotFound, from, to, t);
}
Operation Del(uint64_t k, int64_t from, int64_t to, uint32_t t = 2) {
  return Op(OpKind::kDelete, k, 0, Outcome::kOk, from, to, t);
}
using IntPairs = std::vector<std::pair<uint64_t, uint64_t>>;
std::vector<KeyValue> Pairs(const IntPairs& pairs) {
  std::vector<KeyValue> out;
  for (const auto& [k, v] : pairs) out.push_back({K(k), V(v)});
  return out;
}
Operation ScanOp(uint64_t start, uint32_t count, const IntPairs& result, int64_t from, int64_t to) {
  Operation op = Op(OpKind::kScan, start, 0, Outcome::kOk, from, to, 3);
  op.scan_count = count;
  op.scan_result = Pairs(result);
  return op;
}
History Hist(std::vector<Operation> ops, const IntPairs& initial = {}) {
  History h{std::move(ops), {}};
  for (const auto& [k, v] : initial) h.initial[K(k)] = V(v);
  return h;
}
bool HasViolation(const CheckReport& r, const std::string& kind, uint64_t key) {
  for (const Violation& v : r.violations)
    if (v.kind == kind && v.key == K(key)) return true;
  return false;
}

// --- Point operations ---

TEST(LinearizabilityChecker, AcceptsSequentialAndOverlappingHistories) {
  // Key 5: a read overlapping a write may see either value; key 6: delete, then re-insert.
  History h = Hist({Put(5, 100, 0, 10), Put(5, 200, 20, 40), Get(5, 100, 25, 30), Get(5, 200, 35, 50),
                    Get(6, 7, 0, 5), Del(6, 10, 20), Miss(OpKind::kLookup, 6, 21, 22),
                    Miss(OpKind::kUpdate, 6, 23, 24), Put(6, 8, 30, 31), Get(6, 8, 32, 33)},
                   {{6, 7}});
  CheckReport r = CheckLinearizability(h);
  EXPECT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(r.keys_checked, 2u);
  EXPECT_EQ(r.point_ops_checked, 10u);
}

TEST(LinearizabilityChecker, ReportsStaleRead) {
  // 200 replaced 100 before the read began: reading 100 is stale.
  History h = Hist({Put(9, 100, 0, 10), Put(9, 200, 20, 30), Get(9, 100, 40, 50), Put(4, 1, 0, 1)});
  CheckReport r = CheckLinearizability(h);
  ASSERT_EQ(r.violations.size(), 1u) << r.ToString();
  EXPECT_EQ(r.violations[0].key, K(9));
  EXPECT_EQ(r.violations[0].kind, "not linearizable");
  // The excerpt names the read that cannot be placed.
  EXPECT_NE(r.violations[0].detail.find(">> T1 Lookup(9) -> 0x64"), std::string::npos)
      << r.violations[0].detail;
}

TEST(LinearizabilityChecker, ReportsReadsThatGoBackInTime) {
  // Two reads overlap the write, but the later one sees the older value.
  History h = Hist({Put(3, 1, 0, 1), Put(3, 2, 10, 100), Get(3, 2, 20, 30), Get(3, 1, 40, 50, 2)});
  EXPECT_TRUE(HasViolation(CheckLinearizability(h), "not linearizable", 3));
}

TEST(LinearizabilityChecker, ReportsWrongNotFoundAnswers) {
  EXPECT_FALSE(CheckLinearizability(Hist({Put(1, 5, 0, 1), Miss(OpKind::kLookup, 1, 2, 3)})).ok());
  EXPECT_FALSE(CheckLinearizability(Hist({Put(1, 5, 0, 1), Miss(OpKind::kUpdate, 1, 2, 3)})).ok());
  EXPECT_FALSE(CheckLinearizability(Hist({Miss(OpKind::kDelete, 1, 2, 3)}, {{1, 5}})).ok());
  // A delete that both succeeded twice without a re-insert between.
  EXPECT_FALSE(CheckLinearizability(Hist({Del(1, 0, 1), Del(1, 2, 3)}, {{1, 5}})).ok());
  // A value nobody wrote.
  EXPECT_FALSE(CheckLinearizability(Hist({Get(1, 77, 0, 1)})).ok());
}

TEST(LinearizabilityChecker, UnknownOutcomesMayOrMayNotTakeEffect) {
  Operation lost = Put(2, 9, 0, 1);
  lost.outcome = Outcome::kUnknown;
  // Seen, or never seen: both fine.
  EXPECT_TRUE(CheckLinearizability(Hist({lost, Get(2, 9, 5, 6)})).ok());
  EXPECT_TRUE(CheckLinearizability(Hist({lost, Miss(OpKind::kLookup, 2, 5, 6)})).ok());
  // But once seen it cannot vanish again.
  EXPECT_FALSE(CheckLinearizability(Hist({lost, Get(2, 9, 5, 6), Miss(OpKind::kLookup, 2, 7, 8)})).ok());
}

TEST(LinearizabilityChecker, ManyConcurrentWritersStaySmall) {
  // 8 threads, 200 overlapping writes and reads each on one key: the memoised search must
  // finish quickly (this is the shape of the harness's hot-key histories).
  std::vector<Operation> ops;
  std::mt19937_64 rng(3);
  uint64_t current = 0;
  for (int64_t step = 0; step < 1600; ++step) {
    const uint32_t t = static_cast<uint32_t>(step % 8);
    const int64_t from = step * 10, to = from + 75;  // overlaps the next 7 operations
    if (rng() % 2) {
      current = static_cast<uint64_t>(step + 1);
      ops.push_back(Put(1, current, from, to, t));
    } else if (current != 0) {
      ops.push_back(Get(1, current, from, to, t));
    }
  }
  CheckReport r = CheckLinearizability(Hist(ops));
  EXPECT_TRUE(r.ok()) << r.ToString();
}

TEST(LinearizabilityChecker, GivesUpLoudlyWhenTheSearchBudgetRunsOut) {
  // Many overlapping writes of distinct values and a final read: linearizable, but only after
  // trying orders. With a budget of a few steps the checker must say "inconclusive", not "ok".
  std::vector<Operation> ops;
  for (uint32_t t = 0; t < 8; ++t) ops.push_back(Put(1, 10 + t, 0, 100, t));
  ops.push_back(Get(1, 10, 200, 210));
  EXPECT_TRUE(CheckLinearizability(Hist(ops)).ok());
  LinearizabilityOptions tiny;
  tiny.max_steps_per_key = 3;
  CheckReport r = CheckLinearizability(Hist(ops), tiny);
  EXPECT_TRUE(HasViolation(r, "search budget exhausted", 1)) << r.ToString();
}

// A linearizable history of `threads` threads by construction: operation i takes effect at
// 10 * i ns on a sequential register per key, thread i % threads runs it, and its interval
// reaches up to 1 us either side of that instant - so each operation overlaps those of
// about every other thread (consecutive operations of one thread, 10 * threads ns apart,
// never overlap). Written values are unique; outcomes are what the register answered.
History ConcurrentHistory(uint32_t threads, uint32_t ops_per_thread, uint64_t keys, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<uint64_t, uint64_t> reg;
  std::vector<Operation> ops;
  const int64_t spread = 5 * static_cast<int64_t>(threads);  // half the gap of one thread
  for (uint64_t i = 0; i < uint64_t{threads} * ops_per_thread; ++i) {
    const int64_t at = 10 * static_cast<int64_t>(i) + 10 * spread;
    const int64_t from = at - static_cast<int64_t>(rng() % spread), to = at + static_cast<int64_t>(rng() % spread);
    const auto t = static_cast<uint32_t>(i % threads);
    const uint64_t k = 1 + rng() % keys, v = 1000 + i;
    const auto it = reg.find(k);
    const bool present = it != reg.end();
    switch (rng() % 10) {
      case 0: case 1: case 2:
        reg[k] = v;
        ops.push_back(Put(k, v, from, to, t));
        break;
      case 3: case 4:
        if (present) {
          it->second = v;
          ops.push_back(Op(OpKind::kUpdate, k, v, Outcome::kOk, from, to, t));
        } else {
          ops.push_back(Miss(OpKind::kUpdate, k, from, to, t));
        }
        break;
      case 5:
        ops.push_back(present ? Del(k, from, to, t) : Miss(OpKind::kDelete, k, from, to, t));
        if (present) reg.erase(it);
        break;
      default:
        ops.push_back(present ? Get(k, it->second, from, to, t) : Miss(OpKind::kLookup, k, from, to, t));
    }
  }
  std::stable_sort(ops.begin(), ops.end(), [](const Operation& a, const Operation& b) { return a.invoke_ns < b.invoke_ns; });
  return Hist(ops);
}

// The index of a successful lookup of key `k` near the middle of `h`, and of two writes that
// set `k` (Insert or Update, acknowledged) and both returned before that lookup was invoked,
// the second invoked after the first returned; nullopt if there is none.
struct StaleReadSite { size_t lookup, older, newer; };
std::optional<StaleReadSite> FindStaleReadSite(const History& h) {
  for (size_t l = h.ops.size() / 2; l < h.ops.size(); ++l) {
    const Operation& look = h.ops[l];
    if (look.kind != OpKind::kLookup || look.outcome != Outcome::kOk) continue;
    std::optional<size_t> newer, older;
    for (size_t w = l; w-- > 0;) {
      const Operation& op = h.ops[w];
      const bool sets = (op.kind == OpKind::kInsert || op.kind == OpKind::kUpdate) && op.outcome == Outcome::kOk;
      if (!sets || op.key != look.key || op.response_ns >= look.invoke_ns) continue;
      if (!newer) {
        newer = w;
      } else if (op.response_ns < h.ops[*newer].invoke_ns) {
        older = w;
        break;
      }
    }
    if (older) return StaleReadSite{l, *older, *newer};
  }
  return std::nullopt;
}

TEST(LinearizabilityChecker, TwoHundredThreadsAreCheckedInBoundedSteps) {
  // The shape of `dmindex check --fabric sim --threads 200` (docs/SIMULATION.md): every
  // operation concurrent with one of each other thread, 8 hot keys, so ~25 pending at once
  // on each. Steps, not time: the same count on any machine.
  const History h = ConcurrentHistory(200, 100, 8, 7);
  const CheckReport r = CheckLinearizability(h);
  EXPECT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(r.point_ops_checked, 20000u);
  EXPECT_LE(r.search_steps, 4 * r.point_ops_checked) << "the search should barely backtrack";
  // One hot key: 200 pending together.
  const CheckReport one = CheckLinearizability(ConcurrentHistory(200, 25, 1, 8));
  EXPECT_TRUE(one.ok()) << one.ToString();
  EXPECT_LE(one.search_steps, 4 * one.point_ops_checked);
}

TEST(LinearizabilityChecker, RejectsStaleReadsInTwoHundredThreadHistories) {
  for (uint64_t keys : {1, 8}) {
    History h = ConcurrentHistory(200, keys == 1 ? 25 : 100, keys, 11 + keys);
    const auto site = FindStaleReadSite(h);
    ASSERT_TRUE(site.has_value());
    // The lookup sees the older of two writes that were both over before it began.
    Operation& look = h.ops[site->lookup];
    look.value = h.ops[site->older].value;
    const CheckReport r = CheckLinearizability(h);
    ASSERT_EQ(r.violations.size(), 1u) << r.ToString();
    EXPECT_EQ(r.violations[0].kind, "not linearizable") << r.ToString();
    EXPECT_EQ(r.violations[0].key, look.key);
    EXPECT_LE(r.search_steps, 40 * r.point_ops_checked) << keys << " key(s)";
  }
}

TEST(LinearizabilityChecker, RejectsReadsFromTheFutureInTwoHundredThreadHistories) {
  History h = ConcurrentHistory(200, 25, 1, 5);
  // A lookup in the first half returns a value whose write began after the lookup returned.
  size_t look = 0, write = 0;
  for (look = h.ops.size() / 4; h.ops[look].kind != OpKind::kLookup || h.ops[look].outcome != Outcome::kOk;) ++look;
  for (write = look + 1; h.ops[write].kind != OpKind::kInsert || h.ops[write].invoke_ns <= h.ops[look].response_ns;) ++write;
  h.ops[look].value = h.ops[write].value;
  const CheckReport r = CheckLinearizability(h);
  ASSERT_EQ(r.violations.size(), 1u) << r.ToString();
  EXPECT_EQ(r.violations[0].kind, "not linearizable") << r.ToString();
  EXPECT_LE(r.search_steps, 40 * r.point_ops_checked);
}

// The register of one key, by brute force: every order of the operations that respects real
// time (an operation that returned before another was invoked goes first; an unknown outcome
// may also never take effect). The reference for the checker's pruned search.
bool BruteForceLinearizable(const std::vector<Operation>& ops, std::optional<uint64_t> initial) {
  const size_t n = ops.size();
  std::vector<bool> used(n, false);
  auto value = [](const Operation& op) { return op.value; };
  std::function<bool(size_t, std::optional<Value>)> place = [&](size_t placed, std::optional<Value> state) {
    // Done once every acknowledged operation is placed (unknown ones may never happen).
    bool done = true;
    for (size_t i = 0; i < n; ++i) done = done && (used[i] || ops[i].outcome == Outcome::kUnknown);
    if (done) return true;
    for (size_t i = 0; i < n; ++i) {
      if (used[i]) continue;
      bool minimal = true;  // no unplaced acknowledged operation returned before ops[i] began
      for (size_t j = 0; j < n && minimal; ++j)
        minimal = used[j] || j == i || ops[j].outcome == Outcome::kUnknown || ops[j].response_ns >= ops[i].invoke_ns;
      if (!minimal) continue;
      const Operation& op = ops[i];
      std::optional<std::optional<Value>> after;  // nullopt: cannot take effect here
      const bool ok = op.outcome == Outcome::kOk, unknown = op.outcome == Outcome::kUnknown;
      switch (op.kind) {
        case OpKind::kLookup:
          if (unknown || (ok ? state == value(op) : !state)) after = state;
          break;
        case OpKind::kInsert:
          if (ok || unknown) after = std::optional<Value>(value(op));
          break;
        case OpKind::kUpdate:
          if (unknown) after = state ? std::optional<Value>(value(op)) : state;
          else if (ok ? state.has_value() : !state) after = ok ? std::optional<Value>(value(op)) : state;
          break;
        case OpKind::kDelete:
          if (unknown || (ok ? state.has_value() : !state)) after = std::optional<Value>();
          break;
        default:
          break;
      }
      if (!after) continue;
      used[i] = true;
      const bool found = place(placed + 1, *after);
      used[i] = false;
      if (found) return true;
    }
    return false;
  };
  return place(0, initial ? std::optional<Value>(V(*initial)) : std::nullopt);
}

TEST(LinearizabilityChecker, AgreesWithBruteForceOnSmallRandomHistories) {
  // Few values (so they repeat), every kind and outcome, overlapping intervals: a mix of
  // linearizable and not. The pruning (read-only placement, merged unread values, stranded
  // readers, deadline order, the search-free checks) must change no verdict.
  std::mt19937_64 rng(42);
  int linearizable = 0, not_linearizable = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<Operation> ops;
    const size_t n = 3 + rng() % 5;
    for (size_t i = 0; i < n; ++i) {
      const auto kind = static_cast<OpKind>(rng() % 4);  // lookup, insert, update, delete
      const auto outcome = static_cast<Outcome>(rng() % 10 < 7 ? 0 : 1 + rng() % 2);
      const int64_t from = static_cast<int64_t>(rng() % 40);
      ops.push_back(Op(kind, 1, 1 + rng() % 3, outcome, from, from + 1 + static_cast<int64_t>(rng() % 15),
                       static_cast<uint32_t>(i)));
    }
    if (std::any_of(ops.begin(), ops.end(), [](const Operation& o) { return o.kind == OpKind::kInsert && o.outcome == Outcome::kNotFound; }))
      continue;  // not an answer an upsert gives
    const std::optional<uint64_t> initial = rng() % 2 ? std::optional<uint64_t>(1 + rng() % 3) : std::nullopt;
    const bool expected = BruteForceLinearizable(ops, initial);
    History h = Hist(ops);
    if (initial) h.initial[K(1)] = V(*initial);
    std::stable_sort(h.ops.begin(), h.ops.end(), [](const Operation& a, const Operation& b) { return a.invoke_ns < b.invoke_ns; });
    const CheckReport r = CheckLinearizability(h);
    ASSERT_EQ(r.ok(), expected) << "round " << round << ": " << r.ToString();
    ++(expected ? linearizable : not_linearizable);
  }
  EXPECT_GT(linearizable, 300);
  EXPECT_GT(not_linearizable, 300);
}

// --- CompareAndSwap ---

// CompareAndSwap(k, expected, desired): swapped, or not swapped having found `found`.
Operation Cas(uint64_t k, uint64_t expected, uint64_t desired, int64_t from, int64_t to, uint32_t t,
              std::optional<uint64_t> found = std::nullopt) {
  Operation op = Op(OpKind::kCompareAndSwap, k, 0, Outcome::kOk, from, to, t);
  op.expected = V(expected);
  op.swapped = !found;
  op.value = V(found ? *found : desired);
  return op;
}

TEST(LinearizabilityChecker, CompareAndSwapReadsWhatItReplaces) {
  // Two swaps from 1 in sequence: only the first can find 1 (the second must fail).
  EXPECT_FALSE(CheckLinearizability(Hist({Cas(1, 1, 2, 0, 10, 0), Cas(1, 1, 3, 20, 30, 1)}, {{1, 1}})).ok());
  EXPECT_TRUE(CheckLinearizability(Hist({Cas(1, 1, 2, 0, 10, 0), Cas(1, 1, 3, 20, 30, 1, 2)}, {{1, 1}})).ok());
  // Overlapping: one wins, the other finds its value.
  EXPECT_TRUE(CheckLinearizability(Hist({Cas(1, 1, 2, 0, 30, 0), Cas(1, 1, 3, 5, 25, 1, 2), Get(1, 2, 40, 50)},
                                        {{1, 1}})).ok());
  // Both swapped from 1, overlapping: not linearizable (each needs 1 in place).
  EXPECT_FALSE(CheckLinearizability(Hist({Cas(1, 1, 2, 0, 30, 0), Cas(1, 1, 3, 5, 25, 1)}, {{1, 1}})).ok());
  // A failed swap must have found a value that was there.
  EXPECT_FALSE(CheckLinearizability(Hist({Cas(1, 5, 6, 0, 10, 0, 7)}, {{1, 1}})).ok());
  // The swapped value is read afterwards; reading the old one after the swap returned is stale.
  EXPECT_TRUE(CheckLinearizability(Hist({Cas(1, 1, 2, 0, 10, 0), Get(1, 2, 20, 30)}, {{1, 1}})).ok());
  EXPECT_FALSE(CheckLinearizability(Hist({Cas(1, 1, 2, 0, 10, 0), Get(1, 1, 20, 30)}, {{1, 1}})).ok());
  // NotFound only while absent.
  Operation miss = Cas(1, 1, 2, 20, 30, 0);
  miss.outcome = Outcome::kNotFound;
  EXPECT_FALSE(CheckLinearizability(Hist({miss}, {{1, 1}})).ok());
  EXPECT_TRUE(CheckLinearizability(Hist({Del(1, 0, 10), miss}, {{1, 1}})).ok());
}

// --- Scans ---

TEST(ScanChecker, AcceptsCorrectScans) {
  History h = Hist({Put(10, 1, 0, 1), Put(20, 2, 0, 1), Put(30, 3, 0, 1),
                    Del(20, 50, 70),            // overlaps the scan: 20 may be missing
                    Put(30, 33, 55, 65),        // overlaps: either value is fine
                    Put(40, 4, 55, 65),         // inserted during the scan: may be missing
                    ScanOp(5, 10, {{10, 1}, {30, 33}}, 60, 80),
                    ScanOp(15, 1, {{30, 3}}, 60, 80),  // 20 skipped: the delete overlaps
                    ScanOp(25, 1, {{30, 3}}, 60, 80)});
  CheckReport r = CheckScans(h);
  EXPECT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(r.scans_checked, 3u);
}

TEST(ScanChecker, ReportsLostKey) {
  // 20 was inserted long before the scan and never deleted; the scan covered it.
  History h = Hist({Put(10, 1, 0, 1), Put(20, 2, 0, 1), Put(30, 3, 0, 1),
                    ScanOp(5, 3, {{10, 1}, {30, 3}}, 10, 20)});
  CheckReport r = CheckScans(h);
  ASSERT_TRUE(HasViolation(r, "scan missed a key", 20)) << r.ToString();
  EXPECT_EQ(r.violations.size(), 1u) << r.ToString();
  // A key the scan did not cover (beyond its last key, with `count` reached) is not lost.
  EXPECT_TRUE(CheckScans(Hist({Put(10, 1, 0, 1), Put(20, 2, 0, 1), ScanOp(5, 1, {{10, 1}}, 10, 20)})).ok());
  // Keys present from the initial state count too.
  EXPECT_TRUE(HasViolation(CheckScans(Hist({ScanOp(1, 5, {}, 10, 20)}, {{7, 1}})), "scan missed a key", 7));
}

Operation ReverseScanOp(uint64_t start, std::optional<uint64_t> end, bool inclusive, uint32_t count,
                        const IntPairs& result, int64_t from, int64_t to) {
  Operation op = ScanOp(start, count, result, from, to);
  op.scan_reverse = true;
  if (end) op.scan_end = K(*end);
  op.scan_after = inclusive;
  return op;
}

TEST(ScanChecker, ChecksReverseScans) {
  const std::vector<Operation> puts = {Put(10, 1, 0, 1), Put(20, 2, 0, 1), Put(30, 3, 0, 1)};
  auto with = [&](Operation scan) {
    std::vector<Operation> ops = puts;
    ops.push_back(std::move(scan));
    return CheckScans(Hist(std::move(ops)));
  };
  EXPECT_TRUE(with(ReverseScanOp(1, std::nullopt, false, 5, {{30, 3}, {20, 2}, {10, 1}}, 10, 20)).ok());
  EXPECT_TRUE(with(ReverseScanOp(1, 30, true, 2, {{30, 3}, {20, 2}}, 10, 20)).ok());
  EXPECT_TRUE(with(ReverseScanOp(1, 30, false, 1, {{20, 2}}, 10, 20)).ok());
  // Ascending order, a key missed below the last one returned, a key beyond the end.
  EXPECT_TRUE(HasViolation(with(ReverseScanOp(1, std::nullopt, false, 5, {{10, 1}, {20, 2}, {30, 3}}, 10, 20)),
                           "scan out of order", 1));
  EXPECT_TRUE(HasViolation(with(ReverseScanOp(1, std::nullopt, false, 3, {{30, 3}, {10, 1}}, 10, 20)),
                           "scan missed a key", 20));
  EXPECT_TRUE(HasViolation(with(ReverseScanOp(1, 30, false, 5, {{30, 3}, {20, 2}}, 10, 20)), "scan out of order", 1));
  // A full reverse scan covered only down to its last key: 10 is not lost.
  EXPECT_TRUE(with(ReverseScanOp(1, std::nullopt, false, 2, {{30, 3}, {20, 2}}, 10, 20)).ok());
  // Stale values are found as in forward scans.
  std::vector<Operation> ops = puts;
  ops.push_back(Put(20, 22, 5, 6));
  ops.push_back(ReverseScanOp(1, std::nullopt, false, 5, {{30, 3}, {20, 2}, {10, 1}}, 10, 20));
  EXPECT_TRUE(HasViolation(CheckScans(Hist(ops)), "scan returned a stale value", 20));
}

TEST(ScanChecker, ReportsStaleAndPhantomValues) {
  History stale = Hist({Put(10, 1, 0, 1), Put(10, 2, 5, 6), ScanOp(1, 5, {{10, 1}}, 10, 20)});
  EXPECT_TRUE(HasViolation(CheckScans(stale), "scan returned a stale value", 10));
  History deleted = Hist({Put(10, 1, 0, 1), Del(10, 5, 6), ScanOp(1, 5, {{10, 1}}, 10, 20)});
  EXPECT_TRUE(HasViolation(CheckScans(deleted), "scan returned a stale value", 10));
  History future = Hist({ScanOp(1, 5, {{10, 1}}, 10, 20), Put(10, 1, 30, 31)});
  EXPECT_TRUE(HasViolation(CheckScans(future), "scan returned a stale value", 10));
  History phantom = Hist({ScanOp(1, 5, {{12, 1}}, 10, 20)});
  EXPECT_TRUE(HasViolation(CheckScans(phantom), "scan returned a stale value", 12));
}

TEST(ScanChecker, ReportsDisorder) {
  History h = Hist({Put(10, 1, 0, 1), Put(20, 2, 0, 1)});
  h.ops.push_back(ScanOp(1, 5, {{20, 2}, {10, 1}}, 10, 20));
  h.ops.push_back(ScanOp(15, 5, {{10, 1}, {20, 2}}, 10, 20));
  h.ops.push_back(ScanOp(1, 1, {{10, 1}, {20, 2}}, 10, 20));
  CheckReport r = CheckScans(h);
  EXPECT_EQ(r.violations.size(), 3u) << r.ToString();
  for (const Violation& v : r.violations) EXPECT_EQ(v.kind, "scan out of order");
}

TEST(ScanChecker, HoldsIteratorBatchesToTheirRange) {
  History base = Hist({Put(10, 1, 0, 1), Put(20, 2, 0, 1), Put(30, 3, 0, 1)});
  auto batch = [](uint64_t start, bool after, uint64_t end, const IntPairs& result, uint32_t count) {
    Operation op = ScanOp(start, count, result, 10, 20);
    op.scan_after = after;
    if (end != 0) op.scan_end = K(end);
    return op;
  };
  // A batch after key 10 that stops below 30 owes 20 and nothing else.
  History good = base;
  good.ops.push_back(batch(10, true, 30, {{20, 2}}, 5));
  EXPECT_TRUE(CheckScans(good).ok()) << CheckScans(good).ToString();
  // Returning the key it continues after, or one at its end, is out of its range.
  History again = base;
  again.ops.push_back(batch(10, true, 0, {{10, 1}, {20, 2}}, 5));
  EXPECT_TRUE(HasViolation(CheckScans(again), "scan out of order", 10));
  History past = base;
  past.ops.push_back(batch(10, false, 30, {{10, 1}, {20, 2}, {30, 3}}, 5));
  EXPECT_TRUE(HasViolation(CheckScans(past), "scan out of order", 10));
  // Missing a key inside the range is a lost key; keys outside it are not owed.
  History lost = base;
  lost.ops.push_back(batch(5, true, 30, {{10, 1}}, 5));
  EXPECT_TRUE(HasViolation(CheckScans(lost), "scan missed a key", 20));
}

// --- The harness's concurrent phase on broken designs ---

// What the broken design gets wrong, each in percent of the calls it could spoil.
struct Lies {
  uint32_t stale_lookups = 0;     // Lookup answers the key's previous value
  uint32_t dropped_scan_keys = 0; // Scan leaves out one pair
  uint32_t stale_scan_values = 0; // Scan reports one key's previous value
  bool unlocked_compare_and_swap = false;  // CompareAndSwap: a Lookup, then an Insert
  uint32_t dropped_reverse_keys = 0;       // a reverse scan leaves out one pair
};

// `local` behind a wrapper that lies as told - the kind of history a design without
// validation or with a broken cache produces. Lies{} must pass (the control).
class LyingIndex final : public Index {
 public:
  LyingIndex(std::unique_ptr<Index> inner, Lies lies)
      : Index("lying-" + inner->design(), inner->options()), inner_(std::move(inner)), lies_(lies) {}

  void NoteWrite(Key k, Value v) {
    std::lock_guard<std::mutex> guard(mu_);
    auto& [previous, current] = values_[k];
    previous = current;
    current = v;
  }
  bool Previous(Key k, Value* v) {
    std::lock_guard<std::mutex> guard(mu_);
    auto it = values_.find(k);
    if (it == values_.end() || it->second.first.empty()) return false;
    *v = it->second.first;
    return true;
  }
  const Lies& lies() const { return lies_; }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override { return inner_->BulkLoad(sorted); }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override;
  IndexStats DoStats() const override { return inner_->Stats(); }

  std::unique_ptr<Index> inner_;
  const Lies lies_;
  std::mutex mu_;
  std::map<Key, std::pair<Value, Value>> values_;  // the last two values written per key
};

class LyingSession final : public Session {
 public:
  LyingSession(std::unique_ptr<Session> inner, LyingIndex& index, uint64_t seed)
      : inner_(std::move(inner)), index_(index), rng_(seed) {
    AdoptRules(*inner_);
  }

 private:
  Status DoLookup(Slice key, std::string* value) override {
    Status s = inner_->Lookup(key, value);
    Value old;
    if (s.ok() && Roll(index_.lies().stale_lookups) && index_.Previous(Key(key), &old)) *value = old;
    return s;
  }
  Status DoInsert(Slice key, Slice value) override { return Wrote(key, value, inner_->Insert(key, value)); }
  Status DoUpdate(Slice key, Slice value) override { return Wrote(key, value, inner_->Update(key, value)); }
  Status DoDelete(Slice key) override { return inner_->Delete(key); }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    Status s = ScanRangeOf(*inner_, range, count, out);
    if (!s.ok() || out->empty()) return s;
    // Never the last pair: dropping it would only shrink the range the scan covered.
    if (out->size() > 1 && Roll(index_.lies().dropped_scan_keys))
      out->erase(out->begin() + static_cast<long>(rng_() % (out->size() - 1)));
    KeyValue& victim = (*out)[rng_() % out->size()];
    Value old;
    if (Roll(index_.lies().stale_scan_values) && index_.Previous(victim.key, &old)) victim.value = old;
    return s;
  }

  // Honest: the inner session's compare; the lie: the read-then-write that lets another
  // write land between the compare and the swap.
  Status DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped, std::string* current) override {
    if (!index_.lies().unlocked_compare_and_swap) return inner_->CompareAndSwap(key, expected, desired, swapped, current);
    DMX_RETURN_IF_ERROR(inner_->Lookup(key, current));
    if (Slice(*current) != expected) return Status::Ok();
    std::this_thread::yield();  // widens the window the lie opens; correctness needs none
    DMX_RETURN_IF_ERROR(Wrote(key, desired, inner_->Insert(key, desired)));
    *swapped = true;
    return Status::Ok();
  }
  Status DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) override {
    Status s = ScanReverseOf(*inner_, range, count, out);
    if (s.ok() && out->size() > 1 && Roll(index_.lies().dropped_reverse_keys))
      out->erase(out->begin() + static_cast<long>(rng_() % (out->size() - 1)));
    return s;
  }

  bool Roll(uint32_t percent) { return rng_() % 100 < percent; }
  Status Wrote(Slice key, Slice value, Status s) {
    if (s.ok()) index_.NoteWrite(Key(key), Value(value));
    return s;
  }
  std::unique_ptr<Session> inner_;
  LyingIndex& index_;
  std::mt19937_64 rng_;
};

Result<std::unique_ptr<Session>> LyingIndex::DoOpenSession(uint32_t compute_node) {
  auto inner = inner_->OpenSession(compute_node);
  if (!inner.ok()) return inner.status();
  static std::atomic<uint64_t> seeds{1};
  return std::unique_ptr<Session>(std::make_unique<LyingSession>(std::move(inner).value(), *this, seeds++));
}

// The harness's concurrent phase (same settings as index_harness_test) on `design` with
// `knobs`, optionally behind lies; up to `max_rounds` rounds, stopping at the first violation.
CheckReport RunHarnessPhase(const std::string& design, std::map<std::string, std::string> knobs,
                            const Lies* lies, uint32_t max_rounds,
                            const WorkloadOptions& workload_options = testing::HarnessWorkload()) {
  std::shared_ptr<fabric::Fabric> fabric = testing::MakeHarnessFabric(testing::HarnessFaults());
  IndexOptions options = testing::HarnessIndexOptions("broken");
  // Knobs here switch a protection off: such a design may read a torn pointer and fail an
  // operation (e.g. "verb on a null remote address"); that is what its checker must catch.
  const bool broken_by_knobs = !knobs.empty();
  options.knobs = std::move(knobs);
  options.design = design;
  // Through Index::Open, as a user opens it: CompareAndSwap of the designs in this process
  // is the API's (src/api/handles.h), which the design's own index does not have.
  auto made = Index::Open(options, ClusterOver(fabric));
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  if (!made.ok()) return {};
  std::unique_ptr<Index> index = std::move(made).value();
  if (lies != nullptr) index = std::make_unique<LyingIndex>(std::move(index), *lies);
  ConcurrentWorkload workload(*index, workload_options);
  EXPECT_TRUE(workload.Preload().ok());
  auto report = RunCheckedRounds(workload, max_rounds);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  // Every operation answered (a CompareAndSwap refused as NotSupported would be an unknown
  // outcome in the history, not the operation under test).
  if (!broken_by_knobs) {
    EXPECT_EQ(workload.errors(), 0u) << workload.first_error();
  }
  return report.ok() ? *report : CheckReport{};
}

size_t CountKind(const CheckReport& r, const std::string& kind) {
  size_t n = 0;
  for (const Violation& v : r.violations) n += v.kind == kind;
  return n;
}

TEST(BrokenDesign, HonestWrapperPasses) {
  const Lies none;
  CheckReport r = RunHarnessPhase("local", {}, &none, testing::HarnessRounds());
  EXPECT_TRUE(r.ok()) << r.ToString();
}

// Runs the harness phase on `local` behind `lies` (up to 20 rounds) and expects violations
// of `kind`, and of no kind the lies cannot cause.
CheckReport ExpectCaught(const Lies& lies, const std::string& kind,
                         const WorkloadOptions& options = testing::HarnessWorkload()) {
  CheckReport r = RunHarnessPhase("local", {}, &lies, 20, options);
  EXPECT_GT(CountKind(r, kind), 0u) << r.ToString();
  std::cout << "[ caught   ] " << r.ToString(1);
  return r;
}

TEST(BrokenDesign, StaleLookupsAreCaught) {
  CheckReport r = ExpectCaught({.stale_lookups = 5}, "not linearizable");
  EXPECT_EQ(r.violations.size(), CountKind(r, "not linearizable"));  // scans were honest
}

TEST(BrokenDesign, ScansDroppingKeysAreCaught) {
  CheckReport r = ExpectCaught({.dropped_scan_keys = 30}, "scan missed a key");
  EXPECT_EQ(CountKind(r, "not linearizable"), 0u);  // point operations were honest
}

// The workload of the harness's CompareAndSwap, DeleteRange and reverse-scan test.
WorkloadOptions OrderedStoreWorkload() {
  WorkloadOptions w = testing::HarnessWorkload();
  w.cas_pct = 20;
  w.delete_range_pct = 2;
  w.write_batch_pct = 5;
  w.scan_pct = 16;
  w.reverse_scans = true;
  return w;
}

TEST(BrokenDesign, HonestOrderedStoreOperationsPass) {
  const Lies none;
  CheckReport r = RunHarnessPhase("local", {}, &none, testing::HarnessRounds(), OrderedStoreWorkload());
  EXPECT_TRUE(r.ok()) << r.ToString();
}

TEST(BrokenDesign, CompareAndSwapWithoutTheLockIsCaught) {
  CheckReport r = ExpectCaught({.unlocked_compare_and_swap = true}, "not linearizable", OrderedStoreWorkload());
  EXPECT_EQ(r.violations.size(), CountKind(r, "not linearizable")) << r.ToString();
}

TEST(BrokenDesign, ReverseScansDroppingKeysAreCaught) {
  CheckReport r = ExpectCaught({.dropped_reverse_keys = 30}, "scan missed a key", OrderedStoreWorkload());
  EXPECT_EQ(CountKind(r, "not linearizable"), 0u);
}

TEST(BrokenDesign, ScansReturningStaleValuesAreCaught) {
  CheckReport r = ExpectCaught({.stale_scan_values = 30}, "scan returned a stale value");
  EXPECT_EQ(CountKind(r, "not linearizable"), 0u);
}

// Sherman without torn-read validation ({"validation","off"}) on a fabric that tears READs:
// readers see half-written nodes, which the harness must notice.
TEST(BrokenDesign, ShermanWithoutTornReadValidationIsCaught) {
  const std::vector<std::string> names = designs::DesignNames();
  if (std::find(names.begin(), names.end(), "sherman") == names.end())
    GTEST_SKIP() << "design 'sherman' is not registered in this build";
  // Catching it takes a torn read that changes an answer; on 2 loaded cores the threads may
  // interleave rarely, so give it up to three fresh indexes of 10 rounds each.
  CheckReport r;
  for (int attempt = 0; attempt < 3 && r.ok(); ++attempt)
    r = RunHarnessPhase("sherman", {{"validation", "off"}}, nullptr, 10);
  EXPECT_FALSE(r.ok()) << "no violation found in 3 x 10 rounds: " << r.ToString();
  std::cout << "[ caught   ] " << r.ToString(1);
}

// The same for RF-tree: its readers, its writers' images and its search-layer cache all
// rely on the check words.
TEST(BrokenDesign, RfTreeWithoutTornReadValidationIsCaught) {
  const std::vector<std::string> names = designs::DesignNames();
  if (std::find(names.begin(), names.end(), "rftree") == names.end())
    GTEST_SKIP() << "design 'rftree' is not registered in this build";
  CheckReport r;
  for (int attempt = 0; attempt < 3 && r.ok(); ++attempt)
    r = RunHarnessPhase("rftree", {{"validation", "off"}}, nullptr, 10);
  EXPECT_FALSE(r.ok()) << "no violation found in 3 x 10 rounds: " << r.ToString();
  std::cout << "[ caught   ] " << r.ToString(1);
}

}  // namespace
}  // namespace dmindex::check
