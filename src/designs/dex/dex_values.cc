// DEX's out-of-line values, through the core's value blocks (tree/value_store.h,
// docs/SYNCHRONIZATION.md "Out-of-line values"):
//  * a write of a value longer than the leaf's inline limit writes the value's block first,
//    with a WRITE of its own, before any attempt of the operation - so the block has landed
//    before any image can name it, whichever path links it (a cached leaf written back later,
//    a shared leaf under its lock, the offload handler);
//  * a reader takes its lease clock before it reads the leaf (a cached page copy, a READ, an
//    offloaded lookup) and accepts a block only if its READ returned within the lease;
//  * a block a write unlinks is retired once no image in the pool names it: at once for
//    shared and offloaded writes (their leaf write has landed), after the leaf's next
//    write-back for cached ones (pending_blocks.h); retired blocks are reused 2 x value_lease
//    later, so no reader's accepted READ of the block overlaps its reuse.
#include "designs/dex/dex_tree.h"

namespace dmindex::designs::dex {

template <tree::KeyValueTraits KV>
Result<tree::ValueBlockRef> DexTree<KV>::WriteValueBlock(Worker& w, KeyRef key, ValueRef value) {
  // Any memory node will do: the block is READ on its own, never batched with its leaf. Spread
  // by the key.
  NeedsLease();  // from now on this process's readers may meet value blocks
  const auto node = static_cast<uint16_t>(KV::Owner(key) % fabric_.memory_nodes());
  fabric::Verb write;
  auto ref = values_.Prepare(w.ctx, key, value, node, &write);
  if (!ref.ok()) return ref.status();
  if (Status s = w.ctx.ep.Post({&write, 1}, fabric::Ordering::kInOrder); !s.ok()) {
    values_.Free(w.ctx, *ref);  // nothing names it
    return s;
  }
  return ref;
}

template <tree::KeyValueTraits KV>
void DexTree<KV>::FreeValueBlock(Worker& w, const tree::ValueBlockRef& block) {
  values_.Free(w.ctx, block);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::FetchValue(Worker& w, KeyRef key, const tree::ValueBlockRef& ref,
                               runtime::Clock::time_point started, std::string* value, bool* ok) {
  typename tree::ValueStore<KV>::Fetch f{ref, KV::Owner(key), value};
  return values_.FetchAll(w.ctx, {&f, 1}, started, ok);
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::CompareUnderLock(Worker& w, KeyRef key, const std::byte* image, const Header& h, bool* equal) {
  const auto& leaf = shared_.validator.leaf();
  const int slot = leaf.Find(image, h, key);
  if (slot < 0) return Status::NotFound();
  std::string found;
  const tree::ValueBlockRef ref = leaf.BlockAt(image, h, static_cast<uint32_t>(slot));
  if (ref.is_null()) {
    found = leaf.ValueAt(image, h, static_cast<uint32_t>(slot));
  } else {
    // The leaf held names this block, so it is neither replaced nor retired meanwhile; it
    // is read as a lookup reads it (validated, within the lease from now).
    bool fetched = false;
    DMX_RETURN_IF_ERROR(FetchValue(w, key, ref, runtime::Now(), &found, &fetched));
    if (!fetched) return RetryStatus("value block of a compare-and-swap");
  }
  *equal = std::string_view(found) == w.cas->expected;
  if (!*equal && w.cas->current != nullptr) *w.cas->current = std::move(found);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status DexTree<KV>::FetchValues(Worker& w, std::vector<LeafEntry>* entries, size_t from,
                                runtime::Clock::time_point started, bool* ok) {
  w.fetches.clear();
  for (size_t i = from; i < entries->size(); ++i) {
    LeafEntry& e = (*entries)[i];
    if (!e.block.is_null()) w.fetches.push_back({e.block, KV::Owner(e.key), &e.value});
  }
  DMX_RETURN_IF_ERROR(values_.FetchAll(w.ctx, w.fetches, started, ok));
  if (*ok)
    for (size_t i = from; i < entries->size(); ++i) (*entries)[i].block = {};  // values, not references
  return Status::Ok();
}

// The members defined here, for both formats (dex_tree.cc instantiates the class).
#define DMX_DEX_VALUES(KV)                                                                                 \
  template Result<tree::ValueBlockRef> DexTree<KV>::WriteValueBlock(Worker&, KeyRef, ValueRef);            \
  template void DexTree<KV>::FreeValueBlock(Worker&, const tree::ValueBlockRef&);                          \
  template Status DexTree<KV>::FetchValue(Worker&, KeyRef, const tree::ValueBlockRef&,                     \
                                          runtime::Clock::time_point, std::string*, bool*);                \
  template Status DexTree<KV>::CompareUnderLock(Worker&, KeyRef, const std::byte*, const Header&, bool*);  \
  template Status DexTree<KV>::FetchValues(Worker&, std::vector<LeafEntry>*, size_t,                       \
                                           runtime::Clock::time_point, bool*);
DMX_DEX_VALUES(U64Format)
DMX_DEX_VALUES(BytesFormat)
#undef DMX_DEX_VALUES

}  // namespace dmindex::designs::dex
