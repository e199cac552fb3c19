// Out-of-line values of a tree: writing a value's block (on the memory node of the leaf that
// will point at it, so both land in one in-order batch), fetching the values of references a
// leaf image holds (one unordered batch, each block validated against its key and the
// reader's lease), and retiring blocks a write replaced.
//
// Why a reader never returns bytes of a reused block (docs/SYNCHRONIZATION.md, "Out-of-line
// values"): a writer retires a block only after the leaf no longer points at it, and the
// compute node reuses it only `2 * value_lease` later; a reader accepts a fetched value only
// if it copied the block within `value_lease` of starting the READ of the leaf that pointed
// at it. So every accepted block READ ended before the block could be written again.
#pragma once

#include <span>
#include <string>

#include "tree/tree_state.h"

namespace dmindex::tree {

// A value's length against the tree's limit (formats with value blocks; integers always fit).
template <KeyValueTraits KV>
Status CheckValue(const TreeOptions& o, typename KV::ValueRef value) {
  if constexpr (KV::kValueBlocks) {
    if (value.size() > o.max_value_bytes)
      return Status::InvalidArgument("value of " + std::to_string(value.size()) +
                                     " bytes is longer than max_value_bytes " +
                                     std::to_string(o.max_value_bytes));
  }
  return Status::Ok();
}

template <KeyValueTraits KV>
class ValueStore {
 public:
  using KeyRef = typename KV::KeyRef;
  using ValueRef = typename KV::ValueRef;
  using Ctx = TreeContext<KV>;

  explicit ValueStore(const TreeShared<KV>& tree) : t_(tree) {}

  // A block holding `value` of `key`, allocated on memory node `node` and encoded into
  // c.value_buf; *write is its WRITE (to post before the leaf write that points at it).
  Result<ValueBlockRef> Prepare(Ctx& c, KeyRef key, ValueRef value, uint16_t node,
                                fabric::Verb* write) const;
  // The same into `buf` (bulk load: many blocks in one batch).
  Result<ValueBlockRef> PrepareInto(Ctx& c, KeyRef key, ValueRef value, uint16_t node,
                                    std::vector<std::byte>* buf, fabric::Verb* write) const;
  // A block that was never published goes straight back to the allocator.
  void Free(Ctx& c, const ValueBlockRef& ref) const;
  // A block the leaf no longer points at (the write that unlinked it has completed).
  void Retire(Ctx& c, const ValueBlockRef& ref) const;

  struct Fetch {
    ValueBlockRef ref;
    uint64_t owner = 0;          // KV::Owner of the entry's key
    std::string* value = nullptr;
    bool ok = false;             // validated and read within the lease
  };
  // READs every block in one unordered batch and decodes it into *value. `started`: an
  // instant before the READ of the leaf images the references came from. *all_ok: every
  // fetch is ok; one that is not must be answered by reading its leaf again.
  Status FetchAll(Ctx& c, std::span<Fetch> fetches, runtime::Clock::time_point started,
                  bool* all_ok) const;

  // The allocation a reference's block took.
  static uint32_t BlockBytes(const ValueBlockRef& ref) {
    return value_block::ClassBytes(value_block::ClassFor(ref.read_bytes));
  }

 private:
  const TreeShared<KV>& t_;
};

}  // namespace dmindex::tree
