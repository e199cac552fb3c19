// Plain TCP sockets for the UCX backend's out-of-band channel: memory servers listen on
// HOST:PORT, clients connect there to exchange UCX worker addresses, the pool's base, size
// and remote key, and keep the socket open as a liveness signal (a server that dies closes
// it; so does a client). Every blocking step is bounded by a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/runtime.h"
#include "dmindex/status.h"

namespace dmindex::fabric::ucx {

using Clock = runtime::Clock;

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
};

// "HOST:PORT" with a numeric port in [0, 65535]; InvalidArgument otherwise.
Result<HostPort> ParseHostPort(std::string_view text);
// "HOST:PORT,HOST:PORT,..." (at least one).
Result<std::vector<HostPort>> ParseHostPortList(std::string_view text);
// Whether `host` resolves to a loopback address (127.0.0.0/8).
bool IsLoopbackHost(const std::string& host);

// Owns a socket file descriptor (non-blocking, TCP_NODELAY, no SIGPIPE on send).
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { Close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Close();

 private:
  int fd_ = -1;
};

// Binds and listens; port 0 picks a free port, which `*bound_port` receives.
Result<Socket> ListenTcp(const HostPort& at, uint16_t* bound_port);
// Accepts one pending connection (the listener is non-blocking); an invalid Socket if none.
Socket AcceptTcp(const Socket& listener, std::string* peer);
// Unavailable if nothing accepts within `timeout` (refused, unreachable, or silent).
Result<Socket> ConnectTcp(const HostPort& to, std::chrono::milliseconds timeout);

// Whole-buffer transfers bounded by `deadline`. Unavailable on timeout or a closed peer.
Status SendAll(const Socket& s, const void* data, size_t len, Clock::time_point deadline);
Status RecvAll(const Socket& s, void* data, size_t len, Clock::time_point deadline);

}  // namespace dmindex::fabric::ucx
