#include "tree/bulk_loader.h"

#include <algorithm>
#include <vector>

namespace dmindex::tree {
namespace {

constexpr size_t kWriteBatch = 32;  // node WRITEs per round trip

// The run (of `starts`, as PlanRuns returns them) that item i falls in.
size_t RunOf(const std::vector<size_t>& starts, size_t i) {
  return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), i) - starts.begin()) - 1;
}

// InvalidArgument naming the first entry that is reserved, out of order or does not fit.
template <KeyValueTraits KV>
Status CheckInput(const TreeShared<KV>& t, std::span<const LeafEntry<KV>> sorted) {
  const auto& leaf = t.validator.leaf();
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (!KV::IsUserKey(sorted[i].key))
      return Status::InvalidArgument("bulk load: reserved key at position " + std::to_string(i));
    if (i > 0 && !(sorted[i - 1].key < sorted[i].key))
      return Status::InvalidArgument("bulk load: keys not strictly ascending at position " +
                                     std::to_string(i));
    Status s = leaf.CheckEntry(sorted[i].key, sorted[i].value);
    if (s.ok()) s = CheckValue<KV>(t.options, sorted[i].value);
    if (!s.ok()) return Status::InvalidArgument("bulk load: at position " + std::to_string(i) + ": " + s.message());
  }
  return Status::Ok();
}

// The loaded tree's shape: per level from the leaves up, the runs that make its nodes (as
// PlanRuns returns them: of entries for the leaves, of the level below's nodes above) and
// each node's low fence. The top level has one node, the root.
template <KeyValueTraits KV>
struct Plan {
  std::vector<std::vector<size_t>> runs;
  std::vector<std::vector<typename KV::Key>> lows;
};

// Each level's runs and its nodes' low fences: the first leaf's and the first node's of a
// level -inf, the others the separator between the last key left of them and their first
// key (the shortest one in the slotted format, the first key in the fixed one). A node's
// high fence is its right neighbour's low fence (+inf for the last).
template <KeyValueTraits KV>
Plan<KV> PlanLevels(const TreeShared<KV>& t, std::span<const LeafEntry<KV>> sorted) {
  using Key = typename KV::Key;
  const auto& leaf = t.validator.leaf();
  const double fill = t.options.bulk_fill;
  Plan<KV> p;
  p.runs = {leaf.PlanRuns(sorted, fill)};
  p.lows.resize(1);
  for (size_t j = 0; j + 1 < p.runs[0].size(); ++j)
    p.lows[0].push_back(j == 0 ? Key(KV::kNegInf)
                               : leaf.Separator(sorted[p.runs[0][j] - 1].key, sorted[p.runs[0][j]].key));
  while (p.lows.back().size() > 1) {
    p.runs.push_back(t.validator.internal().PlanRuns(p.lows.back(), fill));
    std::vector<Key> up;
    for (size_t j = 0; j + 1 < p.runs.back().size(); ++j) up.push_back(p.lows.back()[p.runs.back()[j]]);
    p.lows.push_back(std::move(up));
  }
  return p;
}

}  // namespace

template <KeyValueTraits KV>
Status BulkLoader<KV>::Load(Ctx& c, std::span<const LeafEntry<KV>> sorted) const {
  using Key = typename KV::Key;
  const auto& leaf = t_.validator.leaf();
  const auto& internal = t_.validator.internal();
  DMX_RETURN_IF_ERROR(CheckInput(t_, sorted));
  auto root = reader_.RefreshRoot(c);
  if (!root.ok()) return root.status();
  if (!root->is_null()) return Status::InvalidArgument("bulk load needs an empty index");
  if (sorted.empty()) return Status::Ok();
  std::vector<LeafEntry<KV>> with_blocks;
  std::vector<ValueBlockRef> blocks;  // written, to free them if publishing fails
  if constexpr (KV::kValueBlocks) {
    // Values past the inline limit go to blocks first (spread over the memory nodes, or on
    // the tree's home node), all written before any leaf that points at them.
    Status s = WriteBlocks(c, sorted, &with_blocks, &blocks);
    if (!s.ok()) {
      for (const ValueBlockRef& b : blocks) values_.Free(c, b);
      return s;
    }
    if (!blocks.empty()) sorted = with_blocks;
  }

  const uint32_t nb = t_.layout.node_bytes;
  const Plan<KV> plan = PlanLevels(t_, sorted);
  const std::vector<std::vector<size_t>>& runs = plan.runs;
  const std::vector<std::vector<Key>>& lows = plan.lows;
  // Co-location: node j of `height` goes to the memory node of its ancestor at colocate_level.
  const int colocate = std::min<int>(t_.options.colocate_level, static_cast<int>(lows.size()) - 1);
  auto place = [&](size_t height, size_t j) -> int {
    if (colocate < 0 || static_cast<int>(height) > colocate) return -1;
    for (size_t h = height; static_cast<int>(h) < colocate; ++h) j = RunOf(runs[h + 1], j);
    return static_cast<int>(j % t_.fabric.memory_nodes());
  };

  std::vector<std::pair<GlobalAddress, uint8_t>> all;  // every node and its level, to give back on failure
  std::vector<std::byte> batch(kWriteBatch * nb);
  std::vector<fabric::Verb> verbs;
  auto flush = [&]() -> Status {
    Status s = c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kUnordered);
    verbs.clear();
    return s;
  };
  auto fail = [&](Status s) {
    for (const auto& [a, level] : all) t_.UnplaceNode(c.cn.allocator, a, level);
    if constexpr (KV::kValueBlocks)
      for (const ValueBlockRef& b : blocks) values_.Free(c, b);
    return s;
  };
  // Writes level `height`: allocates its nodes, then `build(j, h, image)` fills node j
  // given its header (fences, sibling and version set). Returns the nodes' addresses.
  auto write_level = [&](size_t height, auto&& build) -> Result<std::vector<GlobalAddress>> {
    const std::vector<Key>& level_lows = lows[height];
    const size_t nodes = level_lows.size();
    std::vector<GlobalAddress> addrs(nodes);
    for (size_t j = 0; j < nodes; ++j) {
      const int on = place(height, j);
      auto a = on < 0 ? t_.PlaceNode(c.ep, c.cn.allocator, static_cast<uint8_t>(height))
                      : c.cn.allocator.AllocateOn(c.ep, static_cast<uint16_t>(on), nb);
      if (!a.ok()) return a.status();
      addrs[j] = *a;
      all.emplace_back(*a, static_cast<uint8_t>(height));
    }
    for (size_t j = 0; j < nodes; ++j) {
      NodeHeader<KV> h;
      h.version = c.NewVersion();
      h.sibling = j + 1 < nodes ? addrs[j + 1] : GlobalAddress::Null();
      h.low = level_lows[j];
      h.high = j + 1 < nodes ? level_lows[j + 1] : Key(KV::kPosInf);
      std::byte* image = batch.data() + verbs.size() * nb;
      if (!build(j, h, image))
        return Status::Corruption("bulk load: node " + std::to_string(j) + " of level " +
                                  std::to_string(height) + " does not fit its entries");
      verbs.push_back(fabric::Verb::Write(addrs[j], image, nb));
      if (verbs.size() == kWriteBatch) DMX_RETURN_IF_ERROR(flush());
    }
    DMX_RETURN_IF_ERROR(flush());
    return addrs;
  };

  auto level = write_level(0, [&](size_t j, NodeHeader<KV>& h, std::byte* image) {
    return leaf.Build(image, h, sorted.subspan(runs[0][j], runs[0][j + 1] - runs[0][j]),
                      t_.options.two_level);
  });
  if (!level.ok()) return fail(level.status());

  // Internal levels: each node takes a run of children; the first is its leftmost child,
  // the others' low fences are its separators.
  std::vector<InternalEntry<KV>> entries;
  for (uint8_t height = 1; height < lows.size(); ++height) {
    const std::vector<GlobalAddress> children = std::move(*level);
    const std::vector<Key>& child_lows = lows[height - 1];
    const std::vector<size_t>& run = runs[height];
    level = write_level(height, [&](size_t j, NodeHeader<KV>& h, std::byte* image) {
      h.level = height;
      h.leftmost = children[run[j]];
      entries.clear();
      for (size_t i = run[j] + 1; i < run[j + 1]; ++i) entries.push_back({child_lows[i], children[i]});
      return internal.Build(image, h, entries);
    });
    if (!level.ok()) return fail(level.status());
  }

  uint64_t old = 0;
  // A CAS that failed in the fabric may still have taken effect: the nodes are then the tree,
  // so they are not given back (they leak if it did not).
  DMX_RETURN_IF_ERROR(c.ep.Cas(t_.root_word, 0, level->front().raw(), &old));
  if (old != 0) return fail(Status::InvalidArgument("bulk load: the index became non-empty"));
  return reader_.RefreshRoot(c).status();
}

template <KeyValueTraits KV>
Status BulkLoader<KV>::WriteBlocks(Ctx& c, std::span<const LeafEntry<KV>> sorted,
                                   std::vector<LeafEntry<KV>>* out,
                                   std::vector<ValueBlockRef>* blocks) const {
  if constexpr (!KV::kValueBlocks) {
    return Status::Ok();
  } else {
  const uint32_t inline_limit = t_.validator.leaf().InlineLimit();
  size_t large = 0;
  for (const auto& e : sorted) large += e.value.size() > inline_limit;
  if (large == 0) return Status::Ok();
  out->assign(sorted.begin(), sorted.end());
  std::vector<std::vector<std::byte>> bufs(kWriteBatch);
  std::vector<fabric::Verb> verbs;
  uint64_t n = 0;
  for (auto& e : *out) {
    if (e.value.size() <= inline_limit) continue;
    fabric::Verb w;
    const int home = t_.options.home_node;
    const auto node = static_cast<uint16_t>(home >= 0 ? home : n++ % t_.fabric.memory_nodes());
    auto ref = values_.PrepareInto(c, e.key, e.value, node, &bufs[verbs.size()], &w);
    if (!ref.ok()) return ref.status();
    blocks->push_back(*ref);
    e = {e.key, typename KV::Value(), *ref};
    verbs.push_back(w);
    if (verbs.size() == kWriteBatch) {
      DMX_RETURN_IF_ERROR(c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kUnordered));
      verbs.clear();
    }
  }
  if (!verbs.empty()) DMX_RETURN_IF_ERROR(c.ep.Post(std::span<fabric::Verb>(verbs), fabric::Ordering::kUnordered));
  return Status::Ok();
  }
}

template class BulkLoader<U64BytesKV>;
template class BulkLoader<U64KV>;
template class BulkLoader<BytesKV>;

}  // namespace dmindex::tree
