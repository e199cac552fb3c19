#include "designs/btreedisk/paged_store.h"

#include <mutex>

namespace dmindex::designs::btreedisk {

// Reads the tree in chunks, each one scan after the last key returned: every pair was in the
// tree at some instant after the iterator's creation, as the in-memory store's.
class PagedStore::Iterator final : public tiering::ColdIterator {
 public:
  explicit Iterator(PagedStore& s) : s_(s) {}
  void Seek(std::string_view target) override {
    s_.counters_.CountSeek();
    Fill(target, false);
  }
  bool Valid() const override { return status_.ok() && at_ < chunk_.size(); }
  void Next() override {
    if (!Valid()) return;
    if (++at_ < chunk_.size() || done_) return;
    const std::string last = chunk_.back().key;
    Fill(last, true);
  }
  std::string_view key() const override { return chunk_[at_].key; }
  std::string_view value() const override { return chunk_[at_].value; }
  Status status() const override { return status_; }

 private:
  static constexpr size_t kChunk = 256;
  void Fill(std::string_view from, bool after) {
    KeyRange r;
    r.start = std::string(from);
    r.after_start = after;
    chunk_.clear();
    at_ = 0;
    Borrowed w(s_);
    status_ = s_.tree_->Scan(*w, r, kChunk, &chunk_);
    done_ = chunk_.size() < kChunk;
  }

  PagedStore& s_;
  std::vector<KeyValue> chunk_;
  size_t at_ = 0;
  bool done_ = true;
  Status status_;
};

PagedStore::Borrowed::Borrowed(PagedStore& s) : s_(s) {
  {
    std::lock_guard lock(s_.pool_mu_);
    if (!s_.pool_.empty()) {
      w_ = std::move(s_.pool_.back());
      s_.pool_.pop_back();
    }
  }
  if (w_ == nullptr) w_ = std::make_unique<PagedTree::Worker>(*s_.tree_);
}

PagedStore::Borrowed::~Borrowed() {
  std::lock_guard lock(s_.pool_mu_);
  s_.pool_.push_back(std::move(w_));
}

Result<std::unique_ptr<tiering::ColdStore>> PagedStore::Open(const tiering::ColdStoreOptions& o,
                                                             uint32_t max_key_bytes, uint32_t inline_value_bytes) {
  PagedTreeOptions t;
  t.max_key_bytes = max_key_bytes;
  t.inline_value_bytes = inline_value_bytes;
  t.page_bytes = std::max(o.page_bytes, PagedTree::MinPageBytes(max_key_bytes, inline_value_bytes));
  t.cache_bytes = std::max<uint64_t>(o.block_cache_bytes, 64ull * t.page_bytes);
  auto file = PageFile::Open(o.parent_dir, o.keep, t.page_bytes, o.direct_io);
  if (!file.ok()) return file.status();
  auto tree = PagedTree::Open(t, std::move(file).value());
  if (!tree.ok()) return tree.status();
  return std::unique_ptr<tiering::ColdStore>(new PagedStore(std::move(tree).value()));
}

PagedStore::~PagedStore() {
  Status ignored = Close();
  (void)ignored;
}

Status PagedStore::Close() {
  if (closed_) return Status::Ok();
  closed_ = true;
  pool_.clear();  // workers before the tree's buffer manager
  return tree_->file().Close();
}

Status PagedStore::Get(std::string_view key, std::string* value) {
  Borrowed w(*this);
  Status s = tree_->Lookup(*w, key, value);
  counters_.CountGet(s.ok());
  return s;
}

Status PagedStore::Write(const tiering::ColdBatch& batch) {
  Borrowed w(*this);
  for (const tiering::ColdBatch::Op& op : batch.ops()) {
    Status s = op.is_delete ? tree_->Delete(*w, op.key) : tree_->Put(*w, op.key, op.value, PagedTree::PutMode::kUpsert);
    if (!s.ok() && !(op.is_delete && s.IsNotFound())) return s;
  }
  counters_.CountWrite(batch);
  return Status::Ok();
}

Result<std::unique_ptr<tiering::ColdIterator>> PagedStore::NewIterator() {
  return std::unique_ptr<tiering::ColdIterator>(std::make_unique<Iterator>(*this));
}

tiering::ColdStoreUsage PagedStore::Usage() {
  return tiering::ColdStoreUsage{tree_->file().file_bytes(), tree_->options().cache_bytes};
}

}  // namespace dmindex::designs::btreedisk
