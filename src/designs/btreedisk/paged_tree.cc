#include "designs/btreedisk/paged_tree.h"

#include <algorithm>
#include <atomic>

#include "common/pool_memory.h"
#include "common/retry.h"
#include "common/retry_status.h"

namespace dmindex::designs::btreedisk {
namespace {

uint64_t HeaderWord(const std::byte* page) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(page)))
      .load(std::memory_order_relaxed);
}

// An inner page read in place, word by word, while a latch holder may be writing it: a
// descent looks at a few separators, not the whole page. Whatever it reads is trusted only
// once the frame's version is validated; until then offsets are bounded, never followed out of
// the page.
class InnerReader {
 public:
  InnerReader(const std::byte* page, uint32_t page_bytes) : page_(page), page_bytes_(page_bytes) {
    const uint64_t h = HeaderWord(page);
    level_ = static_cast<uint16_t>(h);
    count_ = std::min<uint32_t>(static_cast<uint16_t>(h >> 16), MaxChildren(page_bytes) - 1);
  }
  uint16_t level() const { return level_; }
  uint32_t count() const { return count_; }
  // Separator i's bytes.
  void Separator(uint32_t i, std::string* out) const {
    const uint64_t dir = Word(kHeaderBytes + 8 * MaxChildren(page_bytes_) + 8 * i);
    const uint32_t off = static_cast<uint32_t>(dir), len = static_cast<uint32_t>(dir >> 32);
    if (off % 8 != 0 || static_cast<uint64_t>(off) + Pad8(len) > page_bytes_) {
      out->clear();  // torn: the validation fails
      return;
    }
    out->resize(Pad8(len));
    CopyFromPool(out->data(), page_ + off, Pad8(len));
    out->resize(len);
  }
  // The child covering `key`: the number of separators <= key.
  uint32_t ChildIndex(Slice key, std::string* scratch) const {
    uint32_t lo = 0, hi = count_;
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      Separator(mid, scratch);
      if (Slice(*scratch) <= key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  // The page's bytes in use (header, child and directory words, separators).
  uint64_t BytesUsed() const {
    uint64_t b = kHeaderBytes + 16ull * MaxChildren(page_bytes_);
    for (uint32_t i = 0; i < count_; ++i)
      b += Pad8(Word(kHeaderBytes + 8 * MaxChildren(page_bytes_) + 8 * i) >> 32);
    return b;
  }

 private:
  uint64_t Word(uint32_t off) const {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<std::byte*>(page_ + off)))
        .load(std::memory_order_relaxed);
  }
  const std::byte* page_;
  const uint32_t page_bytes_;
  uint16_t level_ = 0;
  uint32_t count_ = 0;
};

}  // namespace

bool PageLayoutOfTree::IsLeaf(const std::byte* page) const { return (HeaderWord(page) & 0xffff) == 0; }

size_t PageLayoutOfTree::ChildCount(const std::byte* page) const {
  const uint64_t w = HeaderWord(page);
  const uint64_t level = w & 0xffff, count = (w >> 16) & 0xffff;
  if (level == 0) return 0;
  if (level == kMetaLevel) return 1;
  return std::min<uint64_t>(count + 1, MaxChildren(page_bytes_));  // bounded for torn reads
}

uint64_t* PageLayoutOfTree::ChildSlot(std::byte* page, size_t i) const {
  return reinterpret_cast<uint64_t*>(page + kHeaderBytes + 8 * i);
}

PagedTree::Worker::Worker(PagedTree& tree)
    : cw_(*tree.bm_, *tree.file_),
      copy_(tree.options_.page_bytes),
      parent_copy_(tree.options_.page_bytes),
      out_(tree.options_.page_bytes) {}

PagedTree::PagedTree(const PagedTreeOptions& options, std::unique_ptr<PageFile> file)
    : options_(options), file_(std::move(file)), layout_(options.page_bytes) {}

PagedTree::~PagedTree() = default;

uint32_t PagedTree::MinPageBytes(uint32_t max_key_bytes, uint32_t inline_value_bytes) {
  // A leaf: four of the longest entries; an inner page: five children and room for three of
  // the longest separators besides its child and directory words.
  const uint64_t entry = 16 + Pad8(max_key_bytes) + std::max<uint32_t>(Pad8(inline_value_bytes), 16);
  const uint64_t leaf = kHeaderBytes + 4 * entry;
  const uint64_t inner = 2 * (kHeaderBytes + 3 * Pad8(max_key_bytes)) + 32 * 5;
  return static_cast<uint32_t>((std::max(leaf, inner) + 7) / 8 * 8);
}

Result<std::unique_ptr<PagedTree>> PagedTree::Open(const PagedTreeOptions& o, std::unique_ptr<PageFile> file) {
  const uint32_t P = o.page_bytes;
  const uint32_t need = MinPageBytes(o.max_key_bytes, o.inline_value_bytes);
  if (P % 8 != 0 || P < need || MaxChildren(P) < 5)
    return Status::InvalidArgument("btree-disk: pages of " + std::to_string(P) + " bytes hold fewer than four entries of " +
                                   std::to_string(o.max_key_bytes) + "-byte keys; need at least " + std::to_string(need) +
                                   " bytes (knob page_kb)");
  std::unique_ptr<PagedTree> t(new PagedTree(o, std::move(file)));
  cache::CacheOptions co;
  co.cache_bytes = o.cache_bytes;
  co.page_bytes = P;
  co.leaf_admission = 1.0;  // LeanStore keeps every page it reads
  auto bm = cache::BufferManager::Create(co, t->layout_);
  if (!bm.ok()) return bm.status();
  t->bm_ = std::move(bm).value();
  // The meta page (owned here, always hot) and an empty root leaf.
  t->meta_page_.reset(new std::byte[P]());
  t->meta_.page = t->meta_page_.get();
  t->meta_.set_state(cache::FrameState::kHot);
  cache::CacheWorker cw(*t->bm_, *t->file_);
  auto root = t->bm_->AllocateNew(t->file_->NewPage(), cw);
  if (!root.ok()) return root.status();
  std::vector<std::byte> buf(P);
  EncodeLeaf({}, P, buf.data());
  CopyToPool(root->page(), buf.data(), P);
  cache::ExclusiveGuard meta(&t->meta_);
  EncodeMeta(0, 0, P, buf.data());
  CopyToPool(meta.page(), buf.data(), P);
  t->bm_->Attach(meta, t->layout_.ChildSlot(meta.page(), 0), *root);
  root->Release();
  meta.Release();
  DMX_RETURN_IF_ERROR(cw.EndOperation());
  return t;
}

template <typename Attempt>
Status PagedTree::WithRestarts(Worker& w, const char* what, Attempt attempt) {
  RetryBudget budget(retry_limits::kTreeRestarts, what);
  Backoff backoff(backoff::kRestart);
  for (;;) {
    Status s = attempt();
    Status ended = w.cw_.EndOperation();
    if (!IsRetry(s)) return s.ok() ? ended : s;
    restarts_.fetch_add(1, std::memory_order_relaxed);
    if (!budget.Spend()) return budget.Exhausted("in btree-disk");
    backoff.Pause();
  }
}

bool PagedTree::InnerHasRoom(const PageView& v) const {
  if (v.count() + 2u > MaxChildren(options_.page_bytes)) return false;
  uint64_t bytes = kHeaderBytes + 16ull * MaxChildren(options_.page_bytes) + Pad8(options_.max_key_bytes);
  for (uint32_t i = 0; i < v.count(); ++i) bytes += Pad8(v.separator(i).size());
  return bytes <= options_.page_bytes;
}

Status PagedTree::Descend(Worker& w, Slice key, bool for_write, LeafAt* at) {
  const uint32_t P = options_.page_bytes;
  cache::OptimisticGuard parent(&meta_);
  if (!parent.valid()) return RetryStatus();
  CopyFromPool(w.parent_copy_.data(), meta_.page, kHeaderBytes + 8);
  if (!parent.Validate()) return RetryStatus();
  const auto root_level = static_cast<uint16_t>(PageView(w.parent_copy_.data(), P).aux());
  uint16_t parent_level = kMetaLevel;
  const uint64_t* slot = layout_.ChildSlot(meta_.page, 0);
  std::optional<std::string> high;
  for (int depth = 0; depth < 64; ++depth) {
    const bool child_is_leaf = parent_level == kMetaLevel ? root_level == 0 : parent_level == 1;
    auto child = bm_->Resolve(parent, slot, child_is_leaf, w.cw_, *file_);
    if (!child.ok()) return child.status();
    cache::OptimisticGuard node = *child;
    const InnerReader inner(node.page(), P);
    if (inner.level() == 0) {  // the leaf: a private copy for the caller
      CopyFromPool(w.copy_.data(), node.page(), P);
      if (!node.Validate()) return RetryStatus();
      if (!PageView(w.copy_.data(), P).Plausible()) return RetryStatus();
      at->parent = parent;
      at->leaf = node;
      at->high = std::move(high);
      return Status::Ok();
    }
    const uint32_t i = inner.ChildIndex(key, &w.key_);
    const bool has_high = i < inner.count();
    if (has_high) inner.Separator(i, &w.high_);
    // Eager split: a writer never arrives at a parent without room for one more separator.
    const bool full = for_write && (inner.count() + 2u > MaxChildren(P) ||
                                    inner.BytesUsed() + Pad8(options_.max_key_bytes) > P);
    if (!node.Validate()) return RetryStatus();
    if (inner.level() == kMetaLevel) return RetryStatus();
    if (full) return Split(w, parent, node);
    if (has_high) high = w.high_;
    parent = node;
    parent_level = inner.level();
    slot = layout_.ChildSlot(node.frame()->page, i);
  }
  return Status::Corruption("btree-disk: a path of more than 64 pages");
}

Status PagedTree::Split(Worker& w, cache::OptimisticGuard& parent, cache::OptimisticGuard& node) {
  auto right = bm_->AllocateNew(file_->NewPage(), w.cw_);
  if (!right.ok()) return right.status();
  std::optional<cache::ExclusiveGuard> root;
  if (parent.frame() == &meta_) {
    auto r = bm_->AllocateNew(file_->NewPage(), w.cw_);
    if (!r.ok()) {
      bm_->Discard(*right, w.cw_);
      return r.status();
    }
    root.emplace(std::move(r).value());
  }
  Result<bool> split = false;
  {
    cache::ExclusiveGuard pg = cache::ExclusiveGuard::TryUpgrade(parent);
    cache::ExclusiveGuard ng = pg.owns() ? cache::ExclusiveGuard::TryUpgrade(node) : cache::ExclusiveGuard();
    if (ng.owns()) split = SplitLatched(w, pg, ng, *right, root ? &*root : nullptr);
  }
  // Frames a split did not use (the latches were taken, the parent was full): given back.
  if (!split.ok() || !*split) {
    bm_->Discard(*right, w.cw_);
    if (root) bm_->Discard(*root, w.cw_);
  }
  if (!split.ok()) return split.status();
  return RetryStatus();  // the operation starts over on the split tree
}

Result<bool> PagedTree::SplitLatched(Worker& w, cache::ExclusiveGuard& pg, cache::ExclusiveGuard& ng,
                                     cache::ExclusiveGuard& right, cache::ExclusiveGuard* root) {
  const uint32_t P = options_.page_bytes;
  CopyFromPool(w.copy_.data(), ng.page(), P);
  CopyFromPool(w.parent_copy_.data(), pg.page(), P);
  const PageView v(w.copy_.data(), P), pv(w.parent_copy_.data(), P);
  const bool parent_is_meta = pg.frame() == &meta_;
  if (!parent_is_meta && !InnerHasRoom(pv)) return false;  // the parent splits first
  if (parent_is_meta != (root != nullptr)) return false;    // the root split meanwhile
  const uint64_t local = cache::Swip::Local(ng.frame()).raw();
  uint32_t pos = 0;
  while (pos <= pv.count() && pv.child(pos) != local) ++pos;
  if (pos > pv.count()) return false;  // not (or no longer) swizzled there: start over
  std::string sep;
  if (v.is_leaf()) {
    std::vector<LeafEntry> all = v.Entries();
    if (all.size() < 2) return Status::Corruption("btree-disk: a full leaf with fewer than two entries");
    // Halves by bytes, at least one entry each.
    const uint64_t total = LeafBytes(all);
    uint64_t bytes = kHeaderBytes;
    size_t mid = 0;
    for (; mid + 1 < all.size() && bytes * 2 < total; ++mid)
      bytes += 16 + Pad8(all[mid].key.size()) + all[mid].value.stored_bytes();
    mid = std::max<size_t>(mid, 1);
    std::vector<LeafEntry> upper(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(mid)),
                                 std::make_move_iterator(all.end()));
    all.resize(mid);
    sep = upper.front().key;
    EncodeLeaf(upper, P, w.out_.data());
    CopyToPool(right.page(), w.out_.data(), P);
    EncodeLeaf(all, P, w.out_.data());
  } else {
    const uint32_t n = v.count(), mid = n / 2;
    std::vector<std::string> lseps, rseps;
    std::vector<uint64_t> lkids, rkids;
    for (uint32_t i = 0; i < n; ++i) (i < mid ? lseps : rseps).emplace_back(v.separator(i));
    for (uint32_t i = 0; i <= n; ++i) (i <= mid ? lkids : rkids).push_back(v.child(i));
    sep = rseps.front();
    rseps.erase(rseps.begin());
    EncodeInner(v.level(), rseps, rkids, P, w.out_.data());
    CopyToPool(right.page(), w.out_.data(), P);
    bm_->Adopt(right);  // the children it took are swizzled in it now
    EncodeInner(v.level(), lseps, lkids, P, w.out_.data());
  }
  CopyToPool(ng.page(), w.out_.data(), P);
  ng.MarkDirty();
  if (parent_is_meta) {
    EncodeInner(static_cast<uint16_t>(v.level() + 1), {sep}, {local, cache::Swip::Local(right.frame()).raw()}, P,
                w.out_.data());
    CopyToPool(root->page(), w.out_.data(), P);
    bm_->Adopt(*root);
    EncodeMeta(0, static_cast<uint16_t>(v.level() + 1), P, w.out_.data());
    CopyToPool(pg.page(), w.out_.data(), P);
    bm_->Attach(pg, layout_.ChildSlot(pg.page(), 0), *root);
    return true;
  }
  std::vector<std::string> seps;
  std::vector<uint64_t> kids;
  for (uint32_t i = 0; i < pv.count(); ++i) seps.emplace_back(pv.separator(i));
  for (uint32_t i = 0; i <= pv.count(); ++i) kids.push_back(pv.child(i));
  seps.insert(seps.begin() + pos, sep);
  kids.insert(kids.begin() + pos + 1, 0);  // Attach puts the new child there
  EncodeInner(pv.level(), seps, kids, P, w.out_.data());
  CopyToPool(pg.page(), w.out_.data(), P);
  bm_->Attach(pg, layout_.ChildSlot(pg.page(), pos + 1), right);
  pg.MarkDirty();
  return true;
}

Result<StoredValue> PagedTree::Store(Slice value) {
  StoredValue v;
  if (value.size() <= options_.inline_value_bytes) {
    v.inline_bytes.assign(value);
    return v;
  }
  v.out_of_line = true;
  v.log_length = value.size();
  DMX_RETURN_IF_ERROR(file_->AppendValue(value, &v.log_offset));
  return v;
}

Status PagedTree::ReadStored(const StoredValue& v, std::string* out) {
  if (!v.out_of_line) {
    *out = v.inline_bytes;
    return Status::Ok();
  }
  return file_->ReadValue(v.log_offset, v.log_length, out);
}

Status PagedTree::Lookup(Worker& w, Slice key, std::string* value) {
  StoredValue found;
  DMX_RETURN_IF_ERROR(WithRestarts(w, "btree-disk lookup", [&]() -> Status {
    LeafAt at;
    DMX_RETURN_IF_ERROR(Descend(w, key, false, &at));
    const PageView v(w.copy_.data(), options_.page_bytes);
    bool hit;
    const uint32_t i = v.LowerBound(key, &hit);
    if (!hit) return Status::NotFound();
    found = v.value(i);
    return Status::Ok();
  }));
  return ReadStored(found, value);  // a logged value never changes
}

Status PagedTree::Put(Worker& w, Slice key, Slice value, PutMode mode) {
  auto stored = Store(value);  // once, before any latch
  if (!stored.ok()) return stored.status();
  const uint32_t P = options_.page_bytes;
  return WithRestarts(w, "btree-disk put", [&]() -> Status {
    LeafAt at;
    DMX_RETURN_IF_ERROR(Descend(w, key, true, &at));
    // Decided on the validated copy; the upgrade below proves it still is the leaf's page.
    std::vector<LeafEntry> entries = PageView(w.copy_.data(), P).Entries();
    auto it = std::lower_bound(entries.begin(), entries.end(), key,
                               [](const LeafEntry& e, Slice k) { return Slice(e.key) < k; });
    const bool present = it != entries.end() && it->key == key;
    if (present) it->value = *stored;
    else entries.insert(it, LeafEntry{std::string(key), *stored});
    if (!present && mode == PutMode::kUpdate) {
      return at.leaf.Validate() ? Status::NotFound() : RetryStatus();
    }
    if (LeafBytes(entries) > P) return Split(w, at.parent, at.leaf);
    cache::ExclusiveGuard lg = cache::ExclusiveGuard::TryUpgrade(at.leaf);
    if (!lg.owns()) return RetryStatus();
    EncodeLeaf(entries, P, w.out_.data());
    CopyToPool(lg.page(), w.out_.data(), P);
    lg.MarkDirty();
    return Status::Ok();
  });
}

Status PagedTree::Delete(Worker& w, Slice key) {
  const uint32_t P = options_.page_bytes;
  return WithRestarts(w, "btree-disk delete", [&]() -> Status {
    LeafAt at;
    DMX_RETURN_IF_ERROR(Descend(w, key, false, &at));
    bool hit;
    PageView(w.copy_.data(), P).LowerBound(key, &hit);
    if (!hit) return Status::NotFound();  // absent in a validated copy
    cache::ExclusiveGuard lg = cache::ExclusiveGuard::TryUpgrade(at.leaf);
    if (!lg.owns()) return RetryStatus();
    std::vector<LeafEntry> entries = PageView(w.copy_.data(), P).Entries();  // unchanged: the upgrade held
    auto it = std::lower_bound(entries.begin(), entries.end(), key,
                               [](const LeafEntry& e, Slice k) { return Slice(e.key) < k; });
    entries.erase(it);
    EncodeLeaf(entries, P, w.out_.data());
    CopyToPool(lg.page(), w.out_.data(), P);
    lg.MarkDirty();
    return Status::Ok();
  });
}

Status PagedTree::Scan(Worker& w, const KeyRange& range, size_t count, std::vector<KeyValue>* out) {
  std::string cursor = range.start;
  bool after = range.after_start;
  std::vector<std::pair<std::string, StoredValue>> leaf;
  while (out->size() < count) {
    std::optional<std::string> high;
    // One leaf as a validated copy; the next one is found from its upper fence, so a leaf
    // split meanwhile is no problem (keys only move right, into what comes after the fence).
    DMX_RETURN_IF_ERROR(WithRestarts(w, "btree-disk scan", [&]() -> Status {
      LeafAt at;
      DMX_RETURN_IF_ERROR(Descend(w, cursor, false, &at));
      const PageView v(w.copy_.data(), options_.page_bytes);
      bool hit;
      leaf.clear();
      for (uint32_t i = v.LowerBound(cursor, &hit) + (hit && after ? 1 : 0); i < v.count(); ++i)
        leaf.emplace_back(std::string(v.key(i)), v.value(i));
      high = std::move(at.high);
      return Status::Ok();
    }));
    for (auto& [k, sv] : leaf) {
      if (range.end && Slice(k) >= Slice(*range.end)) return Status::Ok();
      if (out->size() == count) return Status::Ok();
      KeyValue& kv = out->emplace_back();
      kv.key = std::move(k);
      DMX_RETURN_IF_ERROR(ReadStored(sv, &kv.value));
    }
    if (!high || (range.end && Slice(*high) >= Slice(*range.end))) return Status::Ok();
    cursor = std::move(*high);
    after = false;
  }
  return Status::Ok();
}

}  // namespace dmindex::designs::btreedisk
