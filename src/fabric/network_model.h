// NetworkModel: when the verbs and RPCs of a fabric whose memory nodes live in this process
// happen. The in-process fabric (fabric/inproc/) has its own model, a fixed round trip; a
// simulated platform (src/sim/) plugs in here to time each batch and RPC on simulated NICs,
// links and memory-server cores, while the fabric keeps doing the work (the checks, the
// memory effects, the handlers) and the accounting exactly as without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "dmindex/status.h"
#include "fabric/rpc.h"
#include "fabric/verb.h"

namespace dmindex::fabric {

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  // The fabric's backend name while this model times it ("sim").
  virtual const char* name() const = 0;

  // Carries one checked batch to its memory nodes: returns when the responses are back.
  // Calls land() once, at the instant the verbs reach memory; land() carries them out (in
  // posting order for kInOrder) and its Status is the batch's.
  virtual Status Post(std::span<const Verb> verbs, Ordering ordering,
                      const std::function<Status()>& land) = 0;

  // An unwaited batch (Endpoint::PostUnwaited): the caller does not wait for it. Calls land()
  // at once; a model may charge the batch's use of the network without making the caller
  // wait. Default: no time at all.
  virtual Status PostUnwaited(std::span<const Verb> verbs, Ordering ordering,
                              const std::function<Status()>& land) {
    (void)verbs;
    (void)ordering;
    return land();
  }

  // One RPC to memory node `node`: the request travels, serve() runs the handler on the node
  // (it fills *reply), the reply travels back.
  virtual Status Call(uint16_t node, size_t request_bytes, const RpcReply* reply,
                      const std::function<Status()>& serve) = 0;
};

}  // namespace dmindex::fabric
