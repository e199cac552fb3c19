#include "fabric/endpoint.h"

#include <utility>
#include <vector>

#include "fabric/fabric.h"

namespace dmindex::fabric {

Endpoint::~Endpoint() {
  if (fabric_ != nullptr) fabric_->Retire(this, counters_.Snapshot());
}

Status Endpoint::Read(GlobalAddress from, void* to, uint32_t len) {
  Verb v = Verb::Read(from, to, len);
  return Post(std::span<Verb>(&v, 1), Ordering::kUnordered);
}

Status Endpoint::Write(GlobalAddress to, const void* from, uint32_t len) {
  Verb v = Verb::Write(to, from, len);
  return Post(std::span<Verb>(&v, 1), Ordering::kUnordered);
}

Status Endpoint::Cas(GlobalAddress word, uint64_t expected, uint64_t desired, uint64_t* old) {
  Verb v = Verb::Cas(word, expected, desired, old);
  return Post(std::span<Verb>(&v, 1), Ordering::kUnordered);
}

Status Endpoint::Faa(GlobalAddress word, uint64_t add, uint64_t* old) {
  Verb v = Verb::Faa(word, add, old);
  return Post(std::span<Verb>(&v, 1), Ordering::kUnordered);
}

Status Endpoint::Post(std::initializer_list<Verb> verbs, Ordering ordering) {
  Verb buf[16];
  if (verbs.size() > std::size(buf)) {
    std::vector<Verb> big(verbs);
    return Post(std::span<Verb>(big), ordering);
  }
  size_t n = 0;
  for (const Verb& v : verbs) buf[n++] = v;
  return Post(std::span<Verb>(buf, n), ordering);
}

Status Endpoint::Post(std::span<Verb> verbs, Ordering ordering) { return PostChecked(verbs, ordering, nullptr); }

Status Endpoint::Post(std::span<Verb> verbs, Ordering ordering, PostGuard& guard) {
  return PostChecked(verbs, ordering, &guard);
}

Status Endpoint::PostChecked(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) {
  if (verbs.empty()) return Status::Ok();
  DMX_RETURN_IF_ERROR(Validate(verbs, ordering));
  for (const Verb& v : verbs) counters_.CountVerb(v);
  counters_.CountRoundTrip();
  return DoPost(verbs, ordering, guard);
}

Status Endpoint::PostUnwaited(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) {
  if (unwaited_) return Status::InvalidArgument("an unwaited batch is already in flight: reap it first");
  if (verbs.empty()) return Status::Ok();
  DMX_RETURN_IF_ERROR(Validate(verbs, ordering));
  for (const Verb& v : verbs) counters_.CountVerb(v);
  Unwaited u = DoPostUnwaited(verbs, ordering, guard);
  // A round trip is counted where a thread waits for one: here only if the backend waited.
  if (u.waited) counters_.CountRoundTrip();
  unwaited_ = true;
  unwaited_status_ = std::move(u.landed);
  return Status::Ok();
}

Status Endpoint::Reap() {
  if (!unwaited_) return Status::Ok();
  unwaited_ = false;
  return std::exchange(unwaited_status_, Status::Ok());
}

Status Endpoint::Call(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) {
  reply->clear();
  Status s = DoCall(node, op, request, reply);
  counters_.CountRpc(request.size() + reply->size());
  return s;
}

Status Endpoint::Validate(std::span<const Verb> verbs, Ordering ordering) {
  for (const Verb& v : verbs) {
    if (v.remote.is_null()) return Status::InvalidArgument("verb on a null remote address");
    if (v.local == nullptr) return Status::InvalidArgument("verb without a local buffer");
    if (v.is_atomic() && v.remote.offset() % 8 != 0)
      return Status::InvalidArgument("atomic verb on unaligned address " + v.remote.ToString());
    if (ordering == Ordering::kInOrder && v.remote.node() != verbs[0].remote.node())
      return Status::InvalidArgument("an in-order batch must target a single memory node");
  }
  return Status::Ok();
}

}  // namespace dmindex::fabric
