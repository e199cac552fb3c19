// RPC over UCX active messages: the request goes out as an AM to the memory server, which
// answers with an AM on the endpoint it created for this connection (server_connections.h).
// One call in flight per endpoint, matched by sequence number, so a late reply to a call
// that already timed out is recognised and dropped.
#include <cstring>

#include "fabric/ucx/ucx_endpoint.h"
#include "fabric/ucx/ucx_fabric.h"
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
};

Status UcxEndpoint::DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) {
  DMX_RETURN_IF_ERROR(Ready(node));
  Remote& r = *remotes_[node];
  auto call = std::make_shared<Call>();
  call->sequence = next_sequence_++;
  call_ = call;
  wire::RpcRequestHeader h{r.connection_id, op, 0, call->sequence};
  ucp_request_param_t p{};
  ucs_status_ptr_t send = ucp_am_send_nbx(r.ep, wire::kRpcRequestAm, &h, sizeof h, request.data(),
                                          request.size(), &p);
  if (UCS_PTR_IS_ERR(send)) {
    call_.reset();
    return FromUcs(UCS_PTR_STATUS(send), "sending RPC to memory node " + std::to_string(node));
  }
  if (send != nullptr) pending_.push_back(send);  // header and payload live until it completes
  const uint16_t nodes[1] = {node};
  Status s = Await(
      [&] {
        return call->done && (send == nullptr || ucp_request_check_status(send) != UCS_INPROGRESS);
      },
      nodes);
  call_.reset();
  if (!s.ok()) {
    Abandon(nodes, s);
    FreePending();
    return s;
  }
  FreePending();
  DMX_RETURN_IF_ERROR(call->transport);
  const uint32_t mlen = call->header.message_bytes;
  if (mlen > call->data.size())
    return Status::Corruption("malformed RPC reply from memory node " + std::to_string(node));
  reply->assign(call->data.begin() + mlen, call->data.end());
  return wire::StatusFromWire(call->header.status_code,
                              std::string(reinterpret_cast<const char*>(call->data.data()), mlen));
}

ucs_status_t UcxEndpoint::OnReply(void* arg, const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxEndpoint*>(arg);
  wire::RpcReplyHeader h;
  if (header_length != sizeof h) return UCS_OK;
  std::memcpy(&h, header, sizeof h);
  Call* call = self->call_.get();
  if (call == nullptr || call->sequence != h.sequence) return UCS_OK;  // stale: drop it
  call->header = h;
  call->data.resize(length);
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
    if (length > 0) std::memcpy(call->data.data(), data, length);
    call->done = true;
    return UCS_OK;
  }
  // A large reply (over ~8 KB) comes by rendezvous: fetch it into the call's buffer.
  auto* rndv = new std::shared_ptr<Call>(self->call_);  // owned by the receive
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
