#include "fabric/ucx/wire.h"

#include "common/retry_status.h"
#include "fabric/ucx/ucx_context.h"

namespace dmindex::fabric::ucx::wire {
namespace {

template <typename T>
std::span<const std::byte> Bytes(const T& pod) {
  return std::as_bytes(std::span(&pod, 1));
}

constexpr char kHelloDomain[] = "dmindex hello v3";
constexpr char kWelcomeDomain[] = "dmindex welcome v3";

}  // namespace

std::string MagicMismatch(const char (&magic)[8], const std::string& peer) {
  if (std::memcmp(magic, kMagic, kMagicPrefixBytes) != 0) return "not a dmindex " + peer + " (bad magic)";
  const auto printable = [](const char (&m)[8]) {
    std::string out;
    for (char c : m) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out;
  };
  return "a dmindex " + peer + " of another version (protocol " + printable(magic) + ", this process speaks " +
         printable(kMagic) + "): every process sharing a pool must run the same dmindex version, "
         "whose pool layout (lock words, lock tables) they share";
}

Status MagicStatus(const char (&magic)[8], const std::string& who, const std::string& peer) {
  const std::string why = who + " is " + MagicMismatch(magic, peer);
  return std::memcmp(magic, kMagic, kMagicPrefixBytes) == 0 ? Status::InvalidArgument(why) : Status::Unavailable(why);
}

std::string HelloDefect(const Hello& h) {
  if (!HasMagic(h.magic)) return MagicMismatch(h.magic, "client");
  const auto kind = static_cast<ConnectionKind>(h.kind);
  if (kind != ConnectionKind::kMonitor && kind != ConnectionKind::kEndpoint)
    return "unknown connection kind " + std::to_string(h.kind);
  if (h.transport > static_cast<uint32_t>(UcxTransport::kTcp))
    return "unknown transport " + std::to_string(h.transport);
  if (kind == ConnectionKind::kMonitor && h.worker_address_bytes != 0)
    return "a monitor connection with a worker address";
  if (kind == ConnectionKind::kEndpoint &&
      (h.worker_address_bytes == 0 || h.worker_address_bytes > kMaxBlobBytes))
    return "worker address of " + std::to_string(h.worker_address_bytes) + " bytes";
  if (h.memory_node > UINT16_MAX) return "memory node " + std::to_string(h.memory_node) + " out of range";
  return "";
}

Mac HelloMac(const ClusterKey& key, const Nonce& server_nonce, Hello hello,
             std::span<const std::byte> worker_address) {
  std::memset(hello.mac, 0, sizeof hello.mac);
  return key.Sign({std::as_bytes(std::span(kHelloDomain)), Bytes(server_nonce), Bytes(hello),
                   worker_address});
}

Mac WelcomeMac(const ClusterKey& key, const Nonce& server_nonce, const Nonce& client_nonce,
               Welcome welcome, std::span<const std::byte> rkey,
               std::span<const std::byte> worker_address) {
  std::memset(welcome.mac, 0, sizeof welcome.mac);
  return key.Sign({std::as_bytes(std::span(kWelcomeDomain)), Bytes(server_nonce),
                   Bytes(client_nonce), Bytes(welcome), rkey, worker_address});
}

Status StatusFromWire(uint32_t code, std::string m) {
  using C = Status::Code;
  if (static_cast<C>(code) == kRetryCode) return RetryStatus(std::move(m));
  switch (static_cast<C>(code)) {
    case C::kOk: return Status::Ok();
    case C::kNotFound: return Status::NotFound(std::move(m));
    case C::kInvalidArgument: return Status::InvalidArgument(std::move(m));
    case C::kUnavailable: return Status::Unavailable(std::move(m));
    case C::kOutOfSpace: return Status::OutOfSpace(std::move(m));
    case C::kCorruption: return Status::Corruption(std::move(m));
    case C::kIoError: return Status::IoError(std::move(m));
    case C::kNotSupported: return Status::NotSupported(std::move(m));
    case C::kAborted: return Status::Aborted(std::move(m));
    case C::kNotOwner: return Status::NotOwner(std::move(m));
    case C::kBusy: return Status::Busy(std::move(m));
  }
  return Status::Corruption("status code " + std::to_string(code) + " from memory server: " + m);
}

}  // namespace dmindex::fabric::ucx::wire
