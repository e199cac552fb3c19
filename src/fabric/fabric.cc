#include "fabric/fabric.h"

#include <algorithm>

namespace dmindex::fabric {

Result<std::unique_ptr<Endpoint>> Fabric::Connect() {
  auto ep = DoConnect();
  if (!ep.ok()) return ep.status();
  std::lock_guard lock(mu_);
  (*ep)->fabric_ = this;
  live_.push_back(ep->get());
  return ep;
}

void Fabric::Retire(const Endpoint* ep, const VerbCounts& final_counts) {
  std::lock_guard lock(mu_);
  live_.erase(std::remove(live_.begin(), live_.end(), ep), live_.end());
  retired_ += final_counts;
}

VerbCounts Fabric::TotalCounts() const {
  std::lock_guard lock(mu_);
  VerbCounts total = retired_;
  for (const Endpoint* ep : live_) total += ep->counts();
  return total;
}

}  // namespace dmindex::fabric
