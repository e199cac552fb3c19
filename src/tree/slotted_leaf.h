// Slotted leaf codec (BytesKV): slots of [slot word | check] after the header, records of
// [value length | key bytes after the head | value] in a heap at the end (slotted_layout.h).
//
// Sorted leaves keep their entries in slots [0, count) in key order and are always written
// whole. Unsorted leaves (Sherman's two-level version) are changed one entry at a time under
// the node lock, without touching the header: each whole write reserves empty slots, and an
// entry write puts a new record into free heap space and then (landing after it, in the same
// in-order batch as the unlock) the slot pointing at it. Free space is derived by the lock
// holder from the slots: every byte of the heap not in the record of a non-empty slot. A
// delete rewrites only the check word of the key's slot (tombstone flag); the record stays,
// since the tombstone's check covers it.
//
// As in the fixed format (leaf_node.h), within one node version a slot that was given a key
// keeps it: a re-insert of a deleted key takes its own tombstone, other keys take empty
// slots, and with none left (or no heap space) the leaf is rewritten whole with a new
// version, or split. So no image of the leaf, whatever instants its slots and records were
// read at, shows a key twice.
//
// Every slot a reader relies on is bounds-checked before its record is touched (offsets at
// or past the slot array, records inside the node) and, validating, hashed with its record
// against its check word: a torn image can never send a reader outside its buffer, nor to a
// key the slot did not hold (docs/SYNCHRONIZATION.md, "Slotted nodes").
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tree/slotted_header.h"
#include "tree/slotted_keys.h"
#include "tree/split.h"
#include "tree/write_op.h"

namespace dmindex::tree {

class SlottedLeafCodec {
 public:
  using KV = BytesKV;
  using Key = std::string;
  using Value = std::string;
  using KeyRef = std::string_view;
  using ValueRef = std::string_view;
  using Entry = LeafEntry<BytesKV>;
  using Header = NodeHeader<BytesKV>;
  using L = SlottedLayout;

  explicit SlottedLeafCodec(const L& layout) : l_(layout) {}
  const L& layout() const { return l_; }

  bool EmptyAt(const std::byte* image, const Header& h, uint32_t slot) const {
    return LoadAt<uint64_t>(image, SlotOff(h, slot)) == 0;
  }
  bool TombAt(const std::byte* image, const Header& h, uint32_t slot) const {
    return (LoadAt<uint64_t>(image, SlotOff(h, slot) + 8) & kTombBit) != 0;
  }
  bool LiveAt(const std::byte* image, const Header& h, uint32_t slot) const {
    return !EmptyAt(image, h, slot) && !TombAt(image, h, slot);
  }
  // The full key of a non-empty slot (prefix and stored bytes).
  Key KeyAt(const std::byte* image, const Header& h, uint32_t slot) const;
  // The slot array's byte offset of slot i.
  static uint32_t SlotOff(const Header& h, uint32_t slot) { return h.slots_off + slot * L::kSlotBytes; }

  // --- The leaf codec interface (leaf_node.h) ---
  bool ValidBody(const std::byte* image, const Header& h, bool validate) const;
  int Find(const std::byte* image, const Header& h, KeyRef key) const;
  // leaf_node.h's: the whole body validated first (a slotted leaf's slot array is read
  // through its heap, and is not validated piecemeal).
  bool FindValidated(const std::byte* image, const Header& h, KeyRef key, bool validate, int* slot) const {
    if (!ValidBody(image, h, validate)) return false;
    *slot = Find(image, h, key);
    return true;
  }
  Value ValueAt(const std::byte* image, const Header& h, uint32_t slot) const;
  ValueBlockRef BlockAt(const std::byte* image, const Header& h, uint32_t slot) const;
  uint32_t InlineLimit() const { return l_.inline_value_bytes; }
  // A record holds the exact length: a reader READs the header and the value only.
  ValueBlockRef BlockRef(GlobalAddress addr, uint32_t block_bytes, uint32_t length) const {
    return {addr, value_block::kHeaderBytes + length, true};
  }
  void Collect(const std::byte* image, const Header& h, std::vector<Entry>* out) const;
  bool Fits(const Header& h, std::span<const Entry> sorted) const {
    return FitsBetween(h.low, h.high, sorted);
  }
  // Bytes a sorted leaf's slots and records take, and what the node has for them (from its
  // header and fences to the end of its content); HasRoom: an entry of the longest key and the
  // largest stored value (inline, or a block reference) fits (the interface: leaf_node.h).
  uint32_t Used(const std::byte* image, const Header& h) const;
  uint32_t Capacity(const Header& h) const { return l_.ContentEnd() - h.slots_off; }
  bool HasRoom(const std::byte* image, const Header& h) const;
  bool Build(std::byte* image, Header h, std::span<const Entry> sorted, bool unsorted) const;
  // Divides by bytes, at the shortest separator among the splits near the middle: the
  // shortest key > every left key and <= the first right key, which becomes the right
  // half's low fence and the parent's separator (suffix truncation).
  LeafSplit<KV> Split(const Header& h, std::span<const Entry> sorted) const;
  Key Separator(const Key& left_last, const Key& right_first) const {
    return l_.suffix_truncation ? Key(slotted::ShortestSeparator(left_last, right_first)) : right_first;
  }
  EntryWrite WriteEntry(std::byte* image, const Header& h, WriteOp op, KeyRef key,
                        const Entry& e) const;
  // The same with an inline value (tests predict where a write lands with it).
  EntryWrite WriteEntry(std::byte* image, const Header& h, WriteOp op, KeyRef key,
                        ValueRef value) const {
    return WriteEntry(image, h, op, key, Entry{Key(key), Value(value), {}});
  }
  // Bulk load: greedy runs, each leaf's entries taking about `fill` of the bytes it has.
  std::vector<size_t> PlanRuns(std::span<const Entry> sorted, double fill) const;
  // Not fixed: scans estimate it from the leaves they read (0 says so).
  size_t EntriesPerLeaf(double fill) const { return 0; }
  // A key of 1 .. max_key_bytes (values: the tree checks them against its options).
  Status CheckEntry(KeyRef key, ValueRef value) const;

  // True if `sorted` (keys in [low, high)) fits into one leaf with these fences.
  bool FitsBetween(std::string_view low, std::string_view high, std::span<const Entry> sorted) const;

 private:
  static constexpr uint64_t kTombBit = 1;
  // What an entry's record holds for its value: the bytes, or the block reference.
  static uint32_t StoredValueBytes(const Entry& e) {
    return e.block.is_null() ? static_cast<uint32_t>(e.value.size()) : L::kBlockRefBytes;
  }
  // Writes an entry's record (stored key q) at `at`; returns its length.
  static uint32_t WriteRecord(std::byte* image, uint32_t at, std::string_view q, const Entry& e);
  static uint64_t CheckWord(uint64_t word, const std::byte* record, uint32_t record_len,
                            uint64_t version, uint32_t slot, bool tomb);
  // The record a slot word points at, bounds-checked against the node: false if it lies
  // outside [slots_end, node_bytes). An empty slot has an empty record.
  bool RecordOf(const std::byte* image, const Header& h, uint64_t word, uint32_t* offset,
                uint32_t* len) const;
  // Unsorted leaf: the slot holding stored key q, live or tombstone, or -1.
  int BoundSlot(const std::byte* image, const Header& h, std::string_view q) const;
  // Unsorted leaf: a free stretch of `len` heap bytes (not in any non-empty slot's record),
  // best fit; false if there is none.
  bool Allocate(const std::byte* image, const Header& h, uint32_t len, uint32_t* offset) const;

  L l_;
};

}  // namespace dmindex::tree
