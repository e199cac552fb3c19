// XCache: what one compute node holds of one partition's models (XStore §5.1; docs/XSTORE.md):
// the model set (top model, byte-key prefix, directory address) and the sub-models (page model
// and translation table) it has fetched, shared by the compute node's sessions.
//
// Everything here is immutable once published to the sessions; a newer model set or sub-model
// replaces the pointer (one atomic store) and the old object is retired to the compute node's
// epoch manager (common/epoch.h), freed when no session's operation can still hold it.
//
// Fetching is one-sided: the model word (in the partition's descriptor) names the model set,
// the set's directory word i names sub-model i's blob; both are packed references, so each
// record is one READ of its exact size, validated by its check word and by (epoch, id). A
// fallback RPC's reply also carries the current model word and a retrained blob.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/epoch.h"
#include "designs/xstore/key_model.h"
#include "designs/xstore/pool_format.h"
#include "fabric/endpoint.h"

namespace dmindex::designs::xstore {

struct SubModel {
  uint64_t blob_word = 0;  // the directory word it was fetched by
  SubModelRecord record;
  uint64_t Bytes() const { return record.Bytes(); }
};

template <typename KV>
struct ModelSet {
  uint64_t model_word = 0;
  ModelSetRecord record;
  KeyModel<KV> keys;
  std::unique_ptr<std::atomic<const SubModel*>[]> subs;
  // A lookup saw a leaf that split since sub-model i was trained: the next lookup into it
  // also reads its directory word (and the model word), in the same batch as its leaves.
  std::unique_ptr<std::atomic<uint8_t>[]> suspect;

  // Client memory this set takes: its record, a slot per sub-model and the sub-models
  // fetched into it.
  std::atomic<uint64_t> bytes{0};

  uint32_t models() const { return record.top.models(); }
  ~ModelSet();
};

// Counters of one compute node's lookups and scans in one partition (dmindex.xstore.*).
struct ClientCounters {
  std::atomic<uint64_t> lookups{0};
  std::atomic<uint64_t> leaves_read{0};       // leaves a lookup's prediction read
  std::atomic<uint64_t> speculative_reads{0};  // sibling READs after a split (§5.3.2)
  std::atomic<uint64_t> invalidations{0};     // lookups that met a leaf of another incarnation
  std::atomic<uint64_t> fallbacks{0};         // lookups and scan starts the server finished
  std::atomic<uint64_t> wide_predictions{0};  // fallbacks because the prediction was too wide
  std::atomic<uint64_t> slot_misses{0};       // slot_read ranges that did not decide
  std::atomic<uint64_t> model_fetches{0};     // model sets and sub-models fetched
  std::atomic<uint64_t> model_fetch_bytes{0};
};

template <typename KV>
class ModelCache {
 public:
  explicit ModelCache(GlobalAddress descriptor) : descriptor_(descriptor) {}
  ~ModelCache();
  ModelCache(const ModelCache&) = delete;
  ModelCache& operator=(const ModelCache&) = delete;

  // The model set, fetching it (and, with `prefetch`, every sub-model) if this compute node
  // has none or `newer` (a model word a reply or a READ showed) differs from its own; null if
  // the partition has no model yet. The caller holds an epoch guard.
  Result<const ModelSet<KV>*> Set(fabric::Endpoint& ep, EpochManager::Participant& p, bool prefetch,
                                  uint64_t newer = 0);
  // Sub-model i of `set`, fetched if absent; null if the directory has none.
  Result<const SubModel*> Sub(fabric::Endpoint& ep, EpochManager::Participant& p, const ModelSet<KV>& set, uint32_t i);
  // Installs a blob fetched elsewhere (a fallback reply, or a directory word read with the
  // leaves); false if it does not validate for `set` and sub-model i.
  bool Install(EpochManager::Participant& p, const ModelSet<KV>& set, uint32_t i, uint64_t blob_word,
               std::span<const std::byte> blob);
  // Reads the blob named by `blob_word` and installs it.
  Status Fetch(fabric::Endpoint& ep, EpochManager::Participant& p, const ModelSet<KV>& set, uint32_t i,
               uint64_t blob_word);

  GlobalAddress descriptor() const { return descriptor_; }
  // Client memory of the current model set (retired ones are on their way out).
  uint64_t bytes() const;
  // Sub-models of the current model set (0: none loaded).
  uint32_t models() const;
  ClientCounters& counters() { return counters_; }
  const ClientCounters& counters() const { return counters_; }

 private:
  Result<const ModelSet<KV>*> Load(fabric::Endpoint& ep, EpochManager::Participant& p, uint64_t model_word, bool prefetch);
  Status Prefetch(fabric::Endpoint& ep, EpochManager::Participant& p, const ModelSet<KV>& set);

  const GlobalAddress descriptor_;
  std::atomic<const ModelSet<KV>*> set_{nullptr};
  std::atomic<bool> known_empty_{false};  // the model word read 0 once: ask replies, not READs
  ClientCounters counters_;
};

}  // namespace dmindex::designs::xstore
