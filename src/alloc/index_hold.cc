#include "alloc/index_hold.h"

#include "lease/lease_table.h"

namespace dmindex::alloc {
namespace {

constexpr uint64_t kHoldWords = 32;  // byte offset of words 4 and 5 in a slot

}  // namespace

std::string IndexHolder::ToString() const {
  return "process " + std::to_string(pid) + " (lease slot " + std::to_string(id.slot) + ", epoch " +
         std::to_string(id.epoch) + ")";
}

Result<std::vector<IndexHolder>> HoldersOf(fabric::Endpoint& ep, uint64_t owner) {
  std::vector<uint64_t> table(fabric::kLeaseTableBytes / 8);
  DMX_RETURN_IF_ERROR(ep.Read(lease::SlotAddress(0), table.data(), static_cast<uint32_t>(fabric::kLeaseTableBytes)));
  std::vector<IndexHolder> holders;
  if (owner == 0) return holders;
  for (uint32_t slot = 0; slot < lease::kSlots; ++slot) {
    const uint64_t* w = &table[slot * (lease::kSlotBytes / 8)];
    const lease::SlotState s = lease::SlotState::Decode(w[0]);
    if (s.phase != lease::Phase::kHeld || w[4] != owner || w[5] != s.epoch) continue;
    holders.push_back({{slot, s.epoch}, w[0], w[1], w[3]});
  }
  return holders;
}

Result<std::unique_ptr<IndexHold>> IndexHold::Take(fabric::Fabric& fabric, const CatalogEntry& entry,
                                                   lease::Lease* lease, std::chrono::milliseconds length) {
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  std::unique_ptr<lease::Lease> own;
  // An entry of before tags (nothing names it), or leases off: nothing to register.
  if (entry.owner == 0 || (lease == nullptr && length.count() == 0))
    return std::unique_ptr<IndexHold>(new IndexHold(nullptr, nullptr, {}));
  if (lease == nullptr) {
    lease::LeaseOptions lo;
    lo.length = length;
    auto claimed = lease::Lease::Claim(fabric, lo);
    if (!claimed.ok()) return claimed.status();
    own = std::move(claimed).value();
    lease = own.get();
  }
  const lease::HolderId id = lease->id();
  std::unique_ptr<IndexHold> hold(new IndexHold(std::move(ep).value(), std::move(own), id));
  // The registration, then the entry: a dropper marks the entry, then reads the registrations.
  const uint64_t words[2] = {entry.owner, id.epoch};
  DMX_RETURN_IF_ERROR(hold->ep_->Write(lease::SlotAddress(id.slot) + kHoldWords, words, sizeof words));
  DMX_RETURN_IF_ERROR(Catalog::CheckStillReady(*hold->ep_, entry));  // on failure the destructor releases
  return hold;
}

// A CAS of word 5 expecting our epoch: if the lease was revoked and the slot claimed again
// since, the new holder's registration (its epoch) is left alone.
void IndexHold::Release() {
  if (released_ || ep_ == nullptr) return;
  released_ = true;
  uint64_t old = 0;
  (void)ep_->Cas(lease::SlotAddress(id_.slot) + kHoldWords + 8, id_.epoch, 0, &old);
}

}  // namespace dmindex::alloc
