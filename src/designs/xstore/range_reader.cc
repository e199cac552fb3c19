#include "designs/xstore/range_reader.h"

#include <algorithm>

#include "common/retry.h"

namespace dmindex::designs::xstore {
namespace {

constexpr size_t kMaxBatchLeaves = 32;  // as the tree core's scans (leaf_scanner.cc)

}  // namespace

template <tree::KeyValueTraits KV>
Status RangeReader<KV>::PredictRun(Session& s, size_t p, KeyRef cursor, size_t want,
                                   std::vector<GlobalAddress>* run) const {
  run->clear();
  typename State::Prediction pred;
  DMX_RETURN_IF_ERROR(c_.Predict(s, p, cursor, &pred));
  if (pred.sub == nullptr || pred.pages.size() > c_.options.max_read_leaves) {
    auto leaf = c_.FallbackLocate(s, p, pred, cursor);
    if (leaf.status().IsNotFound()) return Status::Ok();
    if (!leaf.ok()) return leaf.status();
    run->push_back(*leaf);
    return Status::Ok();
  }
  // The run goes on past the predicted sub-model's pages into the tables of the sub-models
  // after it that this compute node holds already (no fetch: a missing one ends the run, the
  // next round predicts from there), so a scan's batch does not end where a sub-model's
  // interval does. A leaf that straddles two intervals is in both tables: it is taken once.
  // Stale entries cost nothing but bytes: ScanPartition takes images only while each
  // continues the previous one by its sibling link.
  const uint16_t node = c_.NodeOf(p);
  const ModelSet<KV>& set = *pred.set;
  size_t entries = 0;
  for (uint32_t model = pred.model; model < set.models() && run->size() < kMaxBatchLeaves; ++model) {
    const SubModel* sub = model == pred.model ? pred.sub : set.subs[model].load(std::memory_order_acquire);
    if (sub == nullptr) break;
    const auto& table = sub->record.table;
    for (uint32_t l = model == pred.model ? pred.pages.first : 0; l < table.size() && run->size() < kMaxBatchLeaves;
         ++l) {
      const bool predicted = model == pred.model && l <= pred.pages.last;  // the cursor lies in one
      if (!predicted && entries >= want) return Status::Ok();
      const TableEntry e = TableEntry::Unpack(table[l]);
      const GlobalAddress leaf(node, e.offset);
      if (!run->empty() && run->back() == leaf) continue;
      run->push_back(leaf);
      if (!predicted) entries += e.count;
    }
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status RangeReader<KV>::ScanPartition(Session& s, size_t p, const tree::ScanRange<KV>& range, size_t count,
                                      std::vector<tree::LeafEntry<KV>>* out) const {
  const auto& reader = c_.tree->reader();
  const auto& validator = c_.tree->shared().validator;
  const uint32_t nb = c_.tree->layout().node_bytes;
  Key cursor(range.start);
  std::vector<GlobalAddress> run;
  std::vector<typename State::Header> heads;
  // Every round takes at least one leaf or ends the scan: bounded by the leaves in range.
  RetryBudget rounds(retry_limits::kLevelHops, "scan");
  for (;;) {
    if (!rounds.Spend()) return rounds.Exhausted(tree::DescribeKey(range.start));
    DMX_RETURN_IF_ERROR(PredictRun(s, p, cursor, count - out->size(), &run));
    if (run.empty()) return Status::Ok();
    s.leaves.resize(run.size() * nb);
    std::vector<fabric::Verb> reads;
    for (size_t k = 0; k < run.size(); ++k) reads.push_back(fabric::Verb::Read(run[k], s.leaves.data() + k * nb, nb));
    DMX_RETURN_IF_ERROR(s.tree->ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered));
    heads.assign(run.size(), {});
    int at = -1;  // the last image whose low fence is at or below the cursor
    for (size_t k = 0; k < run.size(); ++k) {
      std::byte* image = s.leaves.data() + k * nb;
      if (!validator.Decode(image, &heads[k])) DMX_RETURN_IF_ERROR(reader.Read(*s.tree, run[k], image, &heads[k]));
      if (!(cursor < heads[k].low)) at = static_cast<int>(k);
    }
    if (at < 0) {  // not bracketed by the prediction: the server names the leaf
      auto leaf = c_.FallbackLocate(s, p, {}, cursor);
      if (leaf.status().IsNotFound()) return Status::Ok();
      if (!leaf.ok()) return leaf.status();
      run.assign(1, *leaf);
      heads.assign(1, {});
      DMX_RETURN_IF_ERROR(reader.Read(*s.tree, *leaf, s.leaves.data(), &heads[0]));
      at = 0;
    }
    // Take the images from there while each continues the previous one.
    GlobalAddress next = run[static_cast<size_t>(at)];
    bool broken = false, linked = false;  // linked: `next` is the sibling of a leaf taken
    for (size_t k = static_cast<size_t>(at); k < run.size(); ++k) {
      const auto& h = heads[k];
      if (run[k] != next || !h.is_leaf() || h.BeyondHigh(cursor)) {
        // A split since the table was trained: the cursor lies right of this image.
        if (run[k] == next && h.is_leaf()) next = h.sibling;
        broken = true;
        break;
      }
      if (reader.TakeLeaf(*s.tree, s.leaves.data() + k * nb, h, range, &cursor, count, out)) return Status::Ok();
      next = h.sibling;
      linked = true;
    }
    if (!broken) continue;  // the batch is used up: predict again from the cursor
    // The leaf holding the cursor: `next` itself after a leaf taken (its low fence is the
    // cursor), else at most `speculate` sibling links right of the predicted leaf (a stale
    // model may predict a leaf far left), then the memory server names it.
    for (uint32_t hops = 0;; ++hops) {
      if (!linked && hops >= c_.options.speculate) {
        auto leaf = c_.FallbackLocate(s, p, {}, cursor);
        if (leaf.status().IsNotFound()) return Status::Ok();
        if (!leaf.ok()) return leaf.status();
        next = *leaf;
        linked = true;
      }
      if (next.is_null()) return Status::Ok();
      typename State::Header h;
      DMX_RETURN_IF_ERROR(reader.Read(*s.tree, next, s.leaves.data(), &h));
      if (!h.is_leaf() || cursor < h.low)
        return Status::Corruption("xstore scan: leaf " + next.ToString() + " does not continue the scan at " +
                                  tree::DescribeKey(cursor));
      if (h.BeyondHigh(cursor)) {  // split since: further right
        next = h.sibling;
        continue;
      }
      if (reader.TakeLeaf(*s.tree, s.leaves.data(), h, range, &cursor, count, out)) return Status::Ok();
      break;
    }
  }
}

template <tree::KeyValueTraits KV>
Status RangeReader<KV>::Scan(Session& s, const tree::ScanRange<KV>& range, size_t count,
                             std::vector<tree::LeafEntry<KV>>* out) const {
  out->clear();
  if (count == 0) return Status::Ok();
  EpochGuard guard(*s.epoch);
  const size_t partitions = c_.partitions.size();
  RetryBudget restarts(retry_limits::kTreeRestarts, "scan the values from");
  for (;;) {
    const auto started = runtime::Now();  // before the first leaf is READ (value blocks' lease)
    out->clear();
    tree::ScanRange<KV> r = range;
    for (size_t p = c_.PartitionOf(range.start); p < partitions; ++p) {
      // This partition's part of the range: up to the next one's low boundary.
      const bool more = p + 1 < partitions && KV::Below(c_.partitions[p + 1].low, range.end);
      r.end = more ? c_.partitions[p + 1].low : range.end;
      DMX_RETURN_IF_ERROR(ScanPartition(s, p, r, count, out));
      if (out->size() >= count || !more) break;
      r.start = c_.partitions[p + 1].low;
      r.after_start = false;
    }
    if constexpr (!KV::kValueBlocks) {
      return Status::Ok();
    } else {
      std::vector<typename tree::ValueStore<KV>::Fetch> fetches;
      for (auto& e : *out)
        if (!e.block.is_null()) fetches.push_back({e.block, KV::Owner(e.key), &e.value});
      bool ok = true;
      DMX_RETURN_IF_ERROR(c_.tree->reader().values().FetchAll(*s.tree, fetches, started, &ok));
      if (ok) {
        for (auto& e : *out) e.block = {};
        return Status::Ok();
      }
      s.tree->CountRetry();  // a value replaced, or read past the lease: scan again
      if (!restarts.Spend()) return restarts.Exhausted(tree::DescribeKey(range.start));
    }
  }
}

template class RangeReader<tree::U64BytesKV>;
template class RangeReader<tree::BytesKV>;

}  // namespace dmindex::designs::xstore
