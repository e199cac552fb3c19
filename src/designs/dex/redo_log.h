// A compute node's redo log in the memory pool (durability=log, docs/DEX.md "Durability").
//
// DEX acknowledges a write to an owned leaf once it is in the compute node's cache; the page
// reaches the pool later. So that a crash of the compute process loses nothing acknowledged,
// every write on an owned leaf first appends a record (key and the value it now has, or its
// removal) here, and is acknowledged only once the fabric says the record's WRITE landed.
// Whoever hosts the compute node next replays the log before serving.
//
// One block per compute node, reached from the index's log directory (dex_durability.cc):
//
//   word 0        the ring's capacity in bytes (a multiple of kSlot)
//   word 1        head: the position of the oldest record still needed; everything below it
//                 is in the pool's tree (a checkpoint wrote the pages it covered back)
//   bytes 64..    the ring: position p (a byte offset that only grows) lives at
//                 64 + p % capacity
//
// A record fills whole 64-byte slots. Every slot starts with its own position (bit 63 set in
// a record's first slot), so a scan recognises slots of the current lap (stale slots of an
// earlier lap, zero memory and slots of a WRITE cut short carry another word) and can step
// over a record that never landed whole, one slot at a time. The first slot then holds the
// record's slot count and operation, the key and value lengths and an XXH3 checksum over
// every other byte of the record (slot words included): a record torn anywhere fails it.
//
//   first slot:  [pos | 1<<63] [slots | op << 32] [key bytes | value bytes << 32] [checksum]
//                [32 payload bytes]
//   other slots: [pos] [56 payload bytes]          payload: the key, then the value
//
// Positions are claimed in the order the writes were applied to their pages (the claim is
// made under the leaf's exclusive latch), so for each key the record with the highest
// position is its last acknowledged write. Replay applies, per key, only that one: a put
// sets the value, a delete removes the key, kInPool leaves the pool's value. Idempotent, and correct from any mixture of
// written-back pages, because the pool's image of a key is always the value of some prefix
// of its records (or of writes made before the log's head).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dmindex/global_address.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"

namespace dmindex::designs::dex {

class RedoLog {
 public:
  static constexpr uint32_t kSlot = 64;
  static constexpr uint32_t kHeaderBytes = 64;
  // kInPool: the key's page was written through with this write (a record too long for the
  // ring); earlier records of the key are void.
  enum class Op : uint8_t { kPut = 1, kDelete = 2, kInPool = 3 };
  struct Record {
    uint64_t pos = 0;
    Op op = Op::kPut;
    std::string key, value;
  };
  // What a scan of the ring found (Replay).
  struct Contents {
    uint64_t head = 0;
    std::vector<Record> records;  // valid ones, in position order
    uint32_t skipped_slots = 0;   // slots of the current lap that belong to no valid record
  };

  static uint64_t BlockBytes(uint64_t capacity) { return kHeaderBytes + capacity; }
  // Writes an empty log (head 0) of `capacity` bytes (rounded down to slots) into `block`.
  static Status Initialize(fabric::Endpoint& ep, GlobalAddress block, uint64_t capacity);
  // Reads the header of the log at `block`.
  static Result<RedoLog> Open(fabric::Endpoint& ep, GlobalAddress block);

  // The ring bytes a record of a key and value of these lengths takes.
  static uint64_t RecordBytes(size_t key_bytes, size_t value_bytes);
  // Encodes the record at position `pos` into *out (RecordBytes long).
  static void Encode(uint64_t pos, Op op, std::string_view key, std::string_view value,
                     std::vector<std::byte>* out);

  GlobalAddress block() const { return block_; }
  uint64_t capacity() const { return capacity_; }
  // The WRITEs that put an encoded record at `pos` into the ring: one, or two when it wraps
  // around the ring's end. Both go in one batch (one round trip).
  int Verbs(uint64_t pos, const std::vector<std::byte>& encoded, fabric::Verb out[2]) const;
  // Reads the whole block and decodes every valid record from the head on.
  Result<Contents> Scan(fabric::Endpoint& ep) const;
  // Makes `head` the stored head (one WRITE of word 1), posted only while `guard` (the host's
  // lease; null: none) allows: a host whose lease ended may have been replaced by one that
  // replayed the log and moved the head on, and a late head of ours would move it back (or
  // past that host's records).
  Status WriteHead(fabric::Endpoint& ep, uint64_t head, fabric::PostGuard* guard) const;

 private:
  RedoLog(GlobalAddress block, uint64_t capacity) : block_(block), capacity_(capacity) {}
  // Decodes the record whose first slot is at position p of the ring image `ring`; false if
  // it is not a whole, valid record of this lap.
  bool Decode(const std::byte* ring, uint64_t p, uint64_t head, Record* out, uint64_t* bytes) const;

  GlobalAddress block_;
  uint64_t capacity_ = 0;
};

}  // namespace dmindex::designs::dex
