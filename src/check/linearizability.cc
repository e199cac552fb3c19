// Per-key linearizability: the Wing & Gong search with Lowe's memoisation ("Testing for
// linearizability", CCPE 2017), the algorithm of Porcupine and Knossos.
//
// The history of one key is a list of call and return events in time order. The search
// repeatedly picks an operation whose call precedes every pending return (so it may take
// effect first), applies it to the register model, removes its two events from the list and
// recurses; reaching a return event means the operation it ends was never placed, so the
// search backtracks. Configurations (set of placed operations, register state) already seen
// are skipped: with unique written values there are few of them.
//
// Read-only operations (lookups; updates and deletes answered NotFound) are placed as soon
// as they can take effect, and that choice is never revisited. It is sound and complete: if
// any linearization exists from a configuration in which a read-only operation R may go
// next, one exists that places R next. R is a candidate, so no unplaced operation returned
// before R was invoked, and moving R forward to a state in which it holds changes no state
// after it. Without this, every subset of the reads pending together is a configuration of
// its own, and a search that has to backtrack over a write among 200 concurrent readers
// visits them all.
//
// Two more facts about registers keep backtracking over concurrent writes short, both exact:
// - A value no lookup of the key returns is never looked at again: states holding any such
//   value behave alike, so they are one state (Register::unread) and the memo merges them.
// - A write that replaces a value some unplaced lookup still has to read, when no unplaced
//   operation can write that value again, leads only to dead ends: it is not placed. Same
//   for leaving "absent" while unplaced operations must find the key absent and nothing
//   unplaced can delete it again. (With unique values this is most overwrites of a value
//   whose readers are pending, caught at once instead of when a reader's return comes up.)
#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "check/checker.h"

namespace dmindex::check {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct Register {
  bool present = false;
  Value value;
  bool unread = false;  // present with a value no lookup returns (`value` then empty)
  friend bool operator==(const Register&, const Register&) = default;
};

std::string ToString(const Register& r) {
  if (!r.present) return "absent";
  return r.unread ? "present with a value no lookup returned" : "present with value " + ValueStr(r.value);
}

// The register after `op`, or nullopt if `op` cannot take effect in state `r`.
std::optional<Register> Step(Register r, const Operation& op) {
  const bool unknown = op.outcome == Outcome::kUnknown;
  const bool ok = op.outcome == Outcome::kOk;
  switch (op.kind) {
    case OpKind::kLookup:
      if (unknown) return r;
      if (ok) return r.present && !r.unread && r.value == op.value ? std::optional(r) : std::nullopt;
      return r.present ? std::nullopt : std::optional(r);
    case OpKind::kInsert:
      if (op.outcome == Outcome::kNotFound) return std::nullopt;  // upsert never misses
      return Register{true, op.value};
    case OpKind::kUpdate:
      if (unknown) return r.present ? Register{true, op.value} : r;
      if (ok) return r.present ? std::optional(Register{true, op.value}) : std::nullopt;
      return r.present ? std::nullopt : std::optional(r);
    case OpKind::kDelete:
      if (unknown) return Register{};
      if (ok) return r.present ? std::optional(Register{}) : std::nullopt;
      return r.present ? std::nullopt : std::optional(r);
    case OpKind::kCompareAndSwap: {
      const bool holds = r.present && !r.unread && r.value == op.expected;
      if (unknown) return holds ? Register{true, op.value} : r;
      if (!ok) return r.present ? std::nullopt : std::optional(r);
      if (op.swapped) return holds ? std::optional(Register{true, op.value}) : std::nullopt;
      // Not swapped: it found op.value, which was not the one expected.
      return r.present && !r.unread && r.value == op.value ? std::optional(r) : std::nullopt;
    }
    case OpKind::kScan:
      break;
  }
  return std::nullopt;
}

// Leaves the register as it is wherever it can take effect.
bool ReadOnly(const Operation& op) {
  return op.kind == OpKind::kLookup || op.outcome == Outcome::kNotFound ||
         (op.kind == OpKind::kCompareAndSwap && op.outcome == Outcome::kOk && !op.swapped);
}
// Needs the key to hold a value (ValueRead: a lookup's, a compare-and-swap's comparison).
bool ReadsValue(const Operation& op) { return ValueRead(op) != nullptr; }
// Can only take effect while the key is absent (NotFound answers).
bool ReadsAbsence(const Operation& op) { return ReadOnly(op) && op.outcome == Outcome::kNotFound; }
// May store op.value: MayWriteValue (history.h).
// May make the key absent (an acknowledged or unknown delete).
bool MayDelete(const Operation& op) { return op.kind == OpKind::kDelete && op.outcome != Outcome::kNotFound; }

int64_t ResponseOf(const Operation& op) {
  // An operation whose effect is unknown may take effect at any time after its call, or
  // never - which is the same as taking effect after everything else.
  return op.outcome == Outcome::kUnknown ? kNever : op.response_ns;
}

class KeySearch {
 public:
  enum class Verdict { kLinearizable, kNotLinearizable, kBudgetExhausted };

  KeySearch(std::vector<const Operation*> ops, Register initial)
      : ops_(std::move(ops)), initial_(initial), placed_((ops_.size() + 63) / 64, 0) {
    BuildEventList();
    for (const Operation* op : ops_) Count(*op, +1);
    for (const auto& [value, readers] : unplaced_readers_) read_values_.insert(value);
    std::unordered_map<Value, int64_t> first_read_return;
    for (const Operation* op : ops_)
      if (ReadsValue(*op)) {
        auto [it, fresh] = first_read_return.emplace(*ValueRead(*op), op->response_ns);
        if (!fresh) it->second = std::min(it->second, op->response_ns);
      }
    for (const Operation* op : ops_) {
      int64_t d = ResponseOf(*op);
      if (auto it = first_read_return.find(op->value); MayWriteValue(*op) && it != first_read_return.end())
        d = std::min(d, it->second);
      deadline_.push_back(d);
    }
  }

  Verdict Run(uint64_t max_steps);
  std::string Explain(Key key, size_t excerpt_ops) const;
  uint64_t steps() const { return steps_; }

 private:
  struct Event {
    int op;
    bool is_call;
    int prev = -1, next = -1, match = -1;
  };
  struct Config {
    std::vector<uint64_t> placed;
    Register state;
    friend bool operator==(const Config&, const Config&) = default;
  };
  struct ConfigHash {
    size_t operator()(const Config& c) const {
      uint64_t h = std::hash<std::string>()(c.state.value) * 0x9E3779B97F4A7C15ull + c.state.present +
                   2 * c.state.unread;
      for (uint64_t w : c.placed) h = (h ^ w) * 0x100000001B3ull + (h >> 29);
      return static_cast<size_t>(h);
    }
  };

  void BuildEventList();
  void Lift(int call);    // removes a call and its return from the list
  void Unlift(int call);  // undoes the matching Lift (strictly LIFO)
  void SetPlaced(int op, bool on) {
    uint64_t bit = uint64_t{1} << (op % 64);
    placed_[op / 64] = on ? placed_[op / 64] | bit : placed_[op / 64] & ~bit;
  }
  void NoteDeadEnd(int blocked_op, Register state);
  // Places the call `call` taking the register from state_ to `after`, unless that
  // configuration was seen before (then false).
  bool Place(int call, Register after, bool forced);
  // Places every read-only candidate that can take effect now (see the top of this file).
  // False if the configuration they lead to was seen before: this one fails too.
  bool PlaceReadOnly();
  // Undoes placements down to and including the last one that was a choice (the search goes
  // on with the next choice of levels_.back()); false if there was none.
  bool Backtrack();
  // The calls that may take effect next, but for read-only ones (PlaceReadOnly placed those
  // that can), earliest deadline first (see deadline_).
  std::vector<int> Candidates() const;
  int FirstReturnOp() const;  // -1 if none

  // Unplaced operations that read, or may write, each value / absence (see the top).
  void Count(const Operation& op, int delta) {
    if (ReadsValue(op)) unplaced_readers_[*ValueRead(op)] += delta;
    if (ReadsAbsence(op)) unplaced_absence_readers_ += delta;
    if (MayWriteValue(op)) unplaced_writers_[op.value] += delta;
    if (MayDelete(op)) unplaced_deleters_ += delta;
  }
  // `r` with a value no lookup returns folded into Register::unread.
  Register Canonical(Register r) const {
    if (r.present && !r.unread && !read_values_.contains(r.value)) r = Register{true, {}, true};
    return r;
  }
  // Leaving state_ for `after` strands an unplaced reader for good.
  bool Strands(const Register& after) const;

  struct Placed {
    int call;         // its call event
    Register before;  // the state it was placed in
    bool forced;      // by PlaceReadOnly: not a choice, nothing to try instead
  };

  std::vector<const Operation*> ops_;
  Register initial_;
  std::vector<Event> events_;  // [0] is the list head
  std::vector<uint64_t> placed_;
  Register state_;
  std::vector<Placed> stack_;
  struct Level {
    std::vector<int> calls;  // Candidates() when the level began
    size_t next;             // the next one to try
  };
  std::vector<Level> levels_;  // one per choice on stack_, and the current one
  // Per operation: its response, or for a write the earliest response among it and the
  // lookups that return its value - when its value must be in place at the latest. Trying
  // the most urgent write first finds a linearizable order at once, where invocation order
  // backtracks over the writes pending together.
  std::vector<int64_t> deadline_;
  std::unordered_set<Config, ConfigHash> seen_;
  uint64_t steps_ = 0;
  std::unordered_set<Value> read_values_;  // returned by some lookup of the key
  std::unordered_map<Value, int> unplaced_readers_, unplaced_writers_;
  int unplaced_absence_readers_ = 0, unplaced_deleters_ = 0;

  // The deepest dead end, for the report.
  std::vector<int> best_prefix_;
  Register best_state_;
  int blocked_op_ = -1;
};

void KeySearch::BuildEventList() {
  const int n = static_cast<int>(ops_.size());
  events_.push_back({-1, false});
  for (int i = 0; i < n; ++i) {
    events_.push_back({i, true});
    events_.push_back({i, false});
  }
  std::vector<int> order(2 * n);
  for (int i = 0; i < 2 * n; ++i) order[i] = i + 1;
  auto time = [&](int e) {
    const Operation& op = *ops_[events_[e].op];
    return events_[e].is_call ? op.invoke_ns : ResponseOf(op);
  };
  // Calls before returns at equal times: touching intervals count as concurrent, the
  // conservative reading of a clock tick.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (time(a) != time(b)) return time(a) < time(b);
    return events_[a].is_call && !events_[b].is_call;
  });
  int prev = 0;
  for (int e : order) {
    events_[prev].next = e;
    events_[e].prev = prev;
    prev = e;
  }
  for (int i = 0; i < n; ++i) {
    events_[1 + 2 * i].match = 2 + 2 * i;
    events_[2 + 2 * i].match = 1 + 2 * i;
  }
}

void KeySearch::Lift(int call) {
  for (int e : {call, events_[call].match}) {
    events_[events_[e].prev].next = events_[e].next;
    if (events_[e].next != -1) events_[events_[e].next].prev = events_[e].prev;
  }
}

void KeySearch::Unlift(int call) {
  for (int e : {events_[call].match, call}) {
    events_[events_[e].prev].next = e;
    if (events_[e].next != -1) events_[events_[e].next].prev = e;
  }
}

void KeySearch::NoteDeadEnd(int blocked_op, Register state) {
  if (blocked_op_ != -1 && stack_.size() <= best_prefix_.size()) return;
  best_prefix_.clear();
  for (const Placed& p : stack_) best_prefix_.push_back(events_[p.call].op);
  best_state_ = state;
  blocked_op_ = blocked_op;
  // A write held back because it would strand a reader: the reader is the one stuck.
  if (blocked_op < 0 || ReadOnly(*ops_[blocked_op])) return;
  const std::optional<Register> after = Step(state_, *ops_[blocked_op]);
  if (!after || !Strands(Canonical(*after))) return;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Operation& op = *ops_[i];
    const bool stranded = state_.present ? ReadsValue(op) && *ValueRead(op) == state_.value : ReadsAbsence(op);
    if (stranded && !(placed_[i / 64] >> (i % 64) & 1)) {
      blocked_op_ = static_cast<int>(i);
      return;
    }
  }
}

bool KeySearch::Strands(const Register& after) const {
  if (after == state_) return false;
  if (!state_.present) return unplaced_absence_readers_ > 0 && unplaced_deleters_ == 0;
  if (state_.unread) return false;
  const auto readers = unplaced_readers_.find(state_.value);
  if (readers == unplaced_readers_.end() || readers->second == 0) return false;
  const auto writers = unplaced_writers_.find(state_.value);
  return writers == unplaced_writers_.end() || writers->second == 0;
}

bool KeySearch::Place(int call, Register after, bool forced) {
  const int op = events_[call].op;
  after = Canonical(after);
  // Not counted while it is placed: a compare-and-swap reads the value it replaces and must
  // not count as a reader that replacing it strands.
  Count(*ops_[op], -1);
  if (!forced && Strands(after)) {
    Count(*ops_[op], +1);
    return false;
  }
  SetPlaced(op, true);
  if (!forced && !seen_.insert(Config{placed_, after}).second) {
    SetPlaced(op, false);
    Count(*ops_[op], +1);
    return false;
  }
  stack_.push_back({call, state_, forced});
  state_ = after;
  Lift(call);
  return true;
}

bool KeySearch::PlaceReadOnly() {
  bool placed_any = false;
  // Candidates are the calls before the first return; placing one lifts its return too,
  // which may make later calls candidates.
  for (int e = events_[0].next; e != -1 && events_[e].is_call;) {
    const Operation& op = *ops_[events_[e].op];
    const int prev = events_[e].prev;
    if (ReadOnly(op) && Step(state_, op)) {
      Place(e, state_, /*forced=*/true);
      placed_any = true;
      e = events_[prev].next;
    } else {
      e = events_[e].next;
    }
  }
  // The forced placements are a function of the configuration they start from, so the one
  // they end in stands for it in the memo.
  return !placed_any || seen_.insert(Config{placed_, state_}).second;
}

bool KeySearch::Backtrack() {
  while (!stack_.empty()) {
    const Placed p = stack_.back();
    stack_.pop_back();
    state_ = p.before;
    SetPlaced(events_[p.call].op, false);
    Count(*ops_[events_[p.call].op], +1);
    Unlift(p.call);
    if (!p.forced) return true;
  }
  return false;
}

std::vector<int> KeySearch::Candidates() const {
  std::vector<int> calls;
  for (int e = events_[0].next; e != -1 && events_[e].is_call; e = events_[e].next)
    if (!ReadOnly(*ops_[events_[e].op])) calls.push_back(e);
  std::stable_sort(calls.begin(), calls.end(),
                   [&](int a, int b) { return deadline_[events_[a].op] < deadline_[events_[b].op]; });
  return calls;
}

int KeySearch::FirstReturnOp() const {
  for (int e = events_[0].next; e != -1; e = events_[e].next)
    if (!events_[e].is_call) return events_[e].op;
  return -1;
}

KeySearch::Verdict KeySearch::Run(uint64_t max_steps) {
  state_ = Canonical(initial_);
  bool descend = true;  // a placement was just made: a new level of choices
  for (;;) {
    if (descend) {
      descend = false;
      if (!PlaceReadOnly()) {
        if (!Backtrack()) return Verdict::kNotLinearizable;
        continue;
      }
      if (events_[0].next == -1) return Verdict::kLinearizable;
      levels_.push_back({Candidates(), 0});
    }
    Level& level = levels_.back();
    while (level.next < level.calls.size() && !descend) {
      if (++steps_ > max_steps) return Verdict::kBudgetExhausted;
      const int call = level.calls[level.next++];
      const std::optional<Register> after = Step(state_, *ops_[events_[call].op]);
      descend = after && Place(call, *after, false);
    }
    if (descend) continue;
    // No choice here leads anywhere: the first pending return's operation cannot be placed.
    NoteDeadEnd(FirstReturnOp(), state_);
    levels_.pop_back();
    if (!Backtrack()) return Verdict::kNotLinearizable;
  }
}

std::string KeySearch::Explain(Key key, size_t excerpt_ops) const {
  const int64_t origin = 0;  // the recorder's clock origin, shared by every report
  std::string s = "no linearization of the " + std::to_string(ops_.size()) +
                  " operations on key " + KeyStr(key) + " (initially " +
                  ToString(initial_) + ").\n";
  s += "The longest linearizable prefix places " + std::to_string(best_prefix_.size()) +
       " operations and leaves the key " + ToString(best_state_) + "; its last ones:\n";
  const size_t from = best_prefix_.size() > 5 ? best_prefix_.size() - 5 : 0;
  for (size_t i = from; i < best_prefix_.size(); ++i)
    s += "    " + Describe(*ops_[best_prefix_[i]], origin) + "\n";
  if (blocked_op_ < 0) return s;
  const Operation& blocked = *ops_[blocked_op_];
  s += "After it, this operation cannot take effect (nor can any of those pending with it):\n";
  s += " >> " + Describe(blocked, origin) + "\n";
  s += "Operations not yet placed that were invoked before it returned:\n";
  std::vector<bool> placed(ops_.size(), false);
  for (int op : best_prefix_) placed[op] = true;
  size_t shown = 0;
  for (size_t i = 0; i < ops_.size() && shown < excerpt_ops; ++i) {
    if (placed[i] || static_cast<int>(i) == blocked_op_) continue;
    if (ops_[i]->invoke_ns > blocked.response_ns) break;
    s += "    " + Describe(*ops_[i], origin) + "\n";
    ++shown;
  }
  if (shown == 0) s += "    (none)\n";
  return s;
}

// Two shapes of violation that need no search, found in O(n log n) before it: a lookup
// returning a value whose only write began after the lookup returned (or that nobody
// wrote), and one returning a value whose only write was replaced, before the lookup began,
// by an acknowledged write or delete that began after that write returned. Exact: either
// proves there is no linearization (values are the key's own; the initial value counts as
// written). A search has to visit every order of the operations pending around such a
// lookup to prove the same - with 200 threads, too many.
std::optional<std::string> ObviousViolation(const std::vector<const Operation*>& ops, const Register& initial) {
  std::unordered_map<Value, std::vector<const Operation*>> writers;
  for (const Operation* op : ops)
    if (MayWriteValue(*op)) writers[op->value].push_back(op);
  // Acknowledged operations that change any value they find, by invocation; the smallest
  // response among those invoked after each.
  std::vector<const Operation*> changers;
  for (const Operation* op : ops)
    if (op->outcome == Outcome::kOk && (op->kind == OpKind::kInsert || op->kind == OpKind::kUpdate || op->kind == OpKind::kDelete))
      changers.push_back(op);  // `ops` is sorted by invocation already
  std::vector<int64_t> min_response_from(changers.size() + 1, kNever);
  for (size_t i = changers.size(); i-- > 0;)
    min_response_from[i] = std::min(min_response_from[i + 1], changers[i]->response_ns);
  for (const Operation* look : ops) {
    if (!ReadsValue(*look) || (initial.present && initial.value == *ValueRead(*look))) continue;
    const auto it = writers.find(*ValueRead(*look));
    const bool possible = it != writers.end() && std::any_of(it->second.begin(), it->second.end(), [&](const Operation* w) {
      return w->invoke_ns <= look->response_ns;
    });
    if (!possible)
      return "this lookup returned a value that no operation invoked before it returned wrote:\n >> " + Describe(*look) + "\n";
    if (it->second.size() != 1) continue;
    const Operation& write = *it->second[0];
    if (write.outcome != Outcome::kOk) continue;
    const auto after_write = std::upper_bound(changers.begin(), changers.end(), write.response_ns,
                                              [](int64_t t, const Operation* op) { return t < op->invoke_ns; });
    const size_t from = static_cast<size_t>(after_write - changers.begin());
    if (min_response_from[from] >= look->invoke_ns) continue;
    const auto replaced = std::find_if(after_write, changers.end(), [&](const Operation* op) {
      return op->response_ns == min_response_from[from];
    });
    return "this lookup returned a value replaced before it began:\n >> " + Describe(*look) +
           "\nwritten by\n    " + Describe(write) + "\nand replaced by (invoked after that returned)\n    " +
           Describe(**replaced) + "\n";
  }
  return std::nullopt;
}

}  // namespace

CheckReport CheckLinearizability(const History& history, const LinearizabilityOptions& options) {
  std::map<Key, std::vector<const Operation*>> by_key;
  for (const Operation& op : history.ops)
    if (op.kind != OpKind::kScan) by_key[op.key].push_back(&op);
  CheckReport report;
  for (auto& [key, ops] : by_key) {
    std::stable_sort(ops.begin(), ops.end(), [](const Operation* a, const Operation* b) {
      return a->invoke_ns < b->invoke_ns;
    });
    ++report.keys_checked;
    report.point_ops_checked += ops.size();
    Register initial;
    if (auto it = history.initial.find(key); it != history.initial.end()) initial = {true, it->second};
    if (std::optional<std::string> why = ObviousViolation(ops, initial)) {
      report.violations.push_back({"not linearizable", key, "no linearization of the " + std::to_string(ops.size()) +
                                                                " operations on key " + KeyStr(key) + ": " + *why});
      continue;
    }
    KeySearch search(ops, initial);
    const KeySearch::Verdict verdict = search.Run(options.max_steps_per_key);
    report.search_steps += search.steps();
    switch (verdict) {
      case KeySearch::Verdict::kLinearizable:
        break;
      case KeySearch::Verdict::kNotLinearizable:
        report.violations.push_back({"not linearizable", key, search.Explain(key, options.excerpt_ops)});
        break;
      case KeySearch::Verdict::kBudgetExhausted:
        report.violations.push_back(
            {"search budget exhausted", key,
             "inconclusive after " + std::to_string(options.max_steps_per_key) + " steps over " +
                 std::to_string(ops.size()) + " operations; record fewer operations per key"});
        break;
    }
  }
  return report;
}

}  // namespace dmindex::check
