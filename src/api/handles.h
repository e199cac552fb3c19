// What Index::Open hands out: the design's index and sessions behind handles that make a use
// after destruction harmless. A session may outlive its index (the user owns both, and may
// destroy them in any order): the design's session refers to the design's index, so the
// index handle destroys the design sessions still open before the design index goes, and
// their handles answer InvalidArgument from then on.
#pragma once

#include <array>
#include <memory>
#include <set>

#include "common/runtime.h"
#include "dmindex/index.h"

namespace dmindex::internal {

// The sessions of one index handle still open. Shared by the index handle and its session
// handles, which may go in either order.
struct OpenSessions {
  runtime::Mutex mu;
  std::set<SessionHandle*> open;  // guarded by mu
};

// CompareAndSwap for designs whose index lives in this process and has no compare of its
// own: every write of the index takes its key's stripe, so a compare (a Lookup) and its swap
// (an Insert) under the stripe see no other write of the key between them. Linearizable as
// long as every writer of the index is in this process (docs/API.md).
struct KeyStripes {
  static constexpr size_t kStripes = 256;
  std::array<runtime::Mutex, kStripes> mu;
  runtime::Mutex& For(Slice key);
};

class SessionHandle final : public Session {
 public:
  // `stripes`: null when the design compares values itself (or cannot).
  SessionHandle(std::unique_ptr<Session> design, std::shared_ptr<OpenSessions> registry,
                std::shared_ptr<KeyStripes> stripes);
  ~SessionHandle() override;

  // Destroys the design session (the index handle's destructor, holding registry->mu).
  void Detach() { design_.reset(); }

 private:
  Status DoLookup(Slice key, std::string* value) override;
  Status DoInsert(Slice key, Slice value) override;
  Status DoUpdate(Slice key, Slice value) override;
  Status DoDelete(Slice key) override;
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override;
  Status DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) override;
  Status DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                          std::string* current) override;
  void DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                  std::span<Status> statuses) override;

  std::unique_ptr<Session> design_;  // null once the index is destroyed
  std::shared_ptr<OpenSessions> registry_;
  std::shared_ptr<KeyStripes> stripes_;
};

class IndexHandle final : public Index {
 public:
  // `stripes`: the index lives in this process and CompareAndSwap goes through KeyStripes.
  IndexHandle(std::unique_ptr<Index> design, bool stripes);
  ~IndexHandle() override;

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override { return design_->DoBulkLoad(sorted); }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override;
  // After a Drop the design is gone, but the index is closed then: Stats and properties
  // answer from what Close recorded, and nothing else reaches the design.
  IndexStats DoStats() const override { return design_->DoStats(); }
  void AddProperties(Properties* out) const override { design_->AddProperties(out); }
  Partitioning* DoPartitioning() override { return design_ ? design_->DoPartitioning() : nullptr; }
  Status DoClose() override { return design_->Close(); }
  Status DoPrepareDrop(const DropOptions& options) override { return design_->DoPrepareDrop(options); }
  Status DoDrop(const DropOptions& options) override;

  std::unique_ptr<Index> design_;  // null once dropped
  std::shared_ptr<OpenSessions> sessions_ = std::make_shared<OpenSessions>();
  std::shared_ptr<KeyStripes> stripes_;
};

}  // namespace dmindex::internal
