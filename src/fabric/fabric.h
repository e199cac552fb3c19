// Fabric: a connection to a cluster of memory nodes, from which threads open Endpoints.
// There are no globals: a Fabric is created explicitly (in-process or UCX) and passed to
// whatever needs remote memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
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

  // Opens a per-thread endpoint. Its counters are included in TotalCounts() for the
  // lifetime of the fabric, also after the endpoint is closed. Endpoints must be closed
  // before their fabric is destroyed.
  Result<std::unique_ptr<Endpoint>> Connect();

  // Sum over every endpoint ever opened on this fabric.
  VerbCounts TotalCounts() const;

 protected:
  virtual Result<std::unique_ptr<Endpoint>> DoConnect() = 0;

 private:
  friend class Endpoint;  // a closing endpoint folds its counts into retired_
  void Retire(const Endpoint* ep, const VerbCounts& final_counts);

  mutable runtime::Mutex mu_;
  std::vector<const Endpoint*> live_;
  VerbCounts retired_;
};

}  // namespace dmindex::fabric
