// The UCX objects both sides of the UCX backend need: a configured UCP context (which
// transports, which devices), workers, endpoints from exchanged worker addresses, and the
// translation of UCX status codes into dmindex Status. UCX settings are chosen here, in one
// place; docs/UCX.md explains each.
#pragma once

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmindex/status.h"

namespace dmindex::fabric::ucx {

enum class UcxTransport : uint8_t {
  kShm,  // UCX shared-memory transports (posix/sysv/cma): memory servers on this host
  kTcp,  // UCX TCP transport: GET and atomics are emulated by the server's progress thread
};

Result<UcxTransport> ParseUcxTransport(std::string_view name);  // "shm" | "tcp"
const char* UcxTransportName(UcxTransport t);

struct UcxContextOptions {
  UcxTransport transport = UcxTransport::kShm;
  // UCX_NET_DEVICES for TCP, e.g. "lo" on one host; empty keeps UCX's default (all).
  std::string net_devices;
  // Memory-server side: needs the wake-up feature (event fd) for its sleeping progress loop.
  bool memory_server = false;
  // Memory-server side with a persistent pool over shm: the pool must be UCX's posix segment
  // (pool_dir.h puts the pool file under it), never a System V one.
  bool pool_on_posix = false;
};

// Turns a UCX status into a dmindex Status: lost or unreachable peers are Unavailable.
Status FromUcs(ucs_status_t status, std::string_view what);

class UcxContext {
 public:
  static Result<std::unique_ptr<UcxContext>> Create(const UcxContextOptions& options);
  ~UcxContext();
  UcxContext(const UcxContext&) = delete;
  UcxContext& operator=(const UcxContext&) = delete;

  ucp_context_h get() const { return context_; }
  UcxTransport transport() const { return options_.transport; }
  // Error handling for endpoints of this transport; see ucx_context.cc for why it differs.
  ucp_err_handling_mode_t err_mode() const;

 private:
  explicit UcxContext(const UcxContextOptions& o) : options_(o) {}
  UcxContextOptions options_;
  ucp_context_h context_ = nullptr;
};

// One UCP worker, used by one thread only (UCS_THREAD_MODE_SINGLE).
class UcxWorker {
 public:
  static Result<std::unique_ptr<UcxWorker>> Create(const UcxContext& context);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_worker_h get() const { return worker_; }
  const std::vector<std::byte>& address() const { return address_; }

  // An endpoint to the worker whose packed address is `remote`. `on_error` (may be null)
  // runs from progress when a peer-failure-handling endpoint breaks.
  Result<ucp_ep_h> Connect(std::span<const std::byte> remote, ucp_err_handling_mode_t mode,
                           ucp_err_handler_cb_t on_error, void* arg);
  // Routes active messages `id` to `handler(arg, ...)`, called from this worker's progress.
  Status SetAmHandler(unsigned id, ucp_am_recv_callback_t handler, void* arg);
  // Closes `ep`, progressing this worker for at most `timeout`. Force-closing cancels
  // outstanding operations and needs peer error handling on both sides.
  void Close(ucp_ep_h ep, bool force, std::chrono::milliseconds timeout);

 private:
  UcxWorker() = default;
  ucp_worker_h worker_ = nullptr;
  std::vector<std::byte> address_;
};

}  // namespace dmindex::fabric::ucx
