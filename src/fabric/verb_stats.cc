#include "fabric/verb_stats.h"

#include <sstream>

namespace dmindex::fabric {

VerbCounts& VerbCounts::operator+=(const VerbCounts& o) {
  reads += o.reads;
  writes += o.writes;
  cas += o.cas;
  faa += o.faa;
  rpcs += o.rpcs;
  round_trips += o.round_trips;
  read_bytes += o.read_bytes;
  write_bytes += o.write_bytes;
  rpc_bytes += o.rpc_bytes;
  return *this;
}

VerbCounts operator-(VerbCounts a, const VerbCounts& b) {
  a.reads -= b.reads;
  a.writes -= b.writes;
  a.cas -= b.cas;
  a.faa -= b.faa;
  a.rpcs -= b.rpcs;
  a.round_trips -= b.round_trips;
  a.read_bytes -= b.read_bytes;
  a.write_bytes -= b.write_bytes;
  a.rpc_bytes -= b.rpc_bytes;
  return a;
}

std::string VerbCounts::ToString() const {
  std::ostringstream os;
  os << "reads=" << reads << " writes=" << writes << " cas=" << cas << " faa=" << faa
     << " rpcs=" << rpcs << " round_trips=" << round_trips << " bytes=" << bytes();
  return os.str();
}

void VerbCounters::CountVerb(const Verb& v) {
  switch (v.kind) {
    case VerbKind::kRead:
      Bump(reads_, 1);
      Bump(read_bytes_, v.length);
      break;
    case VerbKind::kWrite:
      Bump(writes_, 1);
      Bump(write_bytes_, v.length);
      break;
    case VerbKind::kCas:
      Bump(cas_, 1);
      break;
    case VerbKind::kFaa:
      Bump(faa_, 1);
      break;
  }
}

VerbCounts VerbCounters::Snapshot() const {
  auto r = [](const Counter& c) { return c.load(std::memory_order_relaxed); };
  VerbCounts s;
  s.reads = r(reads_);
  s.writes = r(writes_);
  s.cas = r(cas_);
  s.faa = r(faa_);
  s.rpcs = r(rpcs_);
  s.round_trips = r(round_trips_);
  s.read_bytes = r(read_bytes_);
  s.write_bytes = r(write_bytes_);
  s.rpc_bytes = r(rpc_bytes_);
  return s;
}

}  // namespace dmindex::fabric
