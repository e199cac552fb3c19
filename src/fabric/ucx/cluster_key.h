// The secret shared by the memory servers and clients of one cluster, and what it signs:
// every bootstrap handshake (wire.h) carries an HMAC-SHA256 under it, so a peer that does
// not hold the key is refused before any of its bytes reach UCX or change the server's
// state (which memory node it is). Like Erlang's cookie: a random secret in a file readable
// only by its owner, created on first use at the default path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "dmindex/status.h"

namespace dmindex::fabric::ucx {

inline constexpr size_t kMacBytes = 32;    // HMAC-SHA256
inline constexpr size_t kNonceBytes = 16;
using Mac = std::array<uint8_t, kMacBytes>;
using Nonce = std::array<uint8_t, kNonceBytes>;

// ~/.dmindex/cluster-key ($HOME, else the account's home directory); empty if neither.
std::string DefaultClusterKeyPath();

class ClusterKey {
 public:
  // The key in `path` (its contents, surrounding whitespace trimmed; at least 16 bytes).
  // `path` empty means the default path, where a new random key is created (mode 0600, its
  // directory 0700) if there is none yet; an explicit path must exist. A key file that
  // group or others may read is refused, as ssh refuses such a private key.
  static Result<ClusterKey> Load(const std::string& path);
  // A key from its bytes (tests).
  static ClusterKey FromSecret(std::string secret);

  // HMAC-SHA256 under this key of the concatenated `parts`.
  Mac Sign(std::initializer_list<std::span<const std::byte>> parts) const;
  // Where the key came from, for error messages.
  const std::string& source() const { return source_; }

 private:
  std::string secret_;
  std::string source_;
};

// Whether two signatures are equal, in time independent of where they differ.
bool SameMac(const Mac& a, const Mac& b);

// Cryptographically random bytes (handshake nonces).
Nonce RandomNonce();

}  // namespace dmindex::fabric::ucx
