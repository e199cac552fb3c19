// What the local tree keeps outside its nodes: byte strings too long for a slot (keys of more
// than 8 bytes, values of more than 7), each an immutable Blob on the heap, and the value word
// that holds a value either inline or as a Blob pointer.
//
// A Blob is written once, before its pointer is stored into a node (a release store; readers
// load the pointer with acquire), and never changed afterwards, so optimistic readers may read
// its bytes with plain loads. Once unlinked from the tree it is retired to the epochs
// (common/epoch.h) and freed when no operation that could have read the pointer is running.
// Every allocation and free is counted in the tree's ByteCount (exact bytes requested).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "dmindex/types.h"

namespace dmindex::designs::local {

// Bytes a tree holds: nodes and blobs allocated and not yet freed.
using ByteCount = std::atomic<int64_t>;

class Blob {
 public:
  static uint64_t BytesFor(size_t size) { return sizeof(Blob) + size; }

  static Blob* Make(Slice bytes, ByteCount* held) {
    void* memory = ::operator new(BytesFor(bytes.size()));
    Blob* blob = new (memory) Blob(static_cast<uint32_t>(bytes.size()));
    if (!bytes.empty()) std::memcpy(blob->data(), bytes.data(), bytes.size());
    held->fetch_add(static_cast<int64_t>(BytesFor(bytes.size())), std::memory_order_relaxed);
    return blob;
  }
  static void Free(Blob* blob, ByteCount* held) {
    held->fetch_sub(static_cast<int64_t>(BytesFor(blob->size_)), std::memory_order_relaxed);
    ::operator delete(blob);
  }

  uint32_t size() const { return size_; }
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }
  Slice view() const { return Slice(data(), size_); }

 private:
  explicit Blob(uint32_t size) : size_(size) {}
  char* data() { return reinterpret_cast<char*>(this + 1); }

  const uint32_t size_;
};

// A value as one 64-bit word: up to kInlineBytes bytes inline (bit 0 set, the size in bits
// 1-3, byte i in bits 8i+8 .. 8i+15), anything longer a Blob pointer (bit 0 clear: blobs are
// 16-byte aligned). 0 is no value at all: a slot never written or cleared after its entry
// left, which only a torn read can see (it fails validation).
namespace value_word {

inline constexpr size_t kInlineBytes = 7;

inline bool IsBlob(uint64_t word) { return word != 0 && (word & 1) == 0; }
inline const Blob* BlobOf(uint64_t word) { return reinterpret_cast<const Blob*>(word); }

// The word of `value`: inline, or a new Blob (counted in *held).
inline uint64_t Make(Slice value, ByteCount* held) {
  if (value.size() > kInlineBytes) return reinterpret_cast<uint64_t>(Blob::Make(value, held));
  uint64_t word = 1 | uint64_t{value.size()} << 1;
  for (size_t i = 0; i < value.size(); ++i) word |= uint64_t{static_cast<unsigned char>(value[i])} << (8 * i + 8);
  return word;
}

// The value a word holds. A Blob pointer must still be protected (its reader is inside an
// epoch that began before the pointer was last seen linked).
inline void Read(uint64_t word, std::string* out) {
  if (IsBlob(word)) {
    out->assign(BlobOf(word)->view());
    return;
  }
  const size_t size = (word >> 1) & 7;
  out->resize(size);
  for (size_t i = 0; i < size; ++i) (*out)[i] = static_cast<char>(word >> (8 * i + 8));
}

// Frees a word's blob at once: only for words no reader can have seen (never published, or
// the tree is being destroyed).
inline void FreeUnpublished(uint64_t word, ByteCount* held) {
  if (IsBlob(word)) Blob::Free(const_cast<Blob*>(BlobOf(word)), held);
}

}  // namespace value_word
}  // namespace dmindex::designs::local
