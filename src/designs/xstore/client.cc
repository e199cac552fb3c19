#include "designs/xstore/client.h"

#include <array>

#include "designs/xstore/key_model.h"

namespace dmindex::designs::xstore {

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<Client<KV>>> Client<KV>::Make(fabric::Fabric& fabric, const XStoreOptions& options,
                                                     std::vector<Partition> partitions) {
  if (partitions.empty()) return Status::InvalidArgument("xstore: an index of no partitions");
  std::unique_ptr<Client> c(new Client(fabric, options, std::move(partitions)));
  // The reader's tree: its root word is never read (lookups start at predicted leaves). It
  // takes no lock and holds no lease: a leaf torn twice alike is read by the memory server,
  // the tree's only writer (ReadFromServer), so no client ever holds a word the server waits on.
  tree::TreeOptions reader_options = options.tree;
  reader_options.lease = std::chrono::milliseconds(0);
  tree::TreeHooks<KV> hooks;
  const State* state = &c->state_;
  hooks.read_from_writer = [state](tree::TreeContext<KV>& ctx, GlobalAddress addr, std::byte* buf) {
    return state->ReadFromServer(ctx, addr, buf);
  };
  // The server's trees lock in the server's part of the lock table: the words it reads.
  hooks.lock_area = tree::LockArea::kMemoryServer;
  auto tree = tree::RemoteTree<KV>::Create(fabric, reader_options, c->state_.partitions[0].descriptor, hooks);
  if (!tree.ok()) return tree.status();
  c->state_.tree = std::move(tree).value();
  for (uint32_t n = 0; n < options.tree.compute_nodes; ++n) {
    auto node = std::make_unique<typename State::ComputeNode>();
    for (const Partition& p : c->state_.partitions)
      node->caches.push_back(std::make_unique<ModelCache<KV>>(p.descriptor));
    c->state_.nodes.push_back(std::move(node));
  }
  return c;
}

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<typename Client<KV>::Session>> Client<KV>::NewSession(uint32_t compute_node) {
  auto ctx = state_.tree->NewContext(compute_node);
  if (!ctx.ok()) return ctx.status();
  auto s = std::make_unique<Session>();
  s->tree = std::move(ctx).value();
  s->epoch = state_.nodes[compute_node]->epochs.Join();
  s->compute_node = compute_node;
  return s;
}

namespace {

// One write RPC to the partition's server; *reply is past the outcome and model word.
template <tree::KeyValueTraits KV>
Status CallWrite(const ClientState<KV>& state, fabric::Endpoint& ep, wire::WriteKind kind,
                 typename KV::KeyRef key, std::string_view value, std::string_view expected,
                 fabric::RpcReply* reply, size_t* outcome_end, bool* found) {
  const size_t p = state.PartitionOf(key);
  fabric::RpcReply request;
  wire::Out out(&request);
  out.Pod(state.partitions[p].descriptor.raw())
      .Pod(static_cast<uint8_t>(kind))
      .Str(KeyModel<KV>::ToPublic(typename KV::Key(key)))
      .Str(value);
  if (kind == wire::WriteKind::kCompareAndSwap) out.Str(expected);
  DMX_RETURN_IF_ERROR(ep.Call(state.NodeOf(p), fabric::rpc_op::kXStoreWrite, request, reply));
  wire::In in(*reply);
  uint8_t outcome = 0;
  uint64_t model_word = 0;
  in.Pod(&outcome).Pod(&model_word);
  DMX_RETURN_IF_ERROR(in.Check("write reply"));
  *outcome_end = sizeof outcome + sizeof model_word;
  *found = outcome == static_cast<uint8_t>(wire::Outcome::kOk);
  return Status::Ok();
}

}  // namespace

template <tree::KeyValueTraits KV>
Status Client<KV>::Write(Session& s, wire::WriteKind kind, KeyRef key, ValueRef value) {
  fabric::RpcReply reply;
  size_t end = 0;
  bool found = false;
  DMX_RETURN_IF_ERROR(CallWrite<KV>(state_, s.tree->ep, kind, key, value, {}, &reply, &end, &found));
  return found ? Status::Ok() : Status::NotFound();
}

template <tree::KeyValueTraits KV>
Status Client<KV>::CompareAndSwap(Session& s, KeyRef key, ValueRef expected, ValueRef desired, bool* swapped,
                                  std::string* current) {
  fabric::RpcReply reply;
  size_t end = 0;
  bool found = false;
  DMX_RETURN_IF_ERROR(CallWrite<KV>(state_, s.tree->ep, wire::WriteKind::kCompareAndSwap, key, desired,
                                    expected, &reply, &end, &found));
  if (!found) return Status::NotFound();
  wire::In in(std::span<const std::byte>(reply).subspan(end));
  uint8_t done = 0;
  std::string_view found_value;
  in.Pod(&done).Str(&found_value);
  DMX_RETURN_IF_ERROR(in.Check("compare-and-swap reply"));
  *swapped = done != 0;
  if (!*swapped && current != nullptr) current->assign(found_value);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status Client<KV>::BulkLoad(Session& s, std::span<const tree::LeafEntry<KV>> sorted) {
  const size_t n = state_.partitions.size();
  // Every partition empty, or nothing is loaded (each server checks its tree on its own).
  for (size_t p = 0; p < n; ++p) {
    uint64_t root = 0;
    DMX_RETURN_IF_ERROR(s.tree->ep.Read(state_.partitions[p].descriptor + descriptor::kRootWord, &root, 8));
    if (root != 0) return Status::InvalidArgument("bulk load needs an empty index");
  }
  // Each partition's share goes to its memory server in batches; the last one makes the
  // server load them (the tree core's bulk loader, every node in its own pool) and train.
  size_t begin = 0;
  for (size_t p = 0; p < n; ++p) {
    size_t end = begin;
    while (end < sorted.size() && (p + 1 == n || sorted[end].key < state_.partitions[p + 1].low)) ++end;
    for (size_t at = begin;;) {
      fabric::RpcReply request, reply;
      wire::Out out(&request);
      out.Pod(state_.partitions[p].descriptor.raw());
      size_t bytes = 0, stop = at;
      while (stop < end && bytes < wire::kLoadBatchBytes)  // about: lengths, key, value
        bytes += 8 + KeyModel<KV>::ToPublic(sorted[stop].key).size() + sorted[stop].value.size(), ++stop;
      out.Pod(static_cast<uint8_t>(stop == end)).Pod(static_cast<uint32_t>(stop - at));
      for (size_t i = at; i < stop; ++i)
        out.Str(KeyModel<KV>::ToPublic(sorted[i].key)).Str(std::string_view(sorted[i].value));
      DMX_RETURN_IF_ERROR(s.tree->ep.Call(state_.NodeOf(p), fabric::rpc_op::kXStoreLoad, request, &reply));
      at = stop;
      if (at == end) break;
    }
    begin = end;
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status Client<KV>::Quiesce(Session& s) {
  for (size_t p = 0; p < state_.partitions.size(); ++p) {
    fabric::RpcReply request, reply;
    wire::Out(&request).Pod(state_.partitions[p].descriptor.raw());
    DMX_RETURN_IF_ERROR(s.tree->ep.Call(state_.NodeOf(p), fabric::rpc_op::kXStoreQuiesce, request, &reply));
  }
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
uint64_t Client<KV>::CacheBytes() const {
  uint64_t bytes = 0;
  for (const auto& node : state_.nodes)
    for (const auto& cache : node->caches) bytes += cache->bytes();
  return bytes;
}

template <tree::KeyValueTraits KV>
Status Client<KV>::ReadDescriptors(std::vector<std::array<uint64_t, 8>>* out) const {
  auto ep = state_.fabric.Connect();
  if (!ep.ok()) return ep.status();
  out->assign(state_.partitions.size(), {});
  std::vector<fabric::Verb> reads;
  for (size_t p = 0; p < out->size(); ++p)
    reads.push_back(fabric::Verb::Read(state_.partitions[p].descriptor, (*out)[p].data(), 64));
  return (*ep)->Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered);
}

template <tree::KeyValueTraits KV>
uint64_t Client<KV>::PoolBytes() const {
  std::vector<std::array<uint64_t, 8>> d;
  if (!ReadDescriptors(&d).ok()) return 0;
  uint64_t bytes = 0;
  for (const auto& w : d) bytes += w[descriptor::kPoolBytes / 8];
  return bytes;
}

template <tree::KeyValueTraits KV>
void Client<KV>::AddProperties(std::vector<std::pair<std::string, uint64_t>>* out) const {
  uint64_t sums[9] = {};
  for (const auto& node : state_.nodes)
    for (const auto& cache : node->caches) {
      const ClientCounters& c = cache->counters();
      const std::atomic<uint64_t>* all[] = {&c.lookups, &c.leaves_read, &c.speculative_reads, &c.invalidations,
                                            &c.fallbacks, &c.wide_predictions, &c.slot_misses, &c.model_fetches,
                                            &c.model_fetch_bytes};
      for (size_t k = 0; k < 9; ++k) sums[k] += all[k]->load(std::memory_order_relaxed);
    }
  const char* names[] = {"lookups", "leaves-read", "speculative-reads", "invalidations", "fallbacks",
                         "wide-predictions", "slot-misses", "model-fetches", "model-fetch-bytes"};
  for (size_t k = 0; k < 9; ++k) out->emplace_back(std::string("dmindex.xstore.") + names[k], sums[k]);
  std::vector<std::array<uint64_t, 8>> d;
  if (!ReadDescriptors(&d).ok()) return;
  const std::pair<const char*, uint32_t> server[] = {
      {"trainings", descriptor::kTrainings}, {"retrains", descriptor::kRetrains},
      {"expansions", descriptor::kExpansions}, {"keys-trained", descriptor::kKeys},
      {"pool-bytes", descriptor::kPoolBytes}};
  for (const auto& [name, at] : server) {
    uint64_t sum = 0;
    for (const auto& w : d) sum += w[at / 8];
    out->emplace_back(std::string("dmindex.xstore.") + name, sum);
  }
  uint64_t models = 0;  // in compute node 0's current model sets
  for (const auto& cache : state_.nodes[0]->caches) models += cache->models();
  out->emplace_back("dmindex.xstore.models", models);
}

template class Client<tree::U64BytesKV>;
template class Client<tree::BytesKV>;

}  // namespace dmindex::designs::xstore
