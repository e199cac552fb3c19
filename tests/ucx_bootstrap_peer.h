// A peer of a memory server's bootstrap port (wire.h) speaking as much of the handshake as
// a test needs, with or without the cluster key: for the hostile-peer and flood tests.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fabric/ucx/cluster_key.h"
#include "fabric/ucx/tcp_socket.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {

using std::chrono::milliseconds;

inline std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dmx_hostile_" + std::to_string(getpid()) + "_" + name)).string();
}

inline std::string WriteKeyFile(const std::string& name, const std::string& secret) {
  const std::string path = TempPath(name);
  std::ofstream(path) << secret << "\n";
  chmod(path.c_str(), 0600);
  return path;
}

inline std::vector<std::byte> RandomBytes(std::mt19937_64& rng, size_t n) {
  std::vector<std::byte> b(n);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  return b;
}

// What became of one handshake attempt.
struct Outcome {
  bool welcomed = false;  // a Welcome with status 0 arrived
  bool refused = false;   // a Welcome with a non-zero status arrived
  bool closed = false;    // the server closed the connection
};

// A raw connection to the bootstrap port, speaking as much of the protocol as a case needs.
class RawPeer {
 public:
  explicit RawPeer(const HostPort& at) {
    auto s = ConnectTcp(at, milliseconds(2000));
    if (!s.ok()) return;
    socket_ = std::move(s).value();
    wire::Challenge c{};
    if (RecvAll(socket_, &c, sizeof c, Clock::now() + std::chrono::seconds(5)).ok() &&
        wire::HasMagic(c.magic)) {
      std::memcpy(nonce_.data(), c.nonce, nonce_.size());
      ok_ = true;
    }
  }
  bool ok() const { return ok_; }
  const Nonce& nonce() const { return nonce_; }

  bool Send(std::span<const std::byte> bytes) {
    return SendAll(socket_, bytes.data(), bytes.size(), Clock::now() + std::chrono::seconds(5)).ok();
  }
  // Sends `bytes` in pieces of 1..`max_piece` bytes with short pauses.
  bool SendSlowly(std::span<const std::byte> bytes, std::mt19937_64& rng, size_t max_piece) {
    while (!bytes.empty()) {
      const size_t n = std::min<size_t>(bytes.size(), 1 + rng() % max_piece);
      if (!Send(bytes.first(n))) return false;
      bytes = bytes.subspan(n);
      std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 800));
    }
    return true;
  }
  // Reads what the server answers, until it closes the connection or `wait` passes. After
  // a welcome only if `until_closed` (a served client's socket stays open).
  Outcome Await(bool until_closed = true, milliseconds wait = milliseconds(7000)) {
    Outcome o;
    const auto deadline = Clock::now() + wait;
    wire::Welcome w{};
    Status s = RecvAll(socket_, &w, sizeof w, deadline);
    if (s.ok()) {
      (w.status_code == 0 ? o.welcomed : o.refused) = true;
      if (w.status_code == 0 && !until_closed) return o;
      std::vector<char> rest(w.status_code == 0 ? w.rkey_bytes + w.worker_address_bytes : w.message_bytes);
      s = RecvAll(socket_, rest.data(), rest.size(), deadline);
      if (s.ok()) {
        char c;
        s = RecvAll(socket_, &c, 1, deadline);
      }
    }
    o.closed = s.IsUnavailable() && s.message().find("timed out") == std::string::npos;
    return o;
  }
  void Close() { socket_.Close(); }

 private:
  Socket socket_;
  Nonce nonce_{};
  bool ok_ = false;
};

// A Hello as a client would send it, signed with `key` over `server_nonce` (or with an
// all-zero signature when `key` is null).
inline std::vector<std::byte> MakeHello(const ClusterKey* key, const Nonce& server_nonce,
                                 wire::ConnectionKind kind, uint32_t memory_node,
                                 std::span<const std::byte> address,
                                 UcxTransport transport = UcxTransport::kShm) {
  wire::Hello h{};
  std::memcpy(h.magic, wire::kMagic, sizeof h.magic);
  h.kind = static_cast<uint32_t>(kind);
  h.transport = static_cast<uint32_t>(transport);
  h.worker_address_bytes = static_cast<uint32_t>(address.size());
  h.memory_node = memory_node;
  const Nonce client_nonce = RandomNonce();
  std::memcpy(h.client_nonce, client_nonce.data(), client_nonce.size());
  if (key != nullptr) {
    const Mac mac = wire::HelloMac(*key, server_nonce, h, address);
    std::memcpy(h.mac, mac.data(), mac.size());
  }
  // Sized once: growing it by insert() trips GCC 12's -Warray-bounds (a false positive).
  std::vector<std::byte> out(sizeof h + address.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::copy(address.begin(), address.end(), out.begin() + sizeof h);
  return out;
}

}  // namespace dmindex::fabric::ucx
