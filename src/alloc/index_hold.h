// Who has an index open: every process that opens an index in the pool registers in its lease
// slot (lease/lease_table.h) which index it holds, so that a drop can see it and refuse
// (Catalog::Drop, docs/OPERATIONS.md "Drop"). Two words of the slot, after the four the lease
// uses, written only by the slot's holder:
//
//   word 4  the owner tag (alloc/catalog.h) of the index the holder has open; 0: none
//   word 5  the lease's epoch when it registered
//
// A registration counts while the slot is held in that epoch: a released, revoked or reclaimed
// slot's words are stale, never a holder. The handshake with a drop is a store-then-load on
// each side (memory node 0 orders them): an opener writes its registration, then reads the
// catalog entry and backs off (NotFound) unless it is still ready in the same generation; a
// dropper marks the entry, then reads the lease table. So of an opener and a dropper racing,
// at least one sees the other: never both go on.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "alloc/catalog.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "lease/lease.h"

namespace dmindex::alloc {

// A process holding an index open, as the lease table says.
struct IndexHolder {
  lease::HolderId id;
  uint64_t state_word = 0;  // its slot's word 0 when read (a renewal changes it)
  uint64_t pid = 0;
  uint64_t renewed_unix_ms = 0;  // its wall clock at its last renewal: for the message only
  std::string ToString() const;  // "process 4242 (lease slot 17, epoch 3)"
};

// The holders of the index tagged `owner` (one READ of the lease table).
Result<std::vector<IndexHolder>> HoldersOf(fabric::Endpoint& ep, uint64_t owner);

// This handle's registration as a holder of an index. Released (the slot's word 5 cleared, by
// a CAS expecting the epoch) by Release or the destructor, or with the lease.
class IndexHold {
 public:
  // Registers under `lease` (the design's own, which must outlive the hold), or, if null,
  // under a lease of the hold's own claimed with `length` (a design that takes no lease: its
  // renewals say the holder lives); null and a length of 0 (the knob lease_ms=0: leases off):
  // registers nothing, and a drop does not see this handle. NotFound if the entry is no
  // longer ready in its generation (being dropped, or dropped): then nothing stays registered.
  static Result<std::unique_ptr<IndexHold>> Take(fabric::Fabric& fabric, const CatalogEntry& entry,
                                                 lease::Lease* lease, std::chrono::milliseconds length);
  ~IndexHold() { Release(); }
  IndexHold(const IndexHold&) = delete;
  IndexHold& operator=(const IndexHold&) = delete;

  // Not a holder any more (Close): best effort, a failed CAS leaves the registration to end
  // with the lease.
  void Release();
  // The registration's holder, which the handle's own drop does not count as another holder
  // (Catalog::PrepareDrop); none if nothing is registered, or no longer.
  std::optional<lease::HolderId> holder() const {
    if (released_ || id_.epoch == 0) return std::nullopt;
    return id_;
  }
  // The hold's own lease (CheckLive); Ok if it registered under the design's (which checks
  // it) or registered nothing.
  Status CheckLive() { return own_ ? own_->CheckLive() : Status::Ok(); }
  // What a read checks before it reads: Lease::CheckNotFenced (no clock read).
  Status CheckNotFenced() const { return own_ ? own_->CheckNotFenced() : Status::Ok(); }

 private:
  IndexHold(std::unique_ptr<fabric::Endpoint> ep, std::unique_ptr<lease::Lease> own, lease::HolderId id)
      : ep_(std::move(ep)), own_(std::move(own)), id_(id) {}

  std::unique_ptr<fabric::Endpoint> ep_;
  std::unique_ptr<lease::Lease> own_;  // null: registered under the design's lease
  lease::HolderId id_;
  bool released_ = false;
};

}  // namespace dmindex::alloc
