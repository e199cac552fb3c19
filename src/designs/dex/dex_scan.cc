// DEX's range scans. DEX keeps no leaf links to follow (§7), so a scan is a series of
// fence-key steps (DexIndex::DoScan). Each step descends the cached path to the level-1 node
// covering its cursor and takes the leaf covering the cursor and the leaves right of it that
// the node lists: cached ones from the cache, the others in one batch of READs (one round
// trip, as Sherman's range query does) instead of one descent and one round trip per leaf.
// Leaves read in a batch are not admitted to the cache (as Sherman caches no leaves); a step
// that cannot batch (a one-leaf tree, a level-1 node that changed, a first leaf that is not
// the worker's) takes one leaf through the cache, as a lookup does.
//
// Why a batch READ from the pool returns what the cache would: a child whose slot Probe()
// finds neither swizzled nor in the mapping table has no cached copy - a dirty page leaves
// the mapping table only after its write-back landed - so the pool holds its latest image
// when Probe looks. Bringing it into the cache (and so making it dirty later) swizzles it
// into the parent or fails because the parent changed; either changes the parent's version.
// So if the parent still validates after the READs returned, every image read is at least as
// new as the instant of the Probe, which lies inside the scan: the value a scan returns for
// each key is one it held during the scan (scans are not snapshots: docs/SYNCHRONIZATION.md,
// "Scans"). Children that are cached are read from the cache, under their own latches. The
// batch is trusted only while its leaves chain fence to fence from the first leaf and are
// owned by the worker's compute node (another compute node's leaves may be dirty in its
// cache: the next step enters through their owner); past the first leaf that does not, the
// next step descends from its low fence.
#include <algorithm>
#include <string>

#include "common/retry_status.h"
#include "common/runtime.h"
#include "designs/dex/dex_tree.h"

namespace dmindex::designs::dex {
namespace {

constexpr size_t kMaxBatchLeaves = 32;  // as the tree core's LeafScanner

}  // namespace

template <tree::KeyValueTraits KV>
Status DexTree<KV>::ScanLeaf(Workers& ws, const tree::ScanRange<KV>& range, KeyRef cursor, size_t limit,
                             std::vector<LeafEntry>* out, Key* next) {
  OperationGate::Pass pass;
  auto wp = Enter(ws, cursor, &pass);
  if (!wp.ok()) return wp.status();
  Worker& w = **wp;
  const auto& leaf = shared_.validator.leaf();
  Attempts attempts(retry_limits::kDexOperation, "dex scan");
  const size_t first = out->size();
  bool batch = true;  // off for a restart after a step that could not batch
  for (;;) {
    DMX_RETURN_IF_ERROR(BeforeRetry(w, cursor, attempts));
    runtime::Clock::time_point started;  // the lease of the values' blocks
    const bool leased = LeaseStart(&started);
    LeafAt at;
    at.stop_level = batch ? 1 : 0;
    Status s = Descend(w, cursor, Intent::kRead, nullptr, &at);
    if (s.IsNotFound()) {
      *next = KV::kPosInf;
      return w.cw.EndOperation();
    }
    if (IsRetry(s)) continue;
    DMX_RETURN_IF_ERROR(s);
    if (at.h.level == 1) {
      bool took = false;
      Status run = ScanRun(w, at.leaf, at.h, range, cursor, limit, out, next, &took);
      if (!run.ok() || !took) {
        (void)w.cw.EndOperation();
        DMX_RETURN_IF_ERROR(run);
        batch = false;  // take the first leaf through the cache instead
        attempts.made = 0;  // not a retry of the operation
        continue;
      }
    } else {
      CopyPage(at.leaf.page(), w.copy.data(), page_layout_.LeafBytes(at.h));
      w.Read(at.leaf.frame());
      if (!at.leaf.Validate()) continue;
      w.leaf_entries.clear();
      leaf.Collect(w.copy.data(), at.h, &w.leaf_entries);
      for (LeafEntry& e : w.leaf_entries)
        if (!(e.key < cursor) && !range.Before(e.key) && !range.Beyond(e.key) && out->size() < limit)
          out->push_back(std::move(e));
      *next = at.h.high;
    }
    DMX_RETURN_IF_ERROR(w.cw.EndOperation());
    bool fetched = true;
    if (std::any_of(out->begin() + first, out->end(), [](const LeafEntry& e) { return !e.block.is_null(); })) {
      if (!leased) {  // the first value block this process meets: read again, with the clock
        NeedsLease();
        fetched = false;
      } else {
        DMX_RETURN_IF_ERROR(FetchValues(w, out, first, started, &fetched));
      }
    }
    if (!fetched) {  // a block replaced meanwhile, or read past the lease: read the leaves again
      out->resize(first);
      continue;
    }
    return AwaitLanded(w);  // the pairs may hold writes whose records are in flight
  }
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::ScanRun(Worker& w, cache::OptimisticGuard& parent, const Header& ph,
                            const tree::ScanRange<KV>& range, KeyRef cursor, size_t limit,
                            std::vector<LeafEntry>* out, Key* next, bool* took) {
  ComputeNode& cn = compute_node(w.cn);
  const auto& internal = shared_.validator.internal();
  std::byte* parent_copy = w.image.data();
  CopyPage(parent.page(), parent_copy, page_layout_.InternalBytes(ph));
  if (!parent.Validate()) return Status::Ok();
  // As many leaves as the entries still wanted fill, plus one: the cursor may be at the end
  // of its leaf. Leaves hold what the bulk load left or what splits did (half), whichever
  // is fewer as observed: a leaf too many costs bytes, one too few a round trip.
  const size_t bulk_per_leaf = shared_.validator.leaf().EntriesPerLeaf(shared_.options.bulk_fill);
  const size_t seen_per_leaf = w.ctx.LeafEntriesEstimate();
  const size_t per_leaf = bulk_per_leaf == 0 ? seen_per_leaf : std::min(bulk_per_leaf, seen_per_leaf);
  const size_t want = std::min(kMaxBatchLeaves, 1 + (limit - out->size() + per_leaf - 1) / per_leaf);

  // The child covering the cursor and those right of it: cached ones by their latch, the
  // others READ in one batch.
  struct Child {
    cache::OptimisticGuard cached;  // valid: the page is in this compute node's cache
    uint32_t read = 0;              // otherwise: its image's index in the batch
    GlobalAddress addr;             // and its address
  };
  std::vector<Child> run;
  std::vector<fabric::Verb> reads;
  const uint32_t nb = layout_.node_bytes;
  w.ctx.scan_buf.resize(want * nb);
  const int count = static_cast<int>(internal.Count(ph));
  for (int j = internal.ChildIndexFor(parent_copy, ph, cursor); j < count && run.size() < want; ++j) {
    if (j >= 0 && !run.empty() && range.Beyond(internal.KeyAt(parent_copy, ph, static_cast<uint32_t>(j)))) break;
    const uint64_t* slot = page_layout_.ChildSlot(parent.frame()->page, NodePageLayout<KV>::SlotIndex(j));
    auto step = cn.bm->Probe(parent, slot, w.cw);
    if (step.kind == cache::BufferManager::Step::kHit) {
      run.push_back({step.child, 0, {}});
    } else if (step.kind == cache::BufferManager::Step::kMiss) {
      run.push_back({{}, static_cast<uint32_t>(reads.size()), step.missing});
      reads.push_back(fabric::Verb::Read(step.missing, w.ctx.scan_buf.data() + reads.size() * nb, nb));
    } else {
      break;  // the parent changed or the child is being loaded: the next step descends
    }
  }
  if (run.empty()) return Status::Ok();
  if (!reads.empty())
    DMX_RETURN_IF_ERROR(w.ctx.ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered));
  if (!parent.Validate()) return Status::Ok();  // a child may have been cached meanwhile

  const auto& leaf = shared_.validator.leaf();
  Key expect_low{};  // the high fence of the leaf before (none before the first)
  for (Child& child : run) {
    Header h;
    const std::byte* image = nullptr;
    if (child.cached.valid()) {
      page_layout_.CopyHeader(child.cached.page(), w.copy.data());
      if (!child.cached.Validate()) break;
      h = DecodeHeader(w.copy.data());
      CopyPage(child.cached.page(), w.copy.data(), page_layout_.LeafBytes(h));
      w.Read(child.cached.frame());
      if (!child.cached.Validate()) break;
      image = w.copy.data();
    } else {
      image = w.ctx.scan_buf.data() + size_t{child.read} * nb;
      if (!shared_.validator.Decode(image, &h)) break;  // torn: the next step reads it alone
      // Not registered when probed, but a write may have taken it since and sent its page.
      DMX_RETURN_IF_ERROR(CheckPoolImage(w, child.addr));
    }
    const bool linked = *took ? h.low == expect_low : h.Covers(cursor);
    if (!h.is_leaf() || h.dead() || !linked || !Owned(w, h)) break;
    w.leaf_entries.clear();
    leaf.Collect(image, h, &w.leaf_entries);
    w.ctx.NoteLeafEntries(w.leaf_entries.size());
    for (LeafEntry& e : w.leaf_entries)
      if (!(e.key < cursor) && !range.Before(e.key) && !range.Beyond(e.key) && out->size() < limit)
        out->push_back(std::move(e));
    *took = true;
    expect_low = h.high;
    *next = h.high;
    if (out->size() >= limit || h.high == KV::kPosInf || range.Beyond(h.high)) break;
  }
  return Status::Ok();
}

#define DMX_DEX_SCAN(KV)                                                                                  \
  template Status DexTree<KV>::ScanLeaf(Workers&, const tree::ScanRange<KV>&, KeyRef, size_t,             \
                                        std::vector<LeafEntry>*, Key*);                                   \
  template Status DexTree<KV>::ScanRun(Worker&, cache::OptimisticGuard&, const Header&,                   \
                                       const tree::ScanRange<KV>&, KeyRef, size_t, std::vector<LeafEntry>*, \
                                       Key*, bool*);
DMX_DEX_SCAN(U64Format)
DMX_DEX_SCAN(BytesFormat)
#undef DMX_DEX_SCAN

}  // namespace dmindex::designs::dex
