// Endpoint: one thread's handle on the fabric. Every design reaches remote memory only
// through this interface; backends (in-process, UCX) implement DoPost and DoCall.
//
// Not thread-safe: each thread opens its own endpoint (like one RDMA QP / UCP worker per
// thread). Accounting is done here, once, for every backend.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>

#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "fabric/rpc.h"
#include "fabric/verb.h"
#include "fabric/verb_stats.h"

namespace dmindex::fabric {

class Fabric;

// What a batch written under a remote lock checks at the last moment before its verbs go out:
// after every wait of the fabric's own (the UCX fabric waits for a restarting memory server
// before it posts, UcxEndpoint::Ready), so a wait of seconds cannot carry the batch past the
// instant its holder stopped being allowed to write (lease::Lease is one: its CheckLive;
// docs/LEASES.md, "A write posted again"). Not OK: nothing of the batch is posted.
class PostGuard {
 public:
  virtual Status MayPost() = 0;

 protected:
  ~PostGuard() = default;
};

class Endpoint {
 public:
  virtual ~Endpoint();

  // --- one-sided verbs; each is one round trip ---
  Status Read(GlobalAddress from, void* to, uint32_t len);
  Status Write(GlobalAddress to, const void* from, uint32_t len);
  // Compare-and-swap of an aligned 64-bit word. *old receives the prior value; the swap
  // happened iff *old == expected.
  Status Cas(GlobalAddress word, uint64_t expected, uint64_t desired, uint64_t* old);
  Status Faa(GlobalAddress word, uint64_t add, uint64_t* old);

  // --- batches: several verbs, one round trip ---
  Status Post(std::span<Verb> verbs, Ordering ordering);
  Status Post(std::initializer_list<Verb> verbs, Ordering ordering);
  // The same, posted only if `guard` says so once the fabric is ready to post it.
  Status Post(std::span<Verb> verbs, Ordering ordering, PostGuard& guard);

  // --- an unwaited post: one batch the thread does not wait for ---
  // Posts `verbs` as one batch and returns without waiting for its completion where the
  // backend can leave a batch in flight (in-process and simulated fabrics); the UCX fabric
  // waits for it here. Its verbs and bytes count as any batch's; its round trip counts only
  // where the backend waited (docs/BENCHMARKS.md, "Round trips"). `guard` (null: none) is
  // asked as for a waited batch. Returns InvalidArgument (nothing posted) for a batch Post
  // would refuse or while an earlier unwaited batch is not reaped (one in flight at a time);
  // every other outcome - the guard's refusal, a verb that failed - is the batch's Status,
  // which Reap returns. Until then the verbs' local buffers must stay untouched. The batch
  // lands before any later batch of this endpoint on the same memory node (one connection,
  // one queue pair, is in order); nothing is promised across memory nodes.
  Status PostUnwaited(std::span<Verb> verbs, Ordering ordering, PostGuard* guard);
  // Completes the unwaited batch in flight: its Status (Ok when none is in flight).
  Status Reap();
  bool unwaited_in_flight() const { return unwaited_; }
  // Whether the unwaited batch in flight is already known to have failed (every backend
  // today learns its outcome as it posts): its poster then handles the failure at once,
  // instead of holding what the batch would release until its next operation reaps it.
  bool unwaited_failed() const { return unwaited_ && !unwaited_status_.ok(); }

  // --- two-sided RPC to a memory node ---
  Status Call(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply);

  // Whether the fabric gave a memory node's pool up for good (its server restarted without
  // it, or did not come back in time): it then fails every verb alike, so a loop waiting for
  // one to answer (tree/node_lock.cc) stops. Fabrics that never give a pool up say false.
  virtual bool GaveUpAPool() const { return false; }

  VerbCounts counts() const { return counters_.Snapshot(); }
  const VerbCounters& counters() const { return counters_; }

 protected:
  // `guard` (null: none) is asked after the backend's last wait and before the first verb
  // goes out; every backend asks it when given one.
  virtual Status DoPost(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) = 0;
  virtual Status DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) = 0;
  // What a backend did with an unwaited batch: its Status once landed (or why it did not),
  // and whether the thread waited for it after all.
  struct Unwaited {
    Status landed;
    bool waited = true;
  };
  // Default: the batch is posted and waited for (DoPost), so it counts a round trip.
  virtual Unwaited DoPostUnwaited(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) {
    return {DoPost(verbs, ordering, guard), true};
  }
  // Backend-independent checks: alignment of atomics, ordered batches on one node.
  static Status Validate(std::span<const Verb> verbs, Ordering ordering);

 private:
  Status PostChecked(std::span<Verb> verbs, Ordering ordering, PostGuard* guard);

  friend class Fabric;
  Fabric* fabric_ = nullptr;  // set by Fabric::Connect; told on close
  VerbCounters counters_;
  bool unwaited_ = false;   // an unwaited batch not reaped yet
  Status unwaited_status_;  // its Status
};

}  // namespace dmindex::fabric
