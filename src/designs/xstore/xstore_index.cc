#include "designs/xstore/xstore_index.h"

#include <mutex>

#include "alloc/catalog.h"
#include "alloc/index_hold.h"
#include "designs/xstore/client.h"
#include "designs/xstore/key_model.h"

namespace dmindex::designs::xstore {
namespace {

// The public API's keys and ranges in a tree format's terms (as tree/tree_index.cc).
template <tree::KeyValueTraits KV>
struct Codec;
template <>
struct Codec<tree::U64BytesKV> {
  static uint64_t Tree(Slice k) { return u64::Decode(k); }
  static tree::ScanRange<tree::U64BytesKV> Range(const KeyRange& r) { return tree::ToScanRange(r); }
};
template <>
struct Codec<tree::BytesKV> {
  static std::string_view Tree(Slice k) { return k; }
  static tree::ScanRange<tree::BytesKV> Range(const KeyRange& r) {
    return {std::string(r.start), r.after_start, r.end ? std::string(*r.end) : tree::BytesKV::kPosInf};
  }
};

// Partition boundaries (public key bytes; partition 0's is the empty string, -inf) when no
// bulk load chose them: an even split of the u64 key space, or of the first byte.
std::vector<std::string> EvenBoundaries(KeyFormat format, uint32_t partitions) {
  std::vector<std::string> lows(1);
  for (uint32_t p = 1; p < partitions; ++p) {
    if (format == KeyFormat::kU64)
      lows.push_back(u64::Encode(static_cast<uint64_t>((static_cast<unsigned __int128>(p) << 64) / partitions)));
    else
      lows.push_back(std::string(1, static_cast<char>(p * 256 / partitions)));
  }
  return lows;
}

template <tree::KeyValueTraits KV>
class XStoreIndex;

template <tree::KeyValueTraits KV>
class XStoreSession final : public Session {
 public:
  explicit XStoreSession(XStoreIndex<KV>& index, uint32_t compute_node) : index_(index), compute_node_(compute_node) {}

 private:
  using C = Codec<KV>;
  // The client's session, once the index has a superblock (null: it has none, so it is empty).
  Result<typename Client<KV>::Session*> Ready(bool create);

  Status DoLookup(Slice key, std::string* value) override {
    auto s = Ready(false);
    if (!s.ok()) return s.status();
    if (*s == nullptr) return Status::NotFound();
    DMX_RETURN_IF_ERROR(index_.NotFenced());
    return index_.Answer(client_->Lookup(**s, C::Tree(key), value));
  }
  Status Write(wire::WriteKind kind, Slice key, Slice value) {
    auto s = Ready(kind == wire::WriteKind::kUpsert);
    if (!s.ok()) return s.status();
    if (*s == nullptr) return Status::NotFound();  // an update or delete of an empty index
    DMX_RETURN_IF_ERROR(index_.Answer(Status::Ok()));  // a revoked handle sends no write
    return client_->Write(**s, kind, C::Tree(key), value);
  }
  Status DoInsert(Slice key, Slice value) override { return Write(wire::WriteKind::kUpsert, key, value); }
  Status DoUpdate(Slice key, Slice value) override { return Write(wire::WriteKind::kUpdate, key, value); }
  Status DoDelete(Slice key) override { return Write(wire::WriteKind::kDelete, key, {}); }
  Status DoCompareAndSwap(Slice key, Slice expected, Slice desired, bool* swapped, std::string* current) override {
    auto s = Ready(false);
    if (!s.ok()) return s.status();
    if (*s == nullptr) return Status::NotFound();  // an empty index
    DMX_RETURN_IF_ERROR(index_.Answer(Status::Ok()));
    return client_->CompareAndSwap(**s, C::Tree(key), expected, desired, swapped, current);
  }
  Status DoScan(const KeyRange& range, size_t count, std::vector<KeyValue>* out) override {
    auto s = Ready(false);
    if (!s.ok()) return s.status();
    if (*s == nullptr) return Status::Ok();
    DMX_RETURN_IF_ERROR(index_.NotFenced());
    DMX_RETURN_IF_ERROR(index_.Answer(client_->Scan(**s, C::Range(range), count, &entries_)));
    out->reserve(entries_.size());
    for (auto& e : entries_) out->push_back({KeyModel<KV>::ToPublic(e.key), std::move(e.value)});
    return Status::Ok();
  }

  XStoreIndex<KV>& index_;
  const uint32_t compute_node_;
  Client<KV>* client_ = nullptr;
  std::unique_ptr<typename Client<KV>::Session> session_;
  std::vector<tree::LeafEntry<KV>> entries_;
};

// The index: its catalog entry's root word points at the superblock (pool_format.h), made by
// the first write or bulk load (a bulk load chooses the partition boundaries from its keys).
template <tree::KeyValueTraits KV>
class XStoreIndex final : public Index {
 public:
  // `hold`: this handle's registration as a holder of the index, under a lease of its own
  // (alloc/index_hold.h; XStore's compute processes take no lock), until it closes.
  XStoreIndex(fabric::Fabric& fabric, const IndexOptions& options, const XStoreOptions& xo, GlobalAddress root_word,
              std::unique_ptr<alloc::IndexHold> hold)
      : Index("xstore", options), fabric_(fabric), options_(xo), root_word_(root_word), hold_(std::move(hold)) {}
  ~XStoreIndex() override { CloseForDestructor(); }

  // The client over the superblock, reading it (or, with `create`, making it with these
  // boundaries or, if none, even ones) the first time; null if there is none and !create.
  Result<Client<KV>*> Ready(fabric::Endpoint& ep, bool create, const std::vector<std::string>* boundaries = nullptr) {
    if (Client<KV>* c = client_.load(std::memory_order_acquire)) return c;
    std::lock_guard lock(mu_);
    if (owned_) return owned_.get();
    uint64_t sb = 0;
    DMX_RETURN_IF_ERROR(ep.Read(root_word_, &sb, 8));
    if (sb == 0 && !create) return nullptr;
    if (sb == 0) {
      auto made = Create(ep, boundaries != nullptr ? *boundaries : EvenBoundaries(options_.format, options_.partitions));
      if (!made.ok()) return made.status();
      sb = *made;
    }
    auto client = Open(ep, GlobalAddress::FromRaw(sb));
    if (!client.ok()) return client.status();
    owned_ = std::move(client).value();
    client_.store(owned_.get(), std::memory_order_release);
    return owned_.get();
  }

  fabric::Fabric& fabric() { return fabric_; }

  // A read's answer stands only if the handle's registration lease was live after the read:
  // once it is revoked (a process stalled past it) the index may have been dropped and the
  // memory read reused (docs/OPERATIONS.md, "Drop"). Before a read, only whether the handle
  // is known fenced (no clock read, as the other designs' reads); before a write is sent,
  // the lease itself (its margin covers the write's flight, as for a lock holder's writes).
  Status Answer(Status s) {
    if (!hold_ || (!s.ok() && !s.IsNotFound())) return s;
    Status live = hold_->CheckLive();
    return live.ok() ? s : live;
  }
  Status NotFenced() const { return hold_ ? hold_->CheckNotFenced() : Status::Ok(); }

 private:
  // Has each partition's memory server store its descriptor, and memory node 0's the
  // superblock, and installs it with one CAS of the root word; returns the installed
  // superblock (another process's, if it won: ours stay unreferenced, a few hundred bytes).
  Result<uint64_t> Create(fabric::Endpoint& ep, const std::vector<std::string>& lows) {
    Superblock sb;
    for (size_t p = 0; p < lows.size(); ++p) {
      PartitionConfig config;
      config.format = options_.format;
      config.partition = static_cast<uint16_t>(p);
      config.node_bytes = options_.tree.node_bytes;
      config.max_key_bytes = options_.tree.max_key_bytes;
      config.inline_value_bytes = options_.tree.inline_value_bytes;
      config.max_value_bytes = options_.tree.max_value_bytes;
      config.keys_per_model = options_.keys_per_model;
      config.expand_at = options_.expand_at;
      config.train_threads = options_.train_threads;
      config.top_segments = options_.top_segments;
      config.retrain = options_.retrain;
      config.validate = options_.tree.validate;
      std::byte image[descriptor::kBytes] = {};
      descriptor::EncodeConfig(config, image);
      auto d = StoreOn(ep, static_cast<uint16_t>(p), {image, descriptor::kBytes}, options_.tree.chunk_owner);
      if (!d.ok()) return d.status();
      sb.partitions.push_back({*d, lows[p]});
    }
    auto at = StoreOn(ep, 0, sb.Encode(), options_.tree.chunk_owner);
    if (!at.ok()) return at.status();
    uint64_t old = 0;
    DMX_RETURN_IF_ERROR(ep.Cas(root_word_, 0, at->raw(), &old));
    return old == 0 ? at->raw() : old;
  }

  // `owner`: the index's owner tag, in the request's first word: the memory server stores the
  // record in a chunk of the index's (and builds the partition of a descriptor from its
  // index's memory), so that dropping the index frees it (XStoreServer::Forget).
  static Result<GlobalAddress> StoreOn(fabric::Endpoint& ep, uint16_t node, std::span<const std::byte> record,
                                       uint64_t owner) {
    fabric::RpcReply request, reply;
    wire::Out(&request).Pod(owner).Str(std::string_view(reinterpret_cast<const char*>(record.data()), record.size()));
    DMX_RETURN_IF_ERROR(ep.Call(node, fabric::rpc_op::kXStoreStore, request, &reply));
    uint64_t at = 0;
    wire::In in(reply);
    in.Pod(&at);
    DMX_RETURN_IF_ERROR(in.Check("store reply"));
    return GlobalAddress::FromRaw(at);
  }

  Result<std::unique_ptr<Client<KV>>> Open(fabric::Endpoint& ep, GlobalAddress sb) {
    std::byte head[Superblock::kHeadBytes];
    DMX_RETURN_IF_ERROR(ep.Read(sb, head, Superblock::kHeadBytes));
    const uint32_t bytes = Superblock::TotalBytes(head);
    std::vector<std::byte> image(bytes);
    if (bytes > 0) DMX_RETURN_IF_ERROR(ep.Read(sb, image.data(), bytes));
    Superblock decoded;
    if (!Superblock::Decode(image.data(), bytes, &decoded))
      return Status::Corruption("xstore: the superblock at " + sb.ToString() + " does not validate");
    std::vector<typename Client<KV>::Partition> partitions;
    for (const auto& p : decoded.partitions) {
      if (p.descriptor.node() >= fabric_.memory_nodes())
        return Status::InvalidArgument("xstore: the index has a partition on memory node " +
                                       std::to_string(p.descriptor.node()) + ", this cluster has " +
                                       std::to_string(fabric_.memory_nodes()));
      partitions.push_back({p.descriptor, partitions.empty() ? typename KV::Key(KV::kNegInf) : KeyModel<KV>::FromPublic(p.low)});
    }
    return Client<KV>::Make(fabric_, options_, std::move(partitions));
  }

  Status DoBulkLoad(std::span<const KeyValue> sorted) override {
    auto ep = fabric_.Connect();
    if (!ep.ok()) return ep.status();
    // The partitions split the loaded keys evenly (when the index has no superblock yet).
    std::vector<std::string> lows(1);
    for (uint32_t p = 1; p < options_.partitions && sorted.size() >= options_.partitions; ++p)
      lows.push_back(std::string(sorted[sorted.size() * p / options_.partitions].key));
    if (lows.size() < options_.partitions) lows = EvenBoundaries(options_.format, options_.partitions);
    auto client = Ready(**ep, true, &lows);
    if (!client.ok()) return client.status();
    auto session = (*client)->NewSession(0);
    if (!session.ok()) return session.status();
    std::vector<tree::LeafEntry<KV>> entries;
    entries.reserve(sorted.size());
    for (const KeyValue& kv : sorted) entries.push_back({typename KV::Key(Codec<KV>::Tree(kv.key)), kv.value, {}});
    return (*client)->BulkLoad(**session, entries);
  }

  Result<std::unique_ptr<Session>> DoOpenSession(uint32_t compute_node) override {
    return std::unique_ptr<Session>(new XStoreSession<KV>(*this, compute_node));
  }

  IndexStats DoStats() const override {
    IndexStats s;
    if (const Client<KV>* c = client_.load(std::memory_order_acquire)) {
      s.cache_bytes = c->CacheBytes();
      s.pool_bytes = c->PoolBytes();
      s.retries = c->Retries();
    }
    return s;
  }

  void AddProperties(Properties* out) const override {
    if (const Client<KV>* c = client_.load(std::memory_order_acquire)) c->AddProperties(out);
  }

  // Background training must not outlive the run that caused it (in simulated time its
  // threads belong to the run): wait for it.
  Status DoClose() override {
    Status quiesced = Quiesce();
    if (hold_) hold_->Release();  // a closed handle holds the index no more
    return quiesced;
  }
  Status Quiesce() {
    Client<KV>* c = client_.load(std::memory_order_acquire);
    if (c == nullptr) return Status::Ok();
    auto session = c->NewSession(0);
    if (!session.ok()) return session.status();
    return c->Quiesce(**session);
  }
  // Other holders refuse the drop while this handle is still open (itself not counted).
  Status DoPrepareDrop(const DropOptions& options) override {
    return alloc::Catalog::PrepareDrop(fabric_, this->options().name, options_.tree.chunk_owner, options,
                                       hold_ ? hold_->holder() : std::nullopt);
  }
  // The client goes, then the index's chunks and name: on every memory server its partitions'
  // trees, models, descriptors and the superblock (the server forgets the partitions first:
  // XStoreServer::Forget).
  Status DoDrop(const DropOptions& options) override {
    if (dropped_) return Status::Ok();
    client_.store(nullptr, std::memory_order_release);
    owned_.reset();
    hold_.reset();  // and its lease
    DMX_RETURN_IF_ERROR(alloc::Catalog::Drop(fabric_, this->options().name, options_.tree.chunk_owner, options));
    dropped_ = true;
    return Status::Ok();
  }

  fabric::Fabric& fabric_;
  const XStoreOptions options_;
  const GlobalAddress root_word_;
  runtime::Mutex mu_;
  std::unique_ptr<Client<KV>> owned_;
  std::atomic<Client<KV>*> client_{nullptr};
  std::unique_ptr<alloc::IndexHold> hold_;
  bool dropped_ = false;
};

template <tree::KeyValueTraits KV>
Result<typename Client<KV>::Session*> XStoreSession<KV>::Ready(bool create) {
  if (session_) return session_.get();
  auto ep = index_.fabric().Connect();
  if (!ep.ok()) return ep.status();
  auto client = index_.Ready(**ep, create);
  if (!client.ok()) return client.status();
  if (*client == nullptr) return nullptr;
  auto s = (*client)->NewSession(compute_node_);
  if (!s.ok()) return s.status();
  client_ = *client;
  session_ = std::move(s).value();
  return session_.get();
}

template <tree::KeyValueTraits KV>
Result<std::unique_ptr<Index>> Open(fabric::Fabric& fabric, const IndexOptions& options, const XStoreOptions& xo) {
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  bool created = false;
  auto entry = alloc::Catalog::OpenOrCreate(**ep, options.name, {"xstore", xo.tree.node_bytes, alloc::KeySchema::Of(options), fabric.memory_nodes()},
                                            &created, options.create_if_missing);
  if (!entry.ok()) return entry.status();
  XStoreOptions owned = xo;
  owned.tree.chunk_owner = entry->owner;
  auto hold = alloc::IndexHold::Take(fabric, *entry, nullptr, xo.tree.lease);
  if (!hold.ok()) return hold.status();
  return std::unique_ptr<Index>(new XStoreIndex<KV>(fabric, options, owned, entry->root_word, std::move(hold).value()));
}

}  // namespace

Result<std::unique_ptr<Index>> MakeXStore(fabric::Fabric& fabric, const IndexOptions& options) {
  auto xo = ResolveXStoreOptions(options, fabric.memory_nodes());
  if (!xo.ok()) return xo.status();
  // The node size against the key format's needs, now rather than at the first operation.
  if (options.key_format == KeyFormat::kU64) {
    if (auto layout = tree::NodeLayout<tree::U64BytesKV>::For(xo->tree); !layout.ok()) return layout.status();
    return Open<tree::U64BytesKV>(fabric, options, *xo);
  }
  if (auto layout = tree::NodeLayout<tree::BytesKV>::For(xo->tree); !layout.ok()) return layout.status();
  return Open<tree::BytesKV>(fabric, options, *xo);
}

}  // namespace dmindex::designs::xstore
