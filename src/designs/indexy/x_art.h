// X = the adaptive radix tree of src/art (the paper's ART-*). Entries are the tree's leaves;
// their flags are changed by compare-and-swap (art/leaf.h), which is how a cleaner and a
// writer replacing a leaf see each other without a lock. Units are the nodes `unit_depth`
// hops below the root (and leaves hanging above that depth), named by their path.
#pragma once

#include <memory>

#include "art/tree.h"
#include "designs/indexy/x_index.h"

namespace dmindex::designs::indexy {

class ArtX final : public XTree {
 public:
  // Counters and hot bits down to `unit_depth`; one in 2^sample_shift operations counts.
  // A thread frees what it retired once it retired `reclaim_bytes` (retired memory counts
  // against X's limit until the epochs free it).
  ArtX(uint32_t unit_depth, uint32_t sample_shift, uint64_t reclaim_bytes);

  std::unique_ptr<XWorker> NewWorker() override;
  XBytes Bytes() const override { return {tree_.bytes(), tree_.retired_bytes()}; }
  uint64_t entries() const override { return tree_.entries(); }
  uint64_t restarts() const override { return tree_.restarts(); }
  uint32_t unit_depth() const override { return unit_depth_; }
  void MountAll() override { tree_.root()->SetMounted(); }

 private:
  const uint32_t unit_depth_;
  art::Tree tree_;
};

}  // namespace dmindex::designs::indexy
