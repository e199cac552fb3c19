// A small synthetic tree in remote memory for testing the compute-side cache without the
// B-link tree core: fixed fan-out, pages that name their own address, leaves that hold
// counters. Threads walk it root to leaf through a BufferManager.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "alloc/node_allocator.h"
#include "cache/buffer_manager.h"
#include "common/retry_status.h"
#include "fabric/inproc/inproc_fabric.h"

namespace dmindex::cache::testing {

// Page: [0,8) own address, [8,12) leaf flag, [12,16) entry count, [64, ...) child swips
// (inner) or uint64 counters (leaf).
inline constexpr uint32_t kPageBytes = 256;
inline constexpr size_t kSlotsOffset = 64;
inline constexpr size_t kMaxEntries = (kPageBytes - kSlotsOffset) / 8;

inline uint64_t* Word(std::byte* page, size_t offset) {
  return reinterpret_cast<uint64_t*>(page + offset);
}
inline uint64_t LoadWord(const std::byte* page, size_t offset) {
  return std::atomic_ref<uint64_t>(*Word(const_cast<std::byte*>(page), offset))
      .load(std::memory_order_relaxed);
}
inline uint32_t Count(const std::byte* page) { return static_cast<uint32_t>(LoadWord(page, 8) >> 32); }
inline bool Leaf(const std::byte* page) { return (LoadWord(page, 8) & 0xFFFFFFFF) != 0; }
inline void StoreWord(std::byte* page, size_t offset, uint64_t v) {
  std::atomic_ref<uint64_t>(*Word(page, offset)).store(v, std::memory_order_relaxed);
}
inline void SetHeader(std::byte* page, GlobalAddress self, bool leaf, uint32_t count) {
  StoreWord(page, 0, self.raw());
  StoreWord(page, 8, (uint64_t{count} << 32) | (leaf ? 1 : 0));
}
inline void SetCount(std::byte* page, uint32_t count) {
  std::atomic_ref<uint64_t>(*Word(page, 8))
      .store((uint64_t{count} << 32) | (Leaf(page) ? 1 : 0), std::memory_order_relaxed);
}
inline uint64_t* Entry(std::byte* page, size_t i) { return Word(page, kSlotsOffset + 8 * i); }

class TestLayout final : public PageLayout {
 public:
  bool IsLeaf(const std::byte* page) const override { return Leaf(page); }
  size_t ChildCount(const std::byte* page) const override {
    return Leaf(page) ? 0 : std::min<size_t>(Count(page), kMaxEntries);
  }
  uint64_t* ChildSlot(std::byte* page, size_t i) const override { return Entry(page, i); }
  using PageLayout::ChildSlot;
};

// Reads and writes pages with one thread's endpoint; counts READs per node and can hold
// every READ back for a while (to make concurrent misses overlap).
class FabricPages final : public PageLoader, public PageWriter {
 public:
  explicit FabricPages(fabric::Fabric& f) : ep_(std::move(f.Connect()).value()) {}
  Status Load(GlobalAddress addr, std::byte* page) override {
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    DMX_RETURN_IF_ERROR(ep_->Read(addr, page, kPageBytes));
    if (LoadWord(page, 0) != addr.raw())
      return Status::Corruption("page at " + addr.ToString() + " names another address");
    ++loads_[addr.raw()];
    return Status::Ok();
  }
  Status WriteBack(GlobalAddress addr, const std::byte* page) override {
    if (LoadWord(page, 0) != addr.raw())
      return Status::Corruption("writing back a page of another node to " + addr.ToString());
    ++write_backs_;
    return ep_->Write(addr, page, kPageBytes);
  }
  fabric::Endpoint& ep() { return *ep_; }
  int loads(GlobalAddress a) const { return loads_.count(a.raw()) ? loads_.at(a.raw()) : 0; }
  const std::unordered_map<uint64_t, int>& all_loads() const { return loads_; }
  void set_delay_ms(int ms) { delay_ms_ = ms; }

 private:
  std::unique_ptr<fabric::Endpoint> ep_;
  std::unordered_map<uint64_t, int> loads_;
  int write_backs_ = 0;
  int delay_ms_ = 0;
};

// The remote tree: levels[0] are the leaves, levels.back() = {root}.
struct TestTree {
  std::unique_ptr<fabric::InProcFabric> fabric;
  std::vector<std::vector<GlobalAddress>> levels;
  size_t fanout = 0;
  // The root pointer, held the way a tree holds it: in a meta frame outside the pool.
  std::unique_ptr<std::byte[]> meta_page{new std::byte[kPageBytes]()};
  BufferFrame meta;

  static std::unique_ptr<TestTree> Build(size_t fanout, int height, fabric::FaultOptions faults = {}) {
    auto t = std::make_unique<TestTree>();
    fabric::InProcOptions o;
    o.memory_nodes = 2;
    o.pool_bytes = 16ull << 20;
    o.node.chunk_bytes = 1 << 20;
    t->fabric = std::move(fabric::InProcFabric::Create(o)).value();
    t->fanout = fanout;
    auto ep = std::move(t->fabric->Connect()).value();
    alloc::NodeAllocator allocator(2);
    std::vector<std::byte> page(kPageBytes);
    size_t width = 1;
    for (int l = 1; l < height; ++l) width *= fanout;
    for (int level = 0; level < height; ++level, width /= fanout) {
      t->levels.emplace_back();
      for (size_t i = 0; i < width; ++i) {
        GlobalAddress a = std::move(allocator.Allocate(*ep, kPageBytes)).value();
        std::fill(page.begin(), page.end(), std::byte{0});
        if (level == 0) {
          SetHeader(page.data(), a, true, kMaxEntries);
        } else {
          SetHeader(page.data(), a, false, static_cast<uint32_t>(fanout));
          for (size_t c = 0; c < fanout; ++c)
            *Entry(page.data(), c) = t->levels[level - 1][i * fanout + c].raw();
        }
        EXPECT_TRUE(ep->Write(a, page.data(), kPageBytes).ok());
        t->levels.back().push_back(a);
      }
    }
    t->meta.page = t->meta_page.get();
    t->meta.set_state(FrameState::kHot);
    SetHeader(t->meta.page, GlobalAddress(0, 64), false, 1);
    *Entry(t->meta.page, 0) = t->root().raw();
    t->fabric->SetFaults(faults);
    return t;
  }
  GlobalAddress root() const { return levels.back()[0]; }
  int height() const { return static_cast<int>(levels.size()); }
  size_t leaves() const { return levels[0].size(); }
  size_t nodes() const {
    size_t n = 0;
    for (auto& l : levels) n += l.size();
    return n;
  }
  // Child index taken at a node of `level` on the way to `leaf`.
  size_t ChildIndex(size_t leaf, int level) const {
    size_t d = 1;
    for (int l = 1; l < level; ++l) d *= fanout;
    return (leaf / d) % fanout;
  }

  // Walks to `leaf` and reads (or increments) its counter `counter`. Restarts from the root
  // whenever the cache asks to. *value receives the counter (after the increment).
  Status Access(BufferManager& bm, CacheWorker& w, FabricPages& pages, size_t leaf,
                size_t counter, bool increment, uint64_t* value) {
    for (int attempt = 0; attempt < 1000000; ++attempt) {
      DMX_RETURN_IF_ERROR(w.EndOperation());
      OptimisticGuard g(&meta);
      if (!g.valid()) continue;
      bool restart = false;
      for (int level = height(); level >= 1 && !restart; --level) {
        // level: of the node g is on (meta is above the root).
        const size_t idx = level == height() ? 0 : ChildIndex(leaf, level);
        if (Leaf(g.page()) || idx >= Count(g.page())) {
          restart = true;  // an inconsistent optimistic view
          break;
        }
        auto r = bm.Resolve(g, TestLayout().ChildSlot(g.page(), idx), level == 1, w, pages);
        if (!r.ok()) {
          if (IsRetry(r.status())) restart = true;
          else return r.status();
        } else {
          g = *r;
        }
      }
      if (restart) continue;
      const uint64_t self = LoadWord(g.page(), 0);
      if (!g.Validate()) continue;
      if (self != levels[0][leaf].raw())
        return Status::Corruption("reached " + GlobalAddress::FromRaw(self).ToString() +
                                  " instead of leaf " + levels[0][leaf].ToString());
      if (increment) {
        ExclusiveGuard x = ExclusiveGuard::TryUpgrade(g);
        if (!x.owns()) continue;
        *value = LoadWord(x.page(), kSlotsOffset + 8 * counter) + 1;
        StoreWord(x.page(), kSlotsOffset + 8 * counter, *value);
        x.MarkDirty();
      } else {
        *value = LoadWord(g.page(), kSlotsOffset + 8 * counter);
        if (!g.Validate()) continue;
      }
      return w.EndOperation();
    }
    return Status::Aborted("no progress");
  }
};

}  // namespace dmindex::cache::testing
