#include "fabric/ucx/ucx_endpoint.h"

#include <algorithm>
#include <cstdio>

#include "fabric/ucx/bootstrap.h"
#include "fabric/ucx/remote_key.h"
#include "fabric/ucx/ucx_fabric.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {
namespace {

// How long closing an endpoint may wait for a server to confirm.
constexpr auto kCloseTimeout = std::chrono::milliseconds(1000);

}  // namespace

Result<std::unique_ptr<UcxEndpoint>> UcxEndpoint::Connect(UcxFabric& fabric) {
  std::unique_ptr<UcxEndpoint> ep(new UcxEndpoint(fabric));
  auto worker = UcxWorker::Create(*fabric.context_);
  if (!worker.ok()) return worker.status();
  ep->worker_ = std::move(worker).value();
  DMX_RETURN_IF_ERROR(ep->worker_->SetAmHandler(wire::kRpcReplyAm, &UcxEndpoint::OnReply, ep.get()));
  DMX_RETURN_IF_ERROR(ep->worker_->SetAmHandler(wire::kVerbReplyAm, &UcxEndpoint::OnReply, ep.get()));
  for (uint16_t n = 0; n < fabric.memory_nodes(); ++n) {
    ep->remotes_.push_back(std::make_unique<Remote>());
    Remote& r = *ep->remotes_.back();
    r.node = n;
    // A server that is down (or refuses) breaks only its own node: the endpoint still
    // works with the others, as with the in-process fabric.
    r.generation = fabric.monitor().generation(n);
    if (fabric.IsNodeDown(n)) {
      r.broken = fabric.NodeDownError(n);  // Ready() reconnects if it comes back
    } else {
      // A handshake that failed (the server stalled past connect_timeout, was killed in the
      // middle, or dropped us as too slow) is this attempt's outcome, not the node's state:
      // the next use connects again (Ready, ReattachPatiently), as after a failed
      // reattachment. Kept as `broken` alone, it answered every later operation at once, for
      // good while the monitor saw the server up (crash soak, TCP seed 340576: 315 in a row).
      r.broken = ep->ConnectRemote(r);
      r.reattach_failed = r.broken.IsUnavailable();
    }
  }
  return ep;
}

Status UcxEndpoint::ConnectRemote(Remote& r) {
  const UcxOptions& o = fabric_.options();
  auto welcome = Handshake(fabric_.server(r.node), fabric_.key_, r.node,
                           wire::ConnectionKind::kEndpoint, o.transport, worker_->address(),
                           o.connect_timeout);
  if (!welcome.ok()) return welcome.status();
  // The server restarted since this fabric was created (before its monitor noticed, or
  // after): its pool is a new, empty one, and every address this process holds into the
  // old one is meaningless there.
  if (welcome->pool != fabric_.pool_identity(r.node))
    return Status::Unavailable("memory server " + fabric_.server(r.node).ToString() +
                               " (memory node " + std::to_string(r.node) +
                               ") restarted and lost its pool: it now serves " +
                               welcome->pool.ToString() + ", this process was using " +
                               fabric_.pool_identity(r.node).ToString() +
                               "; every index that was in it is gone");
  r.socket = std::move(welcome->socket);
  r.connection_id = welcome->connection_id;
  r.connection_token = welcome->connection_token;
  r.base = welcome->pool_base;
  r.bytes = welcome->pool_bytes;
  auto ep = worker_->Connect(welcome->worker_address, fabric_.context_->err_mode(),
                             &UcxEndpoint::OnEndpointError, &r);
  if (!ep.ok()) return ep.status();
  r.ep = *ep;
  auto rkey = UnpackPoolKey(r.ep, welcome->rkey, r.base, r.bytes, fabric_.server(r.node).ToString());
  if (!rkey.ok()) return rkey.status();
  r.rkey = *rkey;
  // Over shared memory the pool should be mapped here and verbs plain loads and stores; if
  // not, UCX silently emulates every verb with messages (5-25x slower). Say so, once.
  void* mapped = nullptr;
  if (o.transport == UcxTransport::kShm && ucp_rkey_ptr(r.rkey, r.base, &mapped) != UCS_OK &&
      !fabric_.warned_emulated_.exchange(true)) {
    std::fprintf(stderr,
                 "dmindex: warning: the pool of %s is not mapped over shared memory; UCX "
                 "emulates verbs with messages (was the pool allocated by UCX?)\n",
                 fabric_.server(r.node).ToString().c_str());
  }
  return Status::Ok();
}

UcxEndpoint::~UcxEndpoint() {
  const bool peer_mode = fabric_.context_->err_mode() == UCP_ERR_HANDLING_MODE_PEER;
  for (auto& r : remotes_) {
    if (r->rkey != nullptr) ucp_rkey_destroy(r->rkey);
    // A server known to be gone cannot confirm a close (UCX over TCP would even try to
    // reconnect to it): force-close where UCX allows it.
    const bool gone = !r->broken.ok() || fabric_.IsNodeDown(r->node);
    if (r->ep != nullptr) worker_->Close(r->ep, peer_mode && gone, kCloseTimeout);
    r->socket.Close();  // after the endpoint: the server then drops its reply endpoint
  }
  FreePending();
  worker_.reset();
}

Status UcxEndpoint::Ready(uint16_t node) {
  if (node >= remotes_.size())
    return Status::InvalidArgument("no memory node " + std::to_string(node));
  DMX_RETURN_IF_ERROR(fabric_.LostPool());
  Remote& r = *remotes_[node];
  const LivenessMonitor& monitor = fabric_.monitor();
  // Restarting: the server went away (the monitor saw it, or UCX did first) and its pool
  // comes back with it. Wait for it rather than fail: an operation not yet issued has done
  // nothing, so it can go ahead once the server is back.
  const auto restarting = [&] {
    const auto state = monitor.state(node);
    return state == LivenessMonitor::State::kReconnecting ||
           (r.peer_failed && state == LivenessMonitor::State::kUp &&
            monitor.generation(node) == r.generation && fabric_.pool_persistent(node));
  };
  if (restarting()) {
    RetryBudget budget(AnswerLimit(), "waiting for a restarting memory server");
    Backoff pause(backoff::kPoll, "a restarting memory server");
    while (restarting()) {
      if (!budget.Spend()) return fabric_.NodeDownError(node);
      pause.Pause();
    }
    DMX_RETURN_IF_ERROR(fabric_.LostPool());
  }
  // A wait given up on a stalled server (op_timeout) is the outcome of that operation only:
  // the next one connects again (a handshake, bounded by connect_timeout) rather than be
  // answered the old timeout at once, for good, by a server that may be answering again.
  if (monitor.generation(node) != r.generation || r.reattach_failed || r.abandoned)
    DMX_RETURN_IF_ERROR(ReattachPatiently(r));
  if (!r.broken.ok()) return r.broken;
  if (fabric_.IsNodeDown(node)) return fabric_.NodeDownError(node);
  return Status::Ok();
}

bool UcxEndpoint::GaveUpAPool() const { return !fabric_.LostPool().ok(); }

Status UcxEndpoint::StillServing(uint16_t node) const {
  DMX_RETURN_IF_ERROR(fabric_.LostPool());
  const Remote& r = *remotes_[node];
  if (!r.broken.ok()) return r.broken;
  if (fabric_.IsNodeDown(node) || fabric_.monitor().generation(node) != r.generation)
    return fabric_.NodeDownError(node);
  return Status::Ok();
}

Status UcxEndpoint::Reattach(Remote& r) {
  const bool peer_mode = fabric_.context_->err_mode() == UCP_ERR_HANDLING_MODE_PEER;
  if (r.rkey != nullptr) ucp_rkey_destroy(r.rkey);
  r.rkey = nullptr;
  if (r.ep != nullptr) worker_->Close(r.ep, peer_mode, kCloseTimeout);
  r.ep = nullptr;
  r.socket.Close();
  r.peer_failed = false;
  r.abandoned = false;
  // The generation first: should the server go away again meanwhile, the next operation
  // sees it moved and reattaches once more.
  r.generation = fabric_.monitor().generation(r.node);
  r.broken = ConnectRemote(r);
  return r.broken;
}

Status UcxEndpoint::ReattachPatiently(Remote& r) {
  Status s = Reattach(r);
  r.reattach_failed = !s.ok() && s.IsUnavailable() && fabric_.pool_persistent(r.node);
  if (!r.reattach_failed) return s;
  // Each attempt is a handshake (TCP connect, challenge, welcome) that failed before any UCP
  // endpoint was made, or one whose endpoint Reattach closed: a second a try keeps UCX's
  // endpoints from being made and closed in a tight loop.
  constexpr auto kRetryEvery = std::chrono::seconds(1);
  const LivenessMonitor& monitor = fabric_.monitor();
  RetryBudget budget(AnswerLimit(), "reattaching to a memory server that came back");
  Backoff pause(backoff::kPoll, "a memory server to reattach to", GlobalAddress(r.node, 0));
  auto tried = runtime::Now();
  for (;;) {
    DMX_RETURN_IF_ERROR(fabric_.LostPool());
    if (!budget.Spend()) return s;
    pause.Pause();
    if (monitor.state(r.node) == LivenessMonitor::State::kReconnecting) continue;  // away again
    if (monitor.generation(r.node) == r.generation && runtime::Now() - tried < kRetryEvery) continue;
    s = Reattach(r);
    tried = runtime::Now();
    if (s.ok() || !s.IsUnavailable()) {
      r.reattach_failed = false;
      return s;
    }
  }
}

Status UcxEndpoint::CheckTarget(const Verb& v) {
  DMX_RETURN_IF_ERROR(Ready(v.remote.node()));
  const Remote& r = *remotes_[v.remote.node()];
  const uint64_t off = v.remote.offset();
  if (off < 64 || v.length > r.bytes || off > r.bytes - v.length)
    return Status::InvalidArgument("verb outside the pool: " + v.remote.ToString() + " +" +
                                   std::to_string(v.length));
  return Status::Ok();
}

ucs_status_ptr_t UcxEndpoint::Issue(Verb& v) {
  Remote& r = *remotes_[v.remote.node()];
  const uint64_t addr = r.base + v.remote.offset();
  // No callbacks: requests that do not complete at once are collected and waited for.
  ucp_request_param_t p{};
  switch (v.kind) {
    case VerbKind::kRead:
      return ucp_get_nbx(r.ep, v.local, v.length, addr, r.rkey, &p);
    case VerbKind::kWrite:
      return ucp_put_nbx(r.ep, v.local, v.length, addr, r.rkey, &p);
    case VerbKind::kCas:
    case VerbKind::kFaa:
      break;
  }
  p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  p.datatype = ucp_dt_make_contig(8);
  p.reply_buffer = v.local;  // receives the old word
  if (v.kind == VerbKind::kFaa)
    return ucp_atomic_op_nbx(r.ep, UCP_ATOMIC_OP_ADD, &v.operand, 1, addr, r.rkey, &p);
  // CSWAP: `buffer` is the compare value; the reply buffer carries the new value in and the
  // old value out.
  *static_cast<uint64_t*>(v.local) = v.swap;
  return ucp_atomic_op_nbx(r.ep, UCP_ATOMIC_OP_CSWAP, &v.operand, 1, addr, r.rkey, &p);
}

Status UcxEndpoint::DoPost(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) {
  touched_.clear();
  for (const Verb& v : verbs) {
    DMX_RETURN_IF_ERROR(CheckTarget(v));
    if (std::find(touched_.begin(), touched_.end(), v.remote.node()) == touched_.end())
      touched_.push_back(v.remote.node());
  }
  // After Ready, which may have waited seconds for a restarting server: a lock holder's
  // batch goes out only if its lease still allows it (the guard), nothing of it otherwise.
  if (guard != nullptr) DMX_RETURN_IF_ERROR(guard->MayPost());
  if (fabric_.options().transport == UcxTransport::kTcp) return PostMessages(verbs);
  return PostRma(verbs, ordering);
}

Status UcxEndpoint::PostRma(std::span<Verb> verbs, Ordering ordering) {
  ucp_worker_h w = worker_->get();
  bool wrote = false;
  Status failed;
  for (size_t i = 0; i < verbs.size(); ++i) {
    // In order: UCX's fence makes every earlier operation of this worker complete at the
    // target before any later one starts. That is the RDMA fence flag on verbs transports;
    // over shared memory each verb is a load/store/atomic by this thread, already in program
    // order. Neither costs a round trip, so the batch stays one round trip.
    if (ordering == Ordering::kInOrder && i > 0) ucp_worker_fence(w);
    Verb& v = verbs[i];
    if (v.length == 0) continue;
    wrote |= v.kind == VerbKind::kWrite;
    ucs_status_ptr_t req = Issue(v);
    if (UCS_PTR_IS_ERR(req)) {
      failed = FromUcs(UCS_PTR_STATUS(req), "posting a verb to " + v.remote.ToString());
      break;
    }
    if (req != nullptr) pending_.push_back(req);  // NULL: completed already
  }
  // PUT completion is local (the source buffer may be reused); a flush makes the data
  // visible at the target before Post returns, so whatever the caller publishes next (an
  // unlock) cannot overtake it. Per endpoint rather than per worker: force-closing a dead
  // server's endpoint cancels its flush, while a worker flush would stay pending forever.
  for (size_t i = 0; failed.ok() && wrote && i < touched_.size(); ++i) {
    ucp_request_param_t p{};
    ucs_status_ptr_t req = ucp_ep_flush_nbx(remotes_[touched_[i]]->ep, &p);
    if (UCS_PTR_IS_ERR(req))
      failed = FromUcs(UCS_PTR_STATUS(req), "flushing writes");
    else if (req != nullptr)
      pending_.push_back(req);
  }
  if (pending_.empty()) return failed;
  Status waited = Await(
      [this] {
        return std::all_of(pending_.begin(), pending_.end(), [](void* r) {
          return ucp_request_check_status(r) != UCS_INPROGRESS;
        });
      },
      touched_);
  if (!waited.ok()) {
    Abandon(touched_, waited);
    FreePending();
    return waited;
  }
  for (void* r : pending_) {
    ucs_status_t st = ucp_request_check_status(r);
    if (st != UCS_OK && failed.ok()) failed = FromUcs(st, "verb batch");
  }
  FreePending();
  return failed;
}

RetryLimit UcxEndpoint::AnswerLimit() const {
  return TimeLimit("polls", fabric_.options().op_timeout, Status::Code::kUnavailable,
                   "the memory node did not answer (crashed, or the network is down?)");
}

Status UcxEndpoint::KeepWaiting(uint32_t round, std::span<const uint16_t> nodes, RetryBudget* budget) {
  // Share the core: on a small machine the server (or the peer thread we wait for) may need it.
  runtime::Yield();
  if (round % 16 != 0) return Status::Ok();
  for (uint16_t n : nodes) DMX_RETURN_IF_ERROR(StillServing(n));
  if (!budget->Spend())
    return budget->Exhausted("memory node " + std::to_string(nodes.empty() ? 0 : nodes[0]));
  return Status::Ok();
}

void UcxEndpoint::Abandon(std::span<const uint16_t> nodes, const Status& why) {
  const bool peer_mode = fabric_.context_->err_mode() == UCP_ERR_HANDLING_MODE_PEER;
  for (uint16_t n : nodes) {
    Remote& r = *remotes_[n];
    if (r.broken.ok()) r.broken = why;
    r.abandoned = true;
    // Force-closing completes the endpoint's outstanding requests with an error, after
    // which UCX writes into no caller buffer. Without peer error handling (shm) verbs never
    // wait on the server, so only RPC replies can be outstanding, into our own buffers.
    if (peer_mode && r.ep != nullptr) {
      if (r.rkey != nullptr) ucp_rkey_destroy(r.rkey);
      r.rkey = nullptr;
      worker_->Close(r.ep, /*force=*/true, kCloseTimeout);
      r.ep = nullptr;
    }
  }
}

void UcxEndpoint::FreePending() {
  for (void* r : pending_) ucp_request_free(r);
  pending_.clear();
}

void UcxEndpoint::OnEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* r = static_cast<Remote*>(arg);
  if (r->broken.ok()) r->broken = FromUcs(status, "connection to memory node " + std::to_string(r->node));
  r->peer_failed = true;
}

}  // namespace dmindex::fabric::ucx
