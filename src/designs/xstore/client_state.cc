#include "designs/xstore/client_state.h"

#include <algorithm>
#include <cstring>

#include "designs/xstore/key_model.h"

namespace dmindex::designs::xstore {

template <tree::KeyValueTraits KV>
size_t ClientState<KV>::PartitionOf(KeyRef key) const {
  // The last partition whose low boundary is at or below the key.
  auto it = std::upper_bound(partitions.begin() + 1, partitions.end(), key,
                             [](KeyRef k, const Partition& p) { return k < p.low; });
  return static_cast<size_t>(it - partitions.begin()) - 1;
}

template <tree::KeyValueTraits KV>
Status ClientState<KV>::Predict(Session& s, size_t p, KeyRef key, Prediction* out) const {
  *out = Prediction{};
  ModelCache<KV>& cache = Cache(s, p);
  auto set = cache.Set(s.tree->ep, *s.epoch, options.prefetch);
  if (!set.ok()) return set.status();
  if (*set == nullptr) return Status::Ok();
  out->set = *set;
  const learned::ModelKey x = (*set)->keys(key);
  out->model = (*set)->record.top.Route(x);
  auto sub = cache.Sub(s.tree->ep, *s.epoch, **set, out->model);
  if (!sub.ok()) return sub.status();
  if (*sub == nullptr) return Status::Ok();
  const learned::PageModel& m = (*sub)->record.model;
  out->sub = *sub;
  out->pages = m.Pages(x);
  const double pos = m.Position(x);
  out->low = pos - m.error.below;
  out->high = pos + m.error.above;
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
void ClientState<KV>::Request(const Prediction& pred, size_t p, KeyRef key, fabric::RpcReply* out) const {
  wire::Out w(out);
  w.Pod(partitions[p].descriptor.raw())
      .Pod(pred.set != nullptr ? pred.set->model_word : uint64_t{0})
      .Pod(pred.model)
      .Pod(pred.sub != nullptr ? pred.sub->blob_word : uint64_t{0})
      .Str(KeyModel<KV>::ToPublic(Key(key)));
}

template <tree::KeyValueTraits KV>
Status ClientState<KV>::Absorb(Session& s, size_t p, const Prediction& pred, wire::In& in) const {
  uint64_t model_word = 0, blob_word = 0;
  std::string_view blob;
  in.Pod(&model_word).Pod(&blob_word).Str(&blob);
  DMX_RETURN_IF_ERROR(in.Check("reply"));
  ModelCache<KV>& cache = Cache(s, p);
  if (model_word != 0 && (pred.set == nullptr || model_word != pred.set->model_word))
    return cache.Set(s.tree->ep, *s.epoch, options.prefetch, model_word).status();
  if (pred.set != nullptr && !blob.empty() &&
      cache.Install(*s.epoch, *pred.set, pred.model, blob_word,
                    std::span<const std::byte>(reinterpret_cast<const std::byte*>(blob.data()), blob.size())))
    pred.set->suspect[pred.model].store(0, std::memory_order_relaxed);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Status ClientState<KV>::FallbackLookup(Session& s, size_t p, const Prediction& pred, KeyRef key, Value* value) const {
  Cache(s, p).counters().fallbacks.fetch_add(1, std::memory_order_relaxed);
  fabric::RpcReply request, reply;
  Request(pred, p, key, &request);
  DMX_RETURN_IF_ERROR(s.tree->ep.Call(NodeOf(p), fabric::rpc_op::kXStoreLookup, request, &reply));
  wire::In in(reply);
  uint8_t outcome = 0;
  in.Pod(&outcome);
  DMX_RETURN_IF_ERROR(Absorb(s, p, pred, in));
  std::string_view v;
  in.Str(&v);
  DMX_RETURN_IF_ERROR(in.Check("lookup reply"));
  if (outcome != static_cast<uint8_t>(wire::Outcome::kOk)) return Status::NotFound();
  *value = Value(v);
  return Status::Ok();
}

template <tree::KeyValueTraits KV>
Result<GlobalAddress> ClientState<KV>::FallbackLocate(Session& s, size_t p, const Prediction& pred, KeyRef key) const {
  Cache(s, p).counters().fallbacks.fetch_add(1, std::memory_order_relaxed);
  fabric::RpcReply request, reply;
  Request(pred, p, key, &request);
  DMX_RETURN_IF_ERROR(s.tree->ep.Call(NodeOf(p), fabric::rpc_op::kXStoreLocate, request, &reply));
  wire::In in(reply);
  uint8_t outcome = 0;
  in.Pod(&outcome);
  DMX_RETURN_IF_ERROR(Absorb(s, p, pred, in));
  uint64_t leaf = 0;
  in.Pod(&leaf);
  DMX_RETURN_IF_ERROR(in.Check("locate reply"));
  if (outcome != static_cast<uint8_t>(wire::Outcome::kOk)) return Status::NotFound();
  return GlobalAddress::FromRaw(leaf);
}

template <tree::KeyValueTraits KV>
Status ClientState<KV>::ReadFromServer(tree::TreeContext<KV>& c, GlobalAddress addr, std::byte* buf) const {
  const Partition* on = nullptr;  // the partition on the node's memory node (one per node)
  for (const Partition& p : partitions)
    if (p.descriptor.node() == addr.node()) on = &p;
  if (on == nullptr)
    return Status::Corruption("xstore: node " + addr.ToString() + " lies on no partition's memory node");
  fabric::RpcReply request, reply;
  wire::Out(&request).Pod(on->descriptor.raw()).Pod(addr.raw());
  DMX_RETURN_IF_ERROR(c.ep.Call(addr.node(), fabric::rpc_op::kXStoreReadNode, request, &reply));
  wire::In in(reply);
  std::string_view image;
  in.Str(&image);
  DMX_RETURN_IF_ERROR(in.Check("read node reply"));
  const uint32_t nb = tree->layout().node_bytes;
  if (image.size() != nb)
    return Status::Corruption("xstore: memory node " + std::to_string(addr.node()) + " sent " +
                              std::to_string(image.size()) + " bytes for node " + addr.ToString() + ", not " +
                              std::to_string(nb));
  std::memcpy(buf, image.data(), nb);
  return Status::Ok();
}

template struct ClientState<tree::U64BytesKV>;
template struct ClientState<tree::BytesKV>;

}  // namespace dmindex::designs::xstore
