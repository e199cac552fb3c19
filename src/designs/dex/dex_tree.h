// DexTree: DEX (VLDB'24) on the shared B-link tree core. One tree in the memory pool,
// operated by `compute_nodes` logical compute nodes of this process, each owning a key range
// (partition_map.h) and caching nodes in its own BufferManager (src/cache).
//
//   owned nodes (fences inside the compute node's partition): cached with swizzled pointers,
//     synchronized by local optimistic lock coupling only, changed in the cache and written
//     back when cooled (or at once if a leaf was not admitted);
//   shared nodes (fences cross a boundary): cached read-only and refreshed from the root when
//     a fence check shows them stale; changed only remotely, under the core's node locks;
//     split by the core's structure modifier (whose nodes are all shared, see dex_split.cc).
//
// One implementation for both key formats (dex_keys.h): a template over the core's key/value
// traits, instantiated for U64Format and BytesFormat. Values longer than the leaf keeps
// inline live in value blocks (tree/value_store.h): written before the operation that links
// them, read with the lease of the leaf READ (or cached page copy) that named them, and
// retired once no image in the pool names them (PendingBlocks for cached leaves).
//
// Operations return RetryStatus() internally to restart from the root; the public calls
// loop (dex_ops.cc). The worker (one per session and compute node) carries the endpoint,
// the cache worker and private page copies.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/runtime.h"
#include "alloc/catalog.h"
#include "alloc/index_hold.h"
#include "cache/buffer_manager.h"
#include "common/retry.h"
#include "designs/dex/dex_options.h"
#include "designs/dex/node_pages.h"
#include "designs/dex/offload.h"
#include "designs/dex/offload_wire.h"
#include "designs/dex/log_watermark.h"
#include "designs/dex/operation_gate.h"
#include "designs/dex/partition_map.h"
#include "designs/dex/partition_store.h"
#include "designs/dex/pending_blocks.h"
#include "designs/dex/redo_log.h"
#include "designs/dex/retired_nodes.h"
#include "tree/bulk_loader.h"
#include "tree/entry_ops.h"
#include "tree/scan_range.h"
#include "tree/structure_modifier.h"
#include "tree/value_store.h"
#include "lease/lease.h"

namespace dmindex::designs::dex {

template <tree::KeyValueTraits KV>
struct DexComputeNode {
  DexComputeNode(uint32_t id, uint16_t memory_nodes, const DexOptions& o, const tree::NodeLayout<KV>& layout,
                 const NodePageLayout<KV>& page_layout);
  const uint32_t id;  // cluster-wide (partition number)
  tree::ComputeNodeState<KV> core;  // allocator, HOCL local lock table, retired value blocks, counters
  std::unique_ptr<cache::BufferManager> bm;
  // The meta page: an internal node image whose leftmost child is the root (kMetaLevel).
  std::unique_ptr<std::byte[]> meta_page;
  cache::BufferFrame meta;
  OffloadPolicy offload;
  RetiredNodes retired;  // blocks of merged-away nodes (dex_merge.cc)
  std::atomic<uint64_t> finished_splits{0};  // half splits found in the pool and finished here
  // Operations on this compute node pass it (operation_gate.h); installing a map that changes
  // the node's range closes it while the node writes back and drops its cache, so only the
  // compute nodes whose ranges move pause (DEX §4, Fig. 10). A checkpoint's barrier and
  // Close's flush close it too. New operations hold back while it is closed or closing.
  OperationGate gate;
  // durability=log (dex_durability.cc): this compute node's redo log, and positions in it.
  // reserved: ring bytes promised to operations in flight; tail: the next record's position
  // (claimed under the leaf's exclusive latch); head: the oldest record still needed.
  // tail <= reserved <= head + capacity, so a claimed record never overwrites a needed one.
  std::optional<RedoLog> log;
  std::atomic<uint64_t> log_head{0}, log_tail{0}, log_reserved{0};
  std::atomic<uint64_t> log_appends{0}, log_bytes{0}, checkpoints{0}, replayed{0};
  // How far the log has landed: operations answer only from writes whose records did.
  LogWatermark landed;
  // Operations that waited for a record of a write they read; records posted a second time.
  std::atomic<uint64_t> record_waits{0}, record_reposts{0};
};

template <tree::KeyValueTraits KV>
class DexTree;

template <tree::KeyValueTraits KV>
struct DexWorker {
  using Key = typename KV::Key;
  DexWorker(DexTree<KV>& tree, uint32_t compute_node, std::unique_ptr<fabric::Endpoint> ep);
  ~DexWorker();
  const uint32_t cn;
  tree::TreeContext<KV> ctx;
  // The partition map this operation routes by, fixed when it enters (DexTree::Enter).
  const PartitionMap<typename KV::Keys>* map = nullptr;
  NodePages<KV> pages;
  cache::CacheWorker cw;
  bool need_refresh = false;  // the last restart found a stale shared node
  bool make_room = false;     // split full owned nodes on the next descent (FinishSplit)
  // The last half split met under a shared parent (FinishSplit): met again after a refresh,
  // the separator is put in.
  GlobalAddress half_split;
  Key half_split_high{};
  bool no_offload = false;    // an offload fell back: this operation takes the normal path
  uint32_t latency_countdown = 1;  // OffloadPolicy::SampleLatency: times this miss at 0
  // A CompareAndSwap's condition, for the write this worker is making (null: none). Compared
  // where the write is applied, under the owned leaf's exclusive latch or the shared leaf's
  // lock (DexTree::CompareUnderLock).
  const tree::CompareValue* cas = nullptr;
  std::vector<std::byte> copy, image;  // private page copies
  std::vector<std::byte> request;      // an offload request
  std::vector<tree::LeafEntry<KV>> leaf_entries;
  std::vector<tree::InternalEntry<KV>> internal_entries;
  std::vector<typename tree::ValueStore<KV>::Fetch> fetches;  // value blocks of one leaf's entries
  // durability=log: this operation's redo record (dex_durability.cc).
  struct Record {
    uint64_t reserved = 0;   // ring bytes reserved for it (0: the operation logs nothing)
    bool in_pool = false;    // too long for the ring: the page is written through instead
    bool claimed = false;    // applied to its page: it must be appended before acknowledging
    bool landed = false;     // its WRITE completed
    uint64_t pos = 0;
    std::string_view value;  // the write's value (also when it is in a block)
    std::vector<std::byte> bytes;
  } record;
  bool replaying = false;  // applying a dead host's log: not logged again
  // This worker's mark in its compute node's gate (registered for the worker's lifetime).
  OperationGate& gate;
  OperationGate::Slot gate_slot;
  // Its record in flight (log_watermark.h), and the largest redo_end of the pages this
  // operation answers from: it answers once the log landed up to there.
  LogWatermark& watermark;
  LogWatermark::Slot log_slot;
  uint64_t reads_upto = 0;
  void Read(const cache::BufferFrame* f) {
    reads_upto = std::max(reads_upto, f->redo_end.load(std::memory_order_relaxed));
  }
};

// One session's workers: one per compute node the session's keys were routed to. Compute
// node ids are cluster-wide; `home` is one this process hosts.
template <tree::KeyValueTraits KV>
class WorkerSet {
 public:
  WorkerSet(DexTree<KV>& tree, uint32_t home) : tree_(tree), home_(home) {}
  uint32_t home() const { return home_; }
  // Inline: every operation asks (DexTree::Enter); only the first ask per compute node makes one.
  Result<DexWorker<KV>*> Get(uint32_t compute_node) {
    if (compute_node < workers_.size() && workers_[compute_node]) [[likely]] return workers_[compute_node].get();
    return Make(compute_node);
  }

 private:
  Result<DexWorker<KV>*> Make(uint32_t compute_node);
  DexTree<KV>& tree_;
  const uint32_t home_;
  std::vector<std::unique_ptr<DexWorker<KV>>> workers_;
};

using tree::WriteOp;

template <tree::KeyValueTraits KV>
class DexTree {
 public:
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Value = typename KV::Value;
  using ValueRef = typename KV::ValueRef;
  using Keys = typename KV::Keys;
  using Map = PartitionMap<Keys>;
  using Layout = tree::NodeLayout<KV>;
  using Header = tree::NodeHeader<KV>;
  using LeafEntry = tree::LeafEntry<KV>;
  using InternalEntry = tree::InternalEntry<KV>;
  using Worker = DexWorker<KV>;
  using Workers = WorkerSet<KV>;
  using ComputeNode = DexComputeNode<KV>;

  static Result<std::unique_ptr<DexTree>> Open(fabric::Fabric& fabric, const IndexOptions& index);
  ~DexTree();

  Result<std::unique_ptr<Worker>> NewWorker(uint32_t compute_node);

  // Each runs on the compute node that owns the key, inside its gate - a session
  // may be opened on any hosted compute node - or on the session's own one when
  // partitioning is off (then every node is shared and any compute node may serve any key).
  // NotOwner: the key's compute node is hosted by another process.
  Status Lookup(Workers& ws, KeyRef key, std::string* value);
  // With `cas` (a kUpdate only): CompareAndSwap, applied only if the value is cas->expected
  // (never offloaded; docs/DEX.md, "CompareAndSwap").
  Status Write(Workers& ws, WriteOp op, KeyRef key, ValueRef value, const tree::CompareValue* cas = nullptr);
  // The entries of `range` at or after `cursor` in the leaf covering `cursor`, appended to
  // *out (up to `limit` in all; values fetched); *next is the leaf's high fence (KV::kPosInf
  // for the last leaf: the u64 format's 2^64-1, the bytes format's empty string).
  Status ScanLeaf(Workers& ws, const tree::ScanRange<KV>& range, KeyRef cursor, size_t limit,
                  std::vector<LeafEntry>* out, Key* next);
  Status BulkLoad(Worker& w, std::span<const LeafEntry> sorted);
  // Moves partition boundaries (logical repartitioning, §4): under the stored map's lock,
  // every hosted compute node whose range changes writes its dirty pages back and drops its
  // cache, then the new map is published. Keys may only move away from hosted compute
  // nodes (NotOwner otherwise). Returns the seconds it took.
  Result<double> Repartition(std::vector<Key> boundaries);
  // Reads the stored map and installs it if another process published a newer one.
  Status ReloadMap();

  IndexStats Stats() const;
  // DEX's own counters, as properties ("dmindex.dex.offloads", ...).
  std::vector<std::pair<std::string, uint64_t>> Counters() const;
  // Writes every hosted compute node's dirty pages back and releases its host leases (the
  // destructor does it too, ignoring errors). Operations must have ended.
  Status Close();
  // Ok while this process's lease is live (Live): a session's reads stand only then.
  Status LeaseLive() { return Live(); }
  Status LeaseNotFenced() const { return lease_ ? lease_->CheckNotFenced() : Status::Ok(); }
  // Partitioning::RouteKey: the serving compute node and its partition.
  KeyRoute<Keys> RouteOf(KeyRef key) const;
  const DexOptions& options() const { return options_; }
  // This handle's registration as a holder of the index, until Close (Index::Drop does not
  // count it as another holder).
  std::optional<lease::HolderId> own_holder() const { return hold_ ? hold_->holder() : std::nullopt; }
  const Map& partition_map() const { return *map_.load(std::memory_order_acquire); }
  // Hosted compute nodes are first_node() .. first_node() + compute_nodes() - 1, of
  // partitions() in the cluster.
  ComputeNode& compute_node(uint32_t id) { return *nodes_[id - first_]; }
  uint32_t compute_nodes() const { return static_cast<uint32_t>(nodes_.size()); }
  uint32_t first_node() const { return first_; }
  uint32_t partitions() const { return partitions_; }
  bool Hosts(uint32_t id) const { return id >= first_ && id - first_ < nodes_.size(); }
  // Value blocks unlinked in cached leaves whose write-back has not landed yet.
  size_t pending_blocks() const { return pending_.size(); }

 private:
  friend struct DexWorker<KV>;
  DexTree(fabric::Fabric& fabric, const DexOptions& o, const Layout& layout,
          GlobalAddress root_word, uint32_t first, uint32_t partitions);
  // dex_open.cc: the first opener creates the stored partition map; later ones join it.
  static Result<std::unique_ptr<DexTree>> Create(fabric::Fabric& fabric, fabric::Endpoint& ep,
                                                 const DexOptions& o, const Layout& layout,
                                                 const alloc::CatalogEntry& entry, uint64_t token);
  static Result<std::unique_ptr<DexTree>> Join(fabric::Fabric& fabric, fabric::Endpoint& ep,
                                               const DexOptions& o, const Layout& layout,
                                               const alloc::CatalogEntry& entry,
                                               const std::string& name, uint64_t token);
  // The map of the stored (public) boundaries.
  std::unique_ptr<Map> MapOf(const std::vector<std::string>& boundaries, uint64_t version) const;

  struct LeafAt {
    cache::OptimisticGuard leaf, parent;
    Header h;
    bool owned = false;  // by the worker's compute node
    bool offloaded = false;
    OffloadReply<KV> result;  // when offloaded
    uint8_t stop_level = 0;  // in: Descend stops at the node of this level (merges)
  };
  // kLookup: reads only, so a leaf another operation is fetching may be read privately.
  enum class Intent { kLookup, kRead, kInsert };
  // Root to leaf over the cache (Algorithm 1). NotFound: the tree is empty. Retry: restart
  // (w.need_refresh says whether shared nodes on the path must be refreshed first).
  Status Descend(Worker& w, KeyRef key, Intent intent, const OffloadRequest<KV>* offload, LeafAt* out);
  // The header of `parent`, a node of the current descent (or the meta page, level
  // kMetaLevel), decoded again from its page: the header the descent read there if the
  // parent still validates (false: it changed since, restart). For FinishSplit's rare path:
  // the descent keeps only the current node's header.
  bool ParentHeader(Worker& w, const cache::OptimisticGuard& parent, Header* ph);
  // The child of the cached internal node `node` (header h, validated) covering `key`: its
  // index (-1: the leftmost) and the range the node gives it; false if the page changed
  // since `node` was taken (restart). The fixed format searches the page in place, the
  // slotted one a validated copy (its offsets are read from the page).
  bool SearchCachedInternal(Worker& w, const cache::OptimisticGuard& node, const Header& h, KeyRef key,
                            int* idx, Key* low, Key* high) const;
  // The slot of `key` in the cached leaf `leaf` (header h, validated) or -1, with the slot's
  // bytes at their page offsets in w.copy (the codec's ValueAt/BlockAt read them there);
  // false if the page changed (restart). In place as above for a sorted fixed-format leaf.
  bool FindInCachedLeaf(Worker& w, const cache::OptimisticGuard& leaf, const Header& h, KeyRef key,
                        int* slot) const;
  // Counts an operation's access to the leaf Descend found (and to its parent) in the
  // cache's frequency sketch (policy=lfu; one in touch_period, a countdown otherwise), in
  // two halves around the leaf's search or write (BufferManager::BeginTouch says why).
  // Offloaded accesses are counted by Offload. The frames' nodes are read racily: a frame
  // reused meanwhile only miscounts one access.
  void BeginTouchLeaf(Worker& w, const LeafAt& at) {
    const cache::BufferFrame* p = at.parent.frame();
    compute_node(w.cn).bm->BeginTouch(at.leaf.frame()->remote(), p != nullptr ? p->remote() : GlobalAddress{}, w.cw);
  }
  void EndTouchLeaf(Worker& w) { compute_node(w.cn).bm->EndTouch(w.cw); }
  // Hands the rest of the operation to the memory server of `child` (a miss at `level`).
  // NotSupported: not offloadable here; Retry: restart (w.no_offload set on a fallback).
  Status Offload(Worker& w, cache::OptimisticGuard& parent, GlobalAddress child, uint32_t level,
                 const OffloadRequest<KV>& req, LeafAt* out);
  // dex_scan.cc: from the cached level-1 node `parent` (header `ph`), the leaf covering
  // `cursor` and the leaves right of it, in one batch of READs for those not cached: appends
  // their entries of `range` (up to `limit`) and sets *next to the high fence of the last
  // one taken. *took: false if it took none (the caller takes the leaf through the cache).
  Status ScanRun(Worker& w, cache::OptimisticGuard& parent, const Header& ph, const tree::ScanRange<KV>& range,
                 KeyRef cursor, size_t limit, std::vector<LeafEntry>* out, Key* next, bool* took);
  // Re-reads the shared nodes on the path to `key` from the remote root and refreshes their
  // cached copies; updates the root pointer (§4: refresh_from_root).
  Status RefreshPath(Worker& w, KeyRef key);
  // One attempt of a point write on an owned leaf, or of a remote write on a shared one.
  // `block`: the value's block when it is out of line (then `value` is empty).
  // *underfull: a delete left the owned leaf underfull (fill_policy.h).
  Status WriteOwned(Worker& w, WriteOp op, KeyRef key, ValueRef value, const tree::ValueBlockRef& block,
                    LeafAt& at, bool* underfull);
  // Fixed format: writes a present key's new value into its slot `slot` of the owned leaf
  // held by `x` (header h), in place.
  Status RewriteSlot(Worker& w, cache::ExclusiveGuard& x, const Header& h, WriteOp op, KeyRef key, ValueRef value,
                     const tree::ValueBlockRef& block, uint32_t slot);
  Status WriteShared(Worker& w, WriteOp op, KeyRef key, ValueRef value, const tree::ValueBlockRef& block,
                     GlobalAddress leaf);
  // Takes the remote lock of a shared node and reads it into w.ctx.node(); *valid is false
  // if the image does not validate under the lock (the pointer is stale).
  Status LockRemote(Worker& w, GlobalAddress addr, tree::NodeLockGuard& guard, Header* h, bool* valid);

  // dex_open.cc: claims hosts for this process; hosts whose lease expired are taken over
  // (their lease fenced first, so they can never write again).
  static Result<uint32_t> ClaimOrTakeOver(fabric::Endpoint& ep, const PartitionStore& store, uint32_t parts,
                                          uint32_t count,
                                          std::optional<uint32_t> first, uint64_t token);
  // Ok while this process may still write to the pool for its compute nodes (its lease is
  // live); Unavailable for good once another process may have taken them over.
  Status Live() { return lease_ ? lease_->CheckLive() : Status::Ok(); }

  // dex_durability.cc: the redo logs (redo_log.h) and the background write-back.
  // At open: the index's log directory, a log for each hosted compute node, and the replay
  // of what a previous host left in it (before any operation runs).
  Status AttachLogs(fabric::Endpoint& ep, const alloc::CatalogEntry& entry);
  Status ReplayLog(ComputeNode& n);
  bool Logging(const Worker& w) { return options_.durable && !w.replaying && compute_node(w.cn).log.has_value(); }
  // Before a write's attempts: reserves its record's ring bytes; false if the log is full
  // (the caller leaves the compute node's gate and checkpoints).
  bool ReserveRecord(Worker& w, WriteOp op, KeyRef key, size_t value_bytes);
  // Under the written leaf's exclusive latch, right after the write was applied to it: the
  // record's position (so positions follow the order of writes to each key) and bytes, and
  // the page's redo_end. A leaf that was not admitted goes to the pool with its record, in
  // one batch, before the latch is released (PostUncached).
  Status ClaimRecord(Worker& w, cache::ExclusiveGuard& leaf, WriteOp op, KeyRef key);
  // After the operation: appends a claimed record that has not landed yet (the write is
  // acknowledged only after it landed).
  Status FinishRecord(Worker& w, Status s);
  // Runs `post` (a batch holding a record), once more if it failed (counted in n's
  // record_reposts): a record in flight when its memory server went away is settled by
  // posting it again (a restarting server is waited for there); if that fails too, the server
  // stayed away and the record failed: the caller's. A template: every logged write calls it.
  template <typename Post>
  Status PostSettled(ComputeNode& n, const Post& post) {
    Status posted = post();
    if (posted.ok()) [[likely]] return posted;
    n.record_reposts.fetch_add(1, std::memory_order_relaxed);
    return post();
  }
  // Posts the worker's record (PostSettled); sets record.landed.
  Status PostRecord(Worker& w);
  // A non-admitted leaf's page and record, in one batch under its latch (ClaimRecord).
  Status PostUncached(Worker& w, cache::ExclusiveGuard& leaf);
  // After a READ of `leaf`'s pool image returned (a private READ, an offloaded lookup's, a
  // scan's): the answer waits for the record of a non-admitted write that image may hold
  // (w.reads_upto), and is Unavailable if that record failed and no checkpoint covered it.
  Status CheckPoolImage(Worker& w, GlobalAddress leaf);
  // One record's bytes at `pos` of n's log, only while this process's lease is live.
  Status PostLogBytes(fabric::Endpoint& ep, ComputeNode& n, uint64_t pos, const std::vector<std::byte>& bytes);
  // Gives an unclaimed reservation back, settles a claimed record in the watermark and
  // forgets the record (every way out of a write).
  void ReleaseRecord(Worker& w);
  // Before an operation answers from cached pages (w.reads_upto): waits for the records of
  // the writes it read to land; Unavailable if one failed and no checkpoint covered it yet.
  Status AwaitLanded(Worker& w);
  // Writes every dirty page of `n` back and truncates its log to what was applied before
  // (maps_mu_ held: no repartitioning drops the cache meanwhile).
  Status Checkpoint(ComputeNode& n);
  // The write-back thread's first step (maps_mu_ held): the failed records of `n` posted again.
  void RepostFailed(ComputeNode& n);
  // After a flush of `n` with its gate held exclusively: nothing in the log is needed.
  Status TruncateLog(ComputeNode& n);
  void StartWriteBack();
  void StopWriteBack();
  void WriteBackLoop();
  // A write that found its compute node's ring full: which node, and the head it saw then
  // (a writer whose head moved meanwhile retries instead of checkpointing again).
  struct LogFull {
    uint32_t cn = UINT32_MAX;
    uint64_t head = 0;
  };
  // One write, within one admission (Write loops when the log was full).
  Status WriteOnce(Workers& ws, WriteOp op, KeyRef key, ValueRef value, const tree::CompareValue* cas,
                   LogFull* log_full);
  // Wakes the background write-back early: a ring past half full is checkpointed while
  // writers append into the other half.
  void KickWriteBack();

  // dex_values.cc: out-of-line values. A value too long for the leaf, in a block of its own
  // (written now, before anything can link it); a block never linked goes back at once.
  Result<tree::ValueBlockRef> WriteValueBlock(Worker& w, KeyRef key, ValueRef value);
  void FreeValueBlock(Worker& w, const tree::ValueBlockRef& block);
  // Fetches the values of (*entries)[from..] held in blocks, in one batch; *ok false if one
  // did not validate within the lease of `started` (the leaf must be read again).
  Status FetchValues(Worker& w, std::vector<LeafEntry>* entries, size_t from, runtime::Clock::time_point started,
                     bool* ok);
  // The start of a read's value-block lease: the clock, read before the read's leaf is.
  // Until this process met a value block (wrote one, or a read found one) no read needs it:
  // such a read that does find a reference takes it as the first one and restarts with the
  // clock (NeedsLease), so the fast path of short values reads no clock.
  bool LeaseStart(runtime::Clock::time_point* started) const {
    if (!blocks_seen_.load(std::memory_order_acquire)) return false;
    *started = runtime::Now();
    return true;
  }
  // A read that found a value block without a lease clock: restart it with one.
  void NeedsLease() { blocks_seen_.store(true, std::memory_order_release); }
  // The value of `key` in the block `ref` (*ok as above).
  Status FetchValue(Worker& w, KeyRef key, const tree::ValueBlockRef& ref, runtime::Clock::time_point started,
                    std::string* value, bool* ok);
  // The compare of a CompareAndSwap (w.cas) on `image`, a leaf the caller holds - an owned
  // leaf's page copy under its exclusive latch, or a shared leaf read under its lock - so no
  // write of the key can come between this compare and the caller's write. OK and *equal
  // (else w.cas->current is the value found), NotFound, or Retry: the key's value block
  // could not be read within its lease.
  Status CompareUnderLock(Worker& w, KeyRef key, const std::byte* image, const Header& h, bool* equal);

  // dex_split.cc: splits the owned, full `child` under `parent` (eager splits, §7).
  Status SplitChild(Worker& w, cache::OptimisticGuard& parent, cache::OptimisticGuard& child);
  Status SplitInCache(Worker& w, cache::ExclusiveGuard& node, const Header& h, Key* separator,
                      cache::ExclusiveGuard* right);
  Status InsertIntoOwnedParent(Worker& w, cache::ExclusiveGuard& parent, const Key& separator,
                               cache::ExclusiveGuard& right);
  Status SplitUnderSharedParent(Worker& w, cache::ExclusiveGuard& parent, const Header& ph,
                                cache::ExclusiveGuard& child, const Header& ch);
  Status SplitRoot(Worker& w, cache::ExclusiveGuard& meta, cache::ExclusiveGuard& root, const Header& h);
  Status WriteThrough(Worker& w, cache::ExclusiveGuard& node);
  // `node` (under `parent`, header ph) does not cover the key: it split and `parent` lacks the
  // separator. Puts the separator in (or has it put in) and returns Retry.
  Status FinishSplit(Worker& w, cache::OptimisticGuard& parent, const Header& ph, cache::OptimisticGuard& node,
                     const Header& h);
  Status SplitWrittenThrough(Worker& w, cache::ExclusiveGuard& node, const Header& h, Key* separator,
                             cache::ExclusiveGuard* right);
  // A new node in this compute node's cache on `memory_node` (a retired block if there is
  // one): registered, hot, dirty, exclusively latched, not yet linked.
  Result<cache::ExclusiveGuard> NewCachedNode(Worker& w, uint16_t memory_node);
  // Whether the node of a private copy (header h) is full: no room for one more entry of
  // any key the tree may hold (the fixed format: all slots taken).
  bool Full(const std::byte* copy, const Header& h) const;

  // dex_merge.cc: after a delete left the leaf of `key` underfull, merges it with a sibling
  // under an owned parent, then the parent, and so on up; shrinks an owned root that has one
  // child. Opportunistic: gives up on contention.
  Status MergeAfterDelete(Worker& w, KeyRef key);
  Status MergeAt(Worker& w, LeafAt& at, bool* merged);
  Status MergeSiblings(Worker& w, cache::ExclusiveGuard& parent, cache::ExclusiveGuard& left,
                       cache::ExclusiveGuard& right, int left_index, bool* merged);
  Status MergeUnderSharedParent(Worker& w, cache::ExclusiveGuard& parent, const Header& ph,
                                cache::ExclusiveGuard& left, const Header& lh, cache::ExclusiveGuard& right,
                                const Header& rh, bool* merged);
  // Writes `node` back if a split of it is not in the pool yet (precedes_parent).
  Status PublishSplits(Worker& w, cache::ExclusiveGuard& node);
  static Status Unlinked(cache::ExclusiveGuard& right, Status failure);
  // Builds into w.image the node `left` becomes with right's entries, high fence and sibling
  // appended; false if they do not fit one node or would leave it over MergeLeavesRoom.
  bool BuildMerged(Worker& w, const Header& lh, const std::byte* lcopy, const Header& rh, const std::byte* rcopy);
  // Installs w.image (BuildMerged) as `left`'s page.
  void AbsorbRight(Worker& w, cache::ExclusiveGuard& left, const Header& lh, const cache::ExclusiveGuard& right);
  Status ShrinkRoot(Worker& w, LeafAt& at, bool* merged);
  // A node leaving the tree: its remote image is overwritten as dead (kFlagDead), then its
  // frame is dropped and its block kept for NewCachedNode.
  Status WriteDead(Worker& w, GlobalAddress addr, const Header& h);
  void Retire(Worker& w, cache::ExclusiveGuard& node);
  // Whether the node of a private copy (header h) holds under a quarter of what it can.
  bool UnderfullNode(const std::byte* copy, const Header& h) const;
  // Points the meta page at the current remote root (under the meta latch).
  void SetRoot(cache::ExclusiveGuard& meta, GlobalAddress root);

  // The attempts of one operation: how many were made, the budget of retries
  // (retry_limits::kDexOperation, or kDexMerge for an optional merge) and the backoff.
  struct Attempts {
    explicit Attempts(const RetryLimit& limit_, const char* operation_) : limit(limit_), operation(operation_) {}
    uint32_t made = 0;
    const RetryLimit& limit;
    const char* const operation;
    // Made at the first retry (BeforeRetry): an operation that succeeds at once - every
    // fully cached one - builds neither.
    std::optional<RetryBudget> budget;
    std::optional<Backoff> backoff;
  };
  // Before each attempt of an operation: ends the cache operation, refreshes stale shared
  // nodes if the last attempt found one, backs off from the third retry on. Busy, naming the
  // key and the counts, once the budget is spent.
  Status BeforeRetry(Worker& w, KeyRef key, Attempts& attempts);
  // Links a half-split child (its sibling beyond `separator`) into its owned cached parent:
  // Ok, or Retry if the parent changed, is stale (need_refresh) or full (make_room).
  Status LinkHalfSplit(Worker& w, cache::OptimisticGuard& parent, const Key& separator, GlobalAddress sibling);
  // Admits an operation on `key`: the worker of the compute node serving it, its map set,
  // inside that node's gate until *pass ends.
  Result<Worker*> Enter(Workers& ws, KeyRef key, OperationGate::Pass* pass);
  // Makes `next` the map this process routes by (maps_mu_ held): every hosted compute node
  // whose range changes writes back and drops its cache under its gate; `publish` runs
  // after that and before operations resume.
  Status Install(std::unique_ptr<Map> next, const std::function<Status()>& publish);
  // Writes back every hosted compute node's dirty pages (at Close).
  Status FlushAll();
  bool Owned(const Worker& w, const Header& h) const { return w.map->Owns(w.cn, h.low, h.high); }
  static bool Shared(const Worker& w, const Header& h) {
    return !w.map->ExclusiveOwner(h.low, h.high).has_value();
  }
  // Decodes a private copy of a cached page (no validation: swizzled pointers break checks).
  Header DecodeHeader(const std::byte* copy) const {
    Header h;
    shared_.validator.ReadHeader(copy, &h);
    return h;
  }

  const DexOptions options_;
  const Layout layout_;
  const NodePageLayout<KV> page_layout_;
  fabric::Fabric& fabric_;
  tree::TreeShared<KV> shared_;
  tree::TreeReader<KV> reader_;
  tree::CoveringLocker<KV> locker_;
  tree::StructureModifier<KV> smo_;
  tree::BulkLoader<KV> loader_;
  const tree::ValueStore<KV> values_;
  PendingBlocks pending_;
  std::atomic<bool> blocks_seen_{false};  // LeaseStart
  const uint32_t first_, partitions_;
  PartitionStore store_;
  // This process's lease (lease/lease.h) and the host token naming it in the map's host
  // words (HostToken): whoever finds the lease expired may take the compute nodes over.
  std::unique_ptr<lease::Lease> lease_;
  // This handle's registration as a holder of the index under lease_ (alloc/index_hold.h),
  // until Close.
  std::unique_ptr<alloc::IndexHold> hold_;
  uint64_t host_token_ = 0;
  bool closed_ = false;
  std::vector<std::unique_ptr<ComputeNode>> nodes_;  // the hosted ones
  std::atomic<const Map*> map_{nullptr};  // current; operations keep theirs
  runtime::Mutex maps_mu_;  // serializes installs; guards maps_ and maintenance_
  std::vector<std::unique_ptr<Map>> maps_;  // all installed, for operations still on old ones
  std::unique_ptr<Worker> maintenance_;  // flushes and reads the stored map
  // The background write-back (writeback_ms): its thread and how it is told to stop.
  runtime::Thread writeback_;
  runtime::Mutex writeback_mu_;
  runtime::CondVar writeback_cv_;
  bool writeback_stop_ = false;
  bool writeback_kicked_ = false;  // a ring passed half full (KickWriteBack)
};

}  // namespace dmindex::designs::dex
