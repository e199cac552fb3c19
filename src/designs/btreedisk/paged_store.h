// PagedStore: btree-disk's paged B+-tree as a cold store (tiering/cold_store.h), IndeXY's Y for
// the paper's ART-B+ system, whose Y is the same LeanStore B-tree as its B+-B+ (`indexy:y=btree`;
// pages of y_page_kb, a buffer pool of y_cache_mb). Threads borrow tree workers from a pool
// (the store interface has no per-thread handle). A batch is applied key by key: each key's
// write is atomic, the batch is not (cold_store.h says what IndeXY needs).
#pragma once

#include <memory>
#include <vector>

#include "common/runtime.h"
#include "designs/btreedisk/paged_tree.h"
#include "tiering/cold_store.h"
#include "tiering/cold_store_options.h"
#include "tiering/store_counters.h"

namespace dmindex::designs::btreedisk {

class PagedStore final : public tiering::ColdStore {
 public:
  // Keys of up to max_key_bytes; values of up to inline_value_bytes in the leaves.
  static Result<std::unique_ptr<tiering::ColdStore>> Open(const tiering::ColdStoreOptions& options,
                                                          uint32_t max_key_bytes, uint32_t inline_value_bytes);
  ~PagedStore() override;

  std::string_view kind() const override { return "btree"; }
  Status Get(std::string_view key, std::string* value) override;
  Status Write(const tiering::ColdBatch& batch) override;
  Result<std::unique_ptr<tiering::ColdIterator>> NewIterator() override;
  tiering::ColdStoreUsage Usage() override;
  tiering::ColdStoreCounters Counters() const override { return counters_.Snapshot(); }
  Status Close() override;

 private:
  class Iterator;
  // A worker for the length of one call, from the pool (a new one if it is empty).
  class Borrowed {
   public:
    explicit Borrowed(PagedStore& s);
    ~Borrowed();
    PagedTree::Worker& operator*() { return *w_; }

   private:
    PagedStore& s_;
    std::unique_ptr<PagedTree::Worker> w_;
  };
  explicit PagedStore(std::unique_ptr<PagedTree> tree) : tree_(std::move(tree)) {}

  std::unique_ptr<PagedTree> tree_;
  runtime::Mutex pool_mu_;
  std::vector<std::unique_ptr<PagedTree::Worker>> pool_;
  tiering::StoreCounters counters_;
  bool closed_ = false;
};

}  // namespace dmindex::designs::btreedisk
