#include "fabric/ucx/remote_key.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "fabric/ucx/ucx_context.h"

namespace dmindex::fabric::ucx {
namespace {

// The posix transport's segment id (uct/sm/mm/posix/mm_posix.c): flag bits on top; in
// /proc-link mode the id below them is the owner's pid (30 bits) and fd (30 bits above it).
constexpr uint64_t kProcLinkFlag = uint64_t{1} << 63;
constexpr uint64_t kFlagBits = uint64_t{0xF} << 60;
constexpr int kIdFieldBits = 30;
constexpr uint64_t kIdFieldMask = (uint64_t{1} << kIdFieldBits) - 1;

uint64_t Load64(std::span<const std::byte> bytes, size_t at) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

}  // namespace

int64_t FindProcLinkedSegment(std::span<const std::byte> packed, uint64_t pool_base, uint64_t pool_bytes) {
  int64_t found = -1;
  for (size_t at = 0; at + 24 <= packed.size(); ++at) {
    const uint64_t id = Load64(packed, at);
    if ((id & kProcLinkFlag) == 0 || Load64(packed, at + 8) != pool_base ||
        Load64(packed, at + 16) < pool_bytes)
      continue;
    if (found >= 0) return -1;  // two candidates: not a layout we know; leave the key alone
    found = static_cast<int64_t>(at);
  }
  return found;
}

Result<ucp_rkey_h> UnpackPoolKey(ucp_ep_h ep, std::span<const std::byte> packed, uint64_t pool_base,
                                 uint64_t pool_bytes, std::string_view server) {
  std::vector<std::byte> key(packed.begin(), packed.end());
  int own_fd = -1;
  if (const int64_t at = FindProcLinkedSegment(key, pool_base, pool_bytes); at >= 0) {
    const uint64_t id = Load64(key, static_cast<size_t>(at));
    const uint64_t pid = id & kIdFieldMask, fd = (id >> kIdFieldBits) & kIdFieldMask;
    const std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
    own_fd = open(link.c_str(), O_RDWR | O_CLOEXEC);
    if (own_fd < 0)
      return Status::Unavailable("memory server " + std::string(server) +
                                 " went away while this process connected to it (its pool " +
                                 link + ": " + std::strerror(errno) + ")");
    // Linux pids and descriptors fit 30 bits (pid_max is at most 2^22); were ours not to,
    // the key keeps the server's link and UCX opens that instead.
    const uint64_t self = static_cast<uint64_t>(getpid());
    if (self <= kIdFieldMask && static_cast<uint64_t>(own_fd) <= kIdFieldMask) {
      const uint64_t ours = (id & kFlagBits) | self | (static_cast<uint64_t>(own_fd) << kIdFieldBits);
      std::memcpy(key.data() + at, &ours, sizeof ours);
    }
  }
  ucp_rkey_h rkey = nullptr;
  const ucs_status_t st = ucp_ep_rkey_unpack(ep, key.data(), &rkey);
  if (own_fd >= 0) close(own_fd);  // UCX has mapped the segment (or failed to, cleanly)
  if (st != UCS_OK) return FromUcs(st, "unpacking the remote key of " + std::string(server));
  return rkey;
}

}  // namespace dmindex::fabric::ucx
