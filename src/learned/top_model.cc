#include "learned/top_model.h"

#include <algorithm>
#include <cmath>

namespace dmindex::learned {

TopModel TopModel::Train(std::span<const ModelKey> sorted, uint32_t models, uint32_t segments) {
  models = std::max<uint32_t>(models, 1);
  segments = std::max<uint32_t>(segments, 1);
  std::vector<Point> knots;
  const size_t n = sorted.size();
  if (n == 0) return TopModel(std::move(knots), models);
  // Knot i at the key of rank i * n / segments, the last at the largest key; each at the CDF
  // of its key (the keys below it over all), so duplicates make one knot.
  for (uint64_t i = 0; i <= segments; ++i) {
    const size_t rank = i == segments ? n - 1 : static_cast<size_t>(i * n / segments);
    const ModelKey x = sorted[rank];
    if (!knots.empty() && knots.back().x == x) continue;
    const size_t below = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
    knots.push_back({x, static_cast<double>(below) / static_cast<double>(n)});
  }
  return TopModel(std::move(knots), models);
}

double TopModel::Cdf(ModelKey x) const {
  if (knots_.empty()) return 0;
  // The last knot at or below x (the first if none is).
  const auto next = std::upper_bound(knots_.begin(), knots_.end(), x,
                                     [](ModelKey v, const Point& k) { return v < k.x; });
  if (next == knots_.begin()) return knots_.front().y;
  if (next == knots_.end()) return knots_.back().y;
  const Point& a = *(next - 1);
  const Point& b = *next;
  const double slope = (b.y - a.y) / static_cast<double>(b.x - a.x);
  return std::min(b.y, a.y + slope * static_cast<double>(x - a.x));
}

uint32_t TopModel::Route(ModelKey x) const {
  const double at = std::floor(Cdf(x) * models_);
  if (!(at > 0)) return 0;  // also NaN-proof
  if (at >= static_cast<double>(models_ - 1)) return models_ - 1;
  return static_cast<uint32_t>(at);
}

std::optional<ModelKey> TopModel::RouteStart(uint32_t i) const {
  if (i == 0) return ModelKey{0};
  if (i >= models_ || Route(kMaxModelKey) < i) return std::nullopt;
  if (Route(0) >= i) return ModelKey{0};
  ModelKey lo = 0, hi = kMaxModelKey;  // Route(lo) < i <= Route(hi)
  while (hi - lo > 1) {
    const ModelKey mid = lo + (hi - lo) / 2;
    if (Route(mid) >= i) hi = mid; else lo = mid;
  }
  return hi;
}

TopModel::Interval TopModel::Serves(uint32_t i) const {
  Interval r;
  const auto first = RouteStart(i);
  if (!first) return r;
  const auto next = i + 1 < models_ ? RouteStart(i + 1) : std::nullopt;
  if (next && *next == *first) return r;  // the next model starts where this one would
  r.first = *first;
  r.last = next ? *next - 1 : kMaxModelKey;
  r.empty = false;
  return r;
}

}  // namespace dmindex::learned
