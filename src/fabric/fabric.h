// Fabric: a connection to a cluster of memory nodes, from which threads open Endpoints.
// There are no globals: a Fabric is created explicitly (in-process or UCX) and passed to
// whatever needs remote memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/runtime.h"
#include "dmindex/status.h"
#include "fabric/endpoint.h"
#include "fabric/verb_stats.h"

namespace dmindex::fabric {

class Fabric {
 public:
  virtual ~Fabric() = default;

  virtual uint16_t memory_nodes() const = 0;
  virtual const char* backend_name() const = 0;

  // What an endpoint's verbs are for. kMaintenance: background work no operation asked for
  // (a lease's renewals), counted apart so that per-operation figures are the operations'.
  enum class Traffic { kOperations, kMaintenance };

  // Opens a per-thread endpoint. Its counters are included in TotalCounts() (or, for
  // maintenance, MaintenanceCounts()) for the lifetime of the fabric, also after the
  // endpoint is closed. Endpoints must be closed before their fabric is destroyed.
  Result<std::unique_ptr<Endpoint>> Connect(Traffic traffic = Traffic::kOperations);

  // Sum over every operations endpoint ever opened on this fabric.
  VerbCounts TotalCounts() const;
  // Sum over every maintenance endpoint ever opened on this fabric.
  VerbCounts MaintenanceCounts() const;

 protected:
  virtual Result<std::unique_ptr<Endpoint>> DoConnect() = 0;

 private:
  friend class Endpoint;  // a closing endpoint folds its counts into retired_
  void Retire(const Endpoint* ep, const VerbCounts& final_counts);

  VerbCounts Sum(Traffic traffic) const;

  mutable runtime::Mutex mu_;
  std::vector<std::pair<const Endpoint*, Traffic>> live_;
  VerbCounts retired_[2];  // by Traffic
};

}  // namespace dmindex::fabric
