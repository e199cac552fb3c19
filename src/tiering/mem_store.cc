#include "tiering/mem_store.h"

#include <mutex>
#include <shared_mutex>
#include <vector>

namespace dmindex::tiering {

// Reads the map in chunks, each copied under the shared lock: every pair returned (and every
// key skipped) was the map's state when its chunk was copied, after the iterator's creation.
class MemStore::Iterator final : public ColdIterator {
 public:
  explicit Iterator(MemStore& store) : store_(store) {}

  void Seek(std::string_view target) override {
    status_ = store_.Inject(SeekLatency(), "seek");
    store_.counters_.CountSeek();
    chunk_.clear();
    at_ = 0;
    if (!status_.ok()) return;
    Fill(target, /*inclusive=*/true);
  }
  bool Valid() const override { return status_.ok() && at_ < chunk_.size(); }
  void Next() override {
    if (!Valid()) return;
    if (++at_ < chunk_.size() || done_) return;
    const std::string last = chunk_.back().first;
    Fill(last, /*inclusive=*/false);
  }
  std::string_view key() const override { return chunk_[at_].first; }
  std::string_view value() const override { return chunk_[at_].second; }
  Status status() const override { return status_; }

 private:
  static constexpr size_t kChunk = 256;

  std::chrono::microseconds SeekLatency() {
    std::lock_guard lock(store_.faults_mu_);
    return store_.faults_.seek_latency;
  }
  void Fill(std::string_view from, bool inclusive) {
    chunk_.clear();
    at_ = 0;
    std::shared_lock lock(store_.mu_);
    auto it = inclusive ? store_.map_.lower_bound(from) : store_.map_.upper_bound(from);
    for (; it != store_.map_.end() && chunk_.size() < kChunk; ++it) chunk_.emplace_back(it->first, it->second);
    done_ = it == store_.map_.end();
  }

  MemStore& store_;
  std::vector<std::pair<std::string, std::string>> chunk_;
  size_t at_ = 0;
  bool done_ = true;
  Status status_;
};

void MemStore::SetFaults(const MemStoreFaults& faults) {
  std::lock_guard lock(faults_mu_);
  faults_ = faults;
}

void MemStore::SetBeforeWrite(std::function<void(const ColdBatch&)> hook) {
  std::lock_guard lock(faults_mu_);
  before_write_ = std::move(hook);
}

void MemStore::SetAfterGet(std::function<void(std::string_view key)> hook) {
  std::lock_guard lock(faults_mu_);
  after_get_ = std::move(hook);
}

Status MemStore::Inject(std::chrono::microseconds latency, const char* what) {
  uint64_t fail_every;
  {
    std::lock_guard lock(faults_mu_);
    fail_every = faults_.fail_every;
  }
  if (latency.count() > 0) runtime::SleepFor(latency);
  const uint64_t n = calls_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (fail_every != 0 && n % fail_every == 0)
    return Status::IoError(std::string("mem store: injected failure of ") + what + " (call " +
                           std::to_string(n) + ", every " + std::to_string(fail_every) + ")");
  return Status::Ok();
}

Status MemStore::Get(std::string_view key, std::string* value) {
  std::chrono::microseconds latency;
  std::function<void(std::string_view)> hook;
  {
    std::lock_guard lock(faults_mu_);
    latency = faults_.get_latency;
    hook = after_get_;
  }
  DMX_RETURN_IF_ERROR(Inject(latency, "get"));
  bool found;
  {
    std::shared_lock lock(mu_);
    auto it = map_.find(key);
    found = it != map_.end();
    counters_.CountGet(found);
    if (found) *value = it->second;
  }
  if (hook) hook(key);
  return found ? Status::Ok() : Status::NotFound();
}

Status MemStore::Write(const ColdBatch& batch) {
  std::chrono::microseconds latency;
  std::function<void(const ColdBatch&)> hook;
  {
    std::lock_guard lock(faults_mu_);
    latency = faults_.write_latency;
    hook = before_write_;
  }
  if (hook) hook(batch);
  DMX_RETURN_IF_ERROR(Inject(latency, "write"));
  std::unique_lock lock(mu_);
  for (const ColdBatch::Op& op : batch.ops()) {
    auto it = map_.find(op.key);
    if (it != map_.end()) {
      bytes_ -= it->first.size() + it->second.size();
      if (op.is_delete) {
        map_.erase(it);
        continue;
      }
      it->second = op.value;
    } else {
      if (op.is_delete) continue;
      it = map_.emplace(op.key, op.value).first;
    }
    bytes_ += it->first.size() + it->second.size();
  }
  counters_.CountWrite(batch);
  return Status::Ok();
}

Result<std::unique_ptr<ColdIterator>> MemStore::NewIterator() {
  return std::unique_ptr<ColdIterator>(std::make_unique<Iterator>(*this));
}

ColdStoreUsage MemStore::Usage() {
  std::shared_lock lock(mu_);
  return ColdStoreUsage{0, bytes_};
}

size_t MemStore::size() const {
  std::shared_lock lock(mu_);
  return map_.size();
}

}  // namespace dmindex::tiering
