// What the cache needs from the index that uses it: where child pointers sit in a node's
// bytes, and how to read and write nodes in remote memory. The cache knows nothing else
// about node formats or the fabric.
//
// Cached pages are read optimistically while a latch holder may write them, so every
// access to a cached page's bytes goes by whole 8-byte words with relaxed atomics (e.g.
// CopyFromPool / CopyToPool into a private copy): never plain memcpy or field
// access. A validated private copy can then be decoded freely.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmindex/global_address.h"
#include "dmindex/status.h"

namespace dmindex::cache {

class PageLayout {
 public:
  virtual ~PageLayout() = default;
  // Both read the cached page directly, by atomic word loads. Also called on pages read
  // optimistically, whose bytes may be garbage: must stay within the node's capacity.
  virtual bool IsLeaf(const std::byte* page) const = 0;
  // Child pointer slots in use in an inner page (0 for a leaf).
  virtual size_t ChildCount(const std::byte* page) const = 0;
  // The i-th child pointer of an inner page: an 8-byte aligned word holding a Swip.
  virtual uint64_t* ChildSlot(std::byte* page, size_t i) const = 0;

  const uint64_t* ChildSlot(const std::byte* page, size_t i) const {
    return ChildSlot(const_cast<std::byte*>(page), i);
  }
};

// Reads a node's current, validated image from remote memory (a cache miss).
class PageLoader {
 public:
  virtual ~PageLoader() = default;
  virtual Status Load(GlobalAddress addr, std::byte* page) = 0;
  // Whether a page just loaded may be kept in the cache; one that may not is used for the
  // current operation only, like a leaf that lazy admission turned away.
  virtual bool Admissible(const std::byte* page) { return true; }
};

// Writes a dirty page back to remote memory (on cooling, flushing, or when a page that was
// not admitted is dropped). The page holds no swizzled pointers.
class PageWriter {
 public:
  virtual ~PageWriter() = default;
  virtual Status WriteBack(GlobalAddress addr, const std::byte* page) = 0;
};

}  // namespace dmindex::cache
