// DEX's acknowledged writes outliving their compute process (durability=log, the default) and
// the background write-back of dirty pages (docs/DEX.md "Durability").
//
// Which writes are logged: every write applied to an owned leaf in a compute node's cache,
// admitted or not. Writes to shared leaves are in the pool when acknowledged (remote, under
// the leaf's lock), and keys never move from owned leaves to shared ones except by
// repartitioning, which truncates the log; writes are not offloaded while logging (the
// handler's order of two writes to one key is unknown here). So for every key of a compute
// node's range the log's last record is its last acknowledged write, or the pool holds it.
//
// Order: a record's position is claimed under the leaf's exclusive latch right after the
// write is applied, so two writes of one key get positions in the order they took effect
// (splits and merges move keys only under the latches of both nodes). The write is
// acknowledged after the record's WRITE completed: for an admitted leaf that is the
// operation's only round trip (a cache hit had none), posted after the latch is released
// (log_watermark.h: nobody answers from the write before it landed); a leaf that was not
// admitted goes to the pool with its record in one batch under its latch (PostUncached), and
// whoever reads its pool image waits for that record (CheckPoolImage).
//
// Truncation (Checkpoint): with the compute node's gate closed for an instant no
// operation is between claiming a record and finishing, so every record below the tail read
// then is applied to a page that is dirty or already written back. The flush that follows
// writes those pages; then the stored head moves to that tail, and only then may new records
// reuse the ring (the reservation is bounded by the head). Repartitioning and Close truncate
// after their own flush, under the gate: a log never holds records of keys its compute node
// has given away.
//
// Replay (ReplayLog): whoever hosts the compute node next - a process that claimed its lease
// after the host died and was released - scans the ring from the stored head before
// serving, applies per key the record with the highest position, writes the pages back and
// moves the head past every position of the scanned lap (stale slots can never be taken for
// new records). A replayer that dies meanwhile leaves the head where it was: the next one
// replays the same records again, with the same result.
#include <string>
#include <unordered_map>

#include "common/runtime.h"
#include "designs/dex/dex_tree.h"

namespace dmindex::designs::dex {
namespace {

constexpr uint32_t kDirectoryWords = PartitionStore::kMaxParts;
constexpr uint64_t kMinLogBytes = 4096;
constexpr uint64_t kMinDefaultLogBytes = 256ull << 10;
constexpr uint64_t kMaxLogBytes = uint64_t{1} << 30;  // as the log_kb knob's maximum

// The ring of a new log: log_kb, or by default the compute node's cache. A checkpoint writes
// back at most the cache's pages, so a ring of the cache's bytes holds at least as many record
// bytes as one checkpoint writes: flushing costs each logged write at most its own record's
// bytes again (64 B for a u64 key and value against pages of node_bytes), and the ring is
// not refilled faster than a checkpoint of the whole cache can empty it.
uint64_t RingBytes(const DexOptions& o) {
  if (o.log_bytes != 0) return o.log_bytes;
  // The block (header and ring) is the cache's size: a cache of a chunk's size fits one chunk.
  return std::min(kMaxLogBytes, std::max(kMinDefaultLogBytes, o.cache_bytes)) - RedoLog::kHeaderBytes;
}

// The index's log directory (catalog aux word 1): one word per compute node, 0 until the
// first host made its log. Made by whichever opener finds none (a CAS decides).
Result<GlobalAddress> LogDirectory(fabric::Endpoint& ep, alloc::NodeAllocator& allocator, GlobalAddress word) {
  uint64_t raw = 0;
  DMX_RETURN_IF_ERROR(ep.Read(word, &raw, 8));
  if (raw != 0) return GlobalAddress::FromRaw(raw);
  auto block = allocator.Allocate(ep, 8 * kDirectoryWords);
  if (!block.ok()) return block.status();
  const std::vector<uint64_t> zeros(kDirectoryWords, 0);
  DMX_RETURN_IF_ERROR(ep.Write(*block, zeros.data(), 8 * kDirectoryWords));
  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(ep.Cas(word, 0, block->raw(), &old));
  return old == 0 ? *block : GlobalAddress::FromRaw(old);
}

}  // namespace

template <tree::KeyValueTraits KV>
Status DexTree<KV>::AttachLogs(fabric::Endpoint& ep, const alloc::CatalogEntry& entry) {
  auto dir = LogDirectory(ep, nodes_[0]->core.allocator, entry.aux_word(1));
  if (!dir.ok()) return dir.status();
  for (auto& n : nodes_) {
    const GlobalAddress word = *dir + 8ull * n->id;
    uint64_t raw = 0;
    DMX_RETURN_IF_ERROR(ep.Read(word, &raw, 8));
    if (raw == 0) {
      if (!options_.durable) continue;  // no log yet, and none wanted
      // log_kb, or the largest halving of it that one of the memory servers' chunks holds
      // (the allocator says InvalidArgument for a block larger than a chunk).
      // All from one allocator (the directory's): a chunk per compute node would be wasted
      // on a small pool.
      alloc::NodeAllocator& allocator = nodes_[0]->core.allocator;
      uint64_t capacity = RingBytes(options_);
      auto block = allocator.Allocate(ep, static_cast<uint32_t>(RedoLog::BlockBytes(capacity)));
      // The default size is a preference: on a pool too small for it the ring shrinks too.
      const auto retry = [&](const Status& s) {
        return s.IsInvalidArgument() || (options_.log_bytes == 0 && s.IsOutOfSpace());
      };
      while (!block.ok() && retry(block.status()) && capacity > kMinLogBytes) {
        capacity /= 2;
        block = allocator.Allocate(ep, static_cast<uint32_t>(RedoLog::BlockBytes(capacity)));
      }
      if (!block.ok()) return block.status();
      DMX_RETURN_IF_ERROR(RedoLog::Initialize(ep, *block, capacity));
      // Two hosts of one compute node never coexist (host leases), but be exact anyway.
      DMX_RETURN_IF_ERROR(ep.Cas(word, 0, block->raw(), &raw));
      if (raw == 0) raw = block->raw();
    }
    auto log = RedoLog::Open(ep, GlobalAddress::FromRaw(raw));
    if (!log.ok()) return log.status();
    n->log = *log;
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::ReplayLog(ComputeNode& n) {
  fabric::Endpoint& ep = maintenance_->ctx.ep;
  auto contents = n.log->Scan(ep);
  if (!contents.ok()) return contents.status();
  // Per key, the record with the highest position: the key's last acknowledged write.
  std::unordered_map<std::string_view, const RedoLog::Record*> last;
  for (const RedoLog::Record& r : contents->records) last[r.key] = &r;
  Workers ws(*this, n.id);
  for (auto& hosted : nodes_) {
    auto w = ws.Get(hosted->id);
    if (!w.ok()) return w.status();
    (*w)->replaying = true;
  }
  for (const auto& [key, r] : last) {
    const auto k = tree::PublicKeys<Keys>::Tree(key);
    Status s = Status::Ok();
    if (r->op == RedoLog::Op::kPut) s = Write(ws, WriteOp::kUpsert, k, r->value);
    else if (r->op == RedoLog::Op::kDelete) s = Write(ws, WriteOp::kDelete, k, {});
    if (s.IsNotFound()) s = Status::Ok();
    if (!s.ok())
      return Status::FromCode(s.code(), "dex: replaying the redo log of compute node " + std::to_string(n.id) +
                                            " (key " + tree::DescribeKey(k) + "): " + s.message());
  }
  cache::CacheWorker cw(*n.bm, maintenance_->pages);
  auto flushed = n.bm->FlushDirty(cw);
  if (!flushed.ok()) return flushed.status();
  // Past every position of the lap just read: no stale slot can pass for a new record.
  const uint64_t head = contents->head + n.log->capacity();
  DMX_RETURN_IF_ERROR(n.log->WriteHead(ep, head, lease_.get()));
  n.log_head.store(head);
  n.log_tail.store(head);
  n.log_reserved.store(head);
  n.landed.Covered(head);
  n.replayed.fetch_add(last.size(), std::memory_order_relaxed);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
bool DexTree<KV>::ReserveRecord(Worker& w, WriteOp op, KeyRef key, size_t value_bytes) {
  ComputeNode& n = compute_node(w.cn);
  auto& r = w.record;
  const size_t key_bytes = tree::PublicKeys<Keys>::Public(key).size();
  uint64_t bytes = RedoLog::RecordBytes(key_bytes, op == WriteOp::kDelete ? 0 : value_bytes);
  r.in_pool = bytes > n.log->capacity() / 4;  // written through instead, with a short record
  if (r.in_pool) bytes = RedoLog::RecordBytes(key_bytes, 0);
  uint64_t reserved = n.log_reserved.load(), head = 0;
  do {
    head = n.log_head.load();
    if (reserved + bytes > head + n.log->capacity()) return false;
  } while (!n.log_reserved.compare_exchange_weak(reserved, reserved + bytes));
  r.reserved = bytes;
  // The reservation that takes the ring past half full wakes the write-back: its checkpoint
  // frees the older half while appends go on into the newer one.
  const uint64_t half = head + n.log->capacity() / 2;
  if (reserved < half && reserved + bytes >= half) KickWriteBack();
  return true;
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::KickWriteBack() {
  if (options_.writeback_ms == 0) return;  // no write-back thread: writers checkpoint a full ring
  {
    std::lock_guard lk(writeback_mu_);
    writeback_kicked_ = true;
  }
  writeback_cv_.NotifyAll();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::ClaimRecord(Worker& w, cache::ExclusiveGuard& leaf, WriteOp op, KeyRef key) {
  ComputeNode& n = compute_node(w.cn);
  auto& r = w.record;
  const bool transient = leaf.frame()->load_state() == cache::FrameState::kTransient;
  // A record too long for the ring: the page goes to the pool now (a non-admitted one with
  // the record, PostUncached), then a record saying so voids the key's earlier ones.
  if (r.in_pool && !transient) DMX_RETURN_IF_ERROR(WriteThrough(w, leaf));
  const RedoLog::Op lop = r.in_pool ? RedoLog::Op::kInPool
                                    : op == WriteOp::kDelete ? RedoLog::Op::kDelete : RedoLog::Op::kPut;
  LogWatermark::Begin(w.log_slot, n.log_tail);  // before the position exists (log_watermark.h)
  r.pos = n.log_tail.fetch_add(r.reserved);
  r.claimed = true;
  // Whoever answers from this change waits for its record: a reader of the cached page finds
  // the end in the frame; a reader of a non-admitted leaf's pool image in the transient frame,
  // which stays registered until the record landed (CheckPoolImage). Stored before the page
  // can reach the pool.
  leaf.frame()->redo_end.store(r.pos + r.reserved, std::memory_order_seq_cst);
  RedoLog::Encode(r.pos, lop, tree::PublicKeys<Keys>::Public(key),
                  lop == RedoLog::Op::kPut ? r.value : std::string_view{}, &r.bytes);
  return transient ? PostUncached(w, leaf) : Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::PostUncached(Worker& w, cache::ExclusiveGuard& leaf) {
  ComputeNode& n = compute_node(w.cn);
  auto& r = w.record;
  cache::BufferFrame* f = leaf.frame();
  // A leaf that was not admitted: its page and its record in one batch, one round trip. A
  // private READ, an offloaded lookup or a scan may read the page from the pool before the
  // record landed; they look for this frame after their READ (CheckPoolImage) and wait for
  // the record. The frame leaves the mapping table at the end of the operation, after this.
  fabric::Verb verbs[2];
  const std::span<const fabric::Verb> record{verbs, static_cast<size_t>(n.log->Verbs(r.pos, r.bytes, verbs))};
  Status posted = PostSettled(n, [&] { return w.pages.WriteBackWith(f->remote(), leaf.page(), record); });
  f->dirty.store(false, std::memory_order_relaxed);  // written, or failed: not posted again
  if (!posted.ok()) {
    // The page may have landed without its record: no reader answers from that image until a
    // checkpoint (named here, before the frame is unregistered: LogWatermark::FailedInPool);
    // ReleaseRecord sends the record to the write-back thread.
    n.landed.FailedInPool(f->remote().raw(), r.pos);
    return posted;
  }
  r.landed = true;
  n.log_appends.fetch_add(1, std::memory_order_relaxed);
  n.log_bytes.fetch_add(r.bytes.size(), std::memory_order_relaxed);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::CheckPoolImage(Worker& w, GlobalAddress leaf) {
  ComputeNode& n = compute_node(w.cn);
  if (!n.log) return Status::Ok();
  // The READ has returned. If it saw a non-admitted write's page, that write's frame was
  // registered and its redo_end stored before the page was posted, and the frame leaves the
  // mapping table only once the batch completed: the record landed, or FailedInPool named
  // the leaf first. So the frame is still found here (wait for its record), or the record
  // landed, or the leaf is named.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (const cache::BufferFrame* f = n.bm->Registered(leaf)) w.Read(f);
  return n.landed.CheckPoolImage(leaf.raw());
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::PostLogBytes(fabric::Endpoint& ep, ComputeNode& n, uint64_t pos,
                                 const std::vector<std::byte>& bytes) {
  // A fenced process acknowledges nothing more: the record goes out only while the lease is
  // live at the instant it is posted (fabric::PostGuard).
  fabric::Verb verbs[2];
  const std::span<fabric::Verb> record{verbs, static_cast<size_t>(n.log->Verbs(pos, bytes, verbs))};
  return lease_ ? ep.Post(record, fabric::Ordering::kUnordered, *lease_)
                : ep.Post(record, fabric::Ordering::kUnordered);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::PostRecord(Worker& w) {
  ComputeNode& n = compute_node(w.cn);
  auto& r = w.record;
  DMX_RETURN_IF_ERROR(PostSettled(n, [&] { return PostLogBytes(w.ctx.ep, n, r.pos, r.bytes); }));
  r.landed = true;
  n.log_appends.fetch_add(1, std::memory_order_relaxed);
  n.log_bytes.fetch_add(r.bytes.size(), std::memory_order_relaxed);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::FinishRecord(Worker& w, Status s) {
  auto& r = w.record;
  if (!s.ok() || !r.claimed || r.landed) return s;
  // A cached page's record, after its latch was released (a non-admitted leaf's went with
  // its page: PostUncached).
  return PostRecord(w);
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::ReleaseRecord(Worker& w) {
  auto& r = w.record;
  ComputeNode& n = compute_node(w.cn);
  if (r.reserved != 0 && !r.claimed) n.log_reserved.fetch_sub(r.reserved);
  if (r.claimed) {
    // A change without its record: readers of it answer Unavailable until the write-back
    // thread (woken for that) posts the record again or a checkpoint covers it.
    if (!r.landed) {
      n.landed.Failed(w.log_slot, r.pos, r.bytes);
      KickWriteBack();
    } else {
      LogWatermark::Landed(w.log_slot);
    }
  }
  r.reserved = 0;
  r.claimed = false;
  r.landed = false;
  r.in_pool = false;
  r.value = {};
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::AwaitLanded(Worker& w) {
  ComputeNode& n = compute_node(w.cn);
  const uint64_t upto = std::exchange(w.reads_upto, 0);
  if (upto == 0 || !n.log) return Status::Ok();
  LogWatermark::Reach reach = n.landed.Reached(upto, n.log_tail);
  if (reach == LogWatermark::Reach::kLanded) [[likely]] return Status::Ok();
  n.record_waits.fetch_add(1, std::memory_order_relaxed);
  // Every record in flight is being posted by an operation inside this compute node's gate,
  // which ends within its two posts' time: the bound is a liveness guard only.
  RetryBudget waits(retry_limits::kDexRecordInFlight, "dex: waiting for the redo record of a write read");
  Backoff backoff(backoff::kLockHeld, "a redo record in flight");
  while (reach == LogWatermark::Reach::kInFlight) {
    if (!waits.Spend()) return waits.Exhausted("of compute node " + std::to_string(n.id));
    backoff.Pause();
    reach = n.landed.Reached(upto, n.log_tail);
  }
  if (reach == LogWatermark::Reach::kLanded) return Status::Ok();
  return Status::Unavailable("dex: this operation read a write of compute node " + std::to_string(n.id) +
                             " whose redo record failed (its memory server went away); it is durable, and "
                             "readable, once the next checkpoint has written its page back");
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::Checkpoint(ComputeNode& n) {
  const bool logged = options_.durable && n.log.has_value();
  uint64_t upto = 0;
  if (logged) {
    // The barrier: no operation of this compute node in flight, so every record below the
    // tail was applied to its page and the page marked dirty (or written back already).
    OperationGate::Closed closed(n.gate);
    upto = n.log_tail.load();
  }
  cache::CacheWorker cw(*n.bm, maintenance_->pages);
  auto flushed = n.bm->FlushDirty(cw);
  if (!flushed.ok()) return flushed.status();
  n.checkpoints.fetch_add(1, std::memory_order_relaxed);
  if (!logged) return Status::Ok();
  DMX_RETURN_IF_ERROR(n.log->WriteHead(maintenance_->ctx.ep, upto, lease_.get()));
  n.log_head.store(upto);
  // Every change below upto is in the pool now, and no replay reads the records below it:
  // only then may a change whose record failed be answered from (before the head moved, a
  // replay could still set its key back to an older record's value).
  n.landed.Covered(upto);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::RepostFailed(ComputeNode& n) {
  if (!n.log) return;
  for (auto& [pos, bytes] : n.landed.FailedRecords()) {
    // maps_mu_ is held: the head (only moved under it) cannot pass pos meanwhile, so the
    // record's slot is still its own.
    if (pos < n.log_head.load()) continue;  // a checkpoint covered it
    if (!PostLogBytes(maintenance_->ctx.ep, n, pos, bytes).ok()) return;  // the next round tries again
    n.record_reposts.fetch_add(1, std::memory_order_relaxed);
    n.landed.Reposted(pos);
  }
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::TruncateLog(ComputeNode& n) {
  if (!n.log) return Status::Ok();
  const uint64_t tail = n.log_tail.load();
  DMX_RETURN_IF_ERROR(n.log->WriteHead(maintenance_->ctx.ep, tail, lease_.get()));
  n.log_head.store(tail);
  n.landed.Covered(tail);  // after a flush under the closed gate (the callers'), as Checkpoint
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::StartWriteBack() {
  if (options_.writeback_ms == 0) return;
  writeback_ = runtime::Thread([this] { WriteBackLoop(); });
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::StopWriteBack() {
  if (!writeback_.joinable()) return;
  {
    std::lock_guard lk(writeback_mu_);
    writeback_stop_ = true;
  }
  writeback_cv_.NotifyAll();
  writeback_.join();
}

// Every writeback_ms, each hosted compute node's dirty pages go back to the pool (and its
// log is truncated): a dirty page is at most that old plus one flush. A failed round (a
// memory server down) is tried again at the next tick; operations report the failure.
template <tree::KeyValueTraits KV>
void DexTree<KV>::WriteBackLoop() {
  const auto every = std::chrono::milliseconds(options_.writeback_ms);
  std::unique_lock lk(writeback_mu_);
  for (;;) {
    writeback_cv_.WaitUntil(lk, runtime::Now() + every, [&] { return writeback_stop_ || writeback_kicked_; });
    if (writeback_stop_) return;
    writeback_kicked_ = false;
    lk.unlock();
    {
      std::lock_guard maps(maps_mu_);
      for (auto& n : nodes_) {
        // Failed records first: posting them needs no gate, so operations waiting inside the
        // gate for what they block (a frame, a record) get it before the barrier waits for them.
        RepostFailed(*n);
        (void)Checkpoint(*n);
      }
    }
    lk.lock();
  }
}

#define DMX_DEX_DURABILITY(KV)                                                                 \
  template Status DexTree<KV>::AttachLogs(fabric::Endpoint&, const alloc::CatalogEntry&);      \
  template Status DexTree<KV>::ReplayLog(ComputeNode&);                                        \
  template bool DexTree<KV>::ReserveRecord(Worker&, WriteOp, KeyRef, size_t);                  \
  template Status DexTree<KV>::ClaimRecord(Worker&, cache::ExclusiveGuard&, WriteOp, KeyRef);  \
  template Status DexTree<KV>::FinishRecord(Worker&, Status);                                  \
  template Status DexTree<KV>::AwaitLanded(Worker&);                                           \
  template Status DexTree<KV>::PostUncached(Worker&, cache::ExclusiveGuard&);                  \
  template Status DexTree<KV>::CheckPoolImage(Worker&, GlobalAddress);                          \
  template Status DexTree<KV>::PostRecord(Worker&);                                            \
  template Status DexTree<KV>::PostLogBytes(fabric::Endpoint&, ComputeNode&, uint64_t,          \
                                            const std::vector<std::byte>&);                     \
  template void DexTree<KV>::RepostFailed(ComputeNode&);                                       \
  template void DexTree<KV>::ReleaseRecord(Worker&);                                           \
  template Status DexTree<KV>::Checkpoint(ComputeNode&);                                       \
  template Status DexTree<KV>::TruncateLog(ComputeNode&);                                      \
  template void DexTree<KV>::StartWriteBack();                                                 \
  template void DexTree<KV>::StopWriteBack();                                                  \
  template void DexTree<KV>::WriteBackLoop();                                                  \
  template void DexTree<KV>::KickWriteBack();
DMX_DEX_DURABILITY(U64Format)
DMX_DEX_DURABILITY(BytesFormat)
#undef DMX_DEX_DURABILITY

}  // namespace dmindex::designs::dex
