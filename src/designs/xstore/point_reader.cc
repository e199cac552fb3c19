#include <algorithm>
#include <cmath>
#include <type_traits>

#include "common/retry.h"
#include "designs/xstore/point_reader.h"

namespace dmindex::designs::xstore {
namespace {

// slot_read: slots read on each side of the predicted ones, for entries that moved by inserts
// and deletes since training.
constexpr uint32_t kSlotSlack = 1;

}  // namespace

template <tree::KeyValueTraits KV>
Status PointReader<KV>::ReadLeaves(Session& s, size_t p, const Prediction& pred, bool refresh, uint64_t* dir_word,
                              uint64_t* model_word) const {
  const auto& layout = c_.tree->layout();
  const uint32_t nb = layout.node_bytes;
  const GlobalAddress descriptor = c_.partitions[p].descriptor;
  const auto& table = pred.sub->record.table;
  s.reads.clear();
  s.leaves.resize(size_t{pred.pages.size()} * nb);
  std::vector<fabric::Verb> verbs;
  for (uint32_t l = pred.pages.first; l <= pred.pages.last; ++l) {
    const TableEntry e = TableEntry::Unpack(table[l]);
    LeafRead r;
    r.addr = GlobalAddress(descriptor.node(), e.offset);
    r.page = l;
    std::byte* image = s.leaves.data() + size_t{l - pred.pages.first} * nb;
    if constexpr (std::is_same_v<KV, tree::U64BytesKV>) {
      if (c_.options.slot_read) {
        // The slots where the predicted positions fall in this leaf, for its count at training
        // (key j of c at l + (j + 0.5) / c: learned/page_model.h).
        using L = tree::FixedLayout<KV>;
        const double c = std::max<uint32_t>(e.count, 1);
        const double lo = std::clamp(pred.low - l, 0.0, 1.0), hi = std::clamp(pred.high - l, 0.0, 1.0);
        const double max_slot = layout.leaf_capacity - 1;
        r.first_slot = static_cast<uint32_t>(std::clamp(std::floor(lo * c - 0.5) - kSlotSlack, 0.0, max_slot));
        r.last_slot = static_cast<uint32_t>(std::clamp(std::ceil(hi * c - 0.5) + kSlotSlack, 0.0, max_slot));
        r.partial = true;
        // The header, and the slots in a second READ unless they follow it (slot 0 on): then
        // one READ of both, the same bytes in one verb.
        const uint32_t at = layout.SlotOffset(r.first_slot), end = layout.SlotOffset(r.last_slot + 1);
        if (r.first_slot == 0) {
          verbs.push_back(fabric::Verb::Read(r.addr, image, end));
        } else {
          verbs.push_back(fabric::Verb::Read(r.addr, image, L::kHeaderBytes));
          verbs.push_back(fabric::Verb::Read(r.addr + at, image + at, end - at));
        }
      }
    }
    if (!r.partial) verbs.push_back(fabric::Verb::Read(r.addr, image, nb));
    s.reads.push_back(r);
  }
  if (refresh) {
    verbs.push_back(fabric::Verb::Read(pred.set->record.directory + 8 * uint64_t{pred.model}, dir_word, 8));
    verbs.push_back(fabric::Verb::Read(descriptor + descriptor::kModelWord, model_word, 8));
  }
  DMX_RETURN_IF_ERROR(s.tree->ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kUnordered));
  const auto& validator = c_.tree->shared().validator;
  for (size_t k = 0; k < s.reads.size(); ++k) {
    LeafRead& r = s.reads[k];
    std::byte* image = s.leaves.data() + k * nb;
    if constexpr (std::is_same_v<KV, tree::U64BytesKV>) {
      if (r.partial) {
        // The header and each slot read that is in use, against the header's version: one
        // version's content (a sorted leaf changes only by whole writes). The two READs may
        // land on either side of a write: then the slots fail against the header's version.
        bool valid = tree::FixedHeaderCodec<KV>::Read(image, &r.h, validator.validating()) && r.h.is_leaf() &&
                !r.h.unsorted();
        for (uint32_t slot = r.first_slot; valid && validator.validating() && slot <= r.last_slot && slot < r.h.count; ++slot)
          valid = validator.leaf().ValidSlot(image, r.h.version, slot);
        if (valid) continue;
        s.tree->CountRetry();  // read it whole, as any torn image
        r.partial = false;
        DMX_RETURN_IF_ERROR(c_.tree->reader().Read(*s.tree, r.addr, image, &r.h));
        continue;
      }
    }
    if (!validator.Decode(image, &r.h)) DMX_RETURN_IF_ERROR(c_.tree->reader().Read(*s.tree, r.addr, image, &r.h));
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
bool PointReader<KV>::Decides(const std::byte* image, const LeafRead& r, KeyRef key, int* slot) const {
  *slot = -1;
  if constexpr (std::is_same_v<KV, tree::U64BytesKV>) {
    const auto& leaf = c_.tree->shared().validator.leaf();
    const uint32_t count = r.h.count;
    if (count == 0) return true;
    if (r.first_slot >= count) return false;  // the entries end before the slots read
    const uint32_t last = std::min(r.last_slot, count - 1);
    for (uint32_t i = r.first_slot; i <= last; ++i)
      if (leaf.KeyAt(image, i) == key) {
        *slot = static_cast<int>(i);
        return true;
      }
    // Sorted: the key is absent if the slots read bracket it.
    return (r.first_slot == 0 || leaf.KeyAt(image, r.first_slot) < key) && (last == count - 1 || key < leaf.KeyAt(image, last));
  } else {
    (void)image, (void)r, (void)key;
    return false;
  }
}

template <tree::KeyValueTraits KV>
Status PointReader<KV>::Lookup(Session& s, KeyRef key, Value* value) const {
  EpochGuard guard(*s.epoch);
  const size_t p = c_.PartitionOf(key);
  ClientCounters& counters = c_.Cache(s, p).counters();
  counters.lookups.fetch_add(1, std::memory_order_relaxed);
  const auto& leaf = c_.tree->shared().validator.leaf();
  const uint32_t nb = c_.tree->layout().node_bytes;
  RetryBudget restarts(retry_limits::kTreeRestarts, "look up the value of");
  for (;;) {
    const auto started = runtime::Now();  // before the leaves are READ (value blocks' lease)
    Prediction pred;
    DMX_RETURN_IF_ERROR(c_.Predict(s, p, key, &pred));
    if (pred.sub == nullptr) return c_.FallbackLookup(s, p, pred, key, value);
    if (pred.pages.size() > c_.options.max_read_leaves) {
      counters.wide_predictions.fetch_add(1, std::memory_order_relaxed);
      return c_.FallbackLookup(s, p, pred, key, value);
    }
    // A sub-model that met a split reads its directory word and the model word along.
    const bool suspect = pred.set->suspect[pred.model].load(std::memory_order_relaxed) != 0;
    uint64_t dir_word = 0, model_word = 0;
    DMX_RETURN_IF_ERROR(ReadLeaves(s, p, pred, suspect, &dir_word, &model_word));
    counters.leaves_read.fetch_add(s.reads.size(), std::memory_order_relaxed);
    // The image that decides: the last one whose low fence is at or below the key (low fences
    // never change); a leaf of another incarnation split since the model was trained.
    int at = -1;
    bool split = false;
    for (size_t k = 0; k < s.reads.size(); ++k) {
      const TableEntry e = TableEntry::Unpack(pred.sub->record.table[s.reads[k].page]);
      split = split || !TableEntry::SameIncarnation(e.incarnation, s.reads[k].h.incarnation);
      if (!(key < s.reads[k].h.low)) at = static_cast<int>(k);
    }
    if (split) {
      counters.invalidations.fetch_add(1, std::memory_order_relaxed);
      pred.set->suspect[pred.model].store(1, std::memory_order_relaxed);
    }
    if (suspect) DMX_RETURN_IF_ERROR(Refresh(s, p, pred, dir_word, model_word));
    if (at < 0) return c_.FallbackLookup(s, p, pred, key, value);  // not bracketed: let the server answer
    LeafRead r = s.reads[static_cast<size_t>(at)];
    std::byte* image = s.leaves.data() + static_cast<size_t>(at) * nb;
    // Keys right of the high fence moved to a right sibling by a split (speculation, §5.3.2).
    for (uint32_t hop = 0; r.h.BeyondHigh(key) && hop < c_.options.speculate && !r.h.sibling.is_null(); ++hop) {
      counters.speculative_reads.fetch_add(1, std::memory_order_relaxed);
      r.addr = r.h.sibling;
      r.partial = false;
      DMX_RETURN_IF_ERROR(c_.tree->reader().Read(*s.tree, r.addr, image, &r.h));
    }
    if (!r.h.is_leaf() || !r.h.Covers(key)) return c_.FallbackLookup(s, p, pred, key, value);
    int slot = -1;
    if (r.partial && !Decides(image, r, key, &slot)) {
      counters.slot_misses.fetch_add(1, std::memory_order_relaxed);
      DMX_RETURN_IF_ERROR(c_.tree->reader().Read(*s.tree, r.addr, image, &r.h));
      r.partial = false;
      if (!r.h.Covers(key)) return c_.FallbackLookup(s, p, pred, key, value);  // split in between
    }
    if (!r.partial) slot = leaf.Find(image, r.h, key);
    if (slot < 0) return Status::NotFound();
    if constexpr (KV::kValueBlocks) {
      const tree::ValueBlockRef ref = leaf.BlockAt(image, r.h, static_cast<uint32_t>(slot));
      if (!ref.is_null()) {
        typename tree::ValueStore<KV>::Fetch fetch{ref, KV::Owner(key), value};
        bool ok = false;
        DMX_RETURN_IF_ERROR(c_.tree->reader().values().FetchAll(*s.tree, {&fetch, 1}, started, &ok));
        if (ok) return Status::Ok();
        s.tree->CountRetry();  // replaced, or read past the lease: look up again
        if (!restarts.Spend()) return restarts.Exhausted(tree::DescribeKey(key));
        continue;
      }
    }
    *value = leaf.ValueAt(image, r.h, static_cast<uint32_t>(slot));
    return Status::Ok();
  }
}

template <tree::KeyValueTraits KV>
Status PointReader<KV>::Refresh(Session& s, size_t p, const Prediction& pred, uint64_t dir_word, uint64_t model_word) const {
  ModelCache<KV>& cache = c_.Cache(s, p);
  if (model_word != 0 && model_word != pred.set->model_word)  // a new model set (an expansion)
    return cache.Set(s.tree->ep, *s.epoch, c_.options.prefetch, model_word).status();
  if (dir_word == 0 || dir_word == pred.sub->blob_word) return Status::Ok();  // not retrained yet
  Status fetched = cache.Fetch(s.tree->ep, *s.epoch, *pred.set, pred.model, dir_word);
  if (IsRetry(fetched)) return Status::Ok();  // replaced again meanwhile: the next lookup tries
  DMX_RETURN_IF_ERROR(fetched);
  pred.set->suspect[pred.model].store(0, std::memory_order_relaxed);
  return Status::Ok();
}

template class PointReader<tree::U64BytesKV>;
template class PointReader<tree::BytesKV>;

}  // namespace dmindex::designs::xstore
