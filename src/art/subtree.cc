#include "art/subtree.h"

#include "common/retry.h"

namespace dmindex::art {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

enum class Walk { kContinue, kStop, kRestart };

struct UnitWalk {
  uint32_t unit_hop;
  std::string_view after;
  FunctionRef<bool(const UnitInfo&)>* visit;
  std::string last;
};

// Whether a unit or subtree with this path comes after the cursor (and is not inside the
// previous unit's range).
bool After(std::string_view path, std::string_view after) {
  return !after.empty() ? path > after && !StartsWith(path, after) : true;
}

Walk EmitLeaf(const Leaf* leaf, uint32_t hop, UnitWalk& s) {
  if (!After(leaf->key(), s.after)) return Walk::kContinue;
  UnitInfo u;
  u.path.assign(leaf->key());
  u.leaf = leaf;
  u.hop = hop;
  s.last = u.path;
  return (*s.visit)(u) ? Walk::kContinue : Walk::kStop;
}

Walk WalkUnits(Node* node, uint64_t v, std::string path, uint32_t hop, UnitWalk& s) {
  path += node->PrefixString();
  const ChildRef terminal = node->terminal();
  ChildList children;
  // A unit's own children are not walked: no need to copy them (most nodes walked are units).
  if (hop < s.unit_hop) node->Children(0, &children);
  UnitInfo u;
  u.node = node;
  u.hop = hop;
  u.bits = node->hot_bits();
  u.accesses = node->accesses();
  u.inserts = node->inserts();
  if (!node->lock().Validate(v)) return Walk::kRestart;
  // Skip subtrees wholly before the cursor: their path is below it and not a prefix of it.
  if (!s.after.empty() && path < s.after && !StartsWith(s.after, path)) return Walk::kContinue;
  if (hop == s.unit_hop) {
    if (!After(path, s.after)) return Walk::kContinue;
    u.path = path;
    s.last = path;
    return (*s.visit)(u) ? Walk::kContinue : Walk::kStop;
  }
  if (terminal != 0 && EmitLeaf(AsLeaf(terminal), hop, s) == Walk::kStop) return Walk::kStop;
  for (uint16_t i = 0; i < children.count; ++i) {
    const ChildRef c = children.refs[i];
    Walk r;
    if (IsLeaf(c)) {
      r = EmitLeaf(AsLeaf(c), hop + 1, s);
    } else {
      uint64_t cv;
      // Lock coupling (as Tree::Scan): a child changed in place since the snapshot (a path
      // split took bytes of its prefix) would get a wrong path.
      if (!AsNode(c)->lock().ReadLockLive(&cv) || !node->lock().Validate(v)) return Walk::kRestart;
      r = WalkUnits(AsNode(c), cv, path + static_cast<char>(children.bytes[i]), hop + 1, s);
    }
    if (r != Walk::kContinue) return r;
  }
  return Walk::kContinue;
}

}  // namespace

Status ForEachUnit(Tree& tree, uint32_t unit_hop, std::string_view after, Worker& w,
                   FunctionRef<bool(const UnitInfo&)> visit) {
  (void)w;
  RetryBudget budget(retry_limits::kArtRestarts, "art unit walk");
  Backoff backoff(backoff::kRestart);
  std::string cursor(after);
  UnitWalk s{unit_hop, cursor, &visit, {}};
  for (;;) {
    uint64_t v;
    tree.root()->lock().ReadLockLive(&v);
    if (WalkUnits(tree.root(), v, "", 0, s) != Walk::kRestart) return Status::Ok();
    tree.CountRestart();
    if (!budget.Spend()) return budget.Exhausted("of the unit walk");
    backoff.Pause();
    if (!s.last.empty()) {
      cursor = s.last;
      s.after = cursor;
    }
  }
}

Status ChildUnits(Tree& tree, std::string_view path, Worker& w, std::vector<UnitInfo>* out) {
  (void)w;
  RetryBudget budget(retry_limits::kArtRestarts, "art child units");
  Backoff backoff(backoff::kRestart);
  for (;;) {
    out->clear();
    const Node* node = tree.root();
    uint64_t v;
    node->lock().ReadLockLive(&v);
    std::string full;
    uint32_t hop = 0;
    bool restart = false;
    for (;;) {
      full += node->PrefixString();
      if (!node->lock().Validate(v)) { restart = true; break; }
      if (full == path) {
        const ChildRef terminal = node->terminal();
        ChildList children;
        node->Children(0, &children);
        if (!node->lock().Validate(v)) { restart = true; break; }
        if (terminal != 0) {
          UnitInfo u;
          u.path.assign(AsLeaf(terminal)->key());
          u.leaf = AsLeaf(terminal);
          u.hop = hop;
          out->push_back(std::move(u));
        }
        for (uint16_t i = 0; i < children.count; ++i) {
          UnitInfo u;
          u.hop = hop + 1;
          const ChildRef c = children.refs[i];
          if (IsLeaf(c)) {
            u.leaf = AsLeaf(c);
            u.path.assign(u.leaf->key());
          } else {
            Node* child = AsNode(c);
            uint64_t cv;
            if (!child->lock().ReadLockLive(&cv)) { restart = true; break; }
            u.node = child;
            u.path = full + static_cast<char>(children.bytes[i]) + child->PrefixString();
            u.bits = child->hot_bits();
            u.accesses = child->accesses();
            u.inserts = child->inserts();
            if (!child->lock().Validate(cv) || !node->lock().Validate(v)) { restart = true; break; }
          }
          out->push_back(std::move(u));
        }
        if (!restart) return Status::Ok();
        break;
      }
      if (full.size() >= path.size() || !StartsWith(path, full)) return Status::NotFound();
      const ChildRef c = node->FindChild(static_cast<uint8_t>(path[full.size()]));
      if (!node->lock().Validate(v)) { restart = true; break; }
      if (c == 0 || IsLeaf(c)) return Status::NotFound();
      uint64_t cv;
      if (!AsNode(c)->lock().ReadLockLive(&cv) || !node->lock().Validate(v)) { restart = true; break; }
      full += path[full.size()];
      node = AsNode(c);
      v = cv;
      ++hop;
    }
    tree.CountRestart();
    if (!budget.Spend()) return budget.Exhausted("of a child listing");
    backoff.Pause();
  }
}

namespace {

// Locks `node` and everything below it (the caller holds its parent's lock, so none of them
// can become obsolete), collecting nodes and leaves.
void LockSubtree(Node* node, std::vector<Node*>* nodes, std::vector<Leaf*>* leaves) {
  const bool locked = node->lock().LockLive();
  (void)locked;  // cannot fail: only a holder of the parent's lock obsoletes a child
  nodes->push_back(node);
  if (node->terminal() != 0) leaves->push_back(AsLeaf(node->terminal()));
  ChildList children;
  node->Children(0, &children);
  for (uint16_t i = 0; i < children.count; ++i) {
    if (IsLeaf(children.refs[i])) leaves->push_back(AsLeaf(children.refs[i]));
    else LockSubtree(AsNode(children.refs[i]), nodes, leaves);
  }
}

}  // namespace

Result<Detached> Detach(Tree& tree, std::string_view prefix, Worker& w,
                        FunctionRef<Status(const std::vector<Leaf*>&)> frozen) {
  if (prefix.empty()) return Status::InvalidArgument("art detach: an empty prefix would detach the root");
  RetryBudget budget(retry_limits::kArtRestarts, "art detach");
  Backoff backoff(backoff::kRestart);
  for (;;) {
    // 1. Find the unit (the highest node or leaf within the prefix's range) and its parent.
    std::vector<Node*> above;  // root .. parent
    Node* node = tree.root();
    uint64_t v;
    node->lock().ReadLockLive(&v);
    std::string full;
    Node* parent = nullptr;
    uint8_t slot = 0;
    ChildRef unit = 0;
    bool restart = false;
    for (;;) {
      full += node->PrefixString();
      if (!node->lock().Validate(v)) { restart = true; break; }
      if (StartsWith(full, prefix)) {  // this whole node is within the range
        unit = FromNode(node);
        break;
      }
      if (!StartsWith(prefix, full)) return Status::NotFound();
      above.push_back(node);
      const uint8_t b = static_cast<uint8_t>(prefix[full.size()]);
      const ChildRef c = node->FindChild(b);
      if (!node->lock().Validate(v)) { restart = true; break; }
      if (c == 0) return Status::NotFound();
      parent = node;
      slot = b;
      if (IsLeaf(c)) {
        if (!StartsWith(AsLeaf(c)->key(), prefix)) return Status::NotFound();
        unit = c;
        break;
      }
      uint64_t cv;
      if (!AsNode(c)->lock().ReadLockLive(&cv) || !node->lock().Validate(v)) { restart = true; break; }
      full += static_cast<char>(b);
      node = AsNode(c);
      v = cv;
    }
    if (!restart) {
      // 2. Lock the parent and check it still holds the unit; then freeze the unit.
      if (!parent->lock().LockLive()) {
        restart = true;
      } else if (parent->FindChild(slot) != unit) {
        parent->lock().Unlock();
        restart = true;
      }
    }
    if (restart) {
      tree.CountRestart();
      if (!budget.Spend()) return budget.Exhausted("of a " + std::to_string(prefix.size()) + "-byte prefix");
      backoff.Pause();
      continue;
    }
    std::vector<Node*> nodes;
    std::vector<Leaf*> leaves;
    if (IsLeaf(unit)) leaves.push_back(AsLeaf(unit));
    else LockSubtree(AsNode(unit), &nodes, &leaves);

    // 3. The cold store takes the dirty entries while nothing can change.
    Status written = frozen(leaves);
    if (!written.ok()) {
      for (Node* n : nodes) n->lock().Unlock();
      parent->lock().Unlock();
      return written;
    }

    // 4. Unlink: the parent's range may now have keys only in Y.
    Detached d;
    parent->SetMounted();
    parent->RemoveChild(slot);
    for (Leaf* l : leaves) {
      uint32_t f = l->flags();
      while (!l->CasFlags(f, f | leaf_flags::kObsolete)) {
      }
      d.bytes += l->bytes();
    }
    for (Node* n : nodes) {
      d.bytes += n->bytes();
      n->lock().UnlockObsolete();
    }
    parent->lock().Unlock();
    for (Leaf* l : leaves) tree.RetireLeaf(l, w);
    for (Node* n : nodes) tree.RetireNode(n, w);
    d.leaves = leaves.size();
    d.nodes = nodes.size();
    tree.AddEntries(-static_cast<int64_t>(d.leaves));
    const uint32_t tracked = std::min<uint32_t>(static_cast<uint32_t>(above.size()), tree.options().track_depth + 1);
    for (uint32_t i = 0; i < tracked; ++i) above[i]->AddInserts(-static_cast<int64_t>(d.leaves));
    return d;
  }
}

namespace {

// A node whose snapshot does not validate is skipped with its subtree: the counters are
// estimates, and only a validated child list holds pointers that are safe to follow.
void Decay(Node* node, uint32_t hop, uint32_t max_hop) {
  uint64_t v;
  if (!node->lock().ReadLockLive(&v)) return;
  node->DecayAccesses();
  if (hop == max_hop) return;
  ChildList children;
  node->Children(0, &children);
  if (!node->lock().Validate(v)) return;
  for (uint16_t i = 0; i < children.count; ++i)
    if (!IsLeaf(children.refs[i])) Decay(AsNode(children.refs[i]), hop + 1, max_hop);
}

}  // namespace

Status DecayAccesses(Tree& tree, uint32_t max_hop, Worker& w) {
  (void)w;  // the caller is inside w's epoch: nothing reached is freed under it
  Decay(tree.root(), 0, max_hop);
  return Status::Ok();
}

}  // namespace dmindex::art
