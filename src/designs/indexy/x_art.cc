#include "designs/indexy/x_art.h"

#include "art/subtree.h"

namespace dmindex::designs::indexy {
namespace {

using art::Leaf;
namespace lf = art::leaf_flags;

static_assert(xflags::kDirty == lf::kDirty && xflags::kInY == lf::kInY && xflags::kTombstone == lf::kTombstone,
              "IndeXY's entry flags are the ART leaf's");
static_assert(unit_bits::kDirty == art::node_bits::kDirtyBit && unit_bits::kCandidate == art::node_bits::kCandidateBit &&
                  unit_bits::kAccessed == art::node_bits::kAccessedBit,
              "IndeXY's unit bits are the ART node's");
constexpr uint8_t kUnitBits = unit_bits::kDirty | unit_bits::kCandidate | unit_bits::kAccessed;

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void AddToBatch(const Leaf* l, uint32_t flags, tiering::ColdBatch* batch) {
  if (flags & lf::kTombstone) batch->Delete(l->key());
  else batch->Put(l->key(), l->value());
}

class ArtWorker final : public XWorker {
 public:
  ArtWorker(art::Tree& tree, uint32_t unit_depth) : tree_(tree), unit_depth_(unit_depth), w_(tree) {}

  void Enter() override { w_.epoch().Enter(); }
  void Exit() override { w_.epoch().Exit(); }

  Status Read(Slice key, XRead* out) override {
    EpochGuard g(w_.epoch());
    auto p = tree_.Lookup(key, w_);
    if (!p.ok()) return p.status();
    out->mounted = p->mounted;
    out->found = p->leaf != nullptr;
    if (!out->found) return Status::Ok();
    out->flags = p->leaf->flags() & xflags::kState;
    out->value.assign(p->leaf->value());
    return Status::Ok();
  }

  Status Modify(Slice key, XDecideFn decide) override {
    EpochGuard g(w_.epoch());
    return tree_.Modify(key, w_, [&](const Leaf* l, uint32_t f, bool mounted) {
      XCurrent cur;
      cur.present = l != nullptr;
      cur.flags = f & xflags::kState;
      if (l != nullptr) cur.value = l->value();
      cur.mounted = mounted;
      const XDecision d = decide(cur);
      switch (d.kind) {
        case XDecision::Kind::kPut: return art::Decision::Put(d.value, d.flags & xflags::kState);
        case XDecision::Kind::kRemove: return art::Decision::Remove();
        case XDecision::Kind::kKeep: break;
      }
      return art::Decision::Keep();
    });
  }

  Status Scan(Slice from, bool inclusive, FunctionRef<bool(const XEntryView&)> visit) override {
    EpochGuard g(w_.epoch());
    return tree_.Scan(from, inclusive, w_, [&](const Leaf* l) {
      // Key, value and the tombstone bit never change in a published leaf.
      return visit(XEntryView{l->key(), l->value(), l->flags() & xflags::kState});
    });
  }

  Status ForEachUnit(std::string_view after, FunctionRef<bool(XUnit&)> visit) override {
    EpochGuard g(w_.epoch());
    return art::ForEachUnit(tree_, unit_depth_, after, w_, [&](const art::UnitInfo& u) {
      XUnit x = ToUnit(u);
      return visit(x);
    });
  }

  void ChangeBits(XUnit& unit, uint8_t set, uint8_t clear) override {
    auto* n = static_cast<art::Node*>(unit.handle);
    if (n == nullptr) return;
    if (set & kUnitBits) n->SetBits(set & kUnitBits);
    if (clear & kUnitBits) n->ClearBits(clear & kUnitBits);
  }

  Status Children(const XUnit& unit, std::vector<XUnit>* out) override {
    out->clear();
    if (unit.single) return Status::Ok();
    EpochGuard g(w_.epoch());
    std::vector<art::UnitInfo> list;
    DMX_RETURN_IF_ERROR(art::ChildUnits(tree_, unit.id, w_, &list));
    for (const art::UnitInfo& u : list) {
      XUnit x = ToUnit(u);
      x.handle = nullptr;  // only valid inside this call
      out->push_back(std::move(x));
    }
    return Status::Ok();
  }

  Result<uint64_t> Clean(std::span<const XUnit> units, YSink& y) override {
    EpochGuard g(w_.epoch());  // the collected leaves stay allocated until the end
    std::vector<Leaf*> taken;
    tiering::ColdBatch batch;
    for (const XUnit& unit : units) DMX_RETURN_IF_ERROR(tree_.Scan(unit.id, true, w_, [&](const Leaf* cl) {
      if (unit.single ? cl->key() != unit.id : !StartsWith(cl->key(), unit.id)) return false;
      Leaf* l = const_cast<Leaf*>(cl);
      uint32_t f = l->flags();
      // Mark it in Y before the write: a writer replacing it from now on keeps in-Y (so a
      // delete leaves a tombstone); one that replaced it first made it obsolete, and it is
      // not written at all.
      while ((f & lf::kDirty) && !(f & lf::kObsolete)) {
        if (l->CasFlags(f, f | lf::kInY | lf::kCleaning)) {
          taken.push_back(l);
          AddToBatch(l, f, &batch);
          break;
        }
      }
      return true;
    }));
    if (taken.empty()) return uint64_t{0};
    const Status written = y.Write(batch);
    for (Leaf* l : taken) {
      // Y holds the value now (or the write failed: still dirty). A leaf replaced meanwhile
      // is obsolete and its successor dirty: nothing to do.
      uint32_t f = l->flags();
      const uint32_t drop = written.ok() ? lf::kDirty | lf::kCleaning : lf::kCleaning;
      while (!(f & lf::kObsolete) && !l->CasFlags(f, f & ~drop)) {
      }
    }
    if (!written.ok()) return written;
    // Tombstones Y took leave X (the key is absent in both).
    for (Leaf* l : taken) {
      if (!(l->flags() & lf::kTombstone)) continue;
      DMX_RETURN_IF_ERROR(tree_.Modify(l->key(), w_, [&](const Leaf* cur, uint32_t f, bool) {
        if (cur != l || (f & lf::kDirty)) return art::Decision::Keep();
        y.BeforeUnlink();
        return art::Decision::Remove();
      }));
    }
    return static_cast<uint64_t>(taken.size());
  }

  Result<XReleased> Release(const XUnit& unit, YSink& y) override {
    EpochGuard g(w_.epoch());
    XReleased r;
    if (unit.single) return ReleaseLeaf(unit.id, y);
    auto d = art::Detach(tree_, unit.id, w_, [&](const std::vector<Leaf*>& leaves) -> Status {
      // Every node of the unit is locked: the flags cannot change under us.
      tiering::ColdBatch batch;
      for (const Leaf* l : leaves)
        if (l->flags() & lf::kDirty) AddToBatch(l, l->flags(), &batch);
      if (!batch.empty()) DMX_RETURN_IF_ERROR(y.Write(batch));
      r.written = batch.size();
      y.BeforeUnlink();
      return Status::Ok();
    });
    if (!d.ok()) return d.status();
    r.entries = d->leaves;
    r.bytes = d->bytes;
    return r;
  }

  void DecayAccesses() override {
    EpochGuard g(w_.epoch());
    Status ignored = art::DecayAccesses(tree_, unit_depth_, w_);
    (void)ignored;
  }

  size_t Reclaim() override { return w_.epoch().Reclaim(); }

 private:
  XUnit ToUnit(const art::UnitInfo& u) const {
    XUnit x;
    x.id = u.path;
    x.single = u.leaf != nullptr;
    x.bottom = x.single || u.hop >= unit_depth_;
    x.depth = u.hop;
    x.bits = u.bits & kUnitBits;
    x.accesses = u.accesses;
    x.entries = x.single ? 1 : static_cast<uint64_t>(std::max<int64_t>(u.inserts, 0));
    x.handle = u.node;
    return x;
  }

  // One leaf: written to Y (if dirty) and unlinked under its node's lock, which becomes a
  // mount point.
  Result<XReleased> ReleaseLeaf(std::string_view key, YSink& y) {
    XReleased r;
    Status wrote;
    bool found = false;
    DMX_RETURN_IF_ERROR(tree_.Modify(key, w_, [&](const Leaf* l, uint32_t f, bool) {
      found = l != nullptr;
      if (l == nullptr) return art::Decision::Keep();
      r.written = 0;
      if (f & lf::kDirty) {
        tiering::ColdBatch batch;
        AddToBatch(l, f, &batch);
        wrote = y.Write(batch);
        if (!wrote.ok()) return art::Decision::Keep();
        r.written = 1;
      }
      r.entries = 1;
      r.bytes = l->bytes();
      y.BeforeUnlink();
      return art::Decision::RemoveToColdStore();
    }));
    if (!wrote.ok()) return wrote;
    if (!found) return Status::NotFound();
    return r;
  }

  art::Tree& tree_;
  const uint32_t unit_depth_;
  art::Worker w_;
};

art::TreeOptions TreeOptionsFor(uint32_t unit_depth, uint32_t sample_shift) {
  art::TreeOptions o;
  o.track_depth = unit_depth;
  o.sample_shift = sample_shift;
  return o;
}

}  // namespace

ArtX::ArtX(uint32_t unit_depth, uint32_t sample_shift, uint64_t reclaim_bytes)
    : unit_depth_(unit_depth), tree_(TreeOptionsFor(unit_depth, sample_shift)) {
  tree_.epochs().set_reclaim_bytes(reclaim_bytes);
}

std::unique_ptr<XWorker> ArtX::NewWorker() { return std::make_unique<ArtWorker>(tree_, unit_depth_); }

}  // namespace dmindex::designs::indexy
