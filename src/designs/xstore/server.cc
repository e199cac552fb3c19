#include "designs/xstore/server.h"

#include <mutex>
#include <shared_mutex>
#include <vector>

#include "designs/xstore/key_model.h"
#include "designs/xstore/pool_format.h"
#include "designs/xstore/trainer.h"
#include "designs/xstore/wire.h"
#include "fabric/pool_layout.h"

namespace dmindex::designs::xstore {
namespace {

// A partition's tree nodes come from its index's allocator on the node; the bytes are counted
// for the partition's pool figure.
class PartitionPlacer final : public tree::NodePlacer {
 public:
  PartitionPlacer(alloc::NodeAllocator& shared, uint16_t node) : shared_(shared), node_(node) {}
  Result<GlobalAddress> Place(fabric::Endpoint& ep, alloc::NodeAllocator&, uint8_t, uint32_t bytes) override {
    auto a = shared_.AllocateOn(ep, node_, bytes);
    if (a.ok()) bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return a;
  }
  void Unplace(alloc::NodeAllocator&, GlobalAddress addr, uint8_t, uint32_t bytes) override {
    shared_.Free(addr, bytes);
    bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  alloc::NodeAllocator& shared_;
  const uint16_t node_;
  std::atomic<uint64_t> bytes_{0};
};

template <tree::KeyValueTraits KV>
class PartitionServerT final : public PartitionServer {
 public:
  using Tree = tree::RemoteTree<KV>;
  using Ctx = tree::TreeContext<KV>;
  using Keys = KeyModel<KV>;

  // `incarnation`: the memory server's on its pool (MemoryNode::incarnation), which its
  // lock words name. `memory`: the index's on this node; `owner` its tag, which the tree's
  // own allocator (value blocks) writes into its chunks too.
  static Result<std::unique_ptr<PartitionServer>> Make(fabric::Fabric& fabric, GlobalAddress descriptor,
                                                       const PartitionConfig& config,
                                                       std::shared_ptr<IndexMemory> memory, uint64_t owner,
                                                       uint64_t incarnation) {
    std::unique_ptr<PartitionServerT> s(new PartitionServerT(descriptor, std::move(memory)));
    alloc::NodeAllocator& shared = *s->index_memory_->allocator;
    s->placer_ = std::make_shared<PartitionPlacer>(shared, descriptor.node());
    tree::TreeOptions o;
    o.chunk_owner = owner;
    o.node_bytes = config.node_bytes;
    o.compute_nodes = 1;
    o.combine = true;
    o.two_level = false;  // sorted leaves: slot_read relies on it
    o.validate = config.validate;
    o.max_key_bytes = config.max_key_bytes;
    o.inline_value_bytes = config.inline_value_bytes;
    o.max_value_bytes = config.max_value_bytes;
    o.home_node = descriptor.node();
    tree::TreeHooks<KV> hooks;
    hooks.placer = s->placer_;
    // The memory server's own CPU is the tree's only writer, and a persistent pool outlives
    // it: its lock words name its incarnation and its writes are recorded, so that the next
    // incarnation finishes and frees what a killed one held (XStoreServer::Start).
    hooks.make_lease = [incarnation] { return lease::Lease::OfMemoryServer(incarnation); };
    // It cannot take a word over (no lease-table access): it locks where no compute process's
    // tree does, so no dead process's word blocks it (tree/lock_table.h).
    hooks.lock_area = tree::LockArea::kMemoryServer;
    PartitionServerT* self = s.get();
    hooks.on_leaf_split = [self](const typename KV::Key& low, const typename KV::Key& sep,
                                 const typename KV::Key& high) { self->trainer_->OnSplit(low, sep, high); };
    auto tree = Tree::Create(fabric, o, descriptor + descriptor::kRootWord, hooks);
    if (!tree.ok()) return tree.status();
    s->tree_ = std::move(tree).value();
    s->trainer_ = std::make_unique<Trainer<KV>>(*s->tree_, descriptor, config, shared);
    return std::unique_ptr<PartitionServer>(std::move(s));
  }

  ~PartitionServerT() override {
    Stop();
    // The sessions' redo blocks came from the server's registry (Acquire), not the tree's
    // allocator: they go back there.
    for (auto& c : free_) {
      for (GlobalAddress b : c->redo_blocks) memory_.GiveBack(b, tree::RedoBlockBytes(tree_->shared().layout.node_bytes));
      c->redo_blocks.clear();
    }
  }

  void Stop() override {
    if (trainer_) trainer_->Stop();
  }

  Status Serve(fabric::RpcOpcode op, std::span<const std::byte> request, fabric::RpcReply* reply) override {
    wire::In in(request);
    uint64_t descriptor = 0;
    in.Pod(&descriptor);
    auto ctx = Acquire();
    if (!ctx.ok()) return ctx.status();
    Status s = Run(op, in, **ctx, reply);
    Release(std::move(ctx).value());
    return s;
  }

 private:
  PartitionServerT(GlobalAddress descriptor, std::shared_ptr<IndexMemory> memory)
      : descriptor_(descriptor), index_memory_(std::move(memory)), memory_(*index_memory_->memory) {}

  Status Run(fabric::RpcOpcode op, wire::In& in, Ctx& c, fabric::RpcReply* reply) {
    wire::Out out(reply);
    switch (op) {
      case fabric::rpc_op::kXStoreWrite: {
        uint8_t kind = 0;
        std::string_view key, value, expected;
        in.Pod(&kind).Str(&key).Str(&value);
        const bool cas = kind == static_cast<uint8_t>(wire::WriteKind::kCompareAndSwap);
        if (cas) in.Str(&expected);
        DMX_RETURN_IF_ERROR(in.Check("write"));
        const typename KV::Key k = Keys::FromPublic(key);
        // CompareAndSwap: the core's compare under the leaf's lock, in this server's tree,
        // where every write of the partition is made (docs/XSTORE.md).
        bool swapped = false;
        std::string current;
        Status s;
        switch (static_cast<wire::WriteKind>(kind)) {
          case wire::WriteKind::kUpsert: s = tree_->Upsert(c, k, value); break;
          case wire::WriteKind::kUpdate: s = tree_->Update(c, k, value); break;
          case wire::WriteKind::kDelete: s = tree_->Delete(c, k); break;
          case wire::WriteKind::kCompareAndSwap:
            s = tree_->CompareAndSwap(c, k, value, tree::CompareValue{expected, &swapped, &current});
            break;
          default: return Status::InvalidArgument("xstore write: unknown kind " + std::to_string(kind));
        }
        if (!s.ok() && !s.IsNotFound()) return s;
        NotePoolBytes(c);
        out.Pod(Outcome(s)).Pod(ModelWord(c));
        if (cas) out.Pod(static_cast<uint8_t>(swapped)).Str(current);
        return Status::Ok();
      }
      case fabric::rpc_op::kXStoreLookup:
      case fabric::rpc_op::kXStoreLocate: {
        wire::ModelState state;
        std::string_view key;
        in.Pod(&state.model_word).Pod(&state.sub_model).Pod(&state.blob_word).Str(&key);
        DMX_RETURN_IF_ERROR(in.Check("lookup"));
        const typename KV::Key k = Keys::FromPublic(key);
        Status s;
        typename KV::Value value{};
        uint64_t leaf = 0;
        if (op == fabric::rpc_op::kXStoreLookup) {
          s = tree_->Lookup(c, k, &value);
        } else {
          typename tree::TreeReader<KV>::Found f;
          s = tree_->reader().Descend(c, k, 0, c.node(), &f);
          if (s.ok() && f.reach == tree::TreeReader<KV>::Reach::kEmpty) s = Status::NotFound();
          leaf = f.addr.raw();
        }
        if (!s.ok() && !s.IsNotFound()) return s;
        out.Pod(Outcome(s));
        DMX_RETURN_IF_ERROR(AppendModel(c, state, out));
        if (op == fabric::rpc_op::kXStoreLookup) out.Str(value);
        else out.Pod(leaf);
        return Status::Ok();
      }
      case fabric::rpc_op::kXStoreLoad: {
        uint8_t last = 0;
        uint32_t count = 0;
        in.Pod(&last).Pod(&count);
        std::lock_guard lock(load_mu_);
        for (uint32_t i = 0; i < count; ++i) {
          std::string_view key, value;
          in.Str(&key).Str(&value);
          DMX_RETURN_IF_ERROR(in.Check("load"));
          loading_.push_back({typename KV::Key(Keys::FromPublic(key)), typename KV::Value(value), {}});
        }
        if (!last) return Status::Ok();
        std::vector<tree::LeafEntry<KV>> entries;
        entries.swap(loading_);
        DMX_RETURN_IF_ERROR(tree_->BulkLoad(c, entries));
        DMX_RETURN_IF_ERROR(trainer_->TrainAll());
        NotePoolBytes(c);
        out.Pod(ModelWord(c));
        return Status::Ok();
      }
      case fabric::rpc_op::kXStoreQuiesce:
        trainer_->Quiesce();
        return Status::Ok();
      case fabric::rpc_op::kXStoreReadNode: return ReadNode(in, c, out);
      default:
        return Status::InvalidArgument("xstore: unknown opcode " + std::to_string(op));
    }
  }

  // A client's reader found the node torn twice alike with its lock free: this server, the
  // tree's only writer, reads it through its tree (under its own lock if it must) and sends
  // the validated image, so that no client ever takes a lock word of the tree.
  Status ReadNode(wire::In& in, Ctx& c, wire::Out& out) {
    uint64_t raw = 0;
    in.Pod(&raw);
    DMX_RETURN_IF_ERROR(in.Check("read node"));
    const GlobalAddress addr = GlobalAddress::FromRaw(raw);
    if (addr.node() != descriptor_.node() || addr.offset() < fabric::kChunkAreaOffset || addr.offset() % 64 != 0)
      return Status::InvalidArgument("xstore read node: " + addr.ToString() + " is no node address of memory node " +
                                     std::to_string(descriptor_.node()));
    std::vector<std::byte> image(tree_->layout().node_bytes);
    tree::NodeHeader<KV> h;
    DMX_RETURN_IF_ERROR(tree_->reader().Read(c, addr, image.data(), &h));
    out.Str(std::string_view(reinterpret_cast<const char*>(image.data()), image.size()));
    return Status::Ok();
  }

  static uint8_t Outcome(const Status& s) {
    return static_cast<uint8_t>(s.ok() ? wire::Outcome::kOk : wire::Outcome::kNotFound);
  }

  // The descriptor's pool counters hold the bulk load's bytes plus this server's: add what
  // this server's allocators took since it last said.
  // The descriptor's pool word: what this partition's nodes, value blocks and models take
  // (the memory node's chunks are shared by its partitions).
  void NotePoolBytes(Ctx& c) {
    const uint64_t bytes = placer_->bytes() + tree_->Stats().bytes_in_use + trainer_->RecordBytes();
    std::lock_guard lock(mu_);
    if (bytes == noted_) return;
    uint64_t old = 0;
    if (c.ep.Faa(descriptor_ + descriptor::kPoolBytes, bytes - noted_, &old).ok()) noted_ = bytes;
  }

  uint64_t ModelWord(Ctx& c) const {
    uint64_t word = 0;
    if (!c.ep.Read(descriptor_ + descriptor::kModelWord, &word, 8).ok()) return 0;
    return word;
  }

  // The current model word and, when the client's model set is current but its copy of the
  // sub-model is not, the sub-model's current blob.
  Status AppendModel(Ctx& c, const wire::ModelState& state, wire::Out& out) {
    const uint64_t model_word = ModelWord(c);
    uint64_t blob_word = 0;
    std::vector<std::byte> blob;
    if (model_word != 0 && model_word == state.model_word) {
      blob_word = trainer_->DirWord(model_word, state.sub_model);
      if (blob_word != 0 && blob_word != state.blob_word) {
        const PackedRef r = PackedRef::Unpack(blob_word, descriptor_.node());
        blob.resize(r.bytes);
        DMX_RETURN_IF_ERROR(c.ep.Read(r.addr, blob.data(), r.bytes));
      }
    }
    out.Pod(model_word).Pod(blob_word).Str(std::string_view(reinterpret_cast<const char*>(blob.data()), blob.size()));
    return Status::Ok();
  }

  Result<std::unique_ptr<Ctx>> Acquire() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        auto c = std::move(free_.back());
        free_.pop_back();
        return c;
      }
    }
    auto c = tree_->NewContext(0);
    if (!c.ok()) return c.status();
    // Its redo block (its locks' record): one the index's registry lists (a predecessor's, or
    // an ended session's), else from the index's allocator, entered in the registry - not the
    // tree's own allocator, which would cut a chunk of its own for it.
    const uint16_t node = descriptor_.node();
    auto block = memory_.TakeRedoBlock((*c)->ep, tree::RedoBlockBytes(tree_->shared().layout.node_bytes));
    if (!block.ok()) return block.status();
    if (!tree::RedoBlockNameable(*block))
      return Status::OutOfSpace("redo block " + block->ToString() + " lies beyond what a lock word can name (32 GiB)");
    (*c)->redo_blocks.assign(node + 1, GlobalAddress());
    (*c)->redo_blocks[node] = *block;
    return c;
  }
  void Release(std::unique_ptr<Ctx> c) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(c));
  }

  const GlobalAddress descriptor_;
  const std::shared_ptr<IndexMemory> index_memory_;  // outlives everything below
  ServerMemory& memory_;  // the index's redo blocks (tree nodes: placer_, from its allocator)
  std::shared_ptr<PartitionPlacer> placer_;
  std::unique_ptr<Tree> tree_;
  std::unique_ptr<Trainer<KV>> trainer_;
  runtime::Mutex mu_;
  std::vector<std::unique_ptr<Ctx>> free_;  // contexts of handlers that finished
  uint64_t noted_ = 0;                      // what NotePoolBytes added to the descriptor
  runtime::Mutex load_mu_;
  std::vector<tree::LeafEntry<KV>> loading_;  // a bulk load's batches so far
};

Status Dropped(GlobalAddress descriptor) {
  return Status::NotFound("xstore: the index of the partition at " + descriptor.ToString() + " was dropped");
}

}  // namespace

Result<PartitionServer*> XStoreServer::Find(GlobalAddress descriptor) {
  {
    std::shared_lock lock(mu_);
    auto it = partitions_.find(descriptor.raw());
    if (it != partitions_.end()) return it->second.server.get();
  }
  std::lock_guard lock(mu_);
  auto it = partitions_.find(descriptor.raw());
  if (it != partitions_.end()) return it->second.server.get();
  const auto id = node_.id();
  if (!id || descriptor.node() != *id || !node_.Contains(descriptor.offset(), descriptor::kBytes))
    return Status::InvalidArgument("xstore: descriptor " + descriptor.ToString() + " is not in this memory node's pool");
  DMX_RETURN_IF_ERROR(ReadyLocked());
  const uint64_t owner = node_.OwnerOf(descriptor.offset());  // the index whose chunk holds it
  if (dropped_.contains(owner)) return Dropped(descriptor);
  auto ep = fabric_->Connect();
  if (!ep.ok()) return ep.status();
  std::byte image[descriptor::kBytes];
  DMX_RETURN_IF_ERROR((*ep)->Read(descriptor, image, descriptor::kBytes));
  PartitionConfig config;
  if (!descriptor::DecodeConfig(image, &config))
    return Status::InvalidArgument("xstore: no partition descriptor at " + descriptor.ToString() +
                                   " (its index may have been dropped)");
  auto memory = MemoryOfLocked(**ep, owner);
  if (!memory.ok()) return memory.status();
  const uint64_t incarnation = node_.incarnation();
  auto made = config.format == KeyFormat::kU64
                  ? PartitionServerT<tree::U64BytesKV>::Make(*fabric_, descriptor, config, *memory, owner, incarnation)
                  : PartitionServerT<tree::BytesKV>::Make(*fabric_, descriptor, config, *memory, owner, incarnation);
  if (!made.ok()) return made.status();
  PartitionServer* p = made->get();
  partitions_.emplace(descriptor.raw(), Partition{std::move(made).value(), owner});
  return p;
}

Result<std::shared_ptr<IndexMemory>> XStoreServer::MemoryOfLocked(fabric::Endpoint& ep, uint64_t owner) {
  if (auto it = memories_.find(owner); it != memories_.end()) return it->second;
  auto m = std::make_shared<IndexMemory>();
  m->allocator = std::make_unique<alloc::NodeAllocator>(static_cast<uint16_t>(*node_.id() + 1),
                                                        alloc::NodeAllocatorOptions{.owner = owner});
  auto memory = ServerMemory::Open(node_, ep, *m->allocator, owner);
  if (!memory.ok()) return memory.status();
  m->memory = std::move(memory).value();
  memories_.emplace(owner, m);
  return m;
}

void XStoreServer::Forget(uint64_t owner) {
  std::vector<std::unique_ptr<PartitionServer>> gone;
  std::shared_ptr<IndexMemory> memory;
  {
    std::unique_lock serving(serving_);  // no request under way, on this index or another
    std::lock_guard lock(mu_);
    dropped_.insert(owner);
    for (auto it = partitions_.begin(); it != partitions_.end();) {
      if (it->second.owner != owner) {
        ++it;
        continue;
      }
      gone.push_back(std::move(it->second.server));
      it = partitions_.erase(it);
    }
    if (auto it = memories_.find(owner); it != memories_.end()) {
      memory = std::move(it->second);
      memories_.erase(it);
    }
  }
  // Their training stops (outside the locks: requests of other indexes go on) before this
  // returns and the chunks are freed.
  for (auto& p : gone) p->Stop();
}

Status XStoreServer::ReadyLocked() {
  if (started_) return started_->status();
  const auto id = node_.id();
  if (!id) return Status::InvalidArgument("xstore: the memory node does not know its id yet");
  if (fabric_ == nullptr) {
    local_ = std::make_unique<fabric::LocalFabric>(node_);
    fabric_ = local_.get();
  }
  started_ = [&]() -> Result<tree::ServerLockRecovery> {
    auto ep = fabric_->Connect();
    if (!ep.ok()) return ep.status();
    auto freed = tree::FreeLocksOfEarlierIncarnations(**ep, *id, lease::MemoryServerHolder(node_.incarnation()));
    if (!freed.ok())
      return Status::Unavailable("xstore: memory node " + std::to_string(*id) + " could not free the locks its "
                                 "previous server left held: " + freed.status().ToString());
    // No lock word names a redo block of an earlier incarnation now: they can be reused. The
    // indexes it kept memory for carry on where it stopped.
    for (const uint64_t owner : ServerMemory::OwnersIn(node_)) {
      auto memory = MemoryOfLocked(**ep, owner);
      if (!memory.ok()) return memory.status();
    }
    return freed;
  }();
  return started_->status();
}

void XStoreServer::Start() {
  std::lock_guard lock(mu_);
  (void)ReadyLocked();  // a failure is every request's answer
}

Result<tree::ServerLockRecovery> XStoreServer::recovered() {
  std::lock_guard lock(mu_);
  DMX_RETURN_IF_ERROR(ReadyLocked());
  return **started_;
}

Result<ServerMemory::Counts> XStoreServer::memory() {
  std::lock_guard lock(mu_);
  DMX_RETURN_IF_ERROR(ReadyLocked());
  ServerMemory::Counts counts;
  for (const auto& [owner, m] : memories_) counts += m->memory->counts();
  return counts;
}

Status XStoreServer::Store(fabric::RpcRequest request, fabric::RpcReply* reply) {
  wire::In in(request);
  uint64_t owner = 0;  // the index's owner tag (0: an index of before tags)
  std::string_view record;
  in.Pod(&owner).Str(&record);
  DMX_RETURN_IF_ERROR(in.Check("store"));
  fabric::Fabric* fabric = nullptr;
  std::shared_ptr<IndexMemory> memory;
  std::unique_ptr<fabric::Endpoint> ep;
  {
    std::lock_guard lock(mu_);
    DMX_RETURN_IF_ERROR(ReadyLocked());
    if (dropped_.contains(owner))
      return Status::NotFound("xstore: the index tagged " + std::to_string(owner) + " was dropped");
    fabric = fabric_;
    auto connected = fabric->Connect();
    if (!connected.ok()) return connected.status();
    ep = std::move(connected).value();
    auto m = MemoryOfLocked(*ep, owner);
    if (!m.ok()) return m.status();
    memory = std::move(m).value();
  }
  auto at = memory->allocator->AllocateOn(*ep, *node_.id(), static_cast<uint32_t>(record.size()));
  if (!at.ok()) return at.status();
  DMX_RETURN_IF_ERROR(ep->Write(*at, record.data(), static_cast<uint32_t>(record.size())));
  wire::Out(reply).Pod(at->raw());
  return Status::Ok();
}

Status XStoreServer::Serve(fabric::RpcOpcode op, fabric::RpcRequest request, fabric::RpcReply* reply) {
  std::shared_lock serving(serving_);
  if (op == fabric::rpc_op::kXStoreStore) return Store(request, reply);
  uint64_t descriptor = 0;
  if (!fabric::ReadPod(request, 0, &descriptor)) return Status::InvalidArgument("xstore: short request");
  auto p = Find(GlobalAddress::FromRaw(descriptor));
  if (!p.ok()) return p.status();
  return (*p)->Serve(op, request, reply);
}

void XStoreServer::Stop() {
  std::shared_lock lock(mu_);
  for (auto& [addr, p] : partitions_) p.server->Stop();
}

Status RegisterXStoreHandlers(fabric::MemoryNode& node) { return RegisterXStoreHandlersOver(node, nullptr).status(); }

Result<std::shared_ptr<XStoreServer>> RegisterXStoreHandlersOver(fabric::MemoryNode& node, fabric::Fabric* trees) {
  // Registration precedes serving; a second registration (another cluster on the node) is a no-op.
  if (node.rpc().Has(fabric::rpc_op::kXStoreWrite)) return std::shared_ptr<XStoreServer>();
  auto server = std::make_shared<XStoreServer>(node, trees);
  const std::pair<fabric::RpcOpcode, const char*> ops[] = {
      {fabric::rpc_op::kXStoreWrite, "xstore.write"},   {fabric::rpc_op::kXStoreLookup, "xstore.lookup"},
      {fabric::rpc_op::kXStoreLocate, "xstore.locate"}, {fabric::rpc_op::kXStoreLoad, "xstore.load"},
      {fabric::rpc_op::kXStoreQuiesce, "xstore.quiesce"},  {fabric::rpc_op::kXStoreStore, "xstore.store"},
      {fabric::rpc_op::kXStoreReadNode, "xstore.read-node"}};
  for (const auto& [op, name] : ops)
    DMX_RETURN_IF_ERROR(node.rpc().Register(op, name, [server, op = op](fabric::RpcRequest req, fabric::RpcReply* reply) {
      return server->Serve(op, req, reply);
    }));
  node.OnStop([server] { server->Stop(); });
  node.OnOwnerFreed([server](uint64_t owner) { server->Forget(owner); });
  node.OnIdKnown([server] { server->Start(); });
  return server;
}

}  // namespace dmindex::designs::xstore
