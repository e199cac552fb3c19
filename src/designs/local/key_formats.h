// The two key formats of the local tree, as policies of its one implementation (LocalTree<F>):
// how a key sits in a node's words, how readers compare a search key with it, and what a
// writer allocates for it.
//
//  * U64Keys: the u64 format's fast path. A key is one word, the integer itself (relaxed loads:
//    nothing behind it to protect). Leaf values are "raw": 8-byte values are the integer in
//    the value word; a value of any other size is marked in the leaf's boxed-value bitmap and
//    its word is a value_word (blob.h). Readers enter an epoch only to read a boxed blob.
//  * ByteKeys: keys of 1 .. 1 KiB bytes. A key is two words: its head (the first 8 bytes,
//    big-endian, zero-padded: most comparisons end here) and a tag - the size for keys of up
//    to 8 bytes (all in the head), else a pointer to a Blob of the whole key. Every value is a
//    value_word. Readers dereference key blobs while comparing, so every operation runs inside
//    an epoch.
//
// Comparisons may run on torn words (a writer shifting entries): they must never fault - a
// tag of 0 is treated as a key of no particular order - and their result is trusted only after
// the node's version is validated.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/key_text.h"
#include "designs/local/blob.h"
#include "dmindex/types.h"

namespace dmindex::designs::local {

using Word = std::atomic<uint64_t>;

struct U64Keys {
  static constexpr KeyFormat kFormat = KeyFormat::kU64;
  static constexpr uint32_t kKeyWords = 1;
  static constexpr bool kRawValues = true;
  static constexpr bool kEpochPerOp = false;
  static constexpr bool kTiered = false;

  using Probe = uint64_t;
  // The integer of an 8-byte big-endian key or value (U64Key's encoding, in one byte swap
  // instead of a loop over the bytes), and back.
  static uint64_t Decode(const char* bytes) {
    uint64_t v;
    std::memcpy(&v, bytes, 8);
    return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
  }
  static std::string Encode(uint64_t v) { return U64Key(v).str(); }
  // Appends v's 8 big-endian bytes without a temporary string.
  static void AppendEncoded(uint64_t v, std::string* out) {
    const uint64_t big = std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
    char bytes[8];
    std::memcpy(bytes, &big, 8);
    out->append(bytes, 8);
  }
  // `key` has 8 bytes (Session checked it; scan positions too).
  static Probe ProbeOf(Slice key) { return Decode(key.data()); }
  static std::string Text(const Probe& p) { return std::to_string(p); }

  static bool StoredLess(const Word* k, const Probe& p) { return k[0].load(std::memory_order_relaxed) < p; }
  static bool ProbeLess(const Probe& p, const Word* k) { return p < k[0].load(std::memory_order_relaxed); }
  static bool Equal(const Word* k, const Probe& p) { return k[0].load(std::memory_order_relaxed) == p; }

  // Writer side, on words copied out of a node under its lock (or not yet stored).
  static void Store(const Probe& p, uint64_t* words, ByteCount*) { words[0] = p; }
  static void Append(const uint64_t* words, std::string* out) { AppendEncoded(words[0], out); }
  static const Blob* KeyBlob(const uint64_t*) { return nullptr; }
  static void Free(const uint64_t*, ByteCount*) {}
  static void Separator(const uint64_t*, const uint64_t* right_first, uint64_t* out, ByteCount*) {
    out[0] = right_first[0];
  }
};

struct ByteKeys {
  static constexpr KeyFormat kFormat = KeyFormat::kBytes;
  static constexpr uint32_t kKeyWords = 2;
  static constexpr bool kRawValues = false;
  static constexpr bool kEpochPerOp = true;
  static constexpr bool kTiered = false;
  static constexpr size_t kHeadBytes = 8;

  struct Probe {
    uint64_t head = 0;
    Slice bytes;
  };
  static uint64_t HeadOf(Slice key) {
    uint64_t head = 0;
    for (size_t i = 0; i < kHeadBytes; ++i)
      head = head << 8 | (i < key.size() ? static_cast<unsigned char>(key[i]) : 0u);
    return head;
  }
  static Probe ProbeOf(Slice key) { return Probe{HeadOf(key), key}; }
  static std::string Text(const Probe& p) { return KeyText(p.bytes); }

  static bool IsInline(uint64_t tag) { return (tag & 1) != 0; }
  static const Blob* BlobOf(uint64_t tag) { return reinterpret_cast<const Blob*>(tag); }

  // <0, 0, >0 as the stored key sorts before, equal to or after the probe. Keys of up to 8
  // bytes whose heads are equal differ only in size (the shorter is a prefix of the longer);
  // a key of up to 8 bytes whose head equals a longer key's is a prefix of it.
  static int Compare(const Word* k, const Probe& p) {
    const uint64_t head = k[0].load(std::memory_order_relaxed);
    if (head != p.head) return head < p.head ? -1 : 1;
    const uint64_t tag = k[1].load(std::memory_order_acquire);
    if (tag == 0) return -1;  // torn: any answer, the validation fails
    const size_t stored_size = IsInline(tag) ? tag >> 1 : BlobOf(tag)->size();
    if (stored_size <= kHeadBytes || p.bytes.size() <= kHeadBytes)
      return stored_size < p.bytes.size() ? -1 : stored_size > p.bytes.size() ? 1 : 0;
    const Blob* blob = BlobOf(tag);
    const size_t common = std::min(stored_size, p.bytes.size());
    const int c = std::memcmp(blob->data() + kHeadBytes, p.bytes.data() + kHeadBytes, common - kHeadBytes);
    if (c != 0) return c;
    return stored_size < p.bytes.size() ? -1 : stored_size > p.bytes.size() ? 1 : 0;
  }
  static bool StoredLess(const Word* k, const Probe& p) { return Compare(k, p) < 0; }
  static bool ProbeLess(const Probe& p, const Word* k) { return Compare(k, p) > 0; }
  static bool Equal(const Word* k, const Probe& p) { return Compare(k, p) == 0; }

  static void Store(const Probe& p, uint64_t* words, ByteCount* held) {
    words[0] = p.head;
    words[1] = p.bytes.size() <= kHeadBytes ? (uint64_t{p.bytes.size()} << 1 | 1)
                                            : reinterpret_cast<uint64_t>(Blob::Make(p.bytes, held));
  }
  static void Append(const uint64_t* words, std::string* out) {
    if (!IsInline(words[1])) {
      out->append(BlobOf(words[1])->view());
      return;
    }
    for (size_t i = 0; i < (words[1] >> 1); ++i) out->push_back(static_cast<char>(words[0] >> (56 - 8 * i)));
  }
  // The blob a stored key owns, if any.
  static const Blob* KeyBlob(const uint64_t* words) { return IsInline(words[1]) ? nullptr : BlobOf(words[1]); }
  // Frees a key's blob at once (never published, or the tree is being destroyed).
  static void Free(const uint64_t* words, ByteCount* held) {
    if (const Blob* b = KeyBlob(words)) Blob::Free(const_cast<Blob*>(b), held);
  }
  // The shortest separator s with left_last < s <= right_first: right_first cut just after
  // the first byte where the two differ (suffix truncation), so inner nodes hold short keys.
  static void Separator(const uint64_t* left_last, const uint64_t* right_first, uint64_t* out, ByteCount* held) {
    std::string left, right;
    Append(left_last, &left);
    Append(right_first, &right);
    size_t common = 0;
    while (common < left.size() && common < right.size() && left[common] == right[common]) ++common;
    right.resize(common + 1);  // left < right: right has a byte at `common`
    Store(ProbeOf(right), out, held);
  }
};

// A format as IndeXY's X uses it (designs/local/tiered_tree.h): the same keys, plus per-entry
// state flags in the leaves, hot bits and sampled counters in the node headers, and nodes that
// can leave the tree (released to the cold store), so every operation runs inside an epoch.
template <class Base>
struct Tiered : Base {
  static constexpr bool kEpochPerOp = true;
  static constexpr bool kTiered = true;
};

}  // namespace dmindex::designs::local
