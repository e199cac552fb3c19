// Logical partitioning (DEX §4): designs that split the key space among compute nodes say
// which compute node serves a key and can move the boundaries. Index::partitioning() is
// null for designs where every compute node serves every key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dmindex/status.h"
#include "dmindex/types.h"

namespace dmindex {

// Which compute node serves a key, and its partition: the keys [begin, end), half-open like
// every range of the API (no end: to the end of the key space).
struct Route {
  uint32_t compute_node = 0;  // cluster-wide id of the serving compute node
  std::string begin;          // empty: from the start of the key space
  std::optional<std::string> end;
  bool hosted = true;  // by this process; otherwise sessions answer NotOwner for its keys
  bool Contains(Slice key) const { return key >= Slice(begin) && (!end || key < Slice(*end)); }
};

class Partitioning {
 public:
  // Compute nodes in the whole cluster (of all processes sharing the index).
  virtual uint32_t partitions() const = 0;
  // From this process's view of the partition map (a session that gets NotOwner refreshes
  // that view, so route again after one).
  virtual Route RouteKey(Slice key) const = 0;
  // Compute node i serves [boundaries[i-1], boundaries[i]) (partitions() - 1 ascending
  // boundaries). A range may only move away from a compute node hosted by this process, which
  // writes its dirty pages back first (NotOwner otherwise). Returns the seconds it took.
  virtual Result<double> Repartition(std::vector<std::string> boundaries) = 0;

 protected:
  ~Partitioning() = default;
};

}  // namespace dmindex
