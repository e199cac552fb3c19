#include "tree/leaf_scanner.h"

#include <algorithm>

#include "common/retry.h"

namespace dmindex::tree {
namespace {

constexpr size_t kMaxBatchLeaves = 32;

}  // namespace

template <KeyValueTraits KV>
size_t LeafScanner<KV>::LeavesFor(const Ctx& c, size_t count) const {
  size_t per_leaf = t_.validator.leaf().EntriesPerLeaf(t_.options.bulk_fill);
  if (per_leaf == 0) per_leaf = c.LeafEntriesEstimate();  // no fixed capacity: as observed
  return std::min(kMaxBatchLeaves, 1 + (count + per_leaf - 1) / per_leaf);
}

template <KeyValueTraits KV>
Status LeafScanner<KV>::Scan(Ctx& c, const ScanRange<KV>& range, size_t count,
                             std::vector<LeafEntry<KV>>* out) const {
  if constexpr (!KV::kValueBlocks) {
    return ScanLeaves(c, range, count, out);
  } else {
    std::vector<typename ValueStore<KV>::Fetch> fetches;
    RetryBudget restarts(retry_limits::kTreeRestarts, "scan the values from");
    for (;;) {
      const auto started = runtime::Now();  // before the first leaf is READ
      DMX_RETURN_IF_ERROR(ScanLeaves(c, range, count, out));
      fetches.clear();
      for (auto& e : *out)
        if (!e.block.is_null()) fetches.push_back({e.block, KV::Owner(e.key), &e.value});
      bool ok = true;
      DMX_RETURN_IF_ERROR(reader_.values().FetchAll(c, fetches, started, &ok));
      if (ok) {
        for (auto& e : *out) e.block = {};
        return Status::Ok();
      }
      c.CountRetry();  // a value replaced, or read past the lease: scan again
      if (!restarts.Spend()) return restarts.Exhausted(DescribeKey(range.start));
    }
  }
}

template <KeyValueTraits KV>
Status LeafScanner<KV>::ScanLeaves(Ctx& c, const ScanRange<KV>& range, size_t count,
                                   std::vector<LeafEntry<KV>>* out) const {
  const KeyRef start = range.start;
  out->clear();
  if (count == 0) return Status::Ok();
  RoutingCache<KV>* cache = c.cn.cache.get();
  typename RoutingCache<KV>::Hit hit;
  std::vector<GlobalAddress> run;
  if (cache == nullptr || !cache->FindLeafRun(start, range.end, LeavesFor(c, count), &hit, &run))
    return reader_.Scan(c, range, count, out);

  const uint32_t nb = t_.layout.node_bytes;
  c.scan_buf.resize(run.size() * nb);
  std::vector<fabric::Verb> reads;
  for (size_t i = 0; i < run.size(); ++i)
    reads.push_back(fabric::Verb::Read(run[i], c.scan_buf.data() + i * nb, nb));
  DMX_RETURN_IF_ERROR(c.ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered));

  Key cursor(start);
  GlobalAddress next = run.front();
  for (size_t i = 0; i < run.size(); ++i) {
    std::byte* image = c.scan_buf.data() + i * nb;
    NodeHeader<KV> h;
    if (!t_.validator.Decode(image, &h)) {  // torn: read this one again, alone
      c.CountRetry();
      DMX_RETURN_IF_ERROR(reader_.Read(c, run[i], image, &h));
    }
    const bool linked = run[i] == next && !h.dead() && h.level == 0 && h.Covers(cursor);
    if (!linked) {
      // The cached level-1 node is outdated (a split, or a stale entry): tell the cache and
      // go on along sibling links (or from the root if not even the first leaf fits).
      cache->MovedRight(hit, start, 1);
      if (i == 0) {
        out->clear();
        return reader_.Scan(c, range, count, out);
      }
      return reader_.ScanFrom(c, next, range, cursor, count, out);
    }
    if (reader_.TakeLeaf(c, image, h, range, &cursor, count, out)) return Status::Ok();
    next = h.sibling;
  }
  return reader_.ScanFrom(c, next, range, cursor, count, out);
}

template class LeafScanner<U64BytesKV>;
template class LeafScanner<U64KV>;
template class LeafScanner<BytesKV>;

}  // namespace dmindex::tree
