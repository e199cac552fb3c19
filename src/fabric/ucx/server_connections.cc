#include "fabric/ucx/server_connections.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dmindex::fabric::ucx {
namespace {

// A client that has not completed its handshake by then is dropped: it holds a socket and
// would otherwise sit there forever (port scanners, stuck peers).
constexpr auto kHandshakeTimeout = std::chrono::seconds(5);
// How long a departing client's endpoint may take to close before the server moves on.
constexpr auto kCloseTimeout = std::chrono::milliseconds(100);
// Connections still in their handshake - peers that have not proven the key: beyond this
// many one is dropped, so a flood of idle connections cannot exhaust the server's
// descriptors and memory. Which one: see DropOldestPendingIfFull. A peer that proved the
// key is established at once and counts no more, so unsigned peers hold at most these
// slots and never one of a signed client's.
constexpr size_t kMaxPendingHandshakes = 64;
// Connections accepted per Service() call: between batches the server goes back to poll()
// and reads the handshakes that arrived, instead of accepting a whole flood first.
constexpr size_t kAcceptsPerService = kMaxPendingHandshakes / 4;

}  // namespace

struct ServerConnections::Connection {
  Socket socket;
  std::string peer;
  uint32_t id = 0;
  Clock::time_point accepted;
  Nonce nonce{};                 // of our Challenge: the Hello must be signed over it
  uint64_t token = 0;            // Welcome::connection_token, once welcomed
  std::vector<std::byte> inbox;  // handshake bytes received so far
  bool established = false;
  ucp_ep_h ep = nullptr;         // endpoint connections only
  bool ep_failed = false;        // set by UCX's error callback (TCP)
};

ServerConnections::ServerConnections(Socket listener, const UcxContext& context,
                                     UcxWorker& worker, MemoryNode& node, PoolExport pool,
                                     ClusterKey key, std::string log_prefix)
    : listener_(std::move(listener)),
      context_(context),
      worker_(worker),
      node_(node),
      pool_(std::move(pool)),
      key_(std::move(key)),
      log_prefix_(std::move(log_prefix)) {}

ServerConnections::~ServerConnections() {
  for (auto& c : connections_) Drop(*c);
}

void ServerConnections::Log(const std::string& message) const {
  std::fprintf(stderr, "%s: %s\n", log_prefix_.c_str(), message.c_str());
}

void ServerConnections::AppendPollFds(std::vector<pollfd>* fds) const {
  fds->push_back({listener_.fd(), POLLIN, 0});
  for (const auto& c : connections_) fds->push_back({c->socket.fd(), POLLIN, 0});
}

void ServerConnections::Service(std::span<const pollfd> polled) {
  // `polled` mirrors AppendPollFds: the listener, then connections_ in order.
  const auto now = runtime::Now();
  for (size_t i = 0; i < connections_.size(); ++i) {
    Connection& c = *connections_[i];
    Step step = Step::kKeep;
    if (i + 1 < polled.size() && polled[i + 1].fd == c.socket.fd() && polled[i + 1].revents != 0)
      step = Receive(c);
    if (step == Step::kKeep && !c.established && now - c.accepted > kHandshakeTimeout) {
      Log("dropping connection from " + c.peer + ": no handshake within 5 s");
      step = Step::kDrop;
    }
    if (step == Step::kDrop) Drop(c);
  }
  std::erase_if(connections_, [](const auto& c) { return !c->socket.valid(); });
  if (!polled.empty() && polled[0].revents != 0) Accept();
}

void ServerConnections::Accept() {
  for (size_t accepted = 0; accepted < kAcceptsPerService; ++accepted) {
    std::string peer;
    Socket s = AcceptTcp(listener_, &peer);
    if (!s.valid()) return;
    DropOldestPendingIfFull();
    auto c = std::make_unique<Connection>();
    c->socket = std::move(s);
    c->peer = std::move(peer);
    c->id = next_id_++;
    c->accepted = runtime::Now();
    c->nonce = RandomNonce();
    wire::Challenge challenge{};
    std::memcpy(challenge.magic, wire::kMagic, sizeof challenge.magic);
    std::memcpy(challenge.nonce, c->nonce.data(), sizeof challenge.nonce);
    // 24 bytes into a fresh socket's buffer: does not block in practice.
    if (!SendAll(c->socket, &challenge, sizeof challenge, runtime::Now() + std::chrono::seconds(1)).ok())
      continue;
    connections_.push_back(std::move(c));
  }
}

void ServerConnections::DropOldestPendingIfFull() {
  auto pending = [this] {
    return std::count_if(connections_.begin(), connections_.end(),
                         [](const auto& c) { return !c->established && c->socket.valid(); });
  };
  if (static_cast<size_t>(pending()) < kMaxPendingHandshakes) return;
  // Full. First read what the pending peers have sent: a signed Hello already here (in the
  // socket, not yet polled) completes now rather than being dropped with its connection.
  // So no handshake whose signature reached the server is ever dropped for a newcomer.
  for (auto& c : connections_)
    if (!c->established && c->socket.valid() && Receive(*c) == Step::kDrop) Drop(*c);
  std::erase_if(connections_, [](const auto& c) { return !c->socket.valid(); });
  const size_t still = static_cast<size_t>(pending());
  if (still < kMaxPendingHandshakes) return;
  // Still full of peers that have not proven the key: drop the oldest of those that sent
  // nothing at all (a flood's idle connections), else the oldest partial handshake.
  Connection* victim = nullptr;
  for (auto& c : connections_) {
    if (c->established) continue;
    const bool silent = c->inbox.empty();
    const bool victim_silent = victim != nullptr && victim->inbox.empty();
    if (victim == nullptr || (silent && !victim_silent) || (silent == victim_silent && c->accepted < victim->accepted))
      victim = c.get();
  }
  Log("dropping connection from " + victim->peer + ": " + std::to_string(still) +
      " handshakes pending, this one the oldest " + (victim->inbox.empty() ? "silent one" : "partial one"));
  Drop(*victim);
  std::erase_if(connections_, [](const auto& c) { return !c->socket.valid(); });
}

ServerConnections::Step ServerConnections::Receive(Connection& c) {
  std::byte buf[4096];
  for (;;) {
    ssize_t n = recv(c.socket.fd(), buf, sizeof buf, 0);
    if (n == 0) return Step::kDrop;  // the client left (or died): its socket closed
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      return Step::kDrop;
    }
    if (c.established) {
      Log("dropping connection from " + c.peer + ": unexpected bytes after the handshake");
      return Step::kDrop;
    }
    c.inbox.insert(c.inbox.end(), buf, buf + n);
    if (c.inbox.size() > sizeof(wire::Hello) + wire::kMaxBlobBytes) break;  // judged below
  }
  return c.established ? Step::kKeep : TryHandshake(c);
}

ServerConnections::Step ServerConnections::TryHandshake(Connection& c) {
  wire::Hello hello;
  const size_t have = c.inbox.size();
  // Nothing yet (a silent peer read while the pending table is full): nothing to judge, and
  // an empty inbox's data() may be null, which memcmp must not get even for 0 bytes.
  if (have == 0) return Step::kKeep;
  if (have < sizeof hello) {
    // Judge the magic as soon as it can be: garbage is dropped without waiting for more.
    if (std::memcmp(c.inbox.data(), wire::kMagic, std::min(have, sizeof wire::kMagic)) != 0) {
      Log("dropping connection from " + c.peer + ": not a dmindex client of this version (bad magic)");
      return Step::kDrop;
    }
    return Step::kKeep;
  }
  std::memcpy(&hello, c.inbox.data(), sizeof hello);
  if (std::string defect = wire::HelloDefect(hello); !defect.empty()) {
    Log("dropping connection from " + c.peer + ": malformed handshake: " + defect);
    return Step::kDrop;
  }
  const size_t total = sizeof hello + hello.worker_address_bytes;
  if (have < total) return Step::kKeep;
  if (have > total) {
    Log("dropping connection from " + c.peer + ": bytes beyond the handshake");
    return Step::kDrop;
  }
  // Nothing of the Hello is used before this: not the node id, not the worker address.
  const auto address = std::span(c.inbox).subspan(sizeof hello);
  Mac mac;
  std::memcpy(mac.data(), hello.mac, mac.size());
  if (!SameMac(mac, wire::HelloMac(key_, c.nonce, hello, address))) {
    return Refuse(c, Status::InvalidArgument(
                         "handshake not signed with this cluster's key (give the client the "
                         "memory server's key file with --cluster-key)"));
  }
  if (hello.transport != static_cast<uint32_t>(context_.transport())) {
    return Refuse(c, Status::InvalidArgument(
                         std::string("this memory server uses UCX transport ") +
                         UcxTransportName(context_.transport()) + ", the client asked for " +
                         UcxTransportName(static_cast<UcxTransport>(hello.transport))));
  }
  // Every connection, monitor or endpoint, says which node it takes this server for.
  if (Status s = AssignNodeId(c, hello.memory_node); !s.ok()) return Refuse(c, s);
  if (static_cast<wire::ConnectionKind>(hello.kind) == wire::ConnectionKind::kEndpoint) {
    auto ep = worker_.Connect(address, context_.err_mode(), &ServerConnections::OnEndpointError, &c);
    if (!ep.ok()) return Refuse(c, ep.status());
    c.ep = *ep;
  }
  return SendWelcome(c, hello);
}

ServerConnections::Step ServerConnections::SendWelcome(Connection& c, const wire::Hello& hello) {
  wire::Welcome w{};
  std::memcpy(w.magic, wire::kMagic, sizeof w.magic);
  w.connection_id = c.id;
  w.pool_base = pool_.base;
  w.pool_bytes = pool_.bytes;
  w.rkey_bytes = static_cast<uint32_t>(pool_.rkey.size());
  w.worker_address_bytes = static_cast<uint32_t>(worker_.address().size());
  w.pool_id = pool_.identity.id;
  w.pool_flags = pool_.persistent ? wire::kPoolPersistent : 0;
  w.pool_created_unix_ms = pool_.identity.created_unix_ms;
  const Nonce secret = RandomNonce();
  std::memcpy(&c.token, secret.data(), sizeof c.token);
  w.connection_token = c.token;
  Nonce client_nonce;
  std::memcpy(client_nonce.data(), hello.client_nonce, client_nonce.size());
  const Mac mac = wire::WelcomeMac(key_, c.nonce, client_nonce, w, pool_.rkey, worker_.address());
  std::memcpy(w.mac, mac.data(), mac.size());
  std::vector<std::byte> out(sizeof w);
  std::memcpy(out.data(), &w, sizeof w);
  out.insert(out.end(), pool_.rkey.begin(), pool_.rkey.end());
  out.insert(out.end(), worker_.address().begin(), worker_.address().end());
  // A few hundred bytes into a fresh socket's buffer: does not block in practice.
  Status sent = SendAll(c.socket, out.data(), out.size(), runtime::Now() + std::chrono::seconds(1));
  if (!sent.ok()) return Step::kDrop;
  c.established = true;
  c.inbox.clear();
  c.inbox.shrink_to_fit();
  return Step::kKeep;
}

Status ServerConnections::AssignNodeId(const Connection& c, uint32_t memory_node) {
  if (memory_node > UINT16_MAX)
    return Status::InvalidArgument("memory node " + std::to_string(memory_node) + " is out of range");
  const bool first = !node_.id().has_value();
  DMX_RETURN_IF_ERROR(node_.AssignId(static_cast<uint16_t>(memory_node)));
  if (first) Log("serving as memory node " + std::to_string(memory_node) + " (as numbered by " + c.peer + ")");
  return Status::Ok();
}

ServerConnections::Step ServerConnections::Refuse(Connection& c, const Status& why) {
  Log("refusing connection from " + c.peer + ": " + why.ToString());
  wire::Welcome w{};
  std::memcpy(w.magic, wire::kMagic, sizeof w.magic);
  w.status_code = static_cast<uint32_t>(why.code());
  w.message_bytes = static_cast<uint32_t>(why.message().size());
  std::vector<std::byte> out(sizeof w);
  std::memcpy(out.data(), &w, sizeof w);
  auto* m = reinterpret_cast<const std::byte*>(why.message().data());
  out.insert(out.end(), m, m + why.message().size());
  (void)SendAll(c.socket, out.data(), out.size(), runtime::Now() + std::chrono::seconds(1));
  return Step::kDrop;
}

void ServerConnections::Drop(Connection& c) {
  if (c.ep != nullptr) {
    // With peer error handling (TCP) force-close: the client is gone or going, and its
    // pending replies are worthless. Without it (shm) force is not allowed; flush briefly.
    worker_.Close(c.ep, context_.err_mode() == UCP_ERR_HANDLING_MODE_PEER, kCloseTimeout);
    c.ep = nullptr;
  }
  c.socket.Close();
}

ucp_ep_h ServerConnections::ReplyEndpoint(uint32_t connection_id) const {
  for (const auto& c : connections_)
    if (c->id == connection_id) return c->ep_failed ? nullptr : c->ep;
  return nullptr;
}

bool ServerConnections::Authentic(uint32_t connection_id, uint64_t token) const {
  for (const auto& c : connections_)
    if (c->id == connection_id) return c->established && c->token == token;
  return false;
}

void ServerConnections::OnEndpointError(void* arg, ucp_ep_h, ucs_status_t) {
  // The client's socket closes too, and Service() then closes the endpoint; here it only
  // stops being used for replies.
  static_cast<Connection*>(arg)->ep_failed = true;
}

}  // namespace dmindex::fabric::ucx
