#include "fabric/ucx/ucx_context.h"

#include "common/runtime.h"


namespace dmindex::fabric::ucx {
namespace {

using Clock = runtime::Clock;

struct ConfigDeleter {
  void operator()(ucp_config_t* c) const { ucp_config_release(c); }
};

Status Modify(ucp_config_t* config, const char* name, const std::string& value) {
  ucs_status_t s = ucp_config_modify(config, name, value.c_str());
  return s == UCS_OK ? Status::Ok() : FromUcs(s, std::string("UCX setting ") + name + "=" + value);
}

}  // namespace

Result<UcxTransport> ParseUcxTransport(std::string_view name) {
  if (name == "shm") return UcxTransport::kShm;
  if (name == "tcp") return UcxTransport::kTcp;
  return Status::InvalidArgument("unknown UCX transport '" + std::string(name) +
                                 "' (expected shm or tcp)");
}

const char* UcxTransportName(UcxTransport t) { return t == UcxTransport::kShm ? "shm" : "tcp"; }

Status FromUcs(ucs_status_t status, std::string_view what) {
  std::string m = std::string(what) + ": " + ucs_status_string(status);
  switch (status) {
    case UCS_OK:
      return Status::Ok();
    // The peer is gone or unreachable (over shm a dead server shows as a segment that can
    // no longer be attached).
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_CANCELED:
    case UCS_ERR_REJECTED:
    case UCS_ERR_TIMED_OUT:
    case UCS_ERR_IO_ERROR:
    case UCS_ERR_SHMEM_SEGMENT:
      return Status::Unavailable(m);
    case UCS_ERR_NO_MEMORY:
    case UCS_ERR_NO_RESOURCE:
      return Status::OutOfSpace(m);
    case UCS_ERR_INVALID_PARAM:
      return Status::InvalidArgument(m);
    default:
      if (UCS_IS_LINK_ERROR(status) || UCS_IS_ENDPOINT_ERROR(status)) return Status::Unavailable(m);
      return Status::IoError(m);
  }
}

Result<std::unique_ptr<UcxContext>> UcxContext::Create(const UcxContextOptions& options) {
  std::unique_ptr<UcxContext> ctx(new UcxContext(options));
  ucp_config_t* raw = nullptr;
  ucs_status_t s = ucp_config_read(nullptr, nullptr, &raw);
  if (s != UCS_OK) return FromUcs(s, "reading UCX configuration");
  std::unique_ptr<ucp_config_t, ConfigDeleter> config(raw);
  // Only the transport asked for: with "all", UCX may put shared-memory traffic on TCP lanes
  // or the reverse, and the shm/tcp comparison would measure a mix.
  //
  // A memory server over shared memory leaves out UCX's System V transport ("sm" without
  // "sysv"): UCX 1.13 creates its segments with the fixed mode 0660 (UCT_MM_SYSV_PERM), so
  // any process of the server's group could attach the pool - or the server's receive
  // FIFO - and read or write it without the cluster key. The posix transport's segments
  // are files created 0600 and unlinked at once, reached by clients through
  // /proc/<server>/fd/<n>, which only the server's user may open (docs/UCX.md, "Who can
  // reach the pool"). Clients keep "sm": they reach the server's posix segments with it.
  const char* tls = options.transport == UcxTransport::kTcp ? "tcp" : options.memory_server ? "posix,cma" : "sm";
  DMX_RETURN_IF_ERROR(Modify(config.get(), "TLS", tls));
  if (!options.net_devices.empty())
    DMX_RETURN_IF_ERROR(Modify(config.get(), "NET_DEVICES", options.net_devices));
  // The memory server's pool is allocated by UCX (see ucx_memory_server.cc) and must come
  // back zeroed, as MemoryNode requires: only methods that map fresh pages qualify, so not
  // "heap" (malloc) and not "thp" (posix_memalign plus madvise: a reused heap block; under
  // AddressSanitizer its first 4 KB, the catalog, came back filled with 0xbe). Shared-memory
  // methods come first so the pool can be exported over shm; not sysv (mode 0660, above),
  // and no "md:*" that could fall back to it. A persistent pool (--data-dir over shm) must be
  // a posix segment: its descriptor is what the pool file replaces (pool_dir.cc).
  DMX_RETURN_IF_ERROR(Modify(config.get(), "ALLOC_PRIO", options.pool_on_posix ? "md:posix" : "md:posix,huge,mmap"));

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  // Over TCP, verbs are dmindex's own messages (verb_messages.h): without the RMA and atomic
  // features UCX installs no handlers for its emulated PUT/GET/atomics, so a peer that
  // reaches UCX's own port cannot reach the pool through them - only through our messages,
  // which need a signed connection's token (docs/UCX.md, "Who can reach the pool").
  params.features = options.transport == UcxTransport::kTcp
                        ? UCP_FEATURE_AM
                        : UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_AM;
  if (options.memory_server) params.features |= UCP_FEATURE_WAKEUP;
  // Clients create one worker per thread, concurrently, on one context.
  params.mt_workers_shared = options.memory_server ? 0 : 1;
  s = ucp_init(&params, config.get(), &ctx->context_);
  if (s != UCS_OK) return FromUcs(s, "initialising UCX");
  return ctx;
}

UcxContext::~UcxContext() {
  if (context_ != nullptr) ucp_cleanup(context_);
}

ucp_err_handling_mode_t UcxContext::err_mode() const {
  // TCP: peer error handling, so a dead peer fails the endpoint's requests (and
  // force-closing is allowed) instead of leaving them pending. Shared memory: UCX 1.13
  // disables the posix/sysv transports under peer error handling, so none; a dead peer is
  // detected through the out-of-band socket instead (see liveness_monitor.h).
  return options_.transport == UcxTransport::kTcp ? UCP_ERR_HANDLING_MODE_PEER
                                                  : UCP_ERR_HANDLING_MODE_NONE;
}

Result<std::unique_ptr<UcxWorker>> UcxWorker::Create(const UcxContext& context) {
  std::unique_ptr<UcxWorker> w(new UcxWorker());
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucs_status_t s = ucp_worker_create(context.get(), &params, &w->worker_);
  if (s != UCS_OK) return FromUcs(s, "creating UCX worker");
  ucp_address_t* addr = nullptr;
  size_t len = 0;
  s = ucp_worker_get_address(w->worker_, &addr, &len);
  if (s != UCS_OK) return FromUcs(s, "getting UCX worker address");
  auto* bytes = reinterpret_cast<const std::byte*>(addr);
  w->address_.assign(bytes, bytes + len);
  ucp_worker_release_address(w->worker_, addr);
  return w;
}

UcxWorker::~UcxWorker() {
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
}

Result<ucp_ep_h> UcxWorker::Connect(std::span<const std::byte> remote,
                                    ucp_err_handling_mode_t mode, ucp_err_handler_cb_t on_error,
                                    void* arg) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(remote.data());
  params.err_mode = mode;
  if (on_error != nullptr) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler.cb = on_error;
    params.err_handler.arg = arg;
  }
  ucp_ep_h ep = nullptr;
  ucs_status_t s = ucp_ep_create(worker_, &params, &ep);
  if (s != UCS_OK) return FromUcs(s, "creating UCX endpoint");
  return ep;
}

Status UcxWorker::SetAmHandler(unsigned id, ucp_am_recv_callback_t handler, void* arg) {
  ucp_am_handler_param_t am{};
  am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                  UCP_AM_HANDLER_PARAM_FIELD_ARG;
  am.id = id;
  am.cb = handler;
  am.arg = arg;
  ucs_status_t s = ucp_worker_set_am_recv_handler(worker_, &am);
  return s == UCS_OK ? Status::Ok() : FromUcs(s, "registering an active-message handler");
}

void UcxWorker::Close(ucp_ep_h ep, bool force, std::chrono::milliseconds timeout) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &param);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) return;
  const auto deadline = runtime::Now() + timeout;
  while (ucp_request_check_status(req) == UCS_INPROGRESS) {
    ucp_worker_progress(worker_);
    if (runtime::Now() > deadline) break;  // an unresponsive peer: give up on a clean close
  }
  ucp_request_free(req);
}

}  // namespace dmindex::fabric::ucx
