// Word-wise access to pool memory shared with concurrent verbs.
//
// Remote memory is written by many parties at once (verbs from every compute thread, RPC
// handlers on the memory server). Plain memcpy over such memory is a data race in C++; these
// helpers copy 8-byte words with relaxed atomic loads/stores instead, which is also the
// tearing granularity real NICs guarantee (an aligned word is never torn). Anything larger
// may tear, and the index layers above must detect that (see docs/ARCHITECTURE.md).
// In common/ because not only the fabric copies this way: the compute-side cache's pages are
// read optimistically while a latch holder writes them (cache/page_io.h), and the cache
// does not depend on the fabric.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dmindex {

inline void CopyFromPool(void* dst, const std::byte* src, size_t len) {
  auto s = reinterpret_cast<uintptr_t>(src);
  auto d = static_cast<unsigned char*>(dst);
  if ((s | len) % 8 == 0) {
    auto* sw = reinterpret_cast<const uint64_t*>(src);
    for (size_t i = 0; i < len / 8; ++i) {
      uint64_t w = __atomic_load_n(sw + i, __ATOMIC_RELAXED);
      std::memcpy(d + 8 * i, &w, 8);
    }
  } else {
    for (size_t i = 0; i < len; ++i)
      d[i] = __atomic_load_n(reinterpret_cast<const unsigned char*>(src) + i, __ATOMIC_RELAXED);
  }
}

inline void CopyToPool(std::byte* dst, const void* src, size_t len) {
  auto dd = reinterpret_cast<uintptr_t>(dst);
  auto s = static_cast<const unsigned char*>(src);
  if ((dd | len) % 8 == 0) {
    auto* dw = reinterpret_cast<uint64_t*>(dst);
    for (size_t i = 0; i < len / 8; ++i) {
      uint64_t w;
      std::memcpy(&w, s + 8 * i, 8);
      __atomic_store_n(dw + i, w, __ATOMIC_RELAXED);
    }
  } else {
    for (size_t i = 0; i < len; ++i)
      __atomic_store_n(reinterpret_cast<unsigned char*>(dst) + i, s[i], __ATOMIC_RELAXED);
  }
}

inline uint64_t PoolCas(std::byte* word, uint64_t expected, uint64_t desired) {
  auto* w = reinterpret_cast<uint64_t*>(word);
  __atomic_compare_exchange_n(w, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;  // the old value, whether or not the swap happened
}

inline uint64_t PoolFaa(std::byte* word, uint64_t add) {
  return __atomic_fetch_add(reinterpret_cast<uint64_t*>(word), add, __ATOMIC_SEQ_CST);
}

}  // namespace dmindex
