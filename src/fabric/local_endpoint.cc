#include "fabric/local_endpoint.h"

#include <atomic>
#include <string>

namespace dmindex::fabric {

Status LocalEndpoint::Local(uint16_t node, const char* what) const {
  const auto id = node_.id();
  if (id && *id == node) return Status::Ok();
  return Status::NotSupported(std::string(what) + " for memory node " + std::to_string(node) +
                              " from inside memory node " + (id ? std::to_string(*id) : "(id unknown)") +
                              ": a memory server reaches only its own pool");
}

Status LocalEndpoint::DoPost(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) {
  (void)ordering;  // verbs run one after the other, in order: both orderings hold
  for (const Verb& v : verbs) DMX_RETURN_IF_ERROR(Local(v.remote.node(), "a verb"));
  if (guard != nullptr) DMX_RETURN_IF_ERROR(guard->MayPost());
  for (const Verb& v : verbs) {
    // As the in-process fabric: whoever observes verb i observes everything before it.
    std::atomic_thread_fence(std::memory_order_release);
    Status s = node_.Execute(v);
    std::atomic_thread_fence(std::memory_order_acquire);
    DMX_RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

Status LocalEndpoint::DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) {
  DMX_RETURN_IF_ERROR(Local(node, "an RPC"));
  return node_.rpc().Dispatch(op, request, reply);
}

}  // namespace dmindex::fabric
