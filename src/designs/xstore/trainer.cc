#include "designs/xstore/trainer.h"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace dmindex::designs::xstore {
namespace {

constexpr uint32_t kMaxModels = 1u << 20;  // a directory of 8 MiB: within a 32 MiB chunk
// Replaced blobs are reused after this long; a client that read a directory word before the
// replacement and the blob after its reuse sees another sub-model and reads the word again.
constexpr auto kBlobGrace = std::chrono::milliseconds(100);

}  // namespace

template <tree::KeyValueTraits KV>
Trainer<KV>::Trainer(Tree& tree, GlobalAddress descriptor, const PartitionConfig& config,
                     alloc::NodeAllocator& records)
    : tree_(tree), descriptor_(descriptor), config_(config), node_(descriptor.node()), records_(records),
      retired_(kBlobGrace) {}

template <tree::KeyValueTraits KV>
template <typename More>
Status Trainer<KV>::ReadLeaves(Ctx& c, const Key& from, More&& more, std::vector<Leaf>* leaves,
                               std::vector<Key>* keys) const {
  typename tree::TreeReader<KV>::Found f;
  DMX_RETURN_IF_ERROR(tree_.reader().Descend(c, from, 0, c.node(), &f));
  if (f.reach == tree::TreeReader<KV>::Reach::kEmpty) return Status::Ok();
  GlobalAddress addr = f.addr;
  tree::NodeHeader<KV> h = f.h;
  std::vector<tree::LeafEntry<KV>> entries;
  for (;;) {
    // Keys, incarnation and count from one validated image (trap T6).
    entries.clear();
    tree_.shared().validator.leaf().Collect(c.node(), h, &entries);
    Leaf leaf{addr, h.incarnation, static_cast<uint32_t>(entries.size()), h.low, h.high, keys->size(), 0};
    for (auto& e : entries) keys->push_back(std::move(e.key));
    leaf.end = keys->size();
    leaves->push_back(std::move(leaf));
    // The next leaf's low fence is this image's high one (leaves never merge).
    if (h.sibling.is_null() || !more(h.high)) return Status::Ok();
    addr = h.sibling;
    DMX_RETURN_IF_ERROR(tree_.reader().Read(c, addr, c.node(), &h));
  }
}

template <tree::KeyValueTraits KV>
Result<GlobalAddress> Trainer<KV>::Store(Ctx& c, const std::vector<std::byte>& record) {
  retired_.Reclaim(records_);
  auto addr = records_.AllocateOn(c.ep, node_, static_cast<uint32_t>(record.size()));
  if (!addr.ok()) return addr.status();
  record_bytes_.fetch_add(record.size(), std::memory_order_relaxed);
  DMX_RETURN_IF_ERROR(c.ep.Write(*addr, record.data(), static_cast<uint32_t>(record.size())));
  return *addr;
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::Retire(uint64_t blob_word) {
  const PackedRef r = PackedRef::Unpack(blob_word, node_);
  retired_.Retire(r.addr, r.bytes);
  record_bytes_.fetch_sub(r.bytes, std::memory_order_relaxed);
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::Count(Ctx& c, uint32_t counter) {
  uint64_t old = 0;
  (void)c.ep.Faa(descriptor_ + counter, 1, &old);  // a statistic: its failure fails nothing
}

template <tree::KeyValueTraits KV>
Result<uint64_t> Trainer<KV>::WriteSubModel(Ctx& c, const SetState& set, uint32_t i, uint64_t generation,
                                            std::span<const Leaf> leaves,
                                            std::span<const learned::ModelKey> xs, uint64_t* fitted) {
  const auto interval = set.record.top.Serves(i);
  std::vector<learned::PageSample> pages;
  pages.reserve(leaves.size());
  SubModelRecord r;
  r.epoch = set.record.epoch;
  r.id = i;
  r.generation = generation;
  for (const Leaf& l : leaves) {
    pages.push_back({set.keys(l.low), set.keys.High(l.high), xs.subspan(l.first, l.end - l.first)});
    r.table.push_back(TableEntry::Pack(l.addr, l.incarnation, l.count));
  }
  std::vector<learned::Point> points;
  r.model = learned::PageModel::Train(interval.first, interval.last, pages, &points, fitted);
  r.keys = *fitted;
  auto addr = Store(c, r.Encode());
  if (!addr.ok()) return addr.status();
  return PackedRef::Pack(*addr, r.Bytes());
}

template <tree::KeyValueTraits KV>
Result<std::shared_ptr<typename Trainer<KV>::SetState>> Trainer<KV>::BuildSet(Ctx& c, uint32_t models,
                                                                               uint64_t epoch) {
  std::vector<Leaf> leaves;
  std::vector<Key> keys;
  DMX_RETURN_IF_ERROR(ReadLeaves(c, Key(KV::kNegInf), [](const Key&) { return true; }, &leaves, &keys));
  if (keys.empty()) return std::shared_ptr<SetState>();
  auto set = std::make_shared<SetState>();
  set->keys = KeyModel<KV>::Fitted(keys);
  std::vector<learned::ModelKey> xs(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) xs[k] = set->keys(keys[k]);
  const uint64_t per_model = std::max<uint32_t>(1, config_.keys_per_model);
  if (models == 0) models = static_cast<uint32_t>(std::min<uint64_t>(kMaxModels, (xs.size() + per_model - 1) / per_model));
  models = std::clamp<uint32_t>(models, 1, kMaxModels);
  set->record.epoch = epoch;
  set->record.top = learned::TopModel::Train(xs, models, config_.top_segments);
  set->record.prefix = set->keys.prefix();
  set->record.alphabet = set->keys.alphabet();
  set->record.keys = xs.size();
  set->dir_words.assign(models, 0);
  set->generation.assign(models, 1);
  set->fitted.assign(models, 0);
  set->dirty.assign(models, 0);
  set->running.assign(models, 0);
  // Each sub-model's pages: the leaves overlapping its interval (intervals ascend, so the
  // first overlapping leaf only moves right).
  size_t begin = 0;
  for (uint32_t i = 0; i < models; ++i) {
    const auto interval = set->record.top.Serves(i);
    if (interval.empty) continue;
    while (begin + 1 < leaves.size() && set->keys.High(leaves[begin].high) < interval.first) ++begin;
    size_t end = begin;
    while (end < leaves.size() && set->keys(leaves[end].low) <= interval.last) ++end;
    end = std::max(end, begin + 1);
    auto word = WriteSubModel(c, *set, i, 1, std::span<const Leaf>(leaves).subspan(begin, end - begin), xs,
                              &set->fitted[i]);
    if (!word.ok()) return word.status();
    set->dir_words[i] = *word;
    set->keys_total += set->fitted[i];
  }
  std::vector<std::byte> dir(8 * size_t{models});
  std::memcpy(dir.data(), set->dir_words.data(), dir.size());
  auto dir_addr = Store(c, dir);
  if (!dir_addr.ok()) return dir_addr.status();
  set->record.directory = *dir_addr;
  const std::vector<std::byte> record = set->record.Encode();
  auto addr = Store(c, record);
  if (!addr.ok()) return addr.status();
  set->addr = *addr;
  set->model_word = PackedRef::Pack(*addr, static_cast<uint32_t>(record.size()));
  return set;
}

template <tree::KeyValueTraits KV>
Status Trainer<KV>::Publish(Ctx& c, std::shared_ptr<SetState> set, bool expansion) {
  DMX_RETURN_IF_ERROR(c.ep.Write(descriptor_ + descriptor::kModelWord, &set->model_word, 8));
  DMX_RETURN_IF_ERROR(c.ep.Write(descriptor_ + descriptor::kKeys, &set->keys_total, 8));
  std::vector<uint64_t> replaced;  // the old set's blobs (its record and directory stay:
                                   // clients may still READ its directory words)
  {
    std::lock_guard lock(mu_);
    if (current_) replaced = current_->dir_words;
    current_ = set;
    full_running_ = false;
    expansion_queued_ = false;
    if (config_.retrain)
      for (const auto& [low, high] : pending_) MarkStaleLocked(*set, low, high);
    pending_.clear();
  }
  for (uint64_t word : replaced)
    if (word != 0) Retire(word);
  Count(c, descriptor::kTrainings);
  if (expansion) Count(c, descriptor::kExpansions);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status Trainer<KV>::FullTraining(Ctx& c, typename Task::Kind kind) {
  std::lock_guard full(full_mu_);
  uint64_t epoch = 1;
  uint32_t models = 0;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return Status::Ok();
    if (kind == Task::kInitial && current_) return Status::Ok();  // a bulk load's training came first
    full_running_ = true;
    pending_.clear();
    if (current_) {
      epoch = current_->record.epoch + 1;
      if (kind == Task::kExpand) models = 2 * current_->record.top.models();
    }
  }
  auto set = BuildSet(c, models, epoch);
  if (!set.ok() || *set == nullptr) {
    std::lock_guard lock(mu_);
    full_running_ = false;
    expansion_queued_ = false;
    if (!current_) initial_queued_ = false;  // the next split tries again
    return set.status();
  }
  return Publish(c, std::move(set).value(), kind == Task::kExpand);
}

template <tree::KeyValueTraits KV>
Status Trainer<KV>::TrainAll() {
  auto ctx = tree_.NewContext(0);
  if (!ctx.ok()) return ctx.status();
  return FullTraining(**ctx, Task::kInitial);
}

template <tree::KeyValueTraits KV>
Status Trainer<KV>::Retrain(Ctx& c, const std::shared_ptr<SetState>& set, uint32_t i) {
  const auto interval = set->record.top.Serves(i);
  if (interval.empty) return Status::Ok();
  std::vector<Leaf> leaves;
  std::vector<Key> keys;
  DMX_RETURN_IF_ERROR(ReadLeaves(c, set->keys.SmallestKeyAt(interval.first),
                                 [&](const Key& low) { return set->keys(low) <= interval.last; }, &leaves, &keys));
  if (leaves.empty()) return Status::Ok();
  std::vector<learned::ModelKey> xs(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) xs[k] = set->keys(keys[k]);
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    generation = set->generation[i] + 1;
  }
  uint64_t fitted = 0;
  auto word = WriteSubModel(c, *set, i, generation, leaves, xs, &fitted);
  if (!word.ok()) return word.status();
  DMX_RETURN_IF_ERROR(c.ep.Write(set->record.directory + 8 * uint64_t{i}, &*word, 8));
  uint64_t old = 0, keys_total = 0;
  bool current = false;
  {
    std::lock_guard lock(mu_);
    current = set == current_;
    if (!current) {
      // An expansion replaced the set meanwhile and retired its blobs: this one goes too.
      old = *word;
    } else {
      old = set->dir_words[i];
      set->dir_words[i] = *word;
      set->generation[i] = generation;
      set->keys_total = set->keys_total + fitted - set->fitted[i];
      set->fitted[i] = fitted;
      keys_total = set->keys_total;
    }
    if (current && config_.expand_at > 0 && !expansion_queued_ && !full_running_ &&
        keys_total > uint64_t{config_.expand_at} * set->record.top.models()) {
      expansion_queued_ = true;
      EnqueueLocked({Task::kExpand, nullptr, 0});
    }
  }
  if (old != 0) Retire(old);
  Count(c, descriptor::kRetrains);
  if (current) DMX_RETURN_IF_ERROR(c.ep.Write(descriptor_ + descriptor::kKeys, &keys_total, 8));
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::MarkStaleLocked(SetState& set, const Key& low, const Key& high) {
  const std::shared_ptr<SetState> owner = current_.get() == &set ? current_ : nullptr;
  if (!owner) return;
  const uint32_t first = set.record.top.Route(set.keys(low));
  const uint32_t last = set.record.top.Route(set.keys.High(high));
  for (uint32_t i = first; i <= last; ++i) {
    if (set.dirty[i]) continue;
    set.dirty[i] = 1;
    if (!set.running[i]) EnqueueLocked({Task::kRetrain, owner, i});
  }
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::OnSplit(const Key& low, const Key& separator, const Key& high) {
  (void)separator;  // the sub-models of the whole old range are stale: keys moved within it
  std::lock_guard lock(mu_);
  if (stopped_) return;
  if (full_running_) pending_.emplace_back(low, high);
  if (!current_) {
    if (!initial_queued_ && !full_running_) {
      initial_queued_ = true;
      EnqueueLocked({Task::kInitial, nullptr, 0});
    }
    return;
  }
  if (config_.retrain) MarkStaleLocked(*current_, low, high);
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::EnqueueLocked(Task t) {
  if (stopped_) return;
  queue_.push_back(std::move(t));
  if (running_ >= std::max<uint32_t>(1, config_.train_threads)) return;
  ReapLocked();
  ++running_;
  auto w = std::make_unique<Worker>();
  Worker* self = w.get();
  w->thread = runtime::Thread([this, self] {
    auto ctx = tree_.NewContext(0);
    for (;;) {
      Task t;
      {
        std::unique_lock lock(mu_);
        while (!queue_.empty() && queue_.front().kind == Task::kRetrain && queue_.front().set != current_)
          queue_.pop_front();  // a sub-model of a set an expansion replaced
        if (stopped_ || queue_.empty() || !ctx.ok()) {
          --running_;
          self->finished = true;
          idle_.NotifyAll();
          return;
        }
        t = std::move(queue_.front());
        queue_.pop_front();
        if (t.kind == Task::kRetrain) {
          t.set->dirty[t.model] = 0;
          t.set->running[t.model] = 1;
        }
      }
      // A failed training (a full pool) leaves the published models as they are: stale
      // models cost fallbacks, never correctness.
      if (t.kind == Task::kRetrain) {
        (void)Retrain(**ctx, t.set, t.model);
        std::lock_guard lock(mu_);
        t.set->running[t.model] = 0;
        if (t.set->dirty[t.model] && t.set == current_) EnqueueLocked(t);
      } else {
        (void)FullTraining(**ctx, t.kind);
      }
    }
  });
  workers_.push_back(std::move(w));
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::ReapLocked() {
  // A finished worker set its flag under mu_ and only returns afterwards: joining is short.
  for (auto it = workers_.begin(); it != workers_.end();) {
    if ((*it)->finished) {
      (*it)->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::Quiesce() {
  std::unique_lock lock(mu_);
  idle_.Wait(lock, [this] { return queue_.empty() && running_ == 0; });
  ReapLocked();
}

template <tree::KeyValueTraits KV>
void Trainer<KV>::Stop() {
  std::unique_lock lock(mu_);
  stopped_ = true;
  queue_.clear();
  idle_.Wait(lock, [this] { return running_ == 0; });
  ReapLocked();
}

template <tree::KeyValueTraits KV>
uint64_t Trainer<KV>::DirWord(uint64_t model_word, uint32_t i) {
  std::lock_guard lock(mu_);
  if (!current_ || current_->model_word != model_word || i >= current_->dir_words.size()) return 0;
  return current_->dir_words[i];
}

template class Trainer<tree::U64BytesKV>;
template class Trainer<tree::BytesKV>;

}  // namespace dmindex::designs::xstore
