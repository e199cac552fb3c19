// PagedTree: a B+-tree on disk, paged through the LeanStore-style buffer manager of src/cache
// (swizzled child pointers, optimistic latches, cooling, write-back on eviction) - the paper's
// B+-B+ system (LeanStore) as btree-disk (docs/INDEXY.md). Pages are page_format.h's, stored
// in a PageFile; the cache holds `cache_bytes` of them, allocated up front as LeanStore does.
//
// Concurrency is LeanStore's: readers descend with optimistic guards, each page read as a
// private copy validated against its frame's latch; writers upgrade the leaf's guard and
// rewrite the page under it. Full nodes are split on the way down (a writer upgrades the
// node and its parent, splits, and restarts), so a split never needs more than those two
// latches; leaves never merge. A meta page the tree owns holds the root pointer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/buffer_manager.h"
#include "designs/btreedisk/page_file.h"
#include "designs/btreedisk/page_format.h"
#include "dmindex/types.h"

namespace dmindex::designs::btreedisk {

struct PagedTreeOptions {
  uint32_t page_bytes = 4096;
  uint64_t cache_bytes = 64ull << 20;
  uint32_t max_key_bytes = 8;
  uint32_t inline_value_bytes = 64;  // longer values go to the value log
};

class PageLayoutOfTree final : public cache::PageLayout {
 public:
  explicit PageLayoutOfTree(uint32_t page_bytes) : page_bytes_(page_bytes) {}
  bool IsLeaf(const std::byte* page) const override;
  size_t ChildCount(const std::byte* page) const override;
  uint64_t* ChildSlot(std::byte* page, size_t i) const override;
  using cache::PageLayout::ChildSlot;

 private:
  const uint32_t page_bytes_;
};

class PagedTree {
 public:
  // Needs room for four of the longest entries in a page (InvalidArgument naming the size).
  static uint32_t MinPageBytes(uint32_t max_key_bytes, uint32_t inline_value_bytes);
  static Result<std::unique_ptr<PagedTree>> Open(const PagedTreeOptions& options, std::unique_ptr<PageFile> file);
  ~PagedTree();

  class Worker {
   public:
    explicit Worker(PagedTree& tree);

   private:
    friend class PagedTree;
    cache::CacheWorker cw_;
    std::vector<std::byte> copy_, parent_copy_, out_;
    std::string key_, high_;  // separators read during a descent
  };

  Status Lookup(Worker& w, Slice key, std::string* value);
  enum class PutMode : uint8_t { kUpsert, kUpdate };
  Status Put(Worker& w, Slice key, Slice value, PutMode mode);
  Status Delete(Worker& w, Slice key);
  Status Scan(Worker& w, const KeyRange& range, size_t count, std::vector<KeyValue>* out);

  cache::CacheStats CacheStatsNow() const { return bm_->Stats(); }
  const PagedTreeOptions& options() const { return options_; }
  PageFile& file() { return *file_; }
  uint64_t restarts() const { return restarts_.load(std::memory_order_relaxed); }

 private:
  PagedTree(const PagedTreeOptions& options, std::unique_ptr<PageFile> file);
  // The leaf for `key`, as a validated private copy in w.copy_, with its guard, its parent's
  // guard and its upper fence (none: the last leaf). With `for_write`, full inner nodes on
  // the way are split first (then RetryStatus).
  struct LeafAt {
    cache::OptimisticGuard parent, leaf;
    std::optional<std::string> high;
  };
  Status Descend(Worker& w, Slice key, bool for_write, LeafAt* at);
  // Splits the node of `node` (latched optimistically) under `parent`; RetryStatus either way.
  // The new pages' frames are taken first, with no latch held: freeing a frame may need to
  // cool a child of `parent`, which the parent's latch would forbid.
  Status Split(Worker& w, cache::OptimisticGuard& parent, cache::OptimisticGuard& node);
  // With both latched; false (nothing changed) if the parent has no room or no longer holds
  // the node. `root`: a frame for a new root, when the parent is the meta page.
  Result<bool> SplitLatched(Worker& w, cache::ExclusiveGuard& parent, cache::ExclusiveGuard& node,
                            cache::ExclusiveGuard& right, cache::ExclusiveGuard* root);
  // Runs attempt() until it is not RetryStatus, ending the cache operation after each one.
  template <typename Attempt>
  Status WithRestarts(Worker& w, const char* what, Attempt attempt);
  bool InnerHasRoom(const PageView& v) const;
  Status ReadStored(const StoredValue& v, std::string* out);
  Result<StoredValue> Store(Slice value);

  const PagedTreeOptions options_;
  std::unique_ptr<PageFile> file_;
  PageLayoutOfTree layout_;
  std::unique_ptr<cache::BufferManager> bm_;
  std::unique_ptr<std::byte[]> meta_page_;
  cache::BufferFrame meta_;
  std::atomic<uint64_t> restarts_{0};
};

}  // namespace dmindex::designs::btreedisk
