#include "fabric/ucx/ucx_memory_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "dmindex/global_address.h"
#include "fabric/pool_layout.h"
#include "fabric/ucx/verb_messages.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {
namespace {

// A request whose payload arrives by rendezvous (large requests) after the AM callback.
struct PendingRequest {
  RpcExecutor* executor;
  std::unique_ptr<RpcJob> job;
};

void FreeReply(void* request, ucs_status_t, void* user_data) {
  delete static_cast<UcxMemoryServer::OutgoingReply*>(user_data);
  ucp_request_free(request);
}

// An answer of `status` to request `sequence`, its data the status message so far.
std::unique_ptr<UcxMemoryServer::OutgoingReply> NewReply(uint64_t sequence, const Status& status) {
  auto out = std::make_unique<UcxMemoryServer::OutgoingReply>();
  out->header.sequence = sequence;
  out->header.status_code = static_cast<uint32_t>(status.code());
  const std::string& m = status.message();
  out->header.message_bytes = static_cast<uint32_t>(m.size());
  auto* b = reinterpret_cast<const std::byte*>(m.data());
  out->data.assign(b, b + m.size());
  return out;
}

Status ValidateOptions(const UcxServerOptions& o) {
  if (o.pool_bytes < kMinPoolBytes)
    return Status::InvalidArgument("pool size " + std::to_string(o.pool_bytes) +
                                   " is below the minimum of " + std::to_string(kMinPoolBytes) +
                                   " bytes");
  if (o.pool_bytes > GlobalAddress::kOffsetMask)
    return Status::InvalidArgument("pool size exceeds what a 48-bit offset can address");
  if (o.node.chunk_bytes == 0 || o.node.chunk_bytes % 4096 != 0)
    return Status::InvalidArgument("chunk size must be a non-zero multiple of 4096");
  if (o.node.chunk_bytes > o.pool_bytes - kChunkAreaOffset)
    return Status::InvalidArgument("chunk size " + std::to_string(o.node.chunk_bytes) +
                                   " does not fit in the pool's chunk area");
  if (o.node.rpc_threads == 0 || o.node.rpc_threads > 64)
    return Status::InvalidArgument("RPC threads must be between 1 and 64");
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<UcxMemoryServer>> UcxMemoryServer::Create(const UcxServerOptions& options) {
  DMX_RETURN_IF_ERROR(ValidateOptions(options));
  auto at = ParseHostPort(options.listen);
  if (!at.ok()) return at.status();
  auto key = ClusterKey::Load(options.cluster_key_file);
  if (!key.ok()) return key.status();
  std::unique_ptr<UcxMemoryServer> s(new UcxMemoryServer(options));
  auto listener = ListenTcp(*at, &at->port);
  if (!listener.ok()) return listener.status();
  s->address_ = *at;
  s->log_prefix_ = "dmindex memserver " + s->address_.ToString();

  UcxContextOptions co;
  co.transport = options.transport;
  co.memory_server = true;
  co.pool_on_posix = !options.data_dir.empty() && options.transport == UcxTransport::kShm;
  co.net_devices = options.net_devices;
  if (co.net_devices.empty() && options.transport == UcxTransport::kTcp &&
      IsLoopbackHost(at->host))
    co.net_devices = "lo";  // else UCX adds a lane on eth0 for a peer on this very host
  auto ctx = UcxContext::Create(co);
  if (!ctx.ok()) return ctx.status();
  s->context_ = std::move(ctx).value();

  PoolExport pool;
  DMX_RETURN_IF_ERROR(s->AllocatePool(&pool));
  std::optional<PoolIdentity> restored;
  if (s->pool_dir_ && !s->pool_dir_->created()) {
    auto identity = CheckRestoredPool(reinterpret_cast<std::byte*>(pool.base), options.pool_bytes,
                                      options.node.chunk_bytes, s->pool_dir_->pool_path());
    if (!identity.ok()) return identity.status();
    restored = *identity;
    s->restored_ = true;
  }
  // Which memory node this server is comes from the clients' handshakes (AssignId).
  s->node_ = std::make_unique<MemoryNode>(std::nullopt, reinterpret_cast<std::byte*>(pool.base),
                                          options.pool_bytes, options.node, restored);
  pool.identity = s->node_->identity();
  pool.persistent = s->pool_dir_ != nullptr;
  auto worker = UcxWorker::Create(*s->context_);
  if (!worker.ok()) return worker.status();
  s->worker_ = std::move(worker).value();
  ucs_status_t st = ucp_worker_get_efd(s->worker_->get(), &s->worker_fd_);
  if (st != UCS_OK) return FromUcs(st, "getting the UCX worker's event fd");
  s->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->stop_fd_ < 0) return Status::IoError("eventfd failed");

  DMX_RETURN_IF_ERROR(
      s->worker_->SetAmHandler(wire::kRpcRequestAm, &UcxMemoryServer::OnRequest, s.get()));
  DMX_RETURN_IF_ERROR(
      s->worker_->SetAmHandler(wire::kVerbRequestAm, &UcxMemoryServer::OnVerbs, s.get()));
  s->connections_ = std::make_unique<ServerConnections>(
      std::move(listener).value(), *s->context_, *s->worker_, *s->node_, std::move(pool),
      std::move(key).value(), s->log_prefix_);
  return s;
}

Status UcxMemoryServer::AllocatePool(PoolExport* pool) {
  if (!options_.data_dir.empty()) {
    DMX_RETURN_IF_ERROR(MapPoolFile(&pool_base_));
    return PackPool(pool_base_, pool);
  }
  // UCX must allocate the pool itself: a region it did not allocate cannot be exported by
  // the posix/sysv transports, and UCX then silently emulates every verb with messages.
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                  UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  mp.address = nullptr;
  mp.length = options_.pool_bytes;
  mp.flags = UCP_MEM_MAP_ALLOCATE;
  ucs_status_t st = ucp_mem_map(context_->get(), &mp, &pool_memh_);
  if (st != UCS_OK)
    return FromUcs(st, "allocating a pool of " + std::to_string(options_.pool_bytes >> 20) + " MiB");
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  st = ucp_mem_query(pool_memh_, &attr);
  if (st != UCS_OK) return FromUcs(st, "querying the pool");
  pool_base_ = attr.address;
  return PackPool(pool_base_, pool);
}

Status UcxMemoryServer::MapPoolFile(void** base) {
  auto dir = PoolDir::Open(options_.data_dir, options_.pool_bytes);
  if (!dir.ok()) return dir.status();
  pool_dir_ = std::move(dir).value();
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                  UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  mp.length = options_.pool_bytes;
  if (options_.transport == UcxTransport::kTcp) {
    // Over TCP the server's CPU carries out every verb (UCX emulates them with messages on
    // any memory), so registering the file's own mapping costs nothing.
    auto mapping = pool_dir_->Map(options_.pool_bytes);
    if (!mapping.ok()) return mapping.status();
    own_mapping_ = *mapping;
    mp.address = own_mapping_;
    mp.flags = 0;
  } else {
    // Over shm only a segment UCX allocated is exported (a registered file mapping makes
    // UCX emulate every verb with messages, docs/UCX.md): allocate UCX's posix segment,
    // then put the pool file under it.
    mp.address = nullptr;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
  }
  ucs_status_t st = ucp_mem_map(context_->get(), &mp, &pool_memh_);
  if (st != UCS_OK) return FromUcs(st, "mapping the pool of " + pool_dir_->pool_path());
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  st = ucp_mem_query(pool_memh_, &attr);
  if (st != UCS_OK) return FromUcs(st, "querying the pool");
  if (options_.transport == UcxTransport::kShm)
    DMX_RETURN_IF_ERROR(pool_dir_->AdoptUcxSegment(attr.address, attr.length));
  *base = attr.address;
  return Status::Ok();
}

Status UcxMemoryServer::PackPool(void* base, PoolExport* pool) {
  void* rkey = nullptr;
  size_t rkey_bytes = 0;
  ucs_status_t st = ucp_rkey_pack(context_->get(), pool_memh_, &rkey, &rkey_bytes);
  if (st != UCS_OK) return FromUcs(st, "packing the pool's remote key");
  pool->base = reinterpret_cast<uint64_t>(base);
  pool->bytes = options_.pool_bytes;
  auto* r = static_cast<const std::byte*>(rkey);
  pool->rkey.assign(r, r + rkey_bytes);
  ucp_rkey_buffer_release(rkey);
  return Status::Ok();
}

void UcxMemoryServer::SyncPool() {
  if (msync(pool_base_, options_.pool_bytes, MS_SYNC) != 0)
    std::fprintf(stderr, "%s: warning: msync of %s failed: %s\n", log_prefix_.c_str(),
                 pool_dir_->pool_path().c_str(), std::strerror(errno));
}

void UcxMemoryServer::SyncLoop() {
  std::unique_lock lock(sync_mu_);
  while (!sync_cv_.WaitUntil(lock, runtime::Now() + options_.sync_period,
                             [this] { return stopping_.load(); })) {
    lock.unlock();
    SyncPool();
    lock.lock();
  }
}

UcxMemoryServer::~UcxMemoryServer() {
  Stop();
  executor_.reset();     // handler threads use node_ and signal worker_
  connections_.reset();  // closes client endpoints on worker_
  node_.reset();
  worker_.reset();
  if (pool_dir_ && pool_base_ != nullptr) SyncPool();  // a clean shutdown loses nothing
  if (pool_memh_ != nullptr) ucp_mem_unmap(context_->get(), pool_memh_);
  if (own_mapping_ != nullptr) munmap(own_mapping_, options_.pool_bytes);
  pool_dir_.reset();  // last: its lock keeps another server off the pool until here
  if (stop_fd_ >= 0) close(stop_fd_);
}

Status UcxMemoryServer::Start() {
  if (progress_thread_.joinable() || stopping_.load())
    return Status::InvalidArgument("memory server already started or stopped");
  ucp_worker_h w = worker_->get();
  executor_ = std::make_unique<RpcExecutor>(*node_, options_.node.rpc_threads,
                                            [w] { ucp_worker_signal(w); });
  progress_thread_ = runtime::Thread([this] { ProgressLoop(); });
  if (pool_dir_ && options_.sync_period.count() > 0)
    sync_thread_ = runtime::Thread([this] { SyncLoop(); });
  return Status::Ok();
}

void UcxMemoryServer::Stop() {
  if (stopping_.exchange(true)) return;
  uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof one);
  if (progress_thread_.joinable()) progress_thread_.join();
  {
    std::lock_guard lock(sync_mu_);
    sync_cv_.NotifyAll();
  }
  if (sync_thread_.joinable()) sync_thread_.join();
}

void UcxMemoryServer::ProgressLoop() {
  ucp_worker_h w = worker_->get();
  auto last_event = runtime::Now();
  uint32_t rounds = 0;
  while (!stopping_.load(std::memory_order_relaxed)) {
    // New connections (their handshakes) and departures are serviced every 256 rounds, busy
    // or idle: verbs of connected clients keep this loop busy for as long as they come, and
    // a client connecting meanwhile must still get its handshake answered before its connect
    // timeout (it used to be serviced only in idle rounds, and under load a connecting client
    // timed out with 'receive timed out' while the others were served).
    if (++rounds % 256 == 0) ServiceControl(0);
    bool busy = ucp_worker_progress(w) != 0;
    if (executor_->HasFinished() || !verb_answers_.empty()) {
      SendReplies();
      busy = true;
    }
    if (busy) {
      last_event = runtime::Now();
      continue;
    }
    if (runtime::Now() - last_event < options_.spin) {
      // Spin politely: on a small machine the client we wait for may share this core, and
      // would otherwise not run (to send its next request) until the spin ends.
      runtime::Yield();
      continue;
    }
    // Idle: sleep until UCX, a handler thread, a socket or Stop() wakes us. Arming fails
    // (BUSY) if events slipped in since the last progress; a reply finished just before
    // arming is caught by the check after it (its signal may have been consumed by arm).
    if (ucp_worker_arm(w) == UCS_ERR_BUSY || executor_->HasFinished() || !verb_answers_.empty())
      continue;
    ServiceControl(1000);
    last_event = runtime::Now();
  }
}

void UcxMemoryServer::ServiceControl(int timeout_ms) {
  std::vector<pollfd> fds{{worker_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  connections_->AppendPollFds(&fds);
  // Even when nothing is ready: Service() also expires handshakes that take too long.
  (void)poll(fds.data(), fds.size(), timeout_ms);
  connections_->Service(std::span<const pollfd>(fds).subspan(2));
}

void UcxMemoryServer::SendReplies() {
  for (auto& job : executor_->TakeFinished()) {
    auto out = NewReply(job->sequence, job->status);
    out->data.insert(out->data.end(), job->reply.begin(), job->reply.end());
    Send(job->connection_id, wire::kRpcReplyAm, std::move(out));
  }
  for (auto& [connection_id, out] : verb_answers_)
    Send(connection_id, wire::kVerbReplyAm, std::move(out));
  verb_answers_.clear();
}

void UcxMemoryServer::Send(uint32_t connection_id, unsigned am, std::unique_ptr<OutgoingReply> out) {
  ucp_ep_h ep = connections_->ReplyEndpoint(connection_id);
  if (ep == nullptr) return;  // the client left while its request ran
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.send = &FreeReply;
  p.user_data = out.get();
  // Over TCP never by rendezvous, whose steps the server's UCX takes from inside its
  // progress like the RMA answers verb_messages.h avoids; an eager send that fails (the
  // client died) only completes with an error.
  if (options_.transport == UcxTransport::kTcp) {
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
  }
  ucs_status_ptr_t r = ucp_am_send_nbx(ep, am, &out->header, sizeof out->header,
                                       out->data.data(), out->data.size(), &p);
  // Completed at once (NULL) or failed: the callback never runs, and `out` is freed here.
  if (UCS_PTR_IS_PTR(r)) (void)out.release();  // FreeReply frees it
}

ucs_status_t UcxMemoryServer::OnRequest(void* arg, const void* header, size_t header_length,
                                        void* data, size_t length,
                                        const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxMemoryServer*>(arg);
  if (header_length != sizeof(wire::RpcRequestHeader)) return UCS_OK;  // not ours: drop
  wire::RpcRequestHeader h;
  std::memcpy(&h, header, sizeof h);
  // Not from a signed client's live connection (a stranger on UCX's port, or a client the
  // server dropped): not served, not answered.
  if (!self->connections_->Authentic(h.connection_id, h.token)) return UCS_OK;
  auto job = std::make_unique<RpcJob>();
  job->connection_id = h.connection_id;
  job->sequence = h.sequence;
  job->opcode = h.opcode;
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
    auto* d = static_cast<const std::byte*>(data);
    job->request.assign(d, d + length);
    self->executor_->Submit(std::move(job));
    return UCS_OK;
  }
  job->request.resize(length);
  auto* pending = new PendingRequest{self->executor_.get(), std::move(job)};
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.recv_am = &UcxMemoryServer::OnRequestData;
  p.user_data = pending;
  ucs_status_ptr_t r = ucp_am_recv_data_nbx(self->worker_->get(), data,
                                            pending->job->request.data(), length, &p);
  if (UCS_PTR_IS_PTR(r)) return UCS_INPROGRESS;  // OnRequestData finishes it
  if (r == nullptr) pending->executor->Submit(std::move(pending->job));
  delete pending;
  return UCS_OK;
}

void UcxMemoryServer::OnRequestData(void* request, ucs_status_t status, size_t,
                                    void* user_data) {
  auto* pending = static_cast<PendingRequest*>(user_data);
  if (status == UCS_OK) pending->executor->Submit(std::move(pending->job));
  delete pending;
  ucp_request_free(request);
}

ucs_status_t UcxMemoryServer::OnVerbs(void* arg, const void* header, size_t header_length,
                                      void* data, size_t length, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxMemoryServer*>(arg);
  if (header_length != sizeof(wire::VerbRequestHeader)) return UCS_OK;  // not ours: drop
  wire::VerbRequestHeader h;
  std::memcpy(&h, header, sizeof h);
  if (!self->connections_->Authentic(h.connection_id, h.token)) return UCS_OK;  // as OnRequest
  Status s;
  auto out = NewReply(h.sequence, Status::Ok());
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    s = Status::InvalidArgument("verb batch sent by rendezvous (dmindex clients send them eagerly)");
  } else {
    s = ExecuteVerbs(*self->node_, h.verb_count,
                     std::span(static_cast<const std::byte*>(data), length), &out->data);
  }
  if (!s.ok()) out = NewReply(h.sequence, s);
  // Sent after ucp_worker_progress returns (ProgressLoop), not from inside UCX's handler.
  self->verb_answers_.emplace_back(h.connection_id, std::move(out));
  return UCS_OK;
}

}  // namespace dmindex::fabric::ucx
