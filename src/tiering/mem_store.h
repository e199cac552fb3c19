// MemStore: a ColdStore in memory (an ordered map under a reader-writer lock), with injectable
// latency and failures, so IndeXY's protocols can be tested - and run in CI - without a disk,
// and the races between X and a slow Y made likely on purpose.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/runtime.h"
#include "tiering/cold_store.h"
#include "tiering/cold_store_options.h"
#include "tiering/store_counters.h"

namespace dmindex::tiering {

class MemStore final : public ColdStore {
 public:
  explicit MemStore(const MemStoreFaults& faults = {}) { SetFaults(faults); }

  // Takes effect for calls that start afterwards.
  void SetFaults(const MemStoreFaults& faults);
  // Runs before every Write is applied, outside the store's lock (tests park a writer there
  // to widen a race window).
  void SetBeforeWrite(std::function<void(const ColdBatch&)> hook);
  // Runs after every Get has read the map and before it returns, outside the store's lock
  // (tests run other operations there, between a reader's look at the store and what it
  // does with the answer).
  void SetAfterGet(std::function<void(std::string_view key)> hook);

  std::string_view kind() const override { return "mem"; }
  Status Get(std::string_view key, std::string* value) override;
  Status Write(const ColdBatch& batch) override;
  Result<std::unique_ptr<ColdIterator>> NewIterator() override;
  // disk 0; memory: key and value bytes held.
  ColdStoreUsage Usage() override;
  ColdStoreCounters Counters() const override { return counters_.Snapshot(); }
  Status Close() override { return Status::Ok(); }

  size_t size() const;

 private:
  class Iterator;
  // Applies the configured latency; IoError if this call is one chosen to fail.
  Status Inject(std::chrono::microseconds latency, const char* what);

  mutable runtime::SharedMutex mu_;
  std::map<std::string, std::string, std::less<>> map_;
  uint64_t bytes_ = 0;

  runtime::Mutex faults_mu_;
  MemStoreFaults faults_;
  std::function<void(const ColdBatch&)> before_write_;
  std::function<void(std::string_view)> after_get_;
  std::atomic<uint64_t> calls_{0};
  StoreCounters counters_;
};

}  // namespace dmindex::tiering
