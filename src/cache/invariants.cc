// Structural self-check of the cache, for tests: what must hold whenever no thread is
// inside the cache.
#include <unordered_set>

#include "cache/buffer_manager.h"

namespace dmindex::cache {

Status BufferManager::CheckInvariants() const {
  auto fail = [](size_t i, const BufferFrame& f, const std::string& what) {
    return Status::Corruption("cache frame " + std::to_string(i) + " (" + f.remote().ToString() +
                              ", " + FrameStateName(f.load_state()) + "): " + what);
  };
  std::unordered_set<const BufferFrame*> pool;
  for (size_t i = 0; i < frame_count_; ++i) pool.insert(&frames_[i]);
  size_t cached = 0, cooling = 0;
  for (size_t i = 0; i < frame_count_; ++i) {
    const BufferFrame& f = frames_[i];
    const FrameState st = f.load_state();
    if (f.latch.locked()) return fail(i, f, "latched while idle");
    if (st == FrameState::kFree) {
      if (!f.remote().is_null() && mapping_.Lookup(f.remote()) == &f)
        return fail(i, f, "free but mapped");
      continue;
    }
    if (st != FrameState::kHot && st != FrameState::kCooling) return fail(i, f, "in flight while idle");
    ++cached;
    if (mapping_.Lookup(f.remote()) != &f) return fail(i, f, "not in the mapping table");
    const BufferFrame* p = f.parent.load();
    // A page that must reach remote memory before its parent is dirty and swizzled in that
    // parent, which is how the parent's write-back finds it (BufferManager::WriteBack).
    if (f.precedes_parent.load() && (!f.dirty.load() || p == nullptr))
      return fail(i, f, "must precede its parent but is clean or unswizzled");
    if (st == FrameState::kCooling) {
      ++cooling;
      if (p != nullptr) return fail(i, f, "cooling but has a parent");
      if (f.dirty.load()) return fail(i, f, "cooling but dirty");
    }
    if (p != nullptr) {
      // A parent outside the pool is the tree's meta frame holding the root pointer.
      if (pool.contains(p) && p->load_state() != FrameState::kHot)
        return fail(i, f, "parent not hot: the cached path is broken");
      if (FindSlot(p->page, Swip::Local(&f)) == nullptr)
        return fail(i, f, "parent does not point to it");
    }
    if (!layout_.IsLeaf(f.page)) {
      for (size_t c = 0, n = layout_.ChildCount(f.page); c < n; ++c) {
        const Swip s = Swip::Load(layout_.ChildSlot(f.page, c));
        if (!s.swizzled()) continue;
        if (st == FrameState::kCooling) return fail(i, f, "cooling with a swizzled child");
        if (!pool.contains(s.frame())) return fail(i, f, "swizzled pointer outside the pool");
        if (s.frame()->parent.load() != &f) return fail(i, f, "child's parent link is wrong");
        if (s.frame()->load_state() != FrameState::kHot) return fail(i, f, "swizzled child not hot");
      }
    }
  }
  if (cooling != cooling_.size())
    return Status::Corruption("cooling map lists " + std::to_string(cooling_.size()) +
                              " frames, " + std::to_string(cooling) + " are cooling");
  if (mapping_.size() != cached)
    return Status::Corruption("mapping table has " + std::to_string(mapping_.size()) +
                              " entries for " + std::to_string(cached) + " cached frames");
  return Status::Ok();
}

}  // namespace dmindex::cache
