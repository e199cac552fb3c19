#include "tree/batch_lookup.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "common/retry.h"

namespace dmindex::tree {
namespace {

// One key's walk down the tree.
struct KeyWalk {
  size_t key = 0;          // index into the keys
  GlobalAddress addr;      // the node to read next
  int expect = -1;         // its expected level (-1: unknown, from the root word)
  bool from_cache = false; // addr came from a cached parent (hit)
  bool moved = false;      // the walk has left the node it started at
  uint32_t hops = 0;
};

}  // namespace

template <KeyValueTraits KV>
void BatchLookup<KV>::Run(Ctx& c, std::span<const KeyRef> keys, std::span<Value> values,
                          std::span<Status> statuses) const {
  using Step = typename TreeReader<KV>::Step;
  RoutingCache<KV>* cache = c.cn.cache.get();
  std::vector<KeyWalk> walks;
  std::vector<typename RoutingCache<KV>::Hit> hits(keys.size());
  std::vector<size_t> alone;  // keys finished by a Lookup of their own
  walks.reserve(keys.size());
  GlobalAddress root;
  for (size_t i = 0; i < keys.size(); ++i) {
    KeyWalk w;
    w.key = i;
    if (cache != nullptr && cache->FindChild(keys[i], 1, &hits[i])) {
      w.addr = hits[i].child;
      w.expect = hits[i].level - 1;
      w.from_cache = true;
    } else {
      if (root.is_null()) {
        auto r = reader_.Root(c);
        if (!r.ok()) {
          statuses[i] = r.status();
          continue;
        }
        if (r->is_null()) {  // an empty tree
          statuses[i] = Status::NotFound();
          continue;
        }
        root = *r;
      }
      w.addr = root;
    }
    walks.push_back(w);
  }

  const uint32_t nb = t_.layout.node_bytes;
  std::unordered_map<uint64_t, size_t> slot_of;  // node address -> its buffer in the round
  std::vector<fabric::Verb> reads;
  while (!walks.empty()) {
    slot_of.clear();
    reads.clear();
    for (const KeyWalk& w : walks) slot_of.try_emplace(w.addr.raw(), slot_of.size());
    c.scan_buf.resize(slot_of.size() * nb);
    for (const auto& [raw, slot] : slot_of)
      reads.push_back(fabric::Verb::Read(GlobalAddress::FromRaw(raw), c.scan_buf.data() + slot * nb, nb));
    if (Status s = c.ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered); !s.ok()) {
      for (const KeyWalk& w : walks) statuses[w.key] = s;
      return;
    }
    size_t kept = 0;
    for (KeyWalk w : walks) {
      const KeyRef key = keys[w.key];
      const std::byte* image = c.scan_buf.data() + slot_of[w.addr.raw()] * nb;
      NodeHeader<KV> h;
      const bool valid = t_.validator.Decode(image, &h);
      // torn: the walk's own Lookup reads it properly
      const Step step = valid ? TreeReader<KV>::NextStep(h, key, w.expect, 0) : Step::kStale;
      if (++w.hops > retry_limits::kLevelHops.attempts || step == Step::kStale) {
        if (valid && w.from_cache && !w.moved) cache->Stale(hits[w.key], key);
        alone.push_back(w.key);
        continue;
      }
      if (step == Step::kArrived) {  // a leaf: NextStep stops at level 0
        const int slot = t_.validator.leaf().Find(image, h, key);
        if constexpr (KV::kValueBlocks) {
          // Out of line: the key's own Lookup fetches the block within its lease.
          if (slot >= 0 && !t_.validator.leaf().BlockAt(image, h, static_cast<uint32_t>(slot)).is_null()) {
            alone.push_back(w.key);
            continue;
          }
        }
        statuses[w.key] = slot < 0 ? Status::NotFound() : Status::Ok();
        if (slot >= 0) values[w.key] = t_.validator.leaf().ValueAt(image, h, static_cast<uint32_t>(slot));
        continue;
      }
      if (step == Step::kRight) {
        // As Descend does: a cached parent whose child split is dropped; a root that split
        // is re-read by the next traversal.
        if (w.from_cache && !w.moved) cache->MovedRight(hits[w.key], key, 1);
        if (w.expect < 0) c.cn.root.store(0, std::memory_order_relaxed);
        w.expect = h.level;
        w.addr = h.sibling;
      } else {  // kDown
        if (cache != nullptr) cache->Insert(w.addr, h, image);
        w.addr = t_.validator.internal().ChildFor(image, h, key);
        w.expect = h.level - 1;
      }
      w.moved = true;
      walks[kept++] = w;
    }
    walks.resize(kept);
  }
  for (size_t i : alone) statuses[i] = reader_.Lookup(c, keys[i], &values[i]);
}

template class BatchLookup<U64BytesKV>;
template class BatchLookup<U64KV>;
template class BatchLookup<BytesKV>;

}  // namespace dmindex::tree
