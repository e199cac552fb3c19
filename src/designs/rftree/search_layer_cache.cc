#include "designs/rftree/search_layer_cache.h"

#include <algorithm>
#include <chrono>

#include "common/runtime.h"

namespace dmindex::designs::rftree {
namespace {

bool AllZero(const std::byte* p, size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(runtime::Now().time_since_epoch()).count();
}

template <typename Snapshot>
void DeleteSnapshot(void* object, void*) {
  delete static_cast<const Snapshot*>(object);
}

}  // namespace

template <tree::KeyValueTraits KV>
SearchLayerCache<KV>::SearchLayerCache(const tree::NodeLayout<KV>& layout, const alloc::AppendLog& log,
                                       GlobalAddress root_word, const SlcConfig& config)
    : layout_(layout), validator_(layout, config.validate), log_(log), root_word_(root_word),
      config_(config) {}

template <tree::KeyValueTraits KV>
SearchLayerCache<KV>::~SearchLayerCache() {
  delete current_.load(std::memory_order_acquire);
}

template <tree::KeyValueTraits KV>
bool SearchLayerCache<KV>::FindChild(KeyRef key, uint8_t min_level, Hit* hit) {
  const Snapshot* s = current_.load(std::memory_order_acquire);
  uint32_t missing = 0;
  if (s != nullptr && s->FindChild(key, min_level, hit, &missing)) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    if (missing > 0) AddStale(missing);  // levels the caller reads that a fresh copy has
    return true;
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  // A tree lower than min_level misses in a fresh copy too; any other miss (no root in the
  // copy: it was empty or a leaf when read) costs the reads of a walk from the root.
  if (s != nullptr && !s->poisoned()) {
    const int root = s->root_level();
    if (root < 0 || root >= min_level) AddStale(1);
  }
  return false;
}

template <tree::KeyValueTraits KV>
bool SearchLayerCache<KV>::FindLeafRun(KeyRef key, const Key& end, size_t max, Hit* hit,
                                       std::vector<GlobalAddress>* leaves) {
  if (!config_.scan_batch) return false;  // the paper's scans: leaf by leaf (no miss counted)
  const Snapshot* s = current_.load(std::memory_order_acquire);
  if (s != nullptr && s->FindLeafRun(key, end, max, hit, leaves)) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

template <tree::KeyValueTraits KV>
void SearchLayerCache<KV>::MovedRight(const Hit&, KeyRef, uint32_t hops) {
  AddStale(hops);
}

template <tree::KeyValueTraits KV>
void SearchLayerCache<KV>::Stale(const Hit&, KeyRef) {
  // Nodes never merge and published nodes are never freed (lazy deletion), so a copy's
  // pointer cannot lead off the key's path; if one ever does, stop using the copy rather
  // than send every restart down the same pointer, and read a new one.
  const Snapshot* s = current_.load(std::memory_order_acquire);
  if (s != nullptr) s->Poison();
  want_.store(true, std::memory_order_relaxed);
}

template <tree::KeyValueTraits KV>
uint64_t SearchLayerCache<KV>::Threshold() const {
  if (config_.refresh_auto) return std::max<uint64_t>(16, nodes_.load(std::memory_order_relaxed));
  return config_.refresh_hops;  // 0: never
}

template <tree::KeyValueTraits KV>
void SearchLayerCache<KV>::AddStale(uint64_t n) {
  stale_total_.fetch_add(n, std::memory_order_relaxed);
  const uint64_t now = stale_.fetch_add(n, std::memory_order_relaxed) + n;
  const uint64_t threshold = Threshold();
  if (threshold != 0 && now >= threshold) want_.store(true, std::memory_order_relaxed);
}

template <tree::KeyValueTraits KV>
bool SearchLayerCache<KV>::RefreshDue() const {
  if (!want_.load(std::memory_order_relaxed) || in_flight_.load(std::memory_order_relaxed)) return false;
  if (config_.min_interval_us == 0) return true;
  const int64_t last = last_start_ns_.load(std::memory_order_relaxed);
  return last == kNeverRefreshed || NowNs() - last >= static_cast<int64_t>(config_.min_interval_us) * 1000;
}

template <tree::KeyValueTraits KV>
Result<std::vector<typename SlcSnapshot<KV>::Segment>> SearchLayerCache<KV>::ReadSegments(
    fabric::Endpoint& ep, const std::vector<alloc::AppendLog::Segment>& log) {
  const uint32_t bb = layout_.node_bytes;
  const uint64_t chunk = std::max<uint64_t>(bb, config_.chunk_bytes / bb * bb);
  std::vector<typename Snapshot::Segment> segments;
  std::vector<fabric::Verb> reads;
  for (const alloc::AppendLog::Segment& l : log) {
    if (l.used == 0) continue;
    typename Snapshot::Segment s;
    s.base = l.base;
    s.blocks = l.used;
    s.images = std::make_unique<std::byte[]>(l.used * bb);
    s.headers.resize(l.used);
    s.valid.assign(l.used, 0);
    for (uint64_t off = 0; off < l.used * bb; off += chunk)
      reads.push_back(fabric::Verb::Read(l.base + off, s.images.get() + off,
                                         static_cast<uint32_t>(std::min(chunk, l.used * bb - off))));
    segments.push_back(std::move(s));
  }
  // Every chunk of every segment in one unordered batch: one round trip.
  DMX_RETURN_IF_ERROR(ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered));

  // Each block on its own: never written (zero), a validated internal node, or torn by a
  // write landing during the READ - read those once more, together, and leave out what is
  // still torn (a walk that needs it continues remotely).
  std::vector<std::pair<size_t, uint64_t>> torn;
  auto decode = [&](size_t si, uint64_t i) {
    typename Snapshot::Segment& s = segments[si];
    const std::byte* image = s.images.get() + i * bb;
    if (AllZero(image, bb)) return true;
    tree::NodeHeader<KV> h;
    if (!validator_.Decode(image, &h)) return false;
    if (!h.is_leaf() && !h.dead()) {
      s.headers[i] = h;
      s.valid[i] = 1;
    }
    return true;
  };
  for (size_t si = 0; si < segments.size(); ++si)
    for (uint64_t i = 0; i < segments[si].blocks; ++i)
      if (!decode(si, i)) torn.emplace_back(si, i);
  if (!torn.empty()) {
    reads.clear();
    for (auto [si, i] : torn)
      reads.push_back(fabric::Verb::Read(segments[si].base + i * bb, segments[si].images.get() + i * bb, bb));
    DMX_RETURN_IF_ERROR(ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered));
    for (auto [si, i] : torn)
      if (!decode(si, i)) torn_left_.fetch_add(1, std::memory_order_relaxed);
  }
  return segments;
}

template <tree::KeyValueTraits KV>
Status SearchLayerCache<KV>::Refresh(fabric::Endpoint& ep, EpochManager::Participant& retire) {
  if (in_flight_.exchange(true, std::memory_order_acq_rel)) return Status::Ok();
  struct Done {
    std::atomic<bool>& flag;
    ~Done() { flag.store(false, std::memory_order_release); }
  } done{in_flight_};
  last_start_ns_.store(NowNs(), std::memory_order_relaxed);
  want_.store(false, std::memory_order_relaxed);
  stale_.store(0, std::memory_order_relaxed);  // what stale copies cost from now on counts anew

  uint64_t root = 0;
  std::vector<std::byte> directory(alloc::AppendLog::kDirectoryBytes);
  DMX_RETURN_IF_ERROR(ep.Post({fabric::Verb::Read(root_word_, &root, 8),
                               fabric::Verb::Read(log_.directory(), directory.data(),
                                                  alloc::AppendLog::kDirectoryBytes)},
                              fabric::Ordering::kUnordered));
  const std::vector<alloc::AppendLog::Segment> log = log_.Parse(directory.data());
  uint64_t total = 0;
  for (const auto& s : log) total += s.used * layout_.node_bytes;
  if (total > config_.budget_bytes) {
    skipped_.fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }
  auto segments = ReadSegments(ep, log);
  if (!segments.ok()) return segments.status();

  const Snapshot* fresh = new Snapshot(layout_, GlobalAddress::FromRaw(root), std::move(segments).value());
  nodes_.store(fresh->nodes(), std::memory_order_relaxed);
  current_bytes_.store(fresh->bytes(), std::memory_order_relaxed);
  const Snapshot* old = current_.exchange(fresh, std::memory_order_acq_rel);
  refreshes_.fetch_add(1, std::memory_order_relaxed);
  if (old != nullptr) {
    retire.Retire(const_cast<Snapshot*>(old), DeleteSnapshot<Snapshot>, nullptr, old->bytes());
    retire.Reclaim();
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
uint64_t SearchLayerCache<KV>::bytes() const {
  // Callers of Stats hold no epoch guard: the published snapshot's size is kept beside it.
  return current_bytes_.load(std::memory_order_relaxed) + epochs_.pending_bytes();
}

template <tree::KeyValueTraits KV>
typename SearchLayerCache<KV>::Counters SearchLayerCache<KV>::counters() const {
  Counters c;
  c.refreshes = refreshes_.load(std::memory_order_relaxed);
  c.skipped = skipped_.load(std::memory_order_relaxed);
  c.stale_reads = stale_total_.load(std::memory_order_relaxed);
  c.torn_left_out = torn_left_.load(std::memory_order_relaxed);
  c.snapshot_nodes = nodes_.load(std::memory_order_relaxed);
  return c;
}

template class SearchLayerCache<tree::U64BytesKV>;
template class SearchLayerCache<tree::BytesKV>;

}  // namespace dmindex::designs::rftree
