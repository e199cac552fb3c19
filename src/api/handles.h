// What Index::Open hands out: the design's index and sessions behind handles that make a use
// after destruction harmless. A session may outlive its index (the user owns both, and may
// destroy them in any order): the design's session refers to the design's index, so the
// index handle destroys the design sessions still open before the design index goes, and
// their handles answer InvalidArgument from then on.
#pragma once

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

class SessionHandle final : public Session {
 public:
  SessionHandle(std::unique_ptr<Session> design, std::shared_ptr<OpenSessions> registry);
  ~SessionHandle() override;

  // Destroys the design session (the index handle's destructor, holding registry->mu).
  void Detach() { design_.reset(); }

 private:
  Status DoLookup(Slice key, std::string* value) override;
  Status DoInsert(Slice key, Slice value) override;
  Status DoUpdate(Slice key, Slice value) override;
  Status DoDelete(Slice key) override;
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override;
  void DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                  std::span<Status> statuses) override;

  std::unique_ptr<Session> design_;  // null once the index is destroyed
  std::shared_ptr<OpenSessions> registry_;
};

class IndexHandle final : public Index {
 public:
  explicit IndexHandle(std::unique_ptr<Index> design);
  ~IndexHandle() override;

 private:
  Status DoBulkLoad(std::span<const KeyValue> sorted) override { return design_->DoBulkLoad(sorted); }
  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override;
  IndexStats DoStats() const override { return design_->DoStats(); }
  void AddProperties(Properties* out) const override { design_->AddProperties(out); }
  Partitioning* DoPartitioning() override { return design_->DoPartitioning(); }
  Status DoClose() override { return design_->Close(); }

  std::unique_ptr<Index> design_;
  std::shared_ptr<OpenSessions> sessions_ = std::make_shared<OpenSessions>();
};

}  // namespace dmindex::internal
