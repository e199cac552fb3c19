// Unpacking a memory server's pool key without UCX's crash on a server that just died.
//
// UCX before 1.18 (openucx/ucx pull request 10380; Debian ships 1.13) crashes inside
// ucp_ep_rkey_unpack when one transport's unpack fails: its error path releases transport
// keys it never unpacked. Over shared memory that failure is ordinary: the posix transport
// maps the pool by opening /proc/<server pid>/fd/<fd>, which is gone the moment the server
// dies - and a server can die between its welcome and our unpack (a client connecting while
// a memory server is killed; UcxProcessTest.ServerKilledMidRun* met it under load).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <ucp/api/ucp.h>

#include "dmindex/status.h"

namespace dmindex::fabric::ucx {

// ucp_ep_rkey_unpack of `packed` (the pool's key, exported at `pool_base` for `pool_bytes`)
// that cannot fail inside UCX on a dead server: the posix segment, if the key names one by
// /proc link, is opened here first (a dead server: Unavailable naming `server`, nothing
// handed to UCX) and the key is pointed at this process's own descriptor of the same
// segment, which stays open until UCX has mapped it. Keys of other forms go to UCX as they
// are.
Result<ucp_rkey_h> UnpackPoolKey(ucp_ep_h ep, std::span<const std::byte> packed, uint64_t pool_base,
                                 uint64_t pool_bytes, std::string_view server);

// Where `packed` holds the posix transport's /proc-linked record of the segment exported at
// `pool_base` (at least `pool_bytes` long): the byte offset of its segment id, or -1. Found by
// its content (segment id, then address, then length: UCX's layout of that record) rather
// than by decoding UCX's packed format, which differs between versions.
int64_t FindProcLinkedSegment(std::span<const std::byte> packed, uint64_t pool_base, uint64_t pool_bytes);

}  // namespace dmindex::fabric::ucx
