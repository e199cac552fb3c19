#include "fabric/ucx/tcp_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace dmindex::fabric::ucx {
namespace {

std::string Errno(int err) { return std::strerror(err); }

Status Resolve(const HostPort& hp, sockaddr_in* out) {
  addrinfo hints{};
  hints.ai_family = AF_INET;  // the bootstrap channel is IPv4; UCX picks its own transport
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(hp.host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr)
    return Status::InvalidArgument("cannot resolve host '" + hp.host + "': " + gai_strerror(rc));
  std::memcpy(out, res->ai_addr, sizeof(sockaddr_in));
  out->sin_port = htons(hp.port);
  freeaddrinfo(res);
  return Status::Ok();
}

void Configure(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool WaitReady(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - runtime::Now());
    if (left.count() < 0) return false;
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 1000)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return true;  // let the caller's syscall report the error
  }
}

}  // namespace

Result<HostPort> ParseHostPort(std::string_view text) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("bad address '" + std::string(text) + "': " + why +
                                   " (expected HOST:PORT, e.g. 127.0.0.1:7000)");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no ':'");
  if (colon == 0) return bad("empty host");
  std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535)
    return bad("port is not a number in [0, 65535]");
  return HostPort{std::string(text.substr(0, colon)), static_cast<uint16_t>(value)};
}

Result<std::vector<HostPort>> ParseHostPortList(std::string_view text) {
  std::vector<HostPort> out;
  while (true) {
    size_t comma = text.find(',');
    auto one = ParseHostPort(text.substr(0, comma));
    if (!one.ok()) return one.status();
    out.push_back(*one);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

bool IsLoopbackHost(const std::string& host) {
  sockaddr_in a{};
  if (!Resolve(HostPort{host, 0}, &a).ok()) return false;
  return (ntohl(a.sin_addr.s_addr) >> 24) == 127;
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Socket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Socket> ListenTcp(const HostPort& at, uint16_t* bound_port) {
  sockaddr_in addr{};
  DMX_RETURN_IF_ERROR(Resolve(at, &addr));
  Socket s(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Status::IoError("socket: " + Errno(errno));
  int one = 1;
  // Lets a restarted server reuse a port whose old connections linger in TIME_WAIT; a port
  // with a live listener still fails with EADDRINUSE.
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return Status::Unavailable("cannot listen on " + at.ToString() + ": " + Errno(errno));
  if (listen(s.fd(), 128) != 0)
    return Status::Unavailable("cannot listen on " + at.ToString() + ": " + Errno(errno));
  socklen_t len = sizeof addr;
  getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  *bound_port = ntohs(addr.sin_port);
  Configure(s.fd());
  return s;
}

Socket AcceptTcp(const Socket& listener, std::string* peer) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  int fd = accept4(listener.fd(), reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
  if (fd < 0) return Socket();
  Configure(fd);
  char ip[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
  *peer = std::string(ip) + ":" + std::to_string(ntohs(addr.sin_port));
  return Socket(fd);
}

Result<Socket> ConnectTcp(const HostPort& to, std::chrono::milliseconds timeout) {
  sockaddr_in addr{};
  DMX_RETURN_IF_ERROR(Resolve(to, &addr));
  Socket s(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Status::IoError("socket: " + Errno(errno));
  Configure(s.fd());
  const std::string what = "cannot connect to memory server " + to.ToString() + ": ";
  if (connect(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) return Status::Unavailable(what + Errno(errno));
    if (!WaitReady(s.fd(), POLLOUT, runtime::Now() + timeout))
      return Status::Unavailable(what + "no answer within " + std::to_string(timeout.count()) +
                                 " ms");
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return Status::Unavailable(what + Errno(err));
  }
  return s;
}

Status SendAll(const Socket& s, const void* data, size_t len, Clock::time_point deadline) {
  auto* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = send(s.fd(), p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitReady(s.fd(), POLLOUT, deadline)) return Status::Unavailable("send timed out");
    } else {
      return Status::Unavailable(std::string("connection lost: ") + Errno(errno));
    }
  }
  return Status::Ok();
}

Status RecvAll(const Socket& s, void* data, size_t len, Clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = recv(s.fd(), p, len, 0);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
    } else if (n == 0) {
      return Status::Unavailable("connection closed by peer");
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!WaitReady(s.fd(), POLLIN, deadline)) return Status::Unavailable("receive timed out");
    } else {
      return Status::Unavailable(std::string("connection lost: ") + Errno(errno));
    }
  }
  return Status::Ok();
}

}  // namespace dmindex::fabric::ucx
