// CheckFinalState (checker.h): the final state of every key against its last acknowledged
// writes.
#include <algorithm>
#include <optional>
#include <set>

#include "check/checker.h"

namespace dmindex::check {
namespace {

bool IsWrite(const Operation& op) {
  return op.kind == OpKind::kInsert || op.kind == OpKind::kUpdate || op.kind == OpKind::kDelete ||
         (op.kind == OpKind::kCompareAndSwap && MayWriteValue(op));
}

// What `write` leaves in the key: its value, or nullopt (absent) for a Delete.
std::optional<Value> EffectOf(const Operation& write) {
  if (write.kind == OpKind::kDelete) return std::nullopt;
  return write.value;
}

std::string StateName(const std::optional<Value>& state) {
  return state ? "present with value " + ValueStr(*state) : "absent";
}

}  // namespace

CheckReport CheckFinalState(const History& history, const std::map<Key, Value>& final_state) {
  std::map<Key, std::vector<const Operation*>> writes;  // acknowledged or of unknown outcome
  std::set<Key> keys;
  for (const Operation& op : history.ops) {
    if (op.kind == OpKind::kScan) continue;
    keys.insert(op.key);
    if (IsWrite(op) && op.outcome != Outcome::kNotFound) writes[op.key].push_back(&op);
  }
  for (const auto& [key, value] : history.initial) keys.insert(key);
  for (const auto& [key, value] : final_state) keys.insert(key);

  CheckReport report;
  for (Key key : keys) {
    ++report.keys_checked;
    const std::vector<const Operation*>& ws = writes[key];
    // Candidates: acknowledged writes that no other acknowledged write surely followed
    // (began after they returned), and every write of unknown outcome.
    bool any_acknowledged = false;
    int64_t last_invoke = 0;  // of the acknowledged write invoked last
    for (const Operation* w : ws)
      if (w->outcome == Outcome::kOk) {
        last_invoke = any_acknowledged ? std::max(last_invoke, w->invoke_ns) : w->invoke_ns;
        any_acknowledged = true;
      }
    std::vector<const Operation*> last;
    for (const Operation* w : ws)
      if (w->outcome != Outcome::kOk || w->response_ns >= last_invoke) last.push_back(w);
    std::vector<std::optional<Value>> allowed;
    for (const Operation* w : last) allowed.push_back(EffectOf(*w));
    if (!any_acknowledged) {
      auto it = history.initial.find(key);
      allowed.push_back(it == history.initial.end() ? std::nullopt : std::optional(it->second));
    }
    auto found = final_state.find(key);
    const std::optional<Value> observed =
        found == final_state.end() ? std::nullopt : std::optional(found->second);
    bool ok = false;
    for (const auto& a : allowed) ok |= a == observed;
    if (ok) continue;
    std::string detail = "  the key is " + StateName(observed) + " after all operations, but ";
    if (last.empty()) {
      detail += "no write to it was acknowledged and it was initially " + StateName(allowed.front()) + "\n";
    } else {
      detail += "the writes that may have been its last leave it ";
      for (size_t i = 0; i < allowed.size(); ++i)
        detail += (i ? " or " : "") + StateName(allowed[i]);
      detail += any_acknowledged ? ":\n" : " (no write was acknowledged):\n";
      for (const Operation* w : last) detail += "    " + Describe(*w) + "\n";
    }
    report.violations.push_back({"wrong final state", key, std::move(detail)});
  }
  return report;
}

}  // namespace dmindex::check
