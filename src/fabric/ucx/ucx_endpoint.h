// One thread's handle on the UCX fabric: its own UCP worker, and per memory server a UCP
// endpoint, the unpacked remote key of the pool and the handshake socket (whose closing
// tells the server to drop its reply endpoint for us). Verbs: ucx_endpoint.cc; RPC and
// verbs as messages (TCP): ucx_endpoint_rpc.cc.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/retry.h"
#include "fabric/endpoint.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/ucx_context.h"

namespace dmindex::fabric::ucx {

class UcxFabric;

class UcxEndpoint final : public Endpoint {
 public:
  static Result<std::unique_ptr<UcxEndpoint>> Connect(UcxFabric& fabric);
  ~UcxEndpoint() override;
  bool GaveUpAPool() const override;

 protected:
  Status DoPost(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) override;
  Status DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) override;

 private:
  struct Remote {
    uint16_t node = 0;
    Socket socket;
    uint32_t connection_id = 0;  // the server's name for this connection, sent with RPCs
    uint64_t connection_token = 0;  // its secret (the signed Welcome's), sent likewise
    ucp_ep_h ep = nullptr;
    ucp_rkey_h rkey = nullptr;
    uint64_t base = 0;           // remote address of pool offset 0
    uint64_t bytes = 0;
    Status broken;               // non-OK once unusable (handshake failed, peer error, timeout)
    bool peer_failed = false;    // broken by UCX's peer error (the server died, TCP)
    uint32_t generation = 0;     // the monitor's generation of the node when connected
    bool reattach_failed = false;  // broken by a reattachment to a persistent pool's server
    bool abandoned = false;        // broken by a wait given up (a stall): the server may answer again
  };
  struct Call;  // an RPC in flight (ucx_endpoint_rpc.cc)

  explicit UcxEndpoint(UcxFabric& fabric) : fabric_(fabric) {}
  Status ConnectRemote(Remote& r);
  // Before an operation on `node`: fails it if the fabric lost a pool; waits (up to
  // op_timeout) while a persistent pool's server is restarting; reconnects to a server that
  // came back since this endpoint last used it. OK when the node can be used.
  Status Ready(uint16_t node);
  // While an operation waits for its answer: Unavailable once the node went away, came back
  // (what was in flight may or may not have taken effect) or broke, or a pool was lost.
  Status StillServing(uint16_t node) const;
  // Drops the connection to a server that went away and connects to it again.
  Status Reattach(Remote& r);
  // Reattach, and for a persistent pool's server whose handshake fails (it died again just
  // as the monitor saw it back, or stalls): wait as for a restarting server and try again -
  // at once when the monitor sees it come back once more, else once a second - within the
  // operation's answer limit. Not a storm of failures from a failed attempt kept as `broken`.
  Status ReattachPatiently(Remote& r);
  Status CheckTarget(const Verb& v);
  ucs_status_ptr_t Issue(Verb& v);
  // DoPost over shared memory: the verbs as UCX RMA, straight into the server's pool.
  Status PostRma(std::span<Verb> verbs, Ordering ordering);
  // DoPost over TCP: per memory node one message of its verbs, one answer (verb_messages.h).
  Status PostMessages(std::span<Verb> verbs);
  // A new call in flight (calls_), with the next sequence number.
  std::shared_ptr<Call> StartCall();
  // Sends an active message to r's server; over TCP eagerly (never by rendezvous).
  ucs_status_ptr_t SendAm(Remote& r, unsigned am, const void* header, size_t header_bytes,
                          const void* data, size_t data_bytes);
  // Waits until every call of `calls` is answered and every send in pending_ completed;
  // on failure abandons `nodes`. Frees pending_ and ends calls_ either way.
  Status AwaitCalls(std::span<const std::shared_ptr<Call>> calls, std::span<const uint16_t> nodes);
  // Progresses the worker until done() holds. Unavailable once a server in `nodes` is
  // down or broken, or after op_timeout.
  template <typename Done>
  Status Await(Done done, std::span<const uint16_t> nodes);
  // Await's slow path, after the first spin rounds: yields the core, checks `nodes` and,
  // every 16 rounds, spends from the wait's budget (AnswerLimit: its time starts then).
  Status KeepWaiting(uint32_t round, std::span<const uint16_t> nodes, RetryBudget* budget);
  // How long a verb or RPC may wait for its answer: the fabric's op_timeout.
  RetryLimit AnswerLimit() const;
  // After a failed wait: marks `nodes` broken for this endpoint and, where UCX allows it,
  // cancels their outstanding operations so that none writes into a caller's buffer later.
  void Abandon(std::span<const uint16_t> nodes, const Status& why);
  void FreePending();
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);
  static ucs_status_t OnReply(void* arg, const void* header, size_t header_length, void* data,
                              size_t length, const ucp_am_recv_param_t* param);

  UcxFabric& fabric_;
  std::unique_ptr<UcxWorker> worker_;
  std::vector<std::unique_ptr<Remote>> remotes_;  // by node; stable for UCX callbacks
  std::vector<void*> pending_;                    // requests of the batch in flight
  std::vector<uint16_t> touched_;                 // nodes of the batch in flight
  std::vector<std::shared_ptr<Call>> calls_;      // the RPC, or verb messages, in flight
  uint64_t next_sequence_ = 1;
};

template <typename Done>
Status UcxEndpoint::Await(Done done, std::span<const uint16_t> nodes) {
  // Spin first: shared-memory completions and TCP round trips take microseconds.
  constexpr uint32_t kSpinRounds = 32;
  RetryBudget answer(AnswerLimit(), "waiting for an answer from");
  for (uint32_t round = 0;; ++round) {
    ucp_worker_progress(worker_->get());
    if (done()) return Status::Ok();
    if (round >= kSpinRounds) DMX_RETURN_IF_ERROR(KeepWaiting(round, nodes, &answer));
  }
}

}  // namespace dmindex::fabric::ucx
