#include "art/node.h"

#include <new>

namespace dmindex::art {
namespace {

constexpr size_t kHeader = sizeof(Node);

// Byte offsets of the type-specific arrays and the size without the prefix.
constexpr size_t KeysBytes(NodeType t) {
  return t == NodeType::kN4 ? 8 : t == NodeType::kN16 ? 16 : t == NodeType::kN48 ? 256 : 0;
}
constexpr size_t ChildSlots(NodeType t) {
  return t == NodeType::kN4 ? 4 : t == NodeType::kN16 ? 16 : t == NodeType::kN48 ? 48 : 256;
}
constexpr size_t BaseBytes(NodeType t) { return kHeader + KeysBytes(t) + 8 * ChildSlots(t); }

}  // namespace

uint32_t Node::Capacity(NodeType type) { return static_cast<uint32_t>(ChildSlots(type)); }

size_t Node::SizeFor(NodeType type, uint32_t prefix_capacity) {
  return BaseBytes(type) + ((prefix_capacity + 7) & ~size_t{7});
}

Node* Node::Create(NodeType type, uint32_t prefix_capacity) {
  const size_t size = SizeFor(type, prefix_capacity);
  void* mem = ::operator new(size, std::align_val_t{8});
  Node* n = new (mem) Node(type, prefix_capacity);
  auto* raw = static_cast<std::byte*>(mem);
  for (size_t i = 0; i < KeysBytes(type); ++i) new (raw + kHeader + i) std::atomic<uint8_t>(0);
  for (size_t i = 0; i < ChildSlots(type); ++i)
    new (raw + kHeader + KeysBytes(type) + 8 * i) std::atomic<ChildRef>(0);
  for (size_t i = 0; i < prefix_capacity; ++i) new (raw + BaseBytes(type) + i) std::atomic<uint8_t>(0);
  return n;
}

void Node::Destroy(Node* node) {
  node->~Node();
  ::operator delete(node, std::align_val_t{8});
}

std::atomic<uint8_t>* Node::prefix_bytes() const {
  auto* raw = reinterpret_cast<std::byte*>(const_cast<Node*>(this));
  return std::launder(reinterpret_cast<std::atomic<uint8_t>*>(raw + BaseBytes(type_)));
}
std::atomic<uint8_t>* Node::keys() const {
  auto* raw = reinterpret_cast<std::byte*>(const_cast<Node*>(this));
  return std::launder(reinterpret_cast<std::atomic<uint8_t>*>(raw + kHeader));
}
std::atomic<ChildRef>* Node::children() const {
  auto* raw = reinterpret_cast<std::byte*>(const_cast<Node*>(this));
  return std::launder(reinterpret_cast<std::atomic<ChildRef>*>(raw + kHeader + KeysBytes(type_)));
}

bool Node::underfull() const {
  switch (type_) {
    case NodeType::kN4: return false;
    case NodeType::kN16: return count() <= 3;
    case NodeType::kN48: return count() <= 12;
    case NodeType::kN256: return count() <= 37;
  }
  return false;
}

std::string Node::PrefixString() const {
  uint32_t len = prefix_length();
  if (len > prefix_capacity_) len = prefix_capacity_;  // a torn read; the caller validates
  std::string s(len, '\0');
  for (uint32_t i = 0; i < len; ++i) s[i] = static_cast<char>(prefix(i));
  return s;
}

void Node::SetPrefix(std::string_view p) {
  for (size_t i = 0; i < p.size(); ++i) prefix_bytes()[i].store(static_cast<uint8_t>(p[i]), std::memory_order_relaxed);
  prefix_length_.store(static_cast<uint32_t>(p.size()), std::memory_order_relaxed);
}

void Node::DropPrefixFront(uint32_t n) {
  const uint32_t len = prefix_length();
  for (uint32_t i = n; i < len; ++i)
    prefix_bytes()[i - n].store(prefix(i), std::memory_order_relaxed);
  prefix_length_.store(len - n, std::memory_order_relaxed);
}

int Node::Position(uint8_t byte) const {
  const uint32_t n = count() < Capacity(type_) ? count() : Capacity(type_);
  for (uint32_t i = 0; i < n; ++i)
    if (keys()[i].load(std::memory_order_relaxed) == byte) return static_cast<int>(i);
  return -1;
}

ChildRef Node::FindChild(uint8_t byte) const {
  switch (type_) {
    case NodeType::kN4:
    case NodeType::kN16: {
      const int pos = Position(byte);
      return pos < 0 ? 0 : children()[pos].load(std::memory_order_acquire);
    }
    case NodeType::kN48: {
      const uint8_t slot = keys()[byte].load(std::memory_order_relaxed);
      return slot == 0 ? 0 : children()[(slot - 1) % 48].load(std::memory_order_acquire);
    }
    case NodeType::kN256: return children()[byte].load(std::memory_order_acquire);
  }
  return 0;
}

void Node::AddChild(uint8_t byte, ChildRef child) {
  const uint32_t n = count();
  switch (type_) {
    case NodeType::kN4:
    case NodeType::kN16: {
      uint32_t pos = 0;
      while (pos < n && keys()[pos].load(std::memory_order_relaxed) < byte) ++pos;
      for (uint32_t i = n; i > pos; --i) {
        keys()[i].store(keys()[i - 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
        children()[i].store(children()[i - 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
      }
      keys()[pos].store(byte, std::memory_order_relaxed);
      children()[pos].store(child, std::memory_order_release);
      break;
    }
    case NodeType::kN48: {
      uint32_t slot = 0;
      while (children()[slot].load(std::memory_order_relaxed) != 0) ++slot;
      children()[slot].store(child, std::memory_order_release);
      keys()[byte].store(static_cast<uint8_t>(slot + 1), std::memory_order_relaxed);
      break;
    }
    case NodeType::kN256: children()[byte].store(child, std::memory_order_release); break;
  }
  count_.store(static_cast<uint16_t>(n + 1), std::memory_order_relaxed);
}

void Node::ReplaceChild(uint8_t byte, ChildRef child) {
  switch (type_) {
    case NodeType::kN4:
    case NodeType::kN16: children()[Position(byte)].store(child, std::memory_order_release); break;
    case NodeType::kN48:
      children()[keys()[byte].load(std::memory_order_relaxed) - 1].store(child, std::memory_order_release);
      break;
    case NodeType::kN256: children()[byte].store(child, std::memory_order_release); break;
  }
}

void Node::RemoveChild(uint8_t byte) {
  const uint32_t n = count();
  switch (type_) {
    case NodeType::kN4:
    case NodeType::kN16: {
      const int pos = Position(byte);
      for (uint32_t i = static_cast<uint32_t>(pos); i + 1 < n; ++i) {
        keys()[i].store(keys()[i + 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
        children()[i].store(children()[i + 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
      }
      children()[n - 1].store(0, std::memory_order_relaxed);
      break;
    }
    case NodeType::kN48: {
      const uint8_t slot = keys()[byte].load(std::memory_order_relaxed);
      keys()[byte].store(0, std::memory_order_relaxed);
      children()[slot - 1].store(0, std::memory_order_relaxed);
      break;
    }
    case NodeType::kN256: children()[byte].store(0, std::memory_order_relaxed); break;
  }
  count_.store(static_cast<uint16_t>(n - 1), std::memory_order_relaxed);
}

void Node::Children(uint8_t from, ChildList* out) const {
  out->count = 0;
  auto push = [out](uint8_t b, ChildRef c) {
    if (c == 0 || out->count >= 256) return;
    out->bytes[out->count] = b;
    out->refs[out->count] = c;
    ++out->count;
  };
  switch (type_) {
    case NodeType::kN4:
    case NodeType::kN16: {
      const uint32_t n = count() < Capacity(type_) ? count() : Capacity(type_);
      for (uint32_t i = 0; i < n; ++i) {
        const uint8_t b = keys()[i].load(std::memory_order_relaxed);
        if (b >= from) push(b, children()[i].load(std::memory_order_acquire));
      }
      break;
    }
    case NodeType::kN48:
      for (uint32_t b = from; b < 256; ++b) {
        const uint8_t slot = keys()[b].load(std::memory_order_relaxed);
        if (slot != 0) push(static_cast<uint8_t>(b), children()[(slot - 1) % 48].load(std::memory_order_acquire));
      }
      break;
    case NodeType::kN256:
      for (uint32_t b = from; b < 256; ++b) push(static_cast<uint8_t>(b), children()[b].load(std::memory_order_acquire));
      break;
  }
}

Node* Node::CopyAs(NodeType type) const {
  Node* copy = Create(type, prefix_capacity_);
  copy->SetPrefix(PrefixString());
  copy->set_terminal(terminal());
  ChildList list;
  Children(0, &list);
  for (uint16_t i = 0; i < list.count; ++i) copy->AddChild(list.bytes[i], list.refs[i]);
  copy->bits_.store(bits_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  copy->accesses_.store(accesses(), std::memory_order_relaxed);
  copy->inserts_.store(inserts(), std::memory_order_relaxed);
  return copy;
}

}  // namespace dmindex::art
