// What travels between UCX clients and memory servers, byte for byte: the out-of-band
// handshake over TCP and the headers of RPC active messages. Both sides run on the same
// architecture (host byte order, no padding surprises: every struct is checked below).
//
// The handshake is a challenge-response under the cluster key (cluster_key.h):
//   server -> client  Challenge: a fresh random nonce, sent on accept
//   client -> server  Hello + worker address, signed over the server's nonce
//   server -> client  Welcome + message + rkey + worker address, signed over both nonces
// The server checks the Hello's length fields and signature before anything else: a peer
// without the key never reaches UCX (which aborts the process on a malformed worker
// address) or MemoryNode::AssignId, and a recorded Hello is useless on another connection.
// The client checks the Welcome's signature before handing the server's rkey and worker
// address to UCX.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <span>

#include "dmindex/status.h"
#include "fabric/ucx/cluster_key.h"

namespace dmindex::fabric::ucx::wire {

// 02: Hello carries the memory-node position (01 had a reserved word there).
// 03: the Challenge, signatures, and the pool's identity in the Welcome; later within 03,
//     Welcome::pool_flags in what was a reserved word (zero from an older server: volatile).
// 04: the pool's layout changed under the same messages (lock words name leases; a lock table's
//     last 4 K words are XStore's memory servers', the rest processes'; pools of layout 2,
//     pool_identity.h): a process of another layout sharing a pool could block or misread
//     what this one writes, so the two refuse each other here, naming both versions.
// 05: over TCP, verbs travel as kVerbRequestAm/kVerbReplyAm messages (verb_messages.h), not
//     UCX's emulated RMA: a peer of 04 would never answer them, or send what 05 never answers.
inline constexpr char kMagic[8] = {'D', 'M', 'X', 'U', 'C', 'X', '0', '5'};
// What every version's magic starts with: a peer with this prefix and another version is a
// dmindex of another version (told so, with both versions), anything else is not dmindex.
inline constexpr size_t kMagicPrefixBytes = 6;
// Worker addresses and packed rkeys are a few hundred bytes; anything near this is garbage.
inline constexpr uint32_t kMaxBlobBytes = 64 * 1024;

enum class ConnectionKind : uint32_t {
  kMonitor = 1,   // one per client process and server: pool facts, then only a liveness signal
  kEndpoint = 2,  // one per client endpoint and server: carries the endpoint's worker address
};

// Server -> client, first thing on every connection.
struct Challenge {
  char magic[8];
  uint8_t nonce[kNonceBytes];
};

// Client -> server, followed by `worker_address_bytes` of the client's UCP worker address.
// `memory_node` is the server's position in the client's list, i.e. the node id in every
// GlobalAddress the client sends it: the server adopts it from its first client and refuses
// clients that number it differently (MemoryNode::AssignId).
struct Hello {
  char magic[8];
  uint32_t kind;       // ConnectionKind
  uint32_t transport;  // UcxTransport; must match the server's
  uint32_t worker_address_bytes;
  uint32_t memory_node;
  uint8_t client_nonce[kNonceBytes];  // the server signs its Welcome over it
  uint8_t mac[kMacBytes];             // HelloMac
};

// Server -> client, followed by the message, the packed rkey and the server's worker address.
// A non-zero status_code refuses the connection; the message says why. Refusals are not
// signed (the peer may not hold the key, and a refusal hands nothing to UCX).
// Welcome::pool_flags: the pool outlives the server process (`memserver --data-dir`): a
// client whose server restarts waits for it and carries on with the same pool.
inline constexpr uint32_t kPoolPersistent = 1;

struct Welcome {
  char magic[8];
  uint32_t status_code;  // Status::Code
  uint32_t connection_id;
  uint64_t pool_base;    // remote virtual address of pool offset 0
  uint64_t pool_bytes;
  uint32_t message_bytes;
  uint32_t rkey_bytes;
  uint32_t worker_address_bytes;
  uint32_t pool_flags;   // kPoolPersistent
  uint64_t pool_id;      // PoolIdentity: new on every start of the server
  uint64_t pool_created_unix_ms;
  // A secret of this connection (random; sent only here, under the MAC) that its RPCs and
  // verb messages carry: UCX's own port takes messages from anyone who reaches it, and the
  // server carries out only those naming a live connection with its token.
  uint64_t connection_token;
  uint8_t mac[kMacBytes];  // WelcomeMac; zero in refusals
};

// Active-message ids registered on the workers.
inline constexpr unsigned kRpcRequestAm = 1;  // client -> server; data = request payload
inline constexpr unsigned kRpcReplyAm = 2;    // server -> client; data = message + reply
// TCP only (verb_messages.h): a batch of verbs for one server, and its answer, whose header
// is an RpcReplyHeader and whose data is the status message, or (Ok) the verbs' results.
inline constexpr unsigned kVerbRequestAm = 3;  // client -> server; data = VerbRecords, WRITE bytes
inline constexpr unsigned kVerbReplyAm = 4;    // server -> client

struct RpcRequestHeader {
  uint32_t connection_id;  // the endpoint connection to reply on
  uint16_t opcode;
  uint16_t reserved;
  uint64_t sequence;       // echoed in the reply so late replies to timed-out calls are dropped
  uint64_t token;          // the connection's Welcome::connection_token
};

struct RpcReplyHeader {
  uint64_t sequence;
  uint32_t status_code;    // Status::Code of the handler's result
  uint32_t message_bytes;  // the Status message precedes the reply payload in the data
};

struct VerbRequestHeader {
  uint32_t connection_id;  // the endpoint connection to reply on
  uint32_t verb_count;     // VerbRecords at the start of the data
  uint64_t sequence;       // echoed in the reply, as for RPCs
  uint64_t token;          // the connection's Welcome::connection_token
};

struct VerbRecord {
  uint8_t kind;            // VerbKind
  uint8_t reserved[3];
  uint32_t length;         // READ/WRITE bytes; 8 for CAS/FAA
  uint64_t offset;         // in the server's pool
  uint64_t operand;        // CAS: expected; FAA: addend
  uint64_t swap;           // CAS: new value
};

static_assert(sizeof(Challenge) == 24 && std::is_trivially_copyable_v<Challenge>);
static_assert(sizeof(Hello) == 72 && std::is_trivially_copyable_v<Hello>);
static_assert(sizeof(Welcome) == 104 && std::is_trivially_copyable_v<Welcome>);
static_assert(sizeof(RpcRequestHeader) == 24 && sizeof(RpcReplyHeader) == 16);
static_assert(sizeof(VerbRequestHeader) == 24 && sizeof(VerbRecord) == 32 &&
              std::is_trivially_copyable_v<VerbRecord>);

inline bool HasMagic(const char (&magic)[8]) { return std::memcmp(magic, kMagic, 8) == 0; }
// Why `magic` is not this version's, for a message: "dmindex protocol DMXUCX03, this process
// speaks DMXUCX05: ..." for another dmindex version, "bad magic" for anything else. `peer`:
// "client" or "memory server".
std::string MagicMismatch(const char (&magic)[8], const std::string& peer);
// A Status for a peer whose `magic` is not this version's: InvalidArgument for a dmindex of
// another version (a configuration to fix, not an outage), Unavailable for anything else.
Status MagicStatus(const char (&magic)[8], const std::string& who, const std::string& peer);

// Why a Hello's fixed part is not one a dmindex client sends (magic, kind, transport,
// address length for its kind, node id range); empty if it may be.
std::string HelloDefect(const Hello& hello);

// The signatures, over everything sent plus the nonces of this connection (the mac field
// itself counts as zero). Distinct prefixes keep a Hello from passing as a Welcome.
Mac HelloMac(const ClusterKey& key, const Nonce& server_nonce, Hello hello,
             std::span<const std::byte> worker_address);
Mac WelcomeMac(const ClusterKey& key, const Nonce& server_nonce, const Nonce& client_nonce,
               Welcome welcome, std::span<const std::byte> rkey,
               std::span<const std::byte> worker_address);

// Rebuilds a Status sent as code + message; an unknown code is Corruption.
Status StatusFromWire(uint32_t code, std::string message);

}  // namespace dmindex::fabric::ucx::wire
