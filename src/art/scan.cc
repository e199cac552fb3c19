// Tree::Scan: an in-order walk that reads each node as one validated snapshot (its prefix,
// terminal leaf and children), so every leaf it visits was linked at that node's validation
// instant and every key it skips was absent then. A node that fails validation (or became
// obsolete) restarts the walk from the root after the last visited key.
#include <string>

#include "art/tree.h"
#include "common/retry.h"

namespace dmindex::art {
namespace {

enum class Walk { kContinue, kStop, kRestart };

struct ScanState {
  std::string_view cursor;  // keys >= cursor (or > if !inclusive)
  bool inclusive;
  FunctionRef<bool(const Leaf*)>* visit;
  std::string last;  // the last visited key
  bool visited = false;
};

// True if `key` is at or past the cursor.
bool Qualifies(std::string_view key, const ScanState& s) {
  const int c = key.compare(s.cursor);
  return c > 0 || (c == 0 && s.inclusive);
}

Walk Emit(const Leaf* leaf, ScanState& s) {
  s.last.assign(leaf->key());
  s.visited = true;
  return (*s.visit)(leaf) ? Walk::kContinue : Walk::kStop;
}

// `bounded`: the cursor lies inside this node's range, so keys below it must be skipped;
// otherwise every key here is past the cursor.
Walk ScanNode(const Node* node, uint64_t v, size_t depth, bool bounded, ScanState& s) {
  const std::string prefix = node->PrefixString();
  const ChildRef terminal = node->terminal();
  ChildList children;
  // Children from the cursor's byte on, if the cursor continues through this node.
  const std::string_view cur = s.cursor;
  uint8_t from = 0;
  int order = 0;  // this node's path against the cursor: -1 below, 0 cursor inside, 1 above
  if (bounded) {
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (depth + i >= cur.size()) { order = 1; break; }  // cursor ends: every key here is longer
      const auto p = static_cast<uint8_t>(prefix[i]), k = static_cast<uint8_t>(cur[depth + i]);
      if (p != k) { order = p < k ? -1 : 1; break; }
    }
    if (order == 0 && depth + prefix.size() < cur.size()) from = static_cast<uint8_t>(cur[depth + prefix.size()]);
  }
  if (order >= 0) node->Children(from, &children);
  if (!node->lock().Validate(v)) return Walk::kRestart;
  if (order < 0) return Walk::kContinue;
  bounded = bounded && order == 0;
  depth += prefix.size();

  // The terminal key is this node's path: below the cursor if the cursor is longer.
  if (terminal != 0 && (!bounded || (cur.size() == depth && s.inclusive))) {
    if (Emit(AsLeaf(terminal), s) == Walk::kStop) return Walk::kStop;
  }
  for (uint16_t i = 0; i < children.count; ++i) {
    const bool child_bounded = bounded && depth < cur.size() && children.bytes[i] == static_cast<uint8_t>(cur[depth]);
    const ChildRef c = children.refs[i];
    if (IsLeaf(c)) {
      const Leaf* leaf = AsLeaf(c);
      if (child_bounded && !Qualifies(leaf->key(), s)) continue;
      if (Emit(leaf, s) == Walk::kStop) return Walk::kStop;
      continue;
    }
    const Node* child = AsNode(c);
    uint64_t cv;
    // Lock coupling: the parent must still be as read when the child's version is taken. An
    // insert that splits a compressed path changes the child in place (its prefix loses the
    // bytes a new node above it took), so without this the child would be walked with the
    // path of the old snapshot, and keys compared against the wrong bytes.
    if (!child->lock().ReadLockLive(&cv) || !node->lock().Validate(v)) return Walk::kRestart;
    const Walk w = ScanNode(child, cv, depth + 1, child_bounded, s);
    if (w != Walk::kContinue) return w;
  }
  return Walk::kContinue;
}

}  // namespace

Status Tree::Scan(std::string_view from, bool inclusive, Worker& w, FunctionRef<bool(const Leaf*)> visit) {
  (void)w;
  RetryBudget budget(retry_limits::kArtRestarts, "art scan");
  Backoff backoff(backoff::kRestart);
  std::string cursor(from);
  ScanState s{cursor, inclusive, &visit, {}, false};
  for (;;) {
    uint64_t v;
    root_->lock().ReadLockLive(&v);
    const Walk r = ScanNode(root_, v, 0, true, s);
    if (r != Walk::kRestart) return Status::Ok();
    CountRestart();
    if (!budget.Spend()) return budget.Exhausted("from a " + std::to_string(from.size()) + "-byte key");
    backoff.Pause();
    if (s.visited) {  // continue after the last visited key
      cursor = s.last;
      s.cursor = cursor;
      s.inclusive = false;
    }
  }
}

}  // namespace dmindex::art
