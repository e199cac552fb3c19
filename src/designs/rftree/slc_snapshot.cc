#include "designs/rftree/slc_snapshot.h"

#include <string>
#include <type_traits>

namespace dmindex::designs::rftree {

template <tree::KeyValueTraits KV>
SlcSnapshot<KV>::SlcSnapshot(const tree::NodeLayout<KV>& layout, GlobalAddress root,
                             std::vector<Segment> segments)
    : codec_(layout), block_bytes_(layout.node_bytes), root_(root), segments_(std::move(segments)) {
  for (const Segment& s : segments_) {
    for (uint8_t v : s.valid) nodes_ += v;
    bytes_ += s.blocks * (block_bytes_ + sizeof(Header) + 1);
    // Byte-string fences longer than a string keeps inline live on the heap.
    if constexpr (std::is_same_v<Key, std::string>) {
      const size_t inline_capacity = std::string().capacity();
      for (uint64_t i = 0; i < s.blocks; ++i)
        for (const std::string* f : {&s.headers[i].low, &s.headers[i].high})
          if (f->capacity() > inline_capacity) bytes_ += f->capacity() + 1;
    }
  }
  bytes_ += sizeof(*this);
}

template <tree::KeyValueTraits KV>
bool SlcSnapshot<KV>::Find(GlobalAddress addr, Node* out) const {
  // A handful of segments (one chunk each): a linear search beats any map.
  for (const Segment& s : segments_) {
    if (addr.node() != s.base.node() || addr.offset() < s.base.offset()) continue;
    const uint64_t delta = addr.offset() - s.base.offset();
    const uint64_t i = delta / block_bytes_;
    if (i >= s.blocks || delta % block_bytes_ != 0) continue;
    if (!s.valid[i]) return false;
    *out = {addr, &s.headers[i], s.images.get() + i * block_bytes_};
    return true;
  }
  return false;
}

template <tree::KeyValueTraits KV>
int SlcSnapshot<KV>::root_level() const {
  Node n;
  return Find(root_, &n) ? n.h->level : -1;
}

template <tree::KeyValueTraits KV>
bool SlcSnapshot<KV>::Walk(KeyRef key, uint8_t min_level, Node* at) const {
  Node n;
  if (poisoned() || !Find(root_, &n) || n.h->level < min_level) return false;
  // Every step goes right or down within the copy, so there are at most nodes_ of them.
  for (uint64_t steps = 0; steps <= nodes_; ++steps) {
    Node next;
    if (n.h->BeyondHigh(key)) {
      // B-link: the node split after the image of its parent was read. Its sibling, if the
      // copy has it, covers keys from its low fence on; otherwise the remote walk moves right
      // from this node's last child.
      if (!Find(n.h->sibling, &next) || next.h->level != n.h->level || key < next.h->low) break;
      n = next;
      continue;
    }
    if (n.h->level == min_level) break;
    const GlobalAddress child = codec_.ChildFor(n.image, *n.h, key);
    // A child missing from the copy was appended after its segment was read (or its block
    // was torn twice): the walk goes on remotely from here.
    if (!Find(child, &next) || next.h->level + 1 != n.h->level || key < next.h->low) break;
    n = next;
  }
  *at = n;
  return true;
}

template <tree::KeyValueTraits KV>
bool SlcSnapshot<KV>::FindChild(KeyRef key, uint8_t min_level, Hit* hit, uint32_t* missing) const {
  Node n;
  if (!Walk(key, min_level, &n)) return false;
  *hit = {n.addr, n.h->level, codec_.ChildFor(n.image, *n.h, key)};
  *missing = n.h->level - min_level;
  return true;
}

template <tree::KeyValueTraits KV>
bool SlcSnapshot<KV>::FindLeafRun(KeyRef key, const Key& end, size_t max, Hit* hit,
                                  std::vector<GlobalAddress>* leaves) const {
  leaves->clear();
  Node n;
  if (!Walk(key, 1, &n) || n.h->level != 1 || n.h->BeyondHigh(key)) return false;
  for (int i = codec_.ChildIndexFor(n.image, *n.h, key);
       i < static_cast<int>(codec_.Count(*n.h)) && leaves->size() < max; ++i) {
    // Child i >= 0 starts at separator i: past `end`, no leaf from here on is needed.
    if (i >= 0 && !leaves->empty() &&
        !KV::Below(codec_.KeyAt(n.image, *n.h, static_cast<uint32_t>(i)), end))
      break;
    leaves->push_back(codec_.ChildByIndex(n.image, *n.h, i));
  }
  *hit = {n.addr, 1, leaves->front()};
  return true;
}

template class SlcSnapshot<tree::U64BytesKV>;
template class SlcSnapshot<tree::BytesKV>;

}  // namespace dmindex::designs::rftree
