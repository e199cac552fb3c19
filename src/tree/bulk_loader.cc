#include "tree/bulk_loader.h"

#include <algorithm>
#include <vector>

namespace dmindex::tree {
namespace {

constexpr size_t kWriteBatch = 32;  // node WRITEs per round trip

// Splits n items into `parts` runs whose sizes differ by at most one; start of run j.
size_t RunStart(size_t n, size_t parts, size_t j) { return n / parts * j + std::min(j, n % parts); }
// The run (of RunStart's `parts`) that item i falls in.
size_t RunOf(size_t n, size_t parts, size_t i) {
  const size_t q = n / parts, r = n % parts;
  return i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q;
}

}  // namespace

template <KeyValueTraits KV>
Status BulkLoader<KV>::Load(Ctx& c, std::span<const LeafEntry<KV>> sorted) const {
  using Key = typename KV::Key;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (!(KV::kNegInf < sorted[i].key && sorted[i].key < KV::kPosInf))
      return Status::InvalidArgument("bulk load: reserved key at position " + std::to_string(i));
    if (i > 0 && !(sorted[i - 1].key < sorted[i].key))
      return Status::InvalidArgument("bulk load: keys not strictly ascending at position " +
                                     std::to_string(i));
  }
  auto root = reader_.RefreshRoot(c);
  if (!root.ok()) return root.status();
  if (!root->is_null()) return Status::InvalidArgument("bulk load needs an empty index");
  if (sorted.empty()) return Status::Ok();

  const uint32_t nb = t_.layout.node_bytes;
  const double fill = t_.options.bulk_fill;
  const auto& leaf = t_.validator.leaf();
  const auto& internal = t_.validator.internal();
  std::vector<GlobalAddress> all;  // every node written, to free them if publishing fails
  std::vector<std::byte> batch(kWriteBatch * nb);
  std::vector<fabric::Verb> verbs;
  auto flush = [&]() -> Status {
    Status s = c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kUnordered);
    verbs.clear();
    return s;
  };
  auto fail = [&](Status s) {
    for (GlobalAddress a : all) c.cn.allocator.Free(a, nb);
    return s;
  };

  struct Child {
    Key low;
    GlobalAddress addr;
  };
  const size_t per_leaf = std::max<size_t>(1, static_cast<size_t>(leaf.capacity() * fill));
  const size_t leaves = (sorted.size() + per_leaf - 1) / per_leaf;
  const size_t per_node = std::max<size_t>(2, static_cast<size_t>((internal.capacity() + 1) * fill));
  // Nodes per level, leaves first, as the loops below build them.
  std::vector<size_t> widths = {leaves};
  while (widths.back() > 1) widths.push_back((widths.back() + per_node - 1) / per_node);
  // Co-location: node j of `height` goes to the memory node of its ancestor at colocate_level.
  const int colocate = std::min<int>(t_.options.colocate_level, static_cast<int>(widths.size()) - 1);
  auto place = [&](size_t height, size_t j) -> int {
    if (colocate < 0 || static_cast<int>(height) > colocate) return -1;
    for (size_t h = height; static_cast<int>(h) < colocate; ++h) j = RunOf(widths[h], widths[h + 1], j);
    return static_cast<int>(j % t_.fabric.memory_nodes());
  };
  // Writes one level of `nodes` nodes; `build(j, h, image)` fills node j given its header.
  auto write_level = [&](size_t height, size_t nodes, auto&& build) -> Result<std::vector<Child>> {
    std::vector<Child> level(nodes);
    for (size_t j = 0; j < nodes; ++j) {
      const int on = place(height, j);
      auto a = on < 0 ? c.cn.allocator.Allocate(c.ep, nb)
                      : c.cn.allocator.AllocateOn(c.ep, static_cast<uint16_t>(on), nb);
      if (!a.ok()) return a.status();
      level[j].addr = *a;
      all.push_back(*a);
    }
    for (size_t j = 0; j < nodes; ++j) {
      NodeHeader<KV> h;
      h.version = c.NewVersion();
      h.sibling = j + 1 < nodes ? level[j + 1].addr : GlobalAddress::Null();
      std::byte* image = batch.data() + verbs.size() * nb;
      level[j].low = build(j, h, image);
      verbs.push_back(fabric::Verb::Write(level[j].addr, image, nb));
      if (verbs.size() == kWriteBatch) DMX_RETURN_IF_ERROR(flush());
    }
    DMX_RETURN_IF_ERROR(flush());
    return level;
  };

  // Leaves. Fences: each node's low fence is its first key (-inf for the first), its high
  // fence the next node's first key (+inf for the last).
  auto level = write_level(0, leaves, [&](size_t j, NodeHeader<KV>& h, std::byte* image) {
    auto run = sorted.subspan(RunStart(sorted.size(), leaves, j),
                              RunStart(sorted.size(), leaves, j + 1) - RunStart(sorted.size(), leaves, j));
    size_t next = RunStart(sorted.size(), leaves, j + 1);
    h.low = j == 0 ? KV::kNegInf : run.front().key;
    h.high = next < sorted.size() ? sorted[next].key : KV::kPosInf;
    leaf.Build(image, h, run, t_.options.two_level);
    return h.low;
  });
  if (!level.ok()) return fail(level.status());

  // Internal levels: each node takes a run of children; the first is its leftmost child,
  // the others' low fences are its separators.
  std::vector<InternalEntry<KV>> entries;
  for (uint8_t height = 1; level->size() > 1; ++height) {
    std::vector<Child> children = std::move(*level);
    const size_t nodes = (children.size() + per_node - 1) / per_node;
    level = write_level(height, nodes, [&](size_t j, NodeHeader<KV>& h, std::byte* image) {
      size_t begin = RunStart(children.size(), nodes, j), end = RunStart(children.size(), nodes, j + 1);
      h.level = height;
      h.low = j == 0 ? KV::kNegInf : children[begin].low;
      h.high = end < children.size() ? children[end].low : KV::kPosInf;
      h.leftmost = children[begin].addr;
      entries.clear();
      for (size_t i = begin + 1; i < end; ++i) entries.push_back({children[i].low, children[i].addr});
      internal.Build(image, h, entries);
      return h.low;
    });
    if (!level.ok()) return fail(level.status());
  }

  uint64_t old = 0;
  DMX_RETURN_IF_ERROR(c.ep.Cas(t_.root_word, 0, level->front().addr.raw(), &old));
  if (old != 0) return fail(Status::InvalidArgument("bulk load: the index became non-empty"));
  return reader_.RefreshRoot(c).status();
}

template class BulkLoader<U64KV>;

}  // namespace dmindex::tree
