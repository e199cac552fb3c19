// The memory server's model training for one partition (XStore §5.1, §5.3.2; docs/XSTORE.md):
//
//  * a model set: the top model over every key's model key, M sub-models, each a page model
//    (learned/page_model.h) over the leaves overlapping its routing interval, trained on
//    leaf-granular positions with the leaves' bounds as points (§5.2.3 made complete), and its
//    translation table: per logical leaf the leaf's address, its incarnation and entry count
//    as read in the same validated image as its keys (trap T6: an incarnation newer than the
//    keys would hide a split);
//  * a split queues the retraining of the sub-models whose intervals cover the leaf's old
//    range; a retrained sub-model is a new blob published by one WRITE of its directory word
//    (a client never sees half of it); a split during a retraining queues it again;
//  * when the keys per sub-model pass `expand_at`, a new model set with twice the sub-models
//    is trained while the old one keeps serving, then published by one WRITE of the model
//    word; sub-models touched by splits meanwhile are queued against the new set.
//
// Background work runs on at most `train_threads` threads (runtime::Thread), started when
// work is queued and ended when the queue is empty, so an idle server runs none. Quiesce
// waits for the queue to drain and joins them (an index's Close asks for it, so a run in
// simulated time ends with no thread left over); Stop drops what is queued and joins.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "alloc/node_allocator.h"
#include "common/runtime.h"
#include "designs/xstore/key_model.h"
#include "designs/xstore/pool_format.h"
#include "tree/remote_tree.h"
#include "tree/retired_blocks.h"

namespace dmindex::designs::xstore {

template <tree::KeyValueTraits KV>
class Trainer {
 public:
  using Key = typename KV::Key;
  using Tree = tree::RemoteTree<KV>;
  using Ctx = tree::TreeContext<KV>;

  // `tree`'s leaves, the descriptor's model word and counters; records from `records` (the
  // memory node's allocator, shared).
  Trainer(Tree& tree, GlobalAddress descriptor, const PartitionConfig& config, alloc::NodeAllocator& records);
  ~Trainer() { Stop(); }

  // Trains and publishes a model set over every leaf now, with keys_per_model keys per
  // sub-model (after a bulk load). Runs on the calling thread. Ok with no model if the tree
  // holds no key.
  Status TrainAll();
  // The tree's split observer: [low, high) was one leaf, [separator, high) moved right.
  void OnSplit(const Key& low, const Key& separator, const Key& high);
  // Waits until nothing is queued or running and joins the threads.
  void Quiesce();
  // Drops what is queued, waits for what runs, joins the threads; nothing starts afterwards.
  void Stop();
  // The current directory word of sub-model `i` if `model_word` names the current model
  // set, else 0 (a fallback's reply ships the blob when the client's copy is older).
  uint64_t DirWord(uint64_t model_word, uint32_t i);
  // Bytes of the published models and of those being built.
  uint64_t RecordBytes() const { return record_bytes_.load(std::memory_order_relaxed); }

 private:
  // A model set as the server keeps it: the published record and, per sub-model, its
  // directory word, generation, fitted keys and retraining state (under mu_).
  struct SetState {
    ModelSetRecord record;
    KeyModel<KV> keys;
    GlobalAddress addr;
    uint64_t model_word = 0;
    std::vector<uint64_t> dir_words;
    std::vector<uint64_t> generation;
    std::vector<uint64_t> fitted;
    std::vector<uint8_t> dirty, running;
    uint64_t keys_total = 0;
  };
  struct Task {
    enum Kind { kRetrain, kInitial, kExpand } kind = kRetrain;
    std::shared_ptr<SetState> set;  // kRetrain: the set the sub-model belongs to
    uint32_t model = 0;
  };
  // One leaf as training read it: its address, incarnation, entry count, the model keys it
  // can hold and (as an index range into the caller's vector) its keys.
  struct Leaf {
    GlobalAddress addr;
    uint64_t incarnation = 0;
    uint32_t count = 0;
    Key low, high;
    size_t first = 0, end = 0;
  };

  // Reads the leaves from the one covering `from` rightwards while `more(low)` holds; keys
  // appended to *keys.
  template <typename More>
  Status ReadLeaves(Ctx& c, const Key& from, More&& more, std::vector<Leaf>* leaves, std::vector<Key>* keys) const;
  // A model set with `models` sub-models (0: from the key count) over every leaf, written to
  // the pool (not published). nullptr with Ok if the tree holds no key.
  Result<std::shared_ptr<SetState>> BuildSet(Ctx& c, uint32_t models, uint64_t epoch);
  // One sub-model of `set` over `leaves` (those overlapping its interval), written as a blob;
  // returns its directory word.
  Result<uint64_t> WriteSubModel(Ctx& c, const SetState& set, uint32_t i, uint64_t generation,
                                 std::span<const Leaf> leaves, std::span<const learned::ModelKey> xs,
                                 uint64_t* fitted);
  // Publishes a built set (model word), makes it current and queues what splits made stale
  // while it was built.
  Status Publish(Ctx& c, std::shared_ptr<SetState> set, bool expansion);
  Status FullTraining(Ctx& c, typename Task::Kind kind);
  Status Retrain(Ctx& c, const std::shared_ptr<SetState>& set, uint32_t i);
  // Marks the sub-models of `set` covering [low, high) stale and queues them (under mu_).
  void MarkStaleLocked(SetState& set, const Key& low, const Key& high);
  void EnqueueLocked(Task t);
  void Work();
  void ReapLocked();
  Result<GlobalAddress> Store(Ctx& c, const std::vector<std::byte>& record);
  // A replaced blob, reused once its grace period is over (a reader validates what it reads).
  void Retire(uint64_t blob_word);
  void Count(Ctx& c, uint32_t counter);

  Tree& tree_;
  const GlobalAddress descriptor_;
  const PartitionConfig config_;
  const uint16_t node_;
  alloc::NodeAllocator& records_;  // model sets, directories, blobs
  tree::RetiredBlocks retired_;    // replaced blobs
  std::atomic<uint64_t> record_bytes_{0};

  runtime::Mutex full_mu_;  // one full training at a time
  runtime::Mutex mu_;
  runtime::CondVar idle_;
  std::shared_ptr<SetState> current_;
  bool initial_queued_ = false, expansion_queued_ = false, full_running_ = false;
  std::vector<std::pair<Key, Key>> pending_;  // splits while a full training runs
  std::deque<Task> queue_;
  struct Worker {
    runtime::Thread thread;
    bool finished = false;
  };
  std::vector<std::unique_ptr<Worker>> workers_;
  uint32_t running_ = 0;
  bool stopped_ = false;
};

}  // namespace dmindex::designs::xstore
