// RPC, and verbs over TCP, as UCX active messages: the request goes out as an AM to the
// memory server, which answers with an AM on the endpoint it created for this connection
// (server_connections.h). One operation in flight per endpoint - an RPC, or a verb batch's
// messages, one per memory node - each call matched by sequence number, so a late reply to
// a call that already timed out is recognised and dropped.
#include <algorithm>
#include <cstring>

#include "fabric/ucx/ucx_endpoint.h"
#include "fabric/ucx/ucx_fabric.h"
#include "fabric/ucx/verb_messages.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {

// Shared with UCX while a rendezvous reply is being received, so that a reply landing
// after its call gave up writes into memory that still exists.
struct UcxEndpoint::Call {
  uint64_t sequence = 0;
  bool done = false;
  Status transport;               // set if receiving the reply itself failed
  wire::RpcReplyHeader header{};
  std::vector<std::byte> data;    // status message, then the reply payload
  // A verb message: its verbs, and what is sent (alive until the send completes).
  std::vector<const Verb*> verbs;
  wire::VerbRequestHeader verb_header{};
  std::vector<std::byte> request;

  // The answer's status; when Ok, *payload is what follows the message.
  Status Outcome(uint16_t node, std::span<const std::byte>* payload) const {
    DMX_RETURN_IF_ERROR(transport);
    const uint32_t mlen = header.message_bytes;
    if (mlen > data.size())
      return Status::Corruption("malformed reply from memory node " + std::to_string(node));
    *payload = std::span(data).subspan(mlen);
    return wire::StatusFromWire(header.status_code,
                                std::string(reinterpret_cast<const char*>(data.data()), mlen));
  }
};

std::shared_ptr<UcxEndpoint::Call> UcxEndpoint::StartCall() {
  auto call = std::make_shared<Call>();
  call->sequence = next_sequence_++;
  calls_.push_back(call);
  return call;
}

ucs_status_ptr_t UcxEndpoint::SendAm(Remote& r, unsigned am, const void* header,
                                     size_t header_bytes, const void* data, size_t data_bytes) {
  ucp_request_param_t p{};
  // Over TCP a rendezvous makes the *server's* UCX send from inside its progress, where a
  // failed send (this process died meanwhile) is fatal to it in UCX 1.13 (verb_messages.h).
  if (fabric_.options().transport == UcxTransport::kTcp) {
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
  }
  return ucp_am_send_nbx(r.ep, am, header, header_bytes, data, data_bytes, &p);
}

Status UcxEndpoint::AwaitCalls(std::span<const std::shared_ptr<Call>> calls,
                               std::span<const uint16_t> nodes) {
  ucs_status_t send_failed = UCS_OK;  // a send that failed: its answer will not come
  Status s = Await(
      [&] {
        bool sent = true;
        for (void* r : pending_) {
          const ucs_status_t st = ucp_request_check_status(r);
          if (st == UCS_INPROGRESS) sent = false;
          else if (st != UCS_OK) send_failed = st;
        }
        return send_failed != UCS_OK ||
               (sent && std::all_of(calls.begin(), calls.end(), [](const auto& c) { return c->done; }));
      },
      nodes);
  if (s.ok() && send_failed != UCS_OK)
    s = FromUcs(send_failed, "sending to memory node " + std::to_string(nodes.empty() ? 0 : nodes[0]));
  calls_.clear();
  if (!s.ok()) Abandon(nodes, s);
  FreePending();
  return s;
}

Status UcxEndpoint::DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) {
  DMX_RETURN_IF_ERROR(Ready(node));
  Remote& r = *remotes_[node];
  const std::shared_ptr<Call> call = StartCall();
  wire::RpcRequestHeader h{r.connection_id, op, 0, call->sequence, r.connection_token};
  ucs_status_ptr_t send = SendAm(r, wire::kRpcRequestAm, &h, sizeof h, request.data(), request.size());
  if (UCS_PTR_IS_ERR(send)) {
    calls_.clear();
    return FromUcs(UCS_PTR_STATUS(send), "sending RPC to memory node " + std::to_string(node));
  }
  if (send != nullptr) pending_.push_back(send);  // header and payload live until it completes
  const uint16_t nodes[1] = {node};
  DMX_RETURN_IF_ERROR(AwaitCalls(std::span(&call, 1), nodes));
  std::span<const std::byte> payload;
  Status s = call->Outcome(node, &payload);
  reply->assign(payload.begin(), payload.end());  // empty if the answer was unreadable
  return s;
}

Status UcxEndpoint::PostMessages(std::span<Verb> verbs) {
  std::vector<std::shared_ptr<Call>> sent;
  std::vector<uint16_t> nodes;
  Status failed;
  for (uint16_t node : touched_) {
    Remote& r = *remotes_[node];
    std::vector<const Verb*> mine;
    for (const Verb& v : verbs)
      if (v.remote.node() == node && v.length > 0) mine.push_back(&v);
    if (mine.empty()) continue;
    const std::shared_ptr<Call> call = StartCall();
    call->verbs = std::move(mine);
    call->request = EncodeVerbs(call->verbs);
    call->verb_header = {r.connection_id, static_cast<uint32_t>(call->verbs.size()), call->sequence,
                         r.connection_token};
    ucs_status_ptr_t send = SendAm(r, wire::kVerbRequestAm, &call->verb_header, sizeof call->verb_header,
                                   call->request.data(), call->request.size());
    if (UCS_PTR_IS_ERR(send)) {
      failed = FromUcs(UCS_PTR_STATUS(send), "sending verbs to memory node " + std::to_string(node));
      break;
    }
    if (send != nullptr) pending_.push_back(send);
    sent.push_back(call);
    nodes.push_back(node);
  }
  // Those sent are answered (or given up on) before this returns, even if a later send failed.
  DMX_RETURN_IF_ERROR(AwaitCalls(sent, nodes));
  DMX_RETURN_IF_ERROR(failed);
  for (size_t i = 0; i < sent.size(); ++i) {
    std::span<const std::byte> payload;
    DMX_RETURN_IF_ERROR(sent[i]->Outcome(nodes[i], &payload));
    DMX_RETURN_IF_ERROR(DeliverVerbResults(sent[i]->verbs, payload));
  }
  return Status::Ok();
}

ucs_status_t UcxEndpoint::OnReply(void* arg, const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxEndpoint*>(arg);
  wire::RpcReplyHeader h;
  if (header_length != sizeof h) return UCS_OK;
  std::memcpy(&h, header, sizeof h);
  auto it = std::find_if(self->calls_.begin(), self->calls_.end(),
                         [&](const auto& c) { return c->sequence == h.sequence; });
  if (it == self->calls_.end()) return UCS_OK;  // stale: drop it
  Call* call = it->get();
  call->header = h;
  call->data.resize(length);
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
    if (length > 0) std::memcpy(call->data.data(), data, length);
    call->done = true;
    return UCS_OK;
  }
  // A large reply (over ~8 KB) comes by rendezvous: fetch it into the call's buffer.
  auto* rndv = new std::shared_ptr<Call>(*it);  // owned by the receive
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.recv_am = [](void* request, ucs_status_t status, size_t, void* user_data) {
    auto* c = static_cast<std::shared_ptr<Call>*>(user_data);
    if (status != UCS_OK) (*c)->transport = FromUcs(status, "receiving an RPC reply");
    (*c)->done = true;
    delete c;
    ucp_request_free(request);
  };
  p.user_data = rndv;
  ucs_status_ptr_t r =
      ucp_am_recv_data_nbx(self->worker_->get(), data, call->data.data(), length, &p);
  if (UCS_PTR_IS_PTR(r)) return UCS_INPROGRESS;
  if (UCS_PTR_IS_ERR(r)) call->transport = FromUcs(UCS_PTR_STATUS(r), "receiving an RPC reply");
  call->done = true;
  delete rndv;
  return UCS_OK;
}

}  // namespace dmindex::fabric::ucx
