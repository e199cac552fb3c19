#include "art/tree.h"

#include "common/retry.h"
#include "common/runtime.h"

namespace dmindex::art {
namespace {

uint8_t Byte(std::string_view s, size_t i) { return static_cast<uint8_t>(s[i]); }

NodeType Larger(NodeType t) {
  return t == NodeType::kN4 ? NodeType::kN16 : t == NodeType::kN16 ? NodeType::kN48 : NodeType::kN256;
}
NodeType Smaller(NodeType t) {
  return t == NodeType::kN256 ? NodeType::kN48 : t == NodeType::kN48 ? NodeType::kN16 : NodeType::kN4;
}

// Puts `leaf` (whose key continues at `at`) into a fresh node: in its terminal slot if the
// key ends there, else under its next byte.
void Place(Node* n, Leaf* leaf, size_t at) {
  const std::string_view k = leaf->key();
  if (at == k.size()) n->set_terminal(FromLeaf(leaf));
  else n->AddChild(Byte(k, at), FromLeaf(leaf));
}

}  // namespace

// The tracked nodes an operation passed, root first.
struct Tree::Path {
  Node* nodes[kMaxTrackDepth + 1];
  uint32_t count = 0;
  void Add(Node* n, uint32_t hop, uint32_t track_depth) {
    if (hop <= track_depth && count <= kMaxTrackDepth) nodes[count++] = n;
  }
};

class Tree::Restarts {
 public:
  Restarts(Tree& tree, const char* op) : tree_(tree), budget_(retry_limits::kArtRestarts, op) {}
  Status Next(std::string_view key) {
    tree_.CountRestart();
    if (!budget_.Spend()) return budget_.Exhausted("of a " + std::to_string(key.size()) + "-byte key");
    backoff_.Pause();
    return Status::Ok();
  }

 private:
  Tree& tree_;
  RetryBudget budget_;
  Backoff backoff_{backoff::kRestart};
};

Worker::Worker(Tree& tree)
    : participant_(tree.epochs().Join()),
      rng_(runtime::Entropy() | 1),  // not the address: a simulated run must be a function of its seed
      sample_mask_((uint64_t{1} << tree.options().sample_shift) - 1) {}

Tree::Tree(const TreeOptions& options) : options_(options) {
  root_ = NewNode(NodeType::kN256, 0);
}

Tree::~Tree() {
  // Every linked node and leaf; retired ones are the epoch manager's.
  std::vector<Node*> stack{root_};
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    ChildList list;
    n->Children(0, &list);
    if (n->terminal() != 0) Leaf::Destroy(AsLeaf(n->terminal()));
    for (uint16_t i = 0; i < list.count; ++i) {
      if (IsLeaf(list.refs[i])) Leaf::Destroy(AsLeaf(list.refs[i]));
      else stack.push_back(AsNode(list.refs[i]));
    }
    Node::Destroy(n);
  }
}

Leaf* Tree::NewLeaf(std::string_view key, std::string_view value, uint32_t flags) {
  Leaf* l = Leaf::Create(key, value, flags);
  bytes_.fetch_add(static_cast<int64_t>(l->bytes()), std::memory_order_relaxed);
  return l;
}

Node* Tree::NewNode(NodeType type, uint32_t prefix_capacity) {
  Node* n = Node::Create(type, prefix_capacity);
  bytes_.fetch_add(static_cast<int64_t>(n->bytes()), std::memory_order_relaxed);
  nodes_.fetch_add(1, std::memory_order_relaxed);
  return n;
}

Node* Tree::CopyNode(const Node& from, NodeType type) {
  Node* n = from.CopyAs(type);
  bytes_.fetch_add(static_cast<int64_t>(n->bytes()), std::memory_order_relaxed);
  nodes_.fetch_add(1, std::memory_order_relaxed);
  return n;
}

void Tree::RetireLeaf(Leaf* leaf, Worker& w) {
  w.epoch().Retire(
      leaf,
      [](void* object, void* context) {
        auto* l = static_cast<Leaf*>(object);
        static_cast<Tree*>(context)->bytes_.fetch_sub(static_cast<int64_t>(l->bytes()), std::memory_order_relaxed);
        Leaf::Destroy(l);
      },
      this, leaf->bytes());
}

void Tree::RetireNode(Node* node, Worker& w) {
  w.epoch().Retire(
      node,
      [](void* object, void* context) {
        auto* n = static_cast<Node*>(object);
        auto* tree = static_cast<Tree*>(context);
        tree->bytes_.fetch_sub(static_cast<int64_t>(n->bytes()), std::memory_order_relaxed);
        tree->nodes_.fetch_sub(1, std::memory_order_relaxed);
        Node::Destroy(n);
      },
      this, node->bytes());
}

void Tree::Track(const Path& path, Worker& w, bool access, int64_t insert_delta, bool dirty) {
  uint8_t bits = 0;
  if (access) bits |= node_bits::kAccessedBit;
  if (dirty) bits |= node_bits::kDirtyBit;
  const bool sampled = w.Sample();
  const int64_t scale = int64_t{1} << options_.sample_shift;
  for (uint32_t i = 0; i < path.count; ++i) {
    Node* n = path.nodes[i];
    if (bits != 0) n->SetBits(bits);
    if (!sampled) continue;
    if (access) n->AddAccesses(static_cast<uint32_t>(scale));
    if (insert_delta != 0) n->AddInserts(insert_delta * scale);
  }
}

Result<Probe> Tree::Lookup(std::string_view key, Worker& w) {
  Restarts restarts(*this, "art lookup");
  for (;;) {
    Path path;
    Node* node = root_;
    uint64_t v;
    node->lock().ReadLockLive(&v);  // the root is never obsolete
    size_t depth = 0;
    uint32_t hop = 0;
    bool mounted = false;
    for (;;) {
      const uint32_t plen = node->prefix_length();
      uint32_t i = 0;
      while (i < plen && depth + i < key.size() && node->prefix(i) == Byte(key, depth + i)) ++i;
      if (i < plen) {  // the key is outside this node's range
        if (!node->lock().Validate(v)) break;
        Track(path, w, true, 0, false);
        return Probe{nullptr, mounted};
      }
      mounted |= node->mounted();
      path.Add(node, hop, options_.track_depth);
      depth += plen;
      if (depth == key.size()) {
        const ChildRef t = node->terminal();
        if (!node->lock().Validate(v)) break;
        Track(path, w, true, 0, false);
        return Probe{t != 0 ? AsLeaf(t) : nullptr, mounted};
      }
      const ChildRef c = node->FindChild(Byte(key, depth));
      if (!node->lock().Validate(v)) break;
      if (c == 0 || IsLeaf(c)) {
        Track(path, w, true, 0, false);
        const Leaf* leaf = c != 0 && AsLeaf(c)->key() == key ? AsLeaf(c) : nullptr;
        return Probe{leaf, mounted};
      }
      Node* child = AsNode(c);
      uint64_t cv;
      if (!child->lock().ReadLockLive(&cv) || !node->lock().Validate(v)) break;
      node = child;
      v = cv;
      ++depth;
      ++hop;
    }
    DMX_RETURN_IF_ERROR(restarts.Next(key));
  }
}

Status Tree::Modify(std::string_view key, Worker& w, DecideFn decide) {
  Restarts restarts(*this, "art modify");
  for (;;) {
    Status done;
    if (TryModify(key, w, decide, &done)) return done;
    DMX_RETURN_IF_ERROR(restarts.Next(key));
  }
}

bool Tree::TryModify(std::string_view key, Worker& w, DecideFn& decide, Status* done) {
  Path path;
  Node* parent = nullptr;
  uint64_t pv = 0;
  uint8_t pbyte = 0;
  Node* node = root_;
  uint64_t v;
  node->lock().ReadLockLive(&v);
  size_t depth = 0;
  uint32_t hop = 0;
  bool mounted = false;
  for (;;) {
    // 1. The node's compressed path.
    const uint32_t plen = node->prefix_length();
    uint32_t i = 0;
    while (i < plen && depth + i < key.size() && node->prefix(i) == Byte(key, depth + i)) ++i;
    if (i < plen) {
      // The key leaves the node's range at prefix byte i: a new node above it takes the
      // common bytes and holds both (parent is set: the root has no prefix).
      if (!node->lock().Validate(v)) return false;
      const Decision d = decide(nullptr, 0, mounted);
      if (d.action != Action::kPut) return node->lock().Validate(v);
      if (!parent->lock().Upgrade(pv)) return false;
      if (!node->lock().Upgrade(v)) {
        parent->lock().Abandon(pv);
        return false;
      }
      const std::string prefix = node->PrefixString();
      Node* above = NewNode(NodeType::kN4, i);
      above->SetPrefix(std::string_view(prefix).substr(0, i));
      // A node created here is on no operation's tracked path yet: its counters start from its
      // subtree's (the node's estimate, plus this key, counted exactly).
      above->AddInserts(node->inserts() + 1);
      above->AddAccesses(node->accesses());
      Place(above, NewLeaf(key, d.value, d.flags), depth + i);
      above->AddChild(static_cast<uint8_t>(prefix[i]), FromNode(node));
      node->DropPrefixFront(i + 1);
      parent->ReplaceChild(pbyte, FromNode(above));
      node->lock().Unlock();
      parent->lock().Unlock();
      AddEntries(1);
      Track(path, w, true, 1, (d.flags & leaf_flags::kDirty) != 0);
      return true;
    }
    mounted |= node->mounted();
    path.Add(node, hop, options_.track_depth);
    depth += plen;

    // 2. The key's slot in this node: the terminal one, or the child of its next byte.
    const bool at_terminal = depth == key.size();
    const uint8_t b = at_terminal ? 0 : Byte(key, depth);
    const ChildRef c = at_terminal ? node->terminal() : node->FindChild(b);
    if (!node->lock().Validate(v)) return false;

    if (c == 0) {
      const Decision d = decide(nullptr, 0, mounted);
      if (d.action != Action::kPut) return node->lock().Validate(v);
      if (!at_terminal && node->full()) {
        // Grow: a bigger copy replaces the node in its parent (the root never fills).
        if (!parent->lock().Upgrade(pv)) return false;
        if (!node->lock().Upgrade(v)) {
          parent->lock().Abandon(pv);
          return false;
        }
        Node* bigger = CopyNode(*node, Larger(node->type()));
        bigger->AddChild(b, FromLeaf(NewLeaf(key, d.value, d.flags)));
        parent->ReplaceChild(pbyte, FromNode(bigger));
        node->lock().UnlockObsolete();
        parent->lock().Unlock();
        RetireNode(node, w);
        if (path.count > 0 && path.nodes[path.count - 1] == node) path.nodes[path.count - 1] = bigger;
      } else {
        if (!node->lock().Upgrade(v)) return false;
        Leaf* leaf = NewLeaf(key, d.value, d.flags);
        if (at_terminal) node->set_terminal(FromLeaf(leaf));
        else node->AddChild(b, FromLeaf(leaf));
        node->lock().Unlock();
      }
      AddEntries(1);
      Track(path, w, true, 1, (d.flags & leaf_flags::kDirty) != 0);
      return true;
    }

    if (IsLeaf(c) && AsLeaf(c)->key() != key) {
      // Lazy expansion: another key's leaf sits in our slot; a new node holds both.
      const Decision d = decide(nullptr, 0, mounted);
      if (d.action != Action::kPut) return node->lock().Validate(v);
      if (!node->lock().Upgrade(v)) return false;
      Leaf* other = AsLeaf(c);
      const std::string_view ok = other->key();
      const size_t from = depth + 1;
      size_t common = 0;
      while (from + common < key.size() && from + common < ok.size() && key[from + common] == ok[from + common])
        ++common;
      Node* n4 = NewNode(NodeType::kN4, static_cast<uint32_t>(common));
      n4->SetPrefix(key.substr(from, common));
      Place(n4, NewLeaf(key, d.value, d.flags), from + common);
      Place(n4, other, from + common);
      n4->AddInserts(2);  // both keys, counted exactly (it is on no tracked path yet)
      node->ReplaceChild(b, FromNode(n4));
      node->lock().Unlock();
      AddEntries(1);
      Track(path, w, true, 1, (d.flags & leaf_flags::kDirty) != 0);
      return true;
    }

    if (IsLeaf(c)) {
      // The key's own leaf: decide under the node's lock.
      if (!node->lock().Upgrade(v)) return false;
      Leaf* leaf = AsLeaf(c);
      for (;;) {
        uint32_t f = leaf->flags();
        const Decision d = decide(leaf, f, mounted);
        if (d.action == Action::kKeep) {
          node->lock().Abandon(v);
          Track(path, w, true, 0, false);
          return true;
        }
        if (!leaf->CasFlags(f, f | leaf_flags::kObsolete)) continue;  // a cleaner moved: again
        if (d.action == Action::kPut) {
          const ChildRef fresh = FromLeaf(NewLeaf(key, d.value, d.flags));
          if (at_terminal) node->set_terminal(fresh);
          else node->ReplaceChild(b, fresh);
          node->lock().Unlock();
          RetireLeaf(leaf, w);
          Track(path, w, true, 0, (d.flags & leaf_flags::kDirty) != 0);
          return true;
        }
        // Remove, then tidy up the node if it became useless or too big for its children
        // (never a mount point: its range must keep saying that Y may hold keys of it).
        if (d.mount) node->SetMounted();
        if (at_terminal) node->set_terminal(0);
        else node->RemoveChild(b);
        RetireLeaf(leaf, w);
        AddEntries(-1);
        Track(path, w, true, -1, false);
        Node* replaced = nullptr;
        if (parent != nullptr && !node->mounted() && parent->lock().Upgrade(pv)) {
          ChildList rest;
          node->Children(0, &rest);
          const ChildRef term = node->terminal();
          if (rest.count == 0 && term == 0) {
            parent->RemoveChild(pbyte);
            replaced = node;
          } else if (rest.count == 0 && term != 0) {
            parent->ReplaceChild(pbyte, term);  // the terminal leaf is unique in this range
            replaced = node;
          } else if (rest.count == 1 && term == 0 && IsLeaf(rest.refs[0])) {
            parent->ReplaceChild(pbyte, rest.refs[0]);
            replaced = node;
          } else if (node->underfull()) {
            parent->ReplaceChild(pbyte, FromNode(CopyNode(*node, Smaller(node->type()))));
            replaced = node;
          }
          parent->lock().Unlock();
        }
        if (replaced != nullptr) {
          node->lock().UnlockObsolete();
          RetireNode(node, w);
        } else {
          node->lock().Unlock();
        }
        return true;
      }
    }

    // 3. Descend (lock coupling: the child's version is taken while the parent is valid).
    Node* child = AsNode(c);
    uint64_t cv;
    if (!child->lock().ReadLockLive(&cv) || !node->lock().Validate(v)) return false;
    parent = node;
    pv = v;
    pbyte = b;
    node = child;
    v = cv;
    ++depth;
    ++hop;
  }
}

}  // namespace dmindex::art
