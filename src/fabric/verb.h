// Verb: one one-sided operation on remote memory (RDMA READ, WRITE, 64-bit CAS, 64-bit FAA).
// Verbs are posted to an Endpoint singly or in batches; a batch costs one round trip.
#pragma once

#include <cstdint>

#include "dmindex/global_address.h"

namespace dmindex::fabric {

enum class VerbKind : uint8_t { kRead, kWrite, kCas, kFaa };

struct Verb {
  VerbKind kind = VerbKind::kRead;
  uint32_t length = 0;       // READ/WRITE: bytes; CAS/FAA: always 8
  GlobalAddress remote;      // CAS/FAA: must be 8-byte aligned
  void* local = nullptr;     // READ: destination; WRITE: source; CAS/FAA: receives the old word
  uint64_t operand = 0;      // CAS: expected value; FAA: addend
  uint64_t swap = 0;         // CAS: new value

  static Verb Read(GlobalAddress from, void* to, uint32_t len) {
    return {VerbKind::kRead, len, from, to, 0, 0};
  }
  static Verb Write(GlobalAddress to, const void* from, uint32_t len) {
    return {VerbKind::kWrite, len, to, const_cast<void*>(from), 0, 0};
  }
  static Verb Cas(GlobalAddress word, uint64_t expected, uint64_t desired, uint64_t* old) {
    return {VerbKind::kCas, 8, word, old, expected, desired};
  }
  static Verb Faa(GlobalAddress word, uint64_t add, uint64_t* old) {
    return {VerbKind::kFaa, 8, word, old, add, 0};
  }
  bool is_atomic() const { return kind == VerbKind::kCas || kind == VerbKind::kFaa; }
};

// How the verbs of one batch may land.
enum class Ordering : uint8_t {
  // Independent verbs (e.g. READs of disjoint nodes: doorbell batching). They may execute
  // in any order and concurrently; the batch completes when all have.
  kUnordered,
  // Dependent verbs that land in posting order, like verbs on one RDMA RC queue pair:
  // e.g. WRITE node, then WRITE unlock word (Sherman's command combination). A reader that
  // observes the effect of verb i also observes every verb before it. All verbs must target
  // one memory node, because ordering only holds on one connection.
  kInOrder,
};

}  // namespace dmindex::fabric
