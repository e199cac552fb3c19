#include "api/handles.h"

#include <mutex>

namespace dmindex::internal {
namespace {

Status IndexGone() {
  return Status::InvalidArgument("session used after its index was destroyed (open the index again, "
                                 "and a session on it)");
}

}  // namespace

SessionHandle::SessionHandle(std::unique_ptr<Session> design, std::shared_ptr<OpenSessions> registry)
    : design_(std::move(design)), registry_(std::move(registry)) {
  std::lock_guard lock(registry_->mu);
  registry_->open.insert(this);
}

SessionHandle::~SessionHandle() {
  // Under the lock: the index handle's destructor may be detaching sessions right now.
  std::lock_guard lock(registry_->mu);
  registry_->open.erase(this);
  design_.reset();
}

Status SessionHandle::DoLookup(Slice key, std::string* value) {
  return design_ ? design_->DoLookup(key, value) : IndexGone();
}

Status SessionHandle::DoInsert(Slice key, Slice value) {
  return design_ ? design_->DoInsert(key, value) : IndexGone();
}

Status SessionHandle::DoUpdate(Slice key, Slice value) {
  return design_ ? design_->DoUpdate(key, value) : IndexGone();
}

Status SessionHandle::DoDelete(Slice key) { return design_ ? design_->DoDelete(key) : IndexGone(); }

Status SessionHandle::DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) {
  return design_ ? design_->DoScan(range, count, out) : IndexGone();
}

void SessionHandle::DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                               std::span<Status> statuses) {
  if (design_) return design_->DoMultiGet(keys, values, statuses);
  for (Status& s : statuses) s = IndexGone();
}

IndexHandle::IndexHandle(std::unique_ptr<Index> design)
    : Index(design->design(), design->options()), design_(std::move(design)) {}

IndexHandle::~IndexHandle() {
  {
    std::lock_guard lock(sessions_->mu);
    for (SessionHandle* s : sessions_->open) s->Detach();
  }
  CloseForDestructor();  // the design's Close, now that none of its sessions is open
}

Result<std::unique_ptr<Session>> IndexHandle::DoOpenSession(uint32_t compute_node) {
  auto design = design_->OpenSession(compute_node);
  if (!design.ok()) return design.status();
  return std::unique_ptr<Session>(std::make_unique<SessionHandle>(std::move(design).value(), sessions_));
}

}  // namespace dmindex::internal
