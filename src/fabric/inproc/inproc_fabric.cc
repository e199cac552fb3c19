#include "fabric/inproc/inproc_fabric.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <utility>

#include "common/pool_memory.h"
#include "common/runtime.h"

namespace dmindex::fabric {
namespace {

using Clock = runtime::Clock;

// Waits until `deadline`, yielding so that other threads (on 2 cores, the other clients)
// run meanwhile: a modelled network wait must not steal the CPU from the work it models.
// A modelled delay, not a retry: it ends at an instant known in advance.
void WaitUntil(Clock::time_point deadline) {
  while (runtime::Now() < deadline) runtime::Yield();
}

}  // namespace

class InProcEndpoint final : public Endpoint {
 public:
  InProcEndpoint(InProcFabric* fabric, uint64_t seed) : fabric_(fabric), rng_(seed) {}

 protected:
  Status DoPost(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) override;
  Status DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) override;
  // The batch lands now, as it would while the thread went on: no modelled wait.
  Unwaited DoPostUnwaited(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) override {
    return {Send(verbs, ordering, guard, false), false};
  }

 private:
  // DoPost, waiting for the modelled network (`wait`) or not (an unwaited post).
  Status Send(std::span<Verb> verbs, Ordering ordering, PostGuard* guard, bool wait);
  Status CheckTarget(const Verb& v) const;
  // Carries out a checked batch on the memory nodes (the verbs' memory effects).
  Status Land(std::span<Verb> verbs, Ordering ordering);
  Status Execute(const Verb& v, MemoryNode& node, bool tear);
  void CopyPieces(const Verb& v, std::byte* target);
  void ModelNetwork(uint64_t bytes);

  InProcFabric* const fabric_;
  std::mt19937_64 rng_;
  std::vector<uint32_t> order_;  // scratch for shuffled pieces/verbs
};

Status InProcEndpoint::CheckTarget(const Verb& v) const {
  uint16_t n = v.remote.node();
  if (n >= fabric_->nodes_.size())
    return Status::InvalidArgument("no memory node " + std::to_string(n));
  if (fabric_->IsNodeDown(n))
    return Status::Unavailable("memory node " + std::to_string(n) + " does not answer");
  if (!fabric_->nodes_[n]->Contains(v.remote.offset(), v.length))
    return Status::InvalidArgument("verb outside the pool: " + v.remote.ToString() + " +" +
                                   std::to_string(v.length));
  return Status::Ok();
}

void InProcEndpoint::CopyPieces(const Verb& v, std::byte* target) {
  const uint32_t piece = fabric_->tear_piece_.load(std::memory_order_relaxed);
  auto* local = static_cast<std::byte*>(v.local);
  // Pieces follow absolute cache-line boundaries, as a NIC's DMA engine would split them.
  const uint64_t start = v.remote.offset();
  const uint64_t end = start + v.length;
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
  for (uint64_t at = start; at < end;) {
    uint64_t next = std::min(end, (at / piece + 1) * piece);
    pieces.emplace_back(at, next);
    at = next;
  }
  std::shuffle(pieces.begin(), pieces.end(), rng_);
  for (auto [from, to] : pieces) {
    std::byte* remote = target + (from - start);
    std::byte* mine = local + (from - start);
    if (v.kind == VerbKind::kRead)
      CopyFromPool(mine, remote, to - from);
    else
      CopyToPool(remote, mine, to - from);
    if (rng_() % 2) runtime::Yield();
  }
}

Status InProcEndpoint::Execute(const Verb& v, MemoryNode& node, bool tear) {
  const ScriptSlot::Borrowed borrowed = fabric_->script_.Borrow();
  VerbScript* script = borrowed.get();
  if (v.is_atomic()) {
    const VerbScript::AtomicOutcome o = script == nullptr ? VerbScript::AtomicOutcome::kPass : script->RunAtomic(v);
    if (o == VerbScript::AtomicOutcome::kPass) return node.Execute(v);
    if (o == VerbScript::AtomicOutcome::kNotLanded)
      return Status::Unavailable("the atomic verb on " + v.remote.ToString() + " was dropped by a test script");
    DMX_RETURN_IF_ERROR(node.Execute(v));
    return Status::Unavailable("the reply of the atomic verb on " + v.remote.ToString() + " was lost by a test script");
  }
  std::byte* target = node.base() + v.remote.offset();
  if (script != nullptr) {
    VerbScript::Outcome o = script->Run(VerbCopy(v, target));
    if (o == VerbScript::Outcome::kFail)
      return Status::Unavailable("verb on " + v.remote.ToString() + " failed by a test script");
    if (o == VerbScript::Outcome::kDone) return Status::Ok();
  }
  if (tear && v.length > fabric_->tear_piece_.load(std::memory_order_relaxed)) {
    CopyPieces(v, target);
    return Status::Ok();
  }
  return node.Execute(v);
}

void InProcEndpoint::ModelNetwork(uint64_t bytes) {
  const auto& o = fabric_->options_;
  double p = fabric_->delay_probability_.load(std::memory_order_relaxed);
  uint64_t wait_ns = o.round_trip_ns;
  if (o.bandwidth_gbps > 0) wait_ns += static_cast<uint64_t>(bytes * 8 / o.bandwidth_gbps);
  if (p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p) {
    uint32_t max_us = fabric_->delay_max_us_.load(std::memory_order_relaxed);
    wait_ns += std::uniform_int_distribution<uint64_t>(0, uint64_t{max_us} * 1000)(rng_);
  }
  if (wait_ns > 0) WaitUntil(runtime::Now() + std::chrono::nanoseconds(wait_ns));
}

Status InProcEndpoint::DoPost(std::span<Verb> verbs, Ordering ordering, PostGuard* guard) {
  return Send(verbs, ordering, guard, true);
}

Status InProcEndpoint::Send(std::span<Verb> verbs, Ordering ordering, PostGuard* guard, bool wait) {
  uint64_t bytes = 0;
  for (const Verb& v : verbs) {
    DMX_RETURN_IF_ERROR(CheckTarget(v));
    bytes += v.length;
  }
  // A script may hold the batch here, as the UCX fabric's wait for a restarting server does;
  // the guard is asked after it, as there.
  if (const ScriptSlot::Borrowed script = fabric_->script_.Borrow(); script.get() != nullptr)
    script.get()->BeforePost(verbs);
  if (guard != nullptr) DMX_RETURN_IF_ERROR(guard->MayPost());
  if (NetworkModel* model = fabric_->options_.network.get()) {
    const auto land = [&] { return Land(verbs, ordering); };
    return wait ? model->Post(verbs, ordering, land) : model->PostUnwaited(verbs, ordering, land);
  }
  // The request travels before it executes: delay first, so an injected delay really
  // reorders this verb against other threads' verbs. An unwaited batch lands at once: the
  // thread does not wait for it, and landing it later would need a thread of the fabric's.
  if (wait) ModelNetwork(bytes);
  return Land(verbs, ordering);
}

Status InProcEndpoint::Land(std::span<Verb> verbs, Ordering ordering) {
  const bool tear = fabric_->tear_.load(std::memory_order_relaxed);
  order_.resize(verbs.size());
  for (uint32_t i = 0; i < verbs.size(); ++i) order_[i] = i;
  if (tear && ordering == Ordering::kUnordered) std::shuffle(order_.begin(), order_.end(), rng_);
  for (uint32_t i : order_) {
    const Verb& v = verbs[i];
    MemoryNode& node = *fabric_->nodes_[v.remote.node()];
    // A node may go down while the batch is in flight: later verbs then fail, as they would.
    if (fabric_->IsNodeDown(v.remote.node()))
      return Status::Unavailable("memory node " + std::to_string(v.remote.node()) + " stopped answering");
    // Release before each verb: whoever observes verb i observes everything before it.
    std::atomic_thread_fence(std::memory_order_release);
    Status s = Execute(v, node, tear);
    std::atomic_thread_fence(std::memory_order_acquire);
    DMX_RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

Status InProcEndpoint::DoCall(uint16_t node, RpcOpcode op, RpcRequest request, RpcReply* reply) {
  if (node >= fabric_->nodes_.size())
    return Status::InvalidArgument("no memory node " + std::to_string(node));
  if (fabric_->IsNodeDown(node))
    return Status::Unavailable("memory node " + std::to_string(node) + " does not answer");
  MemoryNode& target = *fabric_->nodes_[node];
  if (NetworkModel* model = fabric_->options_.network.get())
    return model->Call(node, request.size(), reply, [&] { return target.Serve(op, request, reply); });
  ModelNetwork(request.size());
  return target.Serve(op, request, reply);
}

// ---------------------------------------------------------------------------------------

InProcFabric::InProcFabric(const InProcOptions& options) : options_(options) {}

Result<std::unique_ptr<InProcFabric>> InProcFabric::Create(const InProcOptions& options) {
  if (options.memory_nodes == 0) return Status::InvalidArgument("need at least one memory node");
  if (options.pool_bytes < kMinPoolBytes)
    return Status::InvalidArgument("pool of " + std::to_string(options.pool_bytes) +
                                   " bytes is smaller than the minimum " +
                                   std::to_string(kMinPoolBytes));
  if (options.pool_bytes > GlobalAddress::kOffsetMask)
    return Status::InvalidArgument("pool larger than a 48-bit offset can address");
  if (options.network && (options.round_trip_ns != 0 || options.bandwidth_gbps != 0))
    return Status::InvalidArgument("a network model times the verbs itself: round_trip_ns and "
                                   "bandwidth_gbps must be 0 with one");
  if (options.node.chunk_bytes == 0 || options.node.chunk_bytes % 4096 != 0)
    return Status::InvalidArgument("chunk size must be a non-zero multiple of 4096");
  std::unique_ptr<InProcFabric> f(new InProcFabric(options));
  f->down_ = std::make_unique<std::atomic<bool>[]>(options.memory_nodes);
  for (uint16_t i = 0; i < options.memory_nodes; ++i) {
    void* p = mmap(nullptr, options.pool_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return Status::OutOfSpace("cannot reserve " + std::to_string(options.pool_bytes >> 20) +
                                " MiB for memory node " + std::to_string(i));
    f->regions_.push_back({static_cast<std::byte*>(p), options.pool_bytes});
    f->nodes_.push_back(std::make_unique<MemoryNode>(i, static_cast<std::byte*>(p),
                                                     options.pool_bytes, options.node));
    if (options.prepare_node) DMX_RETURN_IF_ERROR(options.prepare_node(*f->nodes_.back()));
  }
  f->SetFaults(options.faults);
  return f;
}

Status InProcFabric::RestartNode(uint16_t id) {
  if (id >= nodes_.size()) return Status::InvalidArgument("no memory node " + std::to_string(id));
  // Its background work (XStore's training) stops first, while the node is still there for
  // the verbs it has in flight; the new node takes its place before the old one goes.
  nodes_[id]->Stop();
  auto old = std::exchange(nodes_[id], std::make_unique<MemoryNode>(id, regions_[id].base, regions_[id].size,
                                                                    options_.node, nodes_[id]->identity()));
  old.reset();
  return options_.prepare_node ? options_.prepare_node(*nodes_[id]) : Status::Ok();
}

InProcFabric::~InProcFabric() {
  nodes_.clear();
  for (auto& r : regions_) munmap(r.base, r.size);
}

void InProcFabric::SetNodeDown(uint16_t id, bool down) { down_[id].store(down); }
bool InProcFabric::IsNodeDown(uint16_t id) const { return down_[id].load(std::memory_order_relaxed); }

void InProcFabric::SetFaults(const FaultOptions& faults) {
  tear_piece_.store(std::max<uint32_t>(8, faults.tear_piece));
  delay_probability_.store(faults.delay_probability);
  delay_max_us_.store(faults.delay_max_us);
  base_seed_ = faults.seed;
  tear_.store(faults.tear);
}

FaultOptions InProcFabric::faults() const {
  FaultOptions f;
  f.tear = tear_.load();
  f.tear_piece = tear_piece_.load();
  f.delay_probability = delay_probability_.load();
  f.delay_max_us = delay_max_us_.load();
  f.seed = base_seed_;
  return f;
}

Result<std::unique_ptr<Endpoint>> InProcFabric::DoConnect() {
  uint64_t seed = base_seed_ * 0x9E3779B97F4A7C15ull + seed_counter_.fetch_add(1);
  return std::unique_ptr<Endpoint>(new InProcEndpoint(this, seed));
}

}  // namespace dmindex::fabric
