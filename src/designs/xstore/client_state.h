// What XStore's compute-side operations share (client.h assembles them): the partitions,
// the tree core's reader over their leaves, each compute node's model caches and epochs, and
// the steps both lookups and scans take - predicting leaves from the models, and falling back
// to a partition's memory server, whose reply also refreshes the models.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/epoch.h"
#include "designs/xstore/model_cache.h"
#include "designs/xstore/wire.h"
#include "designs/xstore/xstore_options.h"
#include "tree/remote_tree.h"

namespace dmindex::designs::xstore {

template <tree::KeyValueTraits KV>
struct ClientState {
  using Key = typename KV::Key;
  using KeyRef = typename KV::KeyRef;
  using Value = typename KV::Value;
  using Header = tree::NodeHeader<KV>;

  struct Partition {
    GlobalAddress descriptor;
    Key low;  // partition 0: KV::kNegInf
  };
  // One leaf READ of a batch.
  struct LeafRead {
    GlobalAddress addr;
    uint32_t page = 0;
    uint32_t first_slot = 0, last_slot = 0;  // slot_read: the slots read; else all
    bool partial = false;
    Header h;
  };
  // One session's state: the tree core's context (its endpoint and buffers), its place in
  // its compute node's epochs, and its batch buffers.
  struct Session {
    std::unique_ptr<tree::TreeContext<KV>> tree;
    std::unique_ptr<EpochManager::Participant> epoch;
    uint32_t compute_node = 0;
    std::vector<std::byte> leaves;  // a lookup's or scan's batch of leaf images
    std::vector<LeafRead> reads;
  };
  struct ComputeNode {
    EpochManager epochs;
    std::vector<std::unique_ptr<ModelCache<KV>>> caches;  // by partition
  };
  // What the models predict for a key: the sub-model and the pages (logical leaves) that may
  // hold it. set null: the partition has no model yet; sub null: the sub-model has no blob.
  struct Prediction {
    const ModelSet<KV>* set = nullptr;
    const SubModel* sub = nullptr;
    uint32_t model = 0;
    learned::PageRange pages;
    double low = 0, high = 0;  // the predicted positions, in pages
  };

  ClientState(fabric::Fabric& f, const XStoreOptions& o, std::vector<Partition> p)
      : fabric(f), options(o), partitions(std::move(p)) {}

  size_t PartitionOf(KeyRef key) const;
  ModelCache<KV>& Cache(const Session& s, size_t p) const { return *nodes[s.compute_node]->caches[p]; }
  uint16_t NodeOf(size_t p) const { return partitions[p].descriptor.node(); }
  Status Predict(Session& s, size_t p, KeyRef key, Prediction* out) const;
  // The memory server looks the key up; its reply refreshes the models.
  Status FallbackLookup(Session& s, size_t p, const Prediction& pred, KeyRef key, Value* value) const;
  // The memory server names the leaf covering the key (NotFound: its tree is empty).
  Result<GlobalAddress> FallbackLocate(Session& s, size_t p, const Prediction& pred, KeyRef key) const;
  // The memory server reads the node at `addr` for a reader that found it torn the same way
  // twice with its lock free (tree::TreeShared::read_from_writer): a client holds no lock.
  Status ReadFromServer(tree::TreeContext<KV>& c, GlobalAddress addr, std::byte* buf) const;

  fabric::Fabric& fabric;
  const XStoreOptions options;
  const std::vector<Partition> partitions;
  std::unique_ptr<tree::RemoteTree<KV>> tree;  // reads leaves and value blocks; never walks from a root
  std::vector<std::unique_ptr<ComputeNode>> nodes;

 private:
  Status Absorb(Session& s, size_t p, const Prediction& pred, wire::In& in) const;
  void Request(const Prediction& pred, size_t p, KeyRef key, fabric::RpcReply* out) const;
};

}  // namespace dmindex::designs::xstore
