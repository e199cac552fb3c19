// A test-only Index over std::map<std::string, std::string> under a shared mutex: any key
// format, no verbs. It lets the layers above the designs (Session's checks, the iterator, the
// checkers and the concurrent workload) be tested on byte keys by themselves.
#pragma once

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>

#include "dmindex/index.h"

namespace dmindex::testing {

class MapIndex final : public Index {
 public:
  explicit MapIndex(IndexOptions options) : Index("map", std::move(options)) {}

 private:
  class MapSession final : public Session {
   public:
    explicit MapSession(MapIndex& index) : index_(index) {}

   private:
    Status DoLookup(Slice key, std::string* value) override {
      std::shared_lock lock(index_.mu_);
      auto it = index_.map_.find(std::string(key));
      if (it == index_.map_.end()) return Status::NotFound();
      *value = it->second;
      return Status::Ok();
    }
    Status DoInsert(Slice key, Slice value) override {
      std::unique_lock lock(index_.mu_);
      index_.map_[std::string(key)] = std::string(value);
      return Status::Ok();
    }
    Status DoUpdate(Slice key, Slice value) override {
      std::unique_lock lock(index_.mu_);
      auto it = index_.map_.find(std::string(key));
      if (it == index_.map_.end()) return Status::NotFound();
      it->second = std::string(value);
      return Status::Ok();
    }
    Status DoDelete(Slice key) override {
      std::unique_lock lock(index_.mu_);
      return index_.map_.erase(std::string(key)) > 0 ? Status::Ok() : Status::NotFound();
    }
    Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
      std::shared_lock lock(index_.mu_);
      auto it = range.after_start ? index_.map_.upper_bound(range.start) : index_.map_.lower_bound(range.start);
      for (; it != index_.map_.end() && range.Contains(it->first) && out->size() < count; ++it)
        out->push_back({it->first, it->second});
      return Status::Ok();
    }

    MapIndex& index_;
  };

  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    std::unique_lock lock(mu_);
    if (!map_.empty()) return Status::InvalidArgument("not empty");
    for (const KeyValue& kv : sorted) map_.emplace_hint(map_.end(), kv.key, kv.value);
    return Status::Ok();
  }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t) override {
    return std::unique_ptr<Session>(std::make_unique<MapSession>(*this));
  }
  IndexStats DoStats() const override { return {}; }

  std::shared_mutex mu_;
  std::map<std::string, std::string> map_;
};

}  // namespace dmindex::testing
