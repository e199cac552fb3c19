#include "api/handles.h"

#include <functional>
#include <mutex>
#include <optional>

namespace dmindex::internal {
namespace {

Status IndexGone() {
  return Status::InvalidArgument("session used after its index was destroyed (open the index again, "
                                 "and a session on it)");
}

// The key's stripe held for a write, when the index has stripes.
std::optional<std::unique_lock<runtime::Mutex>> HoldStripe(KeyStripes* stripes, Slice key) {
  if (stripes == nullptr) return std::nullopt;
  return std::unique_lock(stripes->For(key));
}

}  // namespace

runtime::Mutex& KeyStripes::For(Slice key) { return mu[std::hash<Slice>{}(key) % kStripes]; }

SessionHandle::SessionHandle(std::unique_ptr<Session> design, std::shared_ptr<OpenSessions> registry,
                             std::shared_ptr<KeyStripes> stripes)
    : design_(std::move(design)), registry_(std::move(registry)), stripes_(std::move(stripes)) {
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
  if (!design_) return IndexGone();
  auto hold = HoldStripe(stripes_.get(), key);
  return design_->DoInsert(key, value);
}

Status SessionHandle::DoUpdate(Slice key, Slice value) {
  if (!design_) return IndexGone();
  auto hold = HoldStripe(stripes_.get(), key);
  return design_->DoUpdate(key, value);
}

Status SessionHandle::DoDelete(Slice key) {
  if (!design_) return IndexGone();
  auto hold = HoldStripe(stripes_.get(), key);
  return design_->DoDelete(key);
}

Status SessionHandle::DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped,
                                       std::string* current) {
  if (!design_) return IndexGone();
  if (stripes_ == nullptr) return design_->DoCompareAndSwap(key, expected, desired, swapped, current);
  auto hold = HoldStripe(stripes_.get(), key);
  DMX_RETURN_IF_ERROR(design_->DoLookup(key, current));
  if (Slice(*current) != expected) return Status::Ok();
  DMX_RETURN_IF_ERROR(design_->DoInsert(key, desired));
  *swapped = true;
  return Status::Ok();
}

Status SessionHandle::DoScanReverse(const ReverseRange& range, size_t count, std::vector<KeyValue>* out) {
  return design_ ? design_->DoScanReverse(range, count, out) : IndexGone();
}

Status SessionHandle::DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) {
  return design_ ? design_->DoScan(range, count, out) : IndexGone();
}

void SessionHandle::DoMultiGet(std::span<const Slice> keys, std::span<std::string> values,
                               std::span<Status> statuses) {
  if (design_) return design_->DoMultiGet(keys, values, statuses);
  for (Status& s : statuses) s = IndexGone();
}

IndexHandle::IndexHandle(std::unique_ptr<Index> design, bool stripes)
    : Index(design->design(), design->options()),
      design_(std::move(design)),
      stripes_(stripes ? std::make_shared<KeyStripes>() : nullptr) {}

Status IndexHandle::DoDrop(const DropOptions& options) {
  if (design_ == nullptr) return Status::Ok();  // dropped before
  Status s = design_->DoDrop(options);
  // A design in this process's memory holds nothing beyond its object: destroying it frees
  // the index (the stores' folders were removed by their DoDrop).
  if (s.IsNotSupported() && stripes_ != nullptr) s = Status::Ok();
  if (!s.ok()) return s;
  design_.reset();
  return Status::Ok();
}

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
  return std::unique_ptr<Session>(std::make_unique<SessionHandle>(std::move(design).value(), sessions_, stripes_));
}

}  // namespace dmindex::internal
