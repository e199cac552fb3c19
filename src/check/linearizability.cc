// Per-key linearizability: the Wing & Gong search with Lowe's memoisation ("Testing for
// linearizability", CCPE 2017), the algorithm of Porcupine and Knossos.
//
// The history of one key is a list of call and return events in time order. The search
// repeatedly picks an operation whose call precedes every pending return (so it may take
// effect first), applies it to the register model, removes its two events from the list and
// recurses; reaching a return event means the operation it ends was never placed, so the
// search backtracks. Configurations (set of placed operations, register state) already seen
// are skipped: with unique written values there are few of them.
#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_set>

#include "check/checker.h"

namespace dmindex::check {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct Register {
  bool present = false;
  Value value;
  friend bool operator==(const Register&, const Register&) = default;
};

std::string ToString(const Register& r) {
  return r.present ? "present with value " + ValueStr(r.value) : "absent";
}

// The register after `op`, or nullopt if `op` cannot take effect in state `r`.
std::optional<Register> Step(Register r, const Operation& op) {
  const bool unknown = op.outcome == Outcome::kUnknown;
  const bool ok = op.outcome == Outcome::kOk;
  switch (op.kind) {
    case OpKind::kLookup:
      if (unknown) return r;
      if (ok) return r.present && r.value == op.value ? std::optional(r) : std::nullopt;
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
    case OpKind::kScan:
      break;
  }
  return std::nullopt;
}

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
  }

  Verdict Run(uint64_t max_steps);
  std::string Explain(Key key, size_t excerpt_ops) const;

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
      uint64_t h = std::hash<std::string>()(c.state.value) * 0x9E3779B97F4A7C15ull + c.state.present;
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

  std::vector<const Operation*> ops_;
  Register initial_;
  std::vector<Event> events_;  // [0] is the list head
  std::vector<uint64_t> placed_;
  std::vector<std::pair<int, Register>> stack_;  // placed calls and the state before each

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
  for (const auto& [call, before] : stack_) best_prefix_.push_back(events_[call].op);
  best_state_ = state;
  blocked_op_ = blocked_op;
}

KeySearch::Verdict KeySearch::Run(uint64_t max_steps) {
  std::unordered_set<Config, ConfigHash> seen;
  Register state = initial_;
  int entry = events_[0].next;
  for (uint64_t steps = 0; events_[0].next != -1; ++steps) {
    if (steps > max_steps) return Verdict::kBudgetExhausted;
    const Event& e = events_[entry];
    if (e.is_call) {
      if (std::optional<Register> after = Step(state, *ops_[e.op])) {
        SetPlaced(e.op, true);
        if (seen.insert(Config{placed_, *after}).second) {
          stack_.emplace_back(entry, state);
          state = *after;
          Lift(entry);
          entry = events_[0].next;
          continue;
        }
        SetPlaced(e.op, false);
      }
      entry = e.next;  // a call's return follows it, so this is never the end
    } else {
      NoteDeadEnd(e.op, state);
      if (stack_.empty()) return Verdict::kNotLinearizable;
      auto [call, before] = stack_.back();
      stack_.pop_back();
      state = before;
      SetPlaced(events_[call].op, false);
      Unlift(call);
      entry = events_[call].next;
    }
  }
  return Verdict::kLinearizable;
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
    KeySearch search(ops, initial);
    switch (search.Run(options.max_steps_per_key)) {
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
