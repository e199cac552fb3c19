#include "tree/internal_cache.h"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace dmindex::tree {

template <KeyValueTraits KV>
InternalCache<KV>::InternalCache(uint64_t capacity_bytes, const NodeLayout<KV>& layout)
    : capacity_bytes_(capacity_bytes),
      node_bytes_(layout.node_bytes),
      // Image plus map node, header and FIFO item: what a cached node really costs.
      bytes_per_node_(layout.node_bytes + sizeof(Node) + sizeof(FifoItem) + 64),
      codec_(layout) {}

template <KeyValueTraits KV>
typename InternalCache<KV>::LevelMap::iterator InternalCache<KV>::Covering(LevelMap& m, KeyRef key) {
  auto it = m.upper_bound(key);  // first node with low > key
  if (it == m.begin()) return m.end();
  --it;
  return it->second.header.BeyondHigh(key) ? m.end() : it;
}

template <KeyValueTraits KV>
bool InternalCache<KV>::FindChild(KeyRef key, uint8_t min_level, Hit* hit) {
  std::shared_lock lock(mu_);
  for (uint32_t level = std::max<uint8_t>(min_level, 1); level < kMaxLevels; ++level) {
    LevelMap& m = levels_[level];
    if (m.empty()) continue;
    auto it = Covering(m, key);
    if (it == m.end()) continue;
    const Node& n = it->second;
    hit->node = n.addr;
    hit->level = static_cast<uint8_t>(level);
    hit->child = codec_.ChildFor(n.image.get(), n.header, key);
    hits_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

template <KeyValueTraits KV>
bool InternalCache<KV>::FindLeafRun(KeyRef key, const Key& end, size_t max, Hit* hit,
                                    std::vector<GlobalAddress>* leaves) {
  leaves->clear();
  std::shared_lock lock(mu_);
  auto it = Covering(levels_[1], key);
  if (it == levels_[1].end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const Node& n = it->second;
  int i = codec_.ChildIndexFor(n.image.get(), n.header, key);
  for (; i < static_cast<int>(codec_.Count(n.header)) && leaves->size() < max; ++i) {
    // Child i >= 0 starts at separator i: past `end`, no leaf from here on is needed.
    if (i >= 0 && !leaves->empty() && !KV::Below(codec_.KeyAt(n.image.get(), n.header, static_cast<uint32_t>(i)), end))
      break;
    leaves->push_back(codec_.ChildByIndex(n.image.get(), n.header, i));
  }
  *hit = {n.addr, 1, leaves->front()};
  hits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

template <KeyValueTraits KV>
void InternalCache<KV>::Erase(uint8_t level, typename LevelMap::iterator it) {
  levels_[level].erase(it);
  --nodes_;
}

template <KeyValueTraits KV>
void InternalCache<KV>::Insert(GlobalAddress addr, const NodeHeader<KV>& h,
                               const std::byte* image) {
  if (h.level == 0 || h.level >= kMaxLevels || capacity_bytes_ < bytes_per_node_) return;
  auto copy = std::make_unique<std::byte[]>(node_bytes_);
  std::memcpy(copy.get(), image, node_bytes_);
  std::unique_lock lock(mu_);
  const uint64_t seq = next_seq_++;
  LevelMap& m = levels_[h.level];
  // Drop overlapping (older or newer) views of this range: ranges in a level stay disjoint.
  auto it = m.lower_bound(h.low);
  if (it != m.begin() && KV::Below(h.low, std::prev(it)->second.header.high)) --it;
  while (it != m.end() && KV::Below(it->first, h.high)) {
    auto next = std::next(it);
    Erase(h.level, it);
    it = next;
  }
  m.emplace(h.low, Node{addr, seq, h, std::move(copy)});
  ++nodes_;
  fifo_.push_back({h.level, h.low, seq});
  EvictLocked();
}

template <KeyValueTraits KV>
void InternalCache<KV>::EvictLocked() {
  while (nodes_ * bytes_per_node_ > capacity_bytes_ && !fifo_.empty()) {
    FifoItem item = fifo_.front();
    fifo_.pop_front();
    if (Live(item)) Erase(item.level, levels_[item.level].find(item.low));
  }
  // Items of replaced nodes pile up when nothing is evicted: compact now and then.
  if (fifo_.size() > 2 * nodes_ + 1024) {
    std::deque<FifoItem> live;
    for (const FifoItem& item : fifo_)
      if (Live(item)) live.push_back(item);
    fifo_.swap(live);
  }
}

template <KeyValueTraits KV>
bool InternalCache<KV>::Live(const FifoItem& item) const {
  const LevelMap& m = levels_[item.level];
  auto it = m.find(item.low);
  return it != m.end() && it->second.seq == item.seq;
}

template <KeyValueTraits KV>
void InternalCache<KV>::Invalidate(GlobalAddress addr, uint8_t level, KeyRef key) {
  if (level == 0 || level >= kMaxLevels) return;
  std::unique_lock lock(mu_);
  LevelMap& m = levels_[level];
  auto it = Covering(m, key);
  if (it != m.end() && it->second.addr == addr) Erase(level, it);
}

template <KeyValueTraits KV>
uint64_t InternalCache<KV>::bytes() const {
  std::shared_lock lock(mu_);
  return nodes_ * bytes_per_node_;
}

template class InternalCache<U64BytesKV>;
template class InternalCache<U64KV>;
template class InternalCache<BytesKV>;

}  // namespace dmindex::tree
