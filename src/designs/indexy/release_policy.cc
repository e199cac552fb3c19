#include "designs/indexy/release_policy.h"

#include <algorithm>

namespace dmindex::designs::indexy {
namespace {

struct Candidate {
  XUnit unit;
  double density = 0;
  double bytes = 0;
  bool splittable = false;
};

Candidate MakeCandidate(XUnit u, double parent_density, double bytes_per_entry) {
  Candidate c;
  // A unit estimated empty counts for nothing towards the target (a B+-tree unit released
  // before keeps its emptied leftmost leaf: counted as one entry, a ranking of such units
  // reached the target, and rounds released them again and again, freeing nothing).
  c.bytes = static_cast<double>(u.entries) * bytes_per_entry;
  // A leaf has no counters: it is as dense as the node it hangs from.
  c.density =
      u.single ? parent_density : static_cast<double>(u.accesses) / static_cast<double>(std::max<uint64_t>(u.entries, 1));
  c.splittable = !u.single && !u.bottom && u.entries > 1;
  u.handle = nullptr;
  c.unit = std::move(u);
  return c;
}

// Keeps `list` ordered by increasing density (stable: equal densities stay in key order).
void InsertByDensity(std::vector<Candidate>* list, Candidate c) {
  auto at = std::upper_bound(list->begin(), list->end(), c.density,
                             [](double d, const Candidate& x) { return d < x.density; });
  list->insert(at, std::move(c));
}

std::vector<XUnit> Units(std::vector<Candidate>& list, size_t through) {
  std::vector<XUnit> out;
  for (size_t i = 0; i <= through && i < list.size(); ++i) out.push_back(std::move(list[i].unit));
  return out;
}

}  // namespace

Result<std::vector<XUnit>> ReleasePolicyRunner::Select(XWorker& w, uint64_t target_bytes, double bytes_per_entry) {
  if (target_bytes == 0) return std::vector<XUnit>{};
  const double target = static_cast<double>(target_bytes);
  const double bpe = std::max(bytes_per_entry, 1.0);
  return options_.release == ReleasePolicy::kDensity ? SelectByDensity(w, target, bpe) : SelectByClock(w, target, bpe);
}

Result<std::vector<XUnit>> ReleasePolicyRunner::SelectByDensity(XWorker& w, double target, double bpe) {
  std::vector<XUnit> children;
  XUnit root;  // empty id, depth 0: X's root, which is never released itself
  DMX_RETURN_IF_ERROR(w.Children(root, &children));
  std::vector<Candidate> list;
  for (XUnit& u : children) InsertByDensity(&list, MakeCandidate(std::move(u), 0, bpe));
  // Each round either returns or splits one node into its children; a node splits once.
  for (;;) {
    last_candidates_ = list.size();
    last_single_candidates_ = static_cast<uint64_t>(
        std::count_if(list.begin(), list.end(), [](const Candidate& c) { return c.unit.single; }));
    double total = 0;
    size_t pos = 0;
    for (; pos < list.size(); ++pos) {
      const double cur = total + list[pos].bytes;
      if (cur < target) {
        total = cur;
        continue;
      }
      break;
    }
    if (pos == list.size()) return Units(list, pos);  // all of X is below the target
    const double cur = total + list[pos].bytes;
    if (cur <= target * (1 + options_.margin)) return Units(list, pos);
    // Split and replace: the largest splittable node whose children's densities vary by
    // more than `gap` of its own, else the largest splittable one.
    std::vector<size_t> by_size;
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i].splittable) by_size.push_back(i);
    if (by_size.empty()) return Units(list, pos);
    std::stable_sort(by_size.begin(), by_size.end(),
                     [&](size_t a, size_t b) { return list[a].bytes > list[b].bytes; });
    size_t split = by_size.front();
    std::vector<Candidate> split_children;
    // Looking at the largest few is enough: the paper's scan down the whole size order would
    // list the children of every node for one split.
    constexpr size_t kExamined = 8;
    if (by_size.size() > kExamined) by_size.resize(kExamined);
    for (size_t i : by_size) {
      std::vector<Candidate> kids;
      Status s = w.Children(list[i].unit, &children);
      if (!s.ok() && !s.IsNotFound()) return s;
      if (!s.ok() || children.empty()) {
        list[i].splittable = false;  // it left X meanwhile, or has nothing below
        continue;
      }
      double lo = 0, hi = 0;
      for (XUnit& u : children) {
        kids.push_back(MakeCandidate(std::move(u), list[i].density, bpe));
        lo = kids.size() == 1 ? kids.back().density : std::min(lo, kids.back().density);
        hi = std::max(hi, kids.back().density);
      }
      const bool varied = hi - lo > options_.gap * list[i].density;
      if (varied || split_children.empty()) {
        split = i;
        split_children = std::move(kids);
      }
      if (varied) break;
    }
    if (split_children.empty()) continue;  // every candidate became unsplittable: recount
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(split));
    for (Candidate& c : split_children) InsertByDensity(&list, std::move(c));
  }
}

Result<std::vector<XUnit>> ReleasePolicyRunner::SelectByClock(XWorker& w, double target, double bpe) {
  std::vector<XUnit> out;
  double estimated = 0;
  for (int lap = 0; lap < 2 && estimated < target; ++lap) {
    bool wrapped = true;
    DMX_RETURN_IF_ERROR(w.ForEachUnit(clock_cursor_, [&](XUnit& u) {
      clock_cursor_ = u.id;
      if (!u.single && (u.bits & unit_bits::kAccessed)) {
        w.ChangeBits(u, 0, unit_bits::kAccessed);  // second chance
        return true;
      }
      estimated += static_cast<double>(u.entries) * bpe;  // empty: nothing (MakeCandidate)
      u.handle = nullptr;
      out.push_back(std::move(u));
      if (estimated < target) return true;
      wrapped = false;
      return false;
    }));
    if (wrapped) clock_cursor_.clear();
  }
  return out;
}

}  // namespace dmindex::designs::indexy
