#include "designs/xstore/model_cache.h"

#include <algorithm>

#include "common/retry.h"

namespace dmindex::designs::xstore {
namespace {

constexpr uint32_t kMaxPrefetchRead = 4u << 20;  // bytes per READ when fetching a whole set
constexpr size_t kPrefetchBatch = 32;            // READs per round trip

void DeleteSubModel(void* object, void*) { delete static_cast<const SubModel*>(object); }
template <typename KV>
void DeleteSet(void* object, void*) { delete static_cast<const ModelSet<KV>*>(object); }

// What a set takes besides its sub-models: the record and a slot (pointer, flag) per model.
template <typename KV>
uint64_t SetBytes(const ModelSet<KV>& s) {
  return s.record.Encode().size() + uint64_t{s.models()} * (sizeof(void*) + 1);
}

}  // namespace

template <typename KV>
ModelSet<KV>::~ModelSet() {
  for (uint32_t i = 0; subs && i < models(); ++i) delete subs[i].load(std::memory_order_relaxed);
}

template <typename KV>
ModelCache<KV>::~ModelCache() {
  delete set_.load(std::memory_order_relaxed);
}

template <typename KV>
uint64_t ModelCache<KV>::bytes() const {
  const ModelSet<KV>* s = set_.load(std::memory_order_acquire);
  return s == nullptr ? 0 : s->bytes.load(std::memory_order_relaxed);
}

template <typename KV>
uint32_t ModelCache<KV>::models() const {
  const ModelSet<KV>* s = set_.load(std::memory_order_acquire);
  return s == nullptr ? 0 : s->models();
}

template <typename KV>
Result<const ModelSet<KV>*> ModelCache<KV>::Set(fabric::Endpoint& ep, EpochManager::Participant& p,
                                                bool prefetch, uint64_t newer) {
  const ModelSet<KV>* cur = set_.load(std::memory_order_acquire);
  if (cur != nullptr && (newer == 0 || newer == cur->model_word)) return cur;
  if (cur == nullptr && newer == 0 && known_empty_.load(std::memory_order_relaxed)) return nullptr;
  uint64_t word = newer;
  if (word == 0) {
    DMX_RETURN_IF_ERROR(ep.Read(descriptor_ + descriptor::kModelWord, &word, 8));
    if (word == 0) {
      known_empty_.store(true, std::memory_order_relaxed);
      return nullptr;
    }
  }
  return Load(ep, p, word, prefetch);
}

template <typename KV>
Result<const ModelSet<KV>*> ModelCache<KV>::Load(fabric::Endpoint& ep, EpochManager::Participant& p,
                                                 uint64_t word, bool prefetch) {
  const PackedRef ref = PackedRef::Unpack(word, descriptor_.node());
  std::vector<std::byte> image(ref.bytes);
  DMX_RETURN_IF_ERROR(ep.Read(ref.addr, image.data(), ref.bytes));
  auto set = std::make_unique<ModelSet<KV>>();
  // Model sets are never freed or changed: a word that names one names it for good.
  if (!ModelSetRecord::Decode(image.data(), ref.bytes, &set->record))
    return Status::Corruption("xstore: the model set at " + ref.addr.ToString() + " does not validate");
  counters_.model_fetches.fetch_add(1, std::memory_order_relaxed);
  counters_.model_fetch_bytes.fetch_add(ref.bytes, std::memory_order_relaxed);
  const ModelSet<KV>* cur = set_.load(std::memory_order_acquire);
  if (cur != nullptr && cur->record.epoch >= set->record.epoch) return cur;  // as new already
  set->model_word = word;
  set->keys = KeyModel<KV>(set->record.prefix, set->record.alphabet);
  set->subs = std::make_unique<std::atomic<const SubModel*>[]>(set->models());
  set->suspect = std::make_unique<std::atomic<uint8_t>[]>(set->models());
  for (uint32_t i = 0; i < set->models(); ++i) {
    set->subs[i].store(nullptr, std::memory_order_relaxed);
    set->suspect[i].store(0, std::memory_order_relaxed);
  }
  set->bytes.store(SetBytes(*set), std::memory_order_relaxed);
  if (prefetch) DMX_RETURN_IF_ERROR(Prefetch(ep, p, *set));
  cur = set_.load(std::memory_order_acquire);
  for (;;) {
    // Another session got there first with this set or a newer one: use that.
    if (cur != nullptr && cur->record.epoch >= set->record.epoch) return cur;
    if (set_.compare_exchange_weak(cur, set.get(), std::memory_order_acq_rel)) break;
  }
  known_empty_.store(false, std::memory_order_relaxed);
  if (cur != nullptr) p.Retire(const_cast<ModelSet<KV>*>(cur), DeleteSet<KV>, nullptr, cur->bytes.load());
  return set.release();
}

template <typename KV>
Status ModelCache<KV>::Prefetch(fabric::Endpoint& ep, EpochManager::Participant& p, const ModelSet<KV>& set) {
  const uint32_t m = set.models();
  std::vector<uint64_t> words(m);
  DMX_RETURN_IF_ERROR(ep.Read(set.record.directory, words.data(), 8 * m));
  // The blobs of a full training lie side by side: READ runs of adjacent ones at once.
  struct Blob {
    uint32_t model;
    PackedRef ref;
  };
  std::vector<Blob> blobs;
  for (uint32_t i = 0; i < m; ++i)
    if (words[i] != 0) blobs.push_back({i, PackedRef::Unpack(words[i], descriptor_.node())});
  std::sort(blobs.begin(), blobs.end(), [](const Blob& a, const Blob& b) { return a.ref.addr < b.ref.addr; });
  struct Run {
    size_t first, end;
    uint64_t bytes;
  };
  std::vector<Run> runs;
  for (size_t k = 0; k < blobs.size(); ++k) {
    const bool joins = !runs.empty() &&
                       blobs[k - 1].ref.addr + blobs[k - 1].ref.bytes == blobs[k].ref.addr &&
                       runs.back().bytes + blobs[k].ref.bytes <= kMaxPrefetchRead;
    if (joins) {
      runs.back().end = k + 1;
      runs.back().bytes += blobs[k].ref.bytes;
    } else {
      runs.push_back({k, k + 1, blobs[k].ref.bytes});
    }
  }
  uint64_t fetched = 8ull * m;
  for (size_t r0 = 0; r0 < runs.size(); r0 += kPrefetchBatch) {
    const size_t r1 = std::min(runs.size(), r0 + kPrefetchBatch);
    std::vector<std::vector<std::byte>> bufs(r1 - r0);
    std::vector<fabric::Verb> reads;
    for (size_t r = r0; r < r1; ++r) {
      bufs[r - r0].resize(runs[r].bytes);
      reads.push_back(fabric::Verb::Read(blobs[runs[r].first].ref.addr, bufs[r - r0].data(),
                                         static_cast<uint32_t>(runs[r].bytes)));
      fetched += runs[r].bytes;
    }
    DMX_RETURN_IF_ERROR(ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered));
    for (size_t r = r0; r < r1; ++r) {
      uint64_t at = 0;
      for (size_t k = runs[r].first; k < runs[r].end; ++k) {
        // A blob replaced since the directory was read is skipped: fetched on demand later.
        (void)Install(p, set, blobs[k].model, words[blobs[k].model],
                      std::span<const std::byte>(bufs[r - r0].data() + at, blobs[k].ref.bytes));
        at += blobs[k].ref.bytes;
      }
    }
  }
  counters_.model_fetches.fetch_add(1, std::memory_order_relaxed);
  counters_.model_fetch_bytes.fetch_add(fetched, std::memory_order_relaxed);
  return Status::Ok();
}

template <typename KV>
bool ModelCache<KV>::Install(EpochManager::Participant& p, const ModelSet<KV>& set, uint32_t i,
                             uint64_t blob_word, std::span<const std::byte> blob) {
  auto sm = std::make_unique<SubModel>();
  if (!SubModelRecord::Decode(blob.data(), static_cast<uint32_t>(blob.size()), &sm->record) ||
      sm->record.epoch != set.record.epoch || sm->record.id != i)
    return false;
  sm->blob_word = blob_word;
  auto& slot = set.subs[i];
  const SubModel* cur = slot.load(std::memory_order_acquire);
  for (;;) {
    if (cur != nullptr && cur->record.generation >= sm->record.generation) return true;  // as new already
    if (slot.compare_exchange_weak(cur, sm.get(), std::memory_order_acq_rel)) break;
  }
  auto& bytes = const_cast<std::atomic<uint64_t>&>(set.bytes);
  bytes.fetch_add(sm->Bytes(), std::memory_order_relaxed);
  sm.release();
  if (cur != nullptr) {
    bytes.fetch_sub(cur->Bytes(), std::memory_order_relaxed);
    p.Retire(const_cast<SubModel*>(cur), DeleteSubModel, nullptr, cur->Bytes());
  }
  return true;
}

template <typename KV>
Status ModelCache<KV>::Fetch(fabric::Endpoint& ep, EpochManager::Participant& p, const ModelSet<KV>& set,
                             uint32_t i, uint64_t blob_word) {
  const PackedRef ref = PackedRef::Unpack(blob_word, descriptor_.node());
  std::vector<std::byte> blob(ref.bytes);
  DMX_RETURN_IF_ERROR(ep.Read(ref.addr, blob.data(), ref.bytes));
  counters_.model_fetches.fetch_add(1, std::memory_order_relaxed);
  counters_.model_fetch_bytes.fetch_add(ref.bytes, std::memory_order_relaxed);
  if (Install(p, set, i, blob_word, blob)) return Status::Ok();
  return RetryStatus("xstore: sub-model blob replaced while read");
}

template <typename KV>
Result<const SubModel*> ModelCache<KV>::Sub(fabric::Endpoint& ep, EpochManager::Participant& p,
                                            const ModelSet<KV>& set, uint32_t i) {
  RetryBudget budget(retry_limits::kModelFetch, "fetch sub-model");
  for (;;) {
    if (const SubModel* s = set.subs[i].load(std::memory_order_acquire)) return s;
    uint64_t word = 0;
    DMX_RETURN_IF_ERROR(ep.Read(set.record.directory + 8 * uint64_t{i}, &word, 8));
    if (word == 0) return nullptr;
    Status s = Fetch(ep, p, set, i, word);
    if (!IsRetry(s)) {
      DMX_RETURN_IF_ERROR(s);
      continue;
    }
    if (!budget.Spend()) return budget.Exhausted(std::to_string(i));
  }
}

template class ModelCache<tree::U64BytesKV>;
template class ModelCache<tree::BytesKV>;
template struct ModelSet<tree::U64BytesKV>;
template struct ModelSet<tree::BytesKV>;

}  // namespace dmindex::designs::xstore
