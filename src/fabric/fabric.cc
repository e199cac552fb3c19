#include "fabric/fabric.h"

#include <algorithm>

namespace dmindex::fabric {

Result<std::unique_ptr<Endpoint>> Fabric::Connect(Traffic traffic) {
  auto ep = DoConnect();
  if (!ep.ok()) return ep.status();
  std::lock_guard lock(mu_);
  (*ep)->fabric_ = this;
  live_.emplace_back(ep->get(), traffic);
  return ep;
}

void Fabric::Retire(const Endpoint* ep, const VerbCounts& final_counts) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(live_.begin(), live_.end(), [ep](const auto& e) { return e.first == ep; });
  if (it == live_.end()) return;
  retired_[static_cast<int>(it->second)] += final_counts;
  live_.erase(it);
}

VerbCounts Fabric::Sum(Traffic traffic) const {
  std::lock_guard lock(mu_);
  VerbCounts total = retired_[static_cast<int>(traffic)];
  for (const auto& [ep, t] : live_)
    if (t == traffic) total += ep->counts();
  return total;
}

VerbCounts Fabric::TotalCounts() const { return Sum(Traffic::kOperations); }
VerbCounts Fabric::MaintenanceCounts() const { return Sum(Traffic::kMaintenance); }

}  // namespace dmindex::fabric
