// Verbs over TCP as dmindex's own messages: a batch's verbs for one memory server travel in
// one active message (kVerbRequestAm), the server's progress thread carries them out in
// order on its pool (MemoryNode::Execute) and answers with one message (kVerbReplyAm)
// holding what the READs read and the atomics' old words.
//
// Why not UCX's RMA over TCP: TCP has no remote memory access, so UCX emulates every PUT,
// GET and atomic with messages of its own, and the server's UCX answers each one (a PUT's
// acknowledgement, a GET's data, an atomic's old word) from inside its receive handler. In
// UCX 1.13 (and upstream since) a failure to send that answer is fatal to the *server*
// (`ucp_request.inl: Fatal: unexpected error: Endpoint timeout`, from ucp_put_handler or
// ucp_get_req_handler): a client killed with verbs still in the server's socket buffer
// aborted the memory server, and every index on it with a volatile pool (crash soak, TCP
// seed 900242; docs/results/crash-soak.md). Our answers are ordinary sends whose failure
// completes the send with an error, which the server ignores: the client is gone.
//
// A side effect measured in `dmindex fabric-bench` (docs/UCX.md): a batch is one message
// each way per memory server, where UCX sent one per verb, and a WRITE needs no flush.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dmindex/status.h"
#include "fabric/memory_node.h"
#include "fabric/verb.h"

namespace dmindex::fabric::ucx {

// The request's payload for `verbs` (all of one memory node, in posting order): one record
// per verb, then the WRITEs' bytes in order.
std::vector<std::byte> EncodeVerbs(std::span<const Verb* const> verbs);

// Copies a reply's payload (per READ its bytes, per CAS/FAA the old word, in order) into
// the verbs' local buffers. Corruption if its size is not what the verbs expect.
Status DeliverVerbResults(std::span<const Verb* const> verbs, std::span<const std::byte> reply);

// Server side: checks a request of `count` verbs from a client of `node` and carries them
// out in order, appending the results to *reply. A malformed request (sizes that do not add
// up, a range outside the pool, a misaligned atomic) is InvalidArgument, checked before any
// verb of it is carried out: nothing of a rejected batch lands.
Status ExecuteVerbs(MemoryNode& node, uint32_t count, std::span<const std::byte> request,
                    std::vector<std::byte>* reply);

}  // namespace dmindex::fabric::ucx
