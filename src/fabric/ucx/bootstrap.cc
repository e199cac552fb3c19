#include "fabric/ucx/bootstrap.h"

#include <string>

namespace dmindex::fabric::ucx {
namespace {

Status Prefixed(const HostPort& server, const Status& s) {
  if (s.ok()) return s;
  return wire::StatusFromWire(static_cast<uint32_t>(s.code()),
                              "memory server " + server.ToString() + ": " + s.message());
}

}  // namespace

Result<ServerWelcome> Handshake(const HostPort& server, const ClusterKey& key, uint16_t memory_node,
                                wire::ConnectionKind kind, UcxTransport transport,
                                std::span<const std::byte> worker_address,
                                std::chrono::milliseconds timeout) {
  const auto deadline = runtime::Now() + timeout;
  auto sock = ConnectTcp(server, timeout);
  if (!sock.ok()) return sock.status();
  ServerWelcome out;
  out.socket = std::move(sock).value();

  wire::Challenge challenge{};
  DMX_RETURN_IF_ERROR(Prefixed(server, RecvAll(out.socket, &challenge, sizeof challenge, deadline)));
  if (!wire::HasMagic(challenge.magic))
    return wire::MagicStatus(challenge.magic, server.ToString(), "memory server");
  Nonce server_nonce, client_nonce = RandomNonce();
  std::memcpy(server_nonce.data(), challenge.nonce, server_nonce.size());

  wire::Hello hello{};
  std::memcpy(hello.magic, wire::kMagic, sizeof hello.magic);
  hello.kind = static_cast<uint32_t>(kind);
  hello.transport = static_cast<uint32_t>(transport);
  hello.worker_address_bytes = static_cast<uint32_t>(worker_address.size());
  hello.memory_node = memory_node;
  std::memcpy(hello.client_nonce, client_nonce.data(), client_nonce.size());
  const Mac mac = wire::HelloMac(key, server_nonce, hello, worker_address);
  std::memcpy(hello.mac, mac.data(), mac.size());
  std::vector<std::byte> msg(sizeof hello + worker_address.size());
  std::memcpy(msg.data(), &hello, sizeof hello);
  if (!worker_address.empty())
    std::memcpy(msg.data() + sizeof hello, worker_address.data(), worker_address.size());
  DMX_RETURN_IF_ERROR(Prefixed(server, SendAll(out.socket, msg.data(), msg.size(), deadline)));

  wire::Welcome w{};
  DMX_RETURN_IF_ERROR(Prefixed(server, RecvAll(out.socket, &w, sizeof w, deadline)));
  if (!wire::HasMagic(w.magic))
    return wire::MagicStatus(w.magic, server.ToString(), "memory server");
  if (w.message_bytes > wire::kMaxBlobBytes || w.rkey_bytes > wire::kMaxBlobBytes ||
      w.worker_address_bytes > wire::kMaxBlobBytes)
    return Status::Corruption("memory server " + server.ToString() + ": malformed welcome");
  if (w.status_code != 0) {
    std::string message(w.message_bytes, '\0');
    DMX_RETURN_IF_ERROR(Prefixed(server, RecvAll(out.socket, message.data(), message.size(), deadline)));
    return Prefixed(server, wire::StatusFromWire(w.status_code, std::move(message)));
  }
  if (w.message_bytes != 0)
    return Status::Corruption("memory server " + server.ToString() + ": malformed welcome");
  out.rkey.resize(w.rkey_bytes);
  out.worker_address.resize(w.worker_address_bytes);
  DMX_RETURN_IF_ERROR(Prefixed(server, RecvAll(out.socket, out.rkey.data(), out.rkey.size(), deadline)));
  DMX_RETURN_IF_ERROR(Prefixed(
      server, RecvAll(out.socket, out.worker_address.data(), out.worker_address.size(), deadline)));
  Mac welcome_mac;
  std::memcpy(welcome_mac.data(), w.mac, welcome_mac.size());
  if (!SameMac(welcome_mac, wire::WelcomeMac(key, server_nonce, client_nonce, w, out.rkey,
                                             out.worker_address)))
    return Status::Unavailable("memory server " + server.ToString() +
                               ": its welcome is not signed with this cluster's key (" +
                               key.source() + ")");
  out.connection_id = w.connection_id;
  out.connection_token = w.connection_token;
  out.pool_base = w.pool_base;
  out.pool_bytes = w.pool_bytes;
  out.pool = PoolIdentity{w.pool_id, w.pool_created_unix_ms};
  out.persistent = (w.pool_flags & wire::kPoolPersistent) != 0;
  return out;
}

}  // namespace dmindex::fabric::ucx
