// A node of the local B+-tree: one allocation of IndexOptions::node_bytes bytes, a 24-byte
// header followed by 8-byte words. For a key format F (key_formats.h), each key takes
// F::kKeyWords words:
//   leaf:  keys[capacity], values[capacity], and (raw-value formats: u64) a bitmap of
//          ceil(capacity/64) words marking the values that are value_words, not raw 8 bytes;
//   inner: keys[capacity] (separators), children[capacity + 1]; child i holds the keys in
//          [key(i-1), key(i)).
//
// Every word and header field a reader looks at is a std::atomic: optimistic readers read
// while a writer may be changing the node, and validate with the node's VersionLock afterwards.
// Words that may hold pointers (key tags, values) are stored with release and loaded with
// acquire, so a reader that loads a blob pointer also sees the blob's bytes. The mutators
// must only be called with the lock held or before the node is published.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "designs/local/key_formats.h"
#include "common/version_lock.h"

namespace dmindex::designs::local {

// Tiered formats (key_formats.h, IndeXY's X): each node's sampled counters, after the header.
struct TieredCounters {
  std::atomic<uint64_t> accesses{0};
  std::atomic<int64_t> entries{0};  // insertions passed minus removals: the subtree's size estimate
};
struct NoCounters {};

// Node bits of tiered formats (the spare header byte): an inner node's hot bits (IndeXY's
// unit bits: an insert passed, a cleaning candidate, an access passed), and a leaf's mount bit
// (keys of its range may be in the cold store while absent here).
namespace node_bits {
inline constexpr uint8_t kDirty = 1;
inline constexpr uint8_t kCandidate = 2;
inline constexpr uint8_t kAccessed = 4;
inline constexpr uint8_t kMounted = 8;
}  // namespace node_bits

template <class F>
class Node {
 public:
  static constexpr uint32_t kHeaderBytes = F::kTiered ? 40 : 24;
  static constexpr uint32_t kKeyWords = F::kKeyWords;
  static constexpr uint32_t BitmapWords(uint32_t capacity) { return F::kRawValues ? (capacity + 63) / 64 : 0; }
  // Tiered leaves: one flag byte per entry (IndeXY's dirty / in-Y / tombstone), 8 to a word.
  static constexpr uint32_t FlagWords(uint32_t capacity) { return F::kTiered ? (capacity + 7) / 8 : 0; }
  static constexpr uint32_t LeafCapacity(uint32_t node_bytes) {
    const uint32_t room = node_bytes - kHeaderBytes;
    uint32_t c = room / ((kKeyWords + 1) * 8);
    while (c > 0 && c * (kKeyWords + 1) * 8 + (BitmapWords(c) + FlagWords(c)) * 8 > room) --c;
    return c;
  }
  static constexpr uint32_t InnerCapacity(uint32_t node_bytes) {
    return (node_bytes - kHeaderBytes - 8) / ((kKeyWords + 1) * 8);
  }
  // The cache lines a search of a node reads: the header and the keys (of the larger capacity,
  // leaves' or inner nodes'), at most kMaxPrefetchLines.
  static constexpr uint32_t kMaxPrefetchLines = 16;
  static constexpr uint32_t SearchLines(uint32_t node_bytes) {
    const uint32_t keys = LeafCapacity(node_bytes) > InnerCapacity(node_bytes) ? LeafCapacity(node_bytes)
                                                                               : InnerCapacity(node_bytes);
    const uint32_t lines = (kHeaderBytes + keys * kKeyWords * 8 + 63) / 64;
    return lines < kMaxPrefetchLines ? lines : kMaxPrefetchLines;
  }
  // Asks for a node's first `lines` cache lines at once, before its lock word is even read:
  // a search's loads depend on each other (each picks the next), so without this every level
  // of a tree larger than the caches costs several misses one after the other; with it, about
  // one. A stale or torn pointer is harmless here: a prefetch never faults.
  static void Prefetch(const Node* node, uint32_t lines) {
    const char* at = reinterpret_cast<const char*>(node);
    for (uint32_t i = 0; i < lines; ++i) __builtin_prefetch(at + 64 * i);
  }

  // Room for four entries in leaves and inner nodes alike.
  static constexpr uint32_t MinNodeBytes() {
    const uint32_t leaf = kHeaderBytes + 4 * (kKeyWords + 1) * 8 + (BitmapWords(4) + FlagWords(4)) * 8;
    const uint32_t inner = kHeaderBytes + 8 + 4 * (kKeyWords + 1) * 8;
    return leaf > inner ? leaf : inner;
  }

  // level 0 is a leaf. The node starts empty, unlocked, every word 0.
  static Node* Create(uint32_t node_bytes, uint16_t level) {
    void* memory = ::operator new(node_bytes, std::align_val_t{64});
    const uint32_t capacity = level == 0 ? LeafCapacity(node_bytes) : InnerCapacity(node_bytes);
    Node* node = new (memory) Node(level, capacity);
    const uint32_t words = (node_bytes - kHeaderBytes) / 8;
    for (uint32_t i = 0; i < words; ++i) new (node->raw_word(i)) Word(0);
    return node;
  }
  static void Destroy(Node* node) {
    node->~Node();
    ::operator delete(node, std::align_val_t{64});
  }

  VersionLock& lock() { return lock_; }
  bool is_leaf() const { return level_ == 0; }
  uint16_t level() const { return level_; }
  uint32_t capacity() const { return capacity_; }
  // Bounded by capacity, so a torn count never sends a reader past the node.
  uint32_t count() const {
    const uint32_t n = count_.load(std::memory_order_relaxed);
    return n < capacity_ ? n : capacity_;
  }
  bool full() const { return count_.load(std::memory_order_relaxed) >= capacity_; }
  Node* next() const { return next_.load(std::memory_order_relaxed); }

  const Word* key(uint32_t i) const { return &word(kKeyWords * i); }
  // A key's words as plain integers (under the lock, or to be trusted after validation).
  void CopyKey(uint32_t i, uint64_t* out) const {
    for (uint32_t j = 0; j < kKeyWords; ++j) out[j] = key(i)[j].load(std::memory_order_acquire);
  }
  uint64_t value(uint32_t i) const { return word(values_at() + i).load(std::memory_order_acquire); }
  Node* child(uint32_t i) const {
    return reinterpret_cast<Node*>(word(values_at() + i).load(std::memory_order_relaxed));
  }
  // Raw-value leaves: the value word of entry i is a value_word, not the 8 bytes themselves.
  // The bitmap is kept only once the leaf ever held such a value (has_boxed), so leaves of
  // 8-byte values pay one flag test.
  bool has_boxed() const { return F::kRawValues && has_boxed_.load(std::memory_order_relaxed) != 0; }
  bool boxed(uint32_t i) const {
    if constexpr (!F::kRawValues) return true;
    if (!has_boxed()) return false;
    return (word(bitmap_at() + i / 64).load(std::memory_order_relaxed) >> (i % 64)) & 1;
  }

  // ---- tiered formats ----
  uint8_t bits() const { return bits_.load(std::memory_order_relaxed); }
  void SetBits(uint8_t b) {
    if ((bits_.load(std::memory_order_relaxed) & b) != b) bits_.fetch_or(b, std::memory_order_relaxed);
  }
  void ClearBits(uint8_t b) {
    if (bits_.load(std::memory_order_relaxed) & b) bits_.fetch_and(static_cast<uint8_t>(~b), std::memory_order_relaxed);
  }
  // The mount bit is set under the leaf's lock and read by validated readers.
  bool mounted() const { return (bits_.load(std::memory_order_acquire) & node_bits::kMounted) != 0; }
  TieredCounters& counters() requires F::kTiered { return counters_; }
  // Leaf entry i's flag byte.
  uint8_t entry_flags(uint32_t i) const requires F::kTiered {
    return static_cast<uint8_t>(word(flags_at() + i / 8).load(std::memory_order_relaxed) >> (8 * (i % 8)));
  }
  void set_entry_flags(uint32_t i, uint8_t f) requires F::kTiered {
    Word& w = word(flags_at() + i / 8);
    const uint64_t shift = 8 * (i % 8);
    const uint64_t old = w.load(std::memory_order_relaxed);
    w.store((old & ~(uint64_t{0xff} << shift)) | (uint64_t{f} << shift), std::memory_order_relaxed);
  }

  // Index of the first key >= k (count() if none). Bounded by capacity even if an optimistic
  // reader sees keys mid-shift; the result is only trusted after validation. Branch-free
  // halving (the comparison picks the next base, a conditional move): a node's keys are
  // random to the branch predictor, which guessed half of a binary search's branches wrong.
  uint32_t LowerBound(const typename F::Probe& k) const {
    return Bound(k, [](const Word* stored, const typename F::Probe& p) { return F::StoredLess(stored, p); });
  }
  // Index of the first key > k.
  uint32_t UpperBound(const typename F::Probe& k) const {
    return Bound(k, [](const Word* stored, const typename F::Probe& p) { return !F::ProbeLess(p, stored); });
  }
  // Leaf: true if k is present, at *pos (else *pos is where it would go).
  bool Find(const typename F::Probe& k, uint32_t* pos) const {
    *pos = LowerBound(k);
    return *pos < count() && F::Equal(key(*pos), k);
  }
  // The child of an inner node responsible for k: the number of separators <= k.
  uint32_t ChildIndex(const typename F::Probe& k) const { return UpperBound(k); }

  // --- Mutators (lock held, or the node not yet published) ---
  void set_count(uint32_t n) { count_.store(static_cast<uint16_t>(n), std::memory_order_relaxed); }
  void set_next(Node* n) { next_.store(n, std::memory_order_relaxed); }
  void SetKey(uint32_t i, const uint64_t* words) {
    for (uint32_t j = 0; j < kKeyWords; ++j) word(kKeyWords * i + j).store(words[j], std::memory_order_release);
  }
  void set_value(uint32_t i, uint64_t v) { word(values_at() + i).store(v, std::memory_order_release); }
  void set_child(uint32_t i, Node* c) {
    word(values_at() + i).store(reinterpret_cast<uint64_t>(c), std::memory_order_relaxed);
  }
  // Raw-value leaves: marks entry i's value as a value_word (true) or raw 8 bytes.
  void set_boxed(uint32_t i, bool boxed) {
    if constexpr (F::kRawValues) {
      if (!has_boxed()) {
        if (!boxed) return;
        has_boxed_.store(1, std::memory_order_relaxed);
      }
      Word& w = word(bitmap_at() + i / 64);
      const uint64_t bit = uint64_t{1} << (i % 64);
      const uint64_t old = w.load(std::memory_order_relaxed);
      w.store(boxed ? old | bit : old & ~bit, std::memory_order_relaxed);
    }
  }
  // Entry `from` of leaf `src` (possibly this one) into slot `to`; `bits`: the boxed-value
  // bitmap is in use (has_boxed, read once by the caller: the loops below stay lean). Inlined:
  // an insert shifts half a leaf through it, a call per entry was a fifth of an insert's CPU.
  [[gnu::always_inline]] void CopyEntry(const Node& src, uint32_t from, uint32_t to, bool bits) {
    uint64_t k[kKeyWords];
    src.CopyKey(from, k);
    SetKey(to, k);
    set_value(to, src.value(from));
    if (bits) set_boxed(to, src.boxed(from));
    if constexpr (F::kTiered) set_entry_flags(to, src.entry_flags(from));
  }
  // Leaf: an entry's slot no longer holds it. Formats with pointers in their words clear it,
  // so no slot keeps a pointer to memory that is retired and later freed.
  void ClearEntry(uint32_t i) {
    if constexpr (!F::kRawValues) {
      for (uint32_t j = 0; j < kKeyWords; ++j) word(kKeyWords * i + j).store(0, std::memory_order_release);
      set_value(i, 0);
    }
    if constexpr (F::kTiered) set_entry_flags(i, 0);
  }

  // Leaf: puts (key, value) at position pos, shifting the tail right. Requires !full().
  void InsertEntry(uint32_t pos, const uint64_t* key_words, uint64_t v, bool boxed) {
    const uint32_t n = count();
    const bool bits = has_boxed();
    for (uint32_t i = n; i > pos; --i) CopyEntry(*this, i - 1, i, bits);
    SetKey(pos, key_words);
    set_value(pos, v);
    set_boxed(pos, boxed);
    if constexpr (F::kTiered) set_entry_flags(pos, 0);
    set_count(n + 1);
  }
  // Leaf: removes the entry at pos, shifting the tail left.
  void RemoveEntry(uint32_t pos) {
    const uint32_t n = count();
    const bool bits = has_boxed();
    for (uint32_t i = pos; i + 1 < n; ++i) CopyEntry(*this, i + 1, i, bits);
    ClearEntry(n - 1);
    set_count(n - 1);
  }
  // Inner: adds separator `sep` at position pos with `right` as the child after it (the child
  // at pos was split into itself and `right`). Requires !full().
  void InsertChild(uint32_t pos, const uint64_t* sep, Node* right) {
    const uint32_t n = count();
    for (uint32_t i = n; i > pos; --i) {
      uint64_t k[kKeyWords];
      CopyKey(i - 1, k);
      SetKey(i, k);
      set_child(i + 1, child(i));
    }
    SetKey(pos, sep);
    set_child(pos + 1, right);
    set_count(n + 1);
  }

 private:
  // The first index in [0, count()) whose key k_i has before(k_i, k) false (count() if none),
  // for a `before` that is monotone over the sorted keys.
  template <typename Before>
  uint32_t Bound(const typename F::Probe& k, Before before) const {
    uint32_t n = count();
    if (n == 0) return 0;
    uint32_t base = 0;
    while (n > 1) {  // the answer is in [base, base + n]
      const uint32_t half = n / 2;
      base = before(key(base + half - 1), k) ? base + half : base;
      n -= half;
    }
    return base + (before(key(base), k) ? 1 : 0);
  }

  Node(uint16_t level, uint32_t capacity) : capacity_(static_cast<uint16_t>(capacity)), level_(level) {}

  uint32_t values_at() const { return kKeyWords * capacity_; }
  uint32_t bitmap_at() const { return (kKeyWords + 1) * capacity_; }
  uint32_t flags_at() const { return bitmap_at() + BitmapWords(capacity_); }
  void* raw_word(uint32_t i) { return reinterpret_cast<std::byte*>(this) + kHeaderBytes + 8 * i; }
  Word& word(uint32_t i) const {
    auto* self = const_cast<Node*>(this);
    return *std::launder(reinterpret_cast<Word*>(self->raw_word(i)));
  }

  VersionLock lock_;
  std::atomic<Node*> next_{nullptr};  // leaves: right sibling, for scans
  std::atomic<uint16_t> count_{0};
  const uint16_t capacity_;
  const uint16_t level_;
  std::atomic<uint8_t> has_boxed_{0};
  std::atomic<uint8_t> bits_{0};  // node_bits (tiered formats)
  [[no_unique_address]] std::conditional_t<F::kTiered, TieredCounters, NoCounters> counters_;
};

}  // namespace dmindex::designs::local
