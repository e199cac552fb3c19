#include "tree/pool_audit.h"

#include <algorithm>
#include <map>
#include <string>
#include <type_traits>

#include "tree/node_validation.h"

namespace dmindex::tree {
namespace {

constexpr uint64_t kMaxChain = uint64_t{1} << 26;  // nodes on one level: beyond, a cycle

// A fence or key as the report shows it; an empty high fence of the byte format is +inf.
template <typename Key>
std::string FenceText(const Key& k) {
  if constexpr (std::is_integral_v<Key>) return std::to_string(k);
  else return k.empty() ? std::string("-inf/+inf") : dmindex::KeyText(k);
}

// What a block that does not validate holds, for the report.
std::string Describe(const std::vector<std::byte>& image) {
  const bool zero = std::all_of(image.begin(), image.end(), [](std::byte b) { return b == std::byte{0}; });
  return zero ? "zero memory: no node image was ever written there"
              : "bytes that fail the node's check words (torn or overwritten)";
}

}  // namespace

template <KeyValueTraits KV>
Status AuditPool(fabric::Endpoint& ep, const NodeLayout<KV>& layout, GlobalAddress root_word,
                 PoolContent<KV>* out) {
  using Key = typename KV::Key;
  *out = PoolContent<KV>{};
  const NodeValidator<KV> validator(layout, true);
  uint64_t raw = 0;
  DMX_RETURN_IF_ERROR(ep.Read(root_word, &raw, 8));
  if (raw == 0) return Status::Ok();
  std::vector<std::byte> image(layout.node_bytes);
  std::vector<InternalEntry<KV>> children;
  // The references the level above makes into this level: low fence -> node (and who).
  struct Ref {
    GlobalAddress child, parent;
  };
  std::map<Key, Ref, std::less<>> refs;
  GlobalAddress first = GlobalAddress::FromRaw(raw);
  int level = -1;  // the root's level is learnt from its image
  Key last_leaf_key = KV::kNegInf;
  bool any_leaf_key = false;
  for (;;) {
    std::map<Key, Ref, std::less<>> below;
    GlobalAddress next_first;
    Key expect_low = KV::kNegInf;
    uint64_t on_level = 0;
    for (GlobalAddress addr = first; !addr.is_null(); ++on_level) {
      const std::string where = "node " + addr.ToString() + " (level " +
                                (level < 0 ? std::string("of the root") : std::to_string(level)) + ")";
      if (on_level >= kMaxChain) return Status::Corruption("pool: the sibling chain through " + where + " has a cycle");
      DMX_RETURN_IF_ERROR(ep.Read(addr, image.data(), layout.node_bytes));
      NodeHeader<KV> h;
      if (!validator.Decode(image.data(), &h)) return Status::Corruption("pool: " + where + " holds " + Describe(image));
      if (level < 0) level = h.level;
      if (h.dead()) return Status::Corruption("pool: " + where + " is dead but still linked");
      if (h.level != level)
        return Status::Corruption("pool: " + where + " is at level " + std::to_string(h.level));
      if (h.low != expect_low)
        return Status::Corruption("pool: " + where + " starts at " + FenceText(h.low) +
                                  ", its left neighbour ends at " + FenceText(expect_low));
      if (!KV::Below(h.low, h.high)) return Status::Corruption("pool: " + where + " has an empty range");
      if (h.sibling.is_null() != (h.high == KV::kPosInf))
        return Status::Corruption("pool: " + where + " ends at " + FenceText(h.high) +
                                  (h.sibling.is_null() ? " without a sibling" : " but has a sibling"));
      // Rule 3: the level above points here only at a node starting at the separator.
      if (auto it = refs.find(h.low); it != refs.end()) {
        if (it->second.child != addr)
          return Status::Corruption("pool: node " + it->second.parent.ToString() + " points at " +
                                    it->second.child.ToString() + " for keys from " + FenceText(h.low) +
                                    ", but the node starting there is " + addr.ToString());
        refs.erase(it);
      } else if (out->levels > 0 || on_level > 0) {
        ++out->half_splits;  // a right half whose separator is not in the level above yet
      }
      ++out->nodes;
      if (h.is_leaf()) {
        std::vector<LeafEntry<KV>> entries;
        validator.leaf().Collect(image.data(), h, &entries);
        for (const auto& e : entries) {
          if (!h.Covers(e.key))
            return Status::Corruption("pool: leaf " + addr.ToString() + " holds key " + FenceText(e.key) +
                                      " outside its range [" + FenceText(h.low) + ", " + FenceText(h.high) + ")");
          if (any_leaf_key && !(last_leaf_key < e.key))
            return Status::Corruption("pool: key " + FenceText(e.key) + " in leaf " + addr.ToString() +
                                      " does not follow " + FenceText(last_leaf_key));
          last_leaf_key = e.key;
          any_leaf_key = true;
          out->entries.push_back(e);
        }
      } else {
        children.clear();
        validator.internal().Collect(image.data(), h, &children);
        Key prev = h.low;
        if (on_level == 0) next_first = h.leftmost;
        below[h.low] = {h.leftmost, addr};
        for (const auto& c : children) {
          if (!(prev < c.key) || !KV::Below(c.key, h.high))
            return Status::Corruption("pool: " + where + " has separator " + FenceText(c.key) +
                                      " out of order or outside its range");
          below[c.key] = {c.child, addr};
          prev = c.key;
        }
      }
      expect_low = h.high;
      addr = h.sibling;
    }
    if (!refs.empty())
      return Status::Corruption("pool: node " + refs.begin()->second.parent.ToString() +
                                " has separator " + FenceText(refs.begin()->first) + " -> " +
                                refs.begin()->second.child.ToString() +
                                ", but no node of the level below starts there");
    ++out->levels;
    if (level == 0) return Status::Ok();
    refs = std::move(below);
    first = next_first;
    --level;
  }
}

template Status AuditPool<U64BytesKV>(fabric::Endpoint&, const NodeLayout<U64BytesKV>&, GlobalAddress,
                                 PoolContent<U64BytesKV>*);
template Status AuditPool<U64KV>(fabric::Endpoint&, const NodeLayout<U64KV>&, GlobalAddress,
                                    PoolContent<U64KV>*);
template Status AuditPool<BytesKV>(fabric::Endpoint&, const NodeLayout<BytesKV>&, GlobalAddress,
                                   PoolContent<BytesKV>*);

}  // namespace dmindex::tree
