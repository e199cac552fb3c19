#include "designs/indexy/x_btree.h"

#include "designs/local/tiered_tree.h"

namespace dmindex::designs::indexy {
namespace {

using local::ColdEntry;
using local::TieredTree;
using local::TieredUnit;

static_assert(xflags::kDirty == local::entry_flags::kDirty && xflags::kInY == local::entry_flags::kInY &&
                  xflags::kTombstone == local::entry_flags::kTombstone,
              "IndeXY's entry flags are the tiered tree's");
static_assert(unit_bits::kDirty == local::node_bits::kDirty && unit_bits::kCandidate == local::node_bits::kCandidate &&
                  unit_bits::kAccessed == local::node_bits::kAccessed,
              "IndeXY's unit bits are the tiered tree's");
constexpr uint8_t kUnitBits = unit_bits::kDirty | unit_bits::kCandidate | unit_bits::kAccessed;

// The tree's writes to the cold store, as IndeXY's batches.
class Sink final : public local::ColdSink {
 public:
  explicit Sink(YSink& y) : y_(y) {}
  Status Write(std::span<const ColdEntry> entries) override {
    tiering::ColdBatch batch;
    for (const ColdEntry& e : entries) {
      if (e.tombstone) batch.Delete(e.key);
      else batch.Put(e.key, e.value);
    }
    return y_.Write(batch);
  }
  void BeforeUnlink() override { y_.BeforeUnlink(); }

 private:
  YSink& y_;
};

XUnit ToUnit(const TieredUnit& t) {
  XUnit x;
  x.id = t.id;
  x.end = t.end;
  x.bottom = t.bottom;
  x.depth = t.depth;
  x.level = t.level;
  x.bits = t.bits & kUnitBits;
  x.accesses = t.accesses;
  x.entries = t.entries;
  x.handle = t.node;
  return x;
}

TieredUnit FromUnit(const XUnit& x) {
  TieredUnit t;
  t.id = x.id;
  t.end = x.end;
  t.bottom = x.bottom;
  t.depth = x.depth;
  t.level = static_cast<uint16_t>(x.level);
  return t;
}

template <class F>
class BtreeWorker final : public XWorker {
 public:
  using Tree = TieredTree<F>;
  explicit BtreeWorker(Tree& tree) : tree_(tree), w_(tree) {}

  void Enter() override { w_.epoch().Enter(); }
  void Exit() override { w_.epoch().Exit(); }

  Status Read(Slice key, XRead* out) override {
    local::TieredEntry e;
    DMX_RETURN_IF_ERROR(tree_.Read(w_, key, &e));
    out->found = e.present;
    out->flags = e.flags;
    out->value = std::move(e.value);
    out->mounted = e.mounted;
    return Status::Ok();
  }

  Status Modify(Slice key, XDecideFn decide) override {
    return tree_.Modify(w_, key, [&](const local::TieredEntry& e) {
      XCurrent cur;
      cur.present = e.present;
      cur.flags = e.flags;
      cur.value = e.value;
      cur.mounted = e.mounted;
      const XDecision d = decide(cur);
      local::TieredDecision t;
      t.value = d.value;
      t.flags = static_cast<uint8_t>(d.flags & xflags::kState);
      t.kind = d.kind == XDecision::Kind::kPut      ? local::TieredDecision::Kind::kPut
               : d.kind == XDecision::Kind::kRemove ? local::TieredDecision::Kind::kRemove
                                                    : local::TieredDecision::Kind::kKeep;
      return t;
    });
  }

  Status Scan(Slice from, bool inclusive, FunctionRef<bool(const XEntryView&)> visit) override {
    return tree_.ScanEntries(w_, from, inclusive, [&](std::string_view k, std::string_view v, uint8_t f) {
      return visit(XEntryView{k, v, f});
    });
  }

  Status ForEachUnit(std::string_view after, FunctionRef<bool(XUnit&)> visit) override {
    return tree_.ForEachUnit(w_, after, [&](TieredUnit& t) {
      XUnit x = ToUnit(t);
      return visit(x);
    });
  }

  void ChangeBits(XUnit& unit, uint8_t set, uint8_t clear) override {
    auto* n = static_cast<typename Tree::NodeT*>(unit.handle);
    if (n == nullptr) return;
    if (set & kUnitBits) n->SetBits(set & kUnitBits);
    if (clear & kUnitBits) n->ClearBits(clear & kUnitBits);
  }

  Status Children(const XUnit& unit, std::vector<XUnit>* out) override {
    std::vector<TieredUnit> list;
    TieredUnit t = FromUnit(unit);
    DMX_RETURN_IF_ERROR(tree_.Children(w_, t, &list));
    out->clear();
    for (const TieredUnit& u : list) out->push_back(ToUnit(u));
    return Status::Ok();
  }

  Result<uint64_t> Clean(std::span<const XUnit> units, YSink& y) override {
    Sink sink(y);
    uint64_t written = 0;
    for (const XUnit& u : units) {
      auto n = tree_.Clean(w_, u.id, u.end, sink);
      if (!n.ok()) return n.status();
      written += *n;
    }
    return written;
  }

  Result<XReleased> Release(const XUnit& unit, YSink& y) override {
    Sink sink(y);
    auto r = tree_.Release(w_, unit.id, static_cast<uint16_t>(unit.level), sink);
    if (!r.ok()) return r.status();
    XReleased x;
    x.entries = r->entries;
    x.bytes = r->bytes;
    x.written = r->written;
    return x;
  }

  void DecayAccesses() override { tree_.DecayAccesses(w_); }
  size_t Reclaim() override { return w_.epoch().Reclaim(); }

 private:
  Tree& tree_;
  typename Tree::Worker w_;
};

template <class F>
class BtreeXOf final : public XTree {
 public:
  BtreeXOf(const IndexyOptions& o)
      : unit_depth_(o.unit_depth), tree_(o.node_bytes, o.unit_depth > 1 ? o.unit_depth - 1 : 1, o.sample_shift, o.reclaim_bytes()) {}

  std::unique_ptr<XWorker> NewWorker() override { return std::make_unique<BtreeWorker<F>>(tree_); }
  XBytes Bytes() const override { return {tree_.bytes(), tree_.retired_bytes()}; }
  uint64_t entries() const override { return tree_.entries(); }
  uint64_t restarts() const override { return tree_.restarts(); }
  uint32_t unit_depth() const override { return unit_depth_; }
  void MountAll() override { tree_.MountAll(); }

 private:
  const uint32_t unit_depth_;
  TieredTree<F> tree_;
};

}  // namespace

uint32_t BtreeX::MinNodeBytes(KeyFormat format) {
  return format == KeyFormat::kU64 ? TieredTree<local::Tiered<local::U64Keys>>::MinNodeBytes()
                                   : TieredTree<local::Tiered<local::ByteKeys>>::MinNodeBytes();
}

Result<std::unique_ptr<XTree>> BtreeX::Make(KeyFormat format, const IndexyOptions& options) {
  if (format == KeyFormat::kU64)
    return std::unique_ptr<XTree>(std::make_unique<BtreeXOf<local::Tiered<local::U64Keys>>>(options));
  return std::unique_ptr<XTree>(std::make_unique<BtreeXOf<local::Tiered<local::ByteKeys>>>(options));
}

}  // namespace dmindex::designs::indexy
