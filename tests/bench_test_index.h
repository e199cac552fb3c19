// A test-only Index for the bench driver's tests (never registered as a design): an ordered
// map under a shared mutex, which also issues one fabric verb per operation so that the
// driver's verb accounting has something exact to count, and can be told to misbehave so
// that the driver's checks have something to catch.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "api/cluster_access.h"
#include "dmindex/index.h"
#include "fabric/fabric.h"
#include "fabric/rpc.h"
#include "test_fabrics.h"
#include "u64_api.h"

namespace dmindex::testing {

struct TestIndexFaults {
  uint64_t drop_every_nth_insert = 0;     // silently lose inserts
  uint64_t corrupt_every_nth_update = 0;  // store a value that belongs to no key
  std::vector<uint64_t>* keys_at_end = nullptr;  // receives the final key set when the index dies
  std::atomic<uint64_t>* lookups = nullptr;      // counts the lookups of every session
};

class TestIndex final : public Index {
 public:
  // Any number of compute nodes: the bench driver opens sessions on as many as it runs.
  // `options`: the key format and limits the runner asks for (any number of compute nodes).
  TestIndex(fabric::Fabric& fabric, TestIndexFaults faults, IndexOptions options = U64Options())
      : Index("test-map", AnyComputeNode(std::move(options))), fabric_(fabric), faults_(faults) {}
  ~TestIndex() override {
    if (faults_.keys_at_end == nullptr) return;
    faults_.keys_at_end->clear();
    for (const auto& [key, value] : map_)
      if (key.size() == 8) faults_.keys_at_end->push_back(U64Key::Decode(key));
  }

  static IndexOptions AnyComputeNode(IndexOptions o = U64Options()) {
    o.compute_nodes = 1u << 16;
    return o;
  }

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    std::unique_lock lock(mu_);
    if (!map_.empty()) return Status::InvalidArgument("not empty");
    for (const KeyValue& kv : sorted) map_.emplace_hint(map_.end(), kv.key, kv.value);
    return Status::Ok();
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t) override;

  IndexStats DoStats() const override {
    IndexStats s;
    s.cache_hits = hits_.load();
    s.cache_misses = misses_.load();
    s.cache_bytes = 4096;
    s.pool_bytes = 1 << 20;
    return s;
  }

  friend class TestSession;
  fabric::Fabric& fabric_;
  const TestIndexFaults faults_;
  mutable std::shared_mutex mu_;
  std::map<std::string, std::string> map_;  // the bench's u64 keys and values, 8 bytes each
  std::atomic<uint64_t> hits_{0}, misses_{0}, inserts_{0}, updates_{0};
};

class TestSession final : public Session {
 public:
  TestSession(TestIndex& index, std::unique_ptr<fabric::Endpoint> ep, GlobalAddress word)
      : index_(index), ep_(std::move(ep)), word_(word) {}

 private:

  Status DoLookup(Slice key, std::string* value) override {
    DMX_RETURN_IF_ERROR(ep_->Read(word_, &scratch_, 8));
    ++index_.hits_;
    if (index_.faults_.lookups != nullptr) index_.faults_.lookups->fetch_add(1);
    std::shared_lock lock(index_.mu_);
    auto it = index_.map_.find(std::string(key));
    if (it == index_.map_.end()) return Status::NotFound();
    *value = it->second;
    return Status::Ok();
  }
  Status DoInsert(Slice key, Slice value) override {
    DMX_RETURN_IF_ERROR(ep_->Write(word_, value.data(), 8));
    const uint64_t n = ++index_.inserts_;
    if (index_.faults_.drop_every_nth_insert && n % index_.faults_.drop_every_nth_insert == 0)
      return Status::Ok();
    std::unique_lock lock(index_.mu_);
    index_.map_[std::string(key)] = std::string(value);
    return Status::Ok();
  }
  Status DoUpdate(Slice key, Slice value) override {
    DMX_RETURN_IF_ERROR(ep_->Write(word_, value.data(), 8));
    const uint64_t n = ++index_.updates_;
    std::string stored(value);
    if (index_.faults_.corrupt_every_nth_update && n % index_.faults_.corrupt_every_nth_update == 0)
      stored = U64Key(U64Key::Decode(value) ^ 0xFFFF).str();
    std::unique_lock lock(index_.mu_);
    auto it = index_.map_.find(std::string(key));
    if (it == index_.map_.end()) return Status::NotFound();
    it->second = stored;
    return Status::Ok();
  }
  Status DoDelete(Slice key) override {
    std::unique_lock lock(index_.mu_);
    return index_.map_.erase(std::string(key)) ? Status::Ok() : Status::NotFound();
  }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    DMX_RETURN_IF_ERROR(ep_->Read(word_, &scratch_, 8));
    ++index_.misses_;
    std::shared_lock lock(index_.mu_);
    auto it = range.after_start ? index_.map_.upper_bound(range.start) : index_.map_.lower_bound(range.start);
    for (; it != index_.map_.end() && range.Contains(it->first) && out->size() < count; ++it)
      out->push_back({it->first, it->second});
    return Status::Ok();
  }

  TestIndex& index_;
  std::unique_ptr<fabric::Endpoint> ep_;
  GlobalAddress word_;
  uint64_t scratch_ = 0;
};

inline Result<std::unique_ptr<Session>> TestIndex::DoOpenSession(uint32_t) {
  auto ep = fabric_.Connect();
  if (!ep.ok()) return ep.status();
  fabric::RpcReply reply;
  DMX_RETURN_IF_ERROR((*ep)->Call(0, fabric::rpc_op::kAllocChunk, {}, &reply));
  uint64_t offset = 0;
  fabric::ReadPod(reply, 0, &offset);
  return std::unique_ptr<Session>(
      std::make_unique<TestSession>(*this, std::move(ep).value(), GlobalAddress(0, offset)));
}

// A cluster over a fresh in-process fabric, for the bench driver's cluster factory.
inline Result<std::shared_ptr<Cluster>> TestCluster() {
  return ClusterOver(std::shared_ptr<fabric::Fabric>(MakeTestFabric("inproc")));
}

}  // namespace dmindex::testing
