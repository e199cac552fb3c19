#include "learned/page_model.h"

#include <algorithm>
#include <cmath>

namespace dmindex::learned {

PageRange PageModel::Pages(ModelKey x) const {
  const double pred = Position(x);
  const double max_page = static_cast<double>(pages - 1);
  auto clamp = [max_page](double p) -> uint32_t {
    if (!(p > 0)) return 0;  // also NaN-proof
    return p >= max_page ? static_cast<uint32_t>(max_page) : static_cast<uint32_t>(p);
  };
  return {clamp(std::floor(pred - error.below)), clamp(std::floor(pred + error.above))};
}

PageModel PageModel::Train(ModelKey first, ModelKey last, std::span<const PageSample> pages,
                           std::vector<Point>* points, uint64_t* fitted) {
  PageModel m;
  m.pages = static_cast<uint32_t>(pages.size());
  points->clear();
  uint64_t keys = 0;
  ModelKey key_min = kMaxModelKey, key_max = 0;
  for (size_t l = 0; l < pages.size(); ++l) {
    const PageSample& p = pages[l];
    const double base = static_cast<double>(l);
    const double c = static_cast<double>(p.keys.size());
    const double first_pos = p.keys.empty() ? base + 0.5 : base + 0.5 / c;
    const double last_pos = p.keys.empty() ? base + 0.5 : base + (c - 0.5) / c;
    // The page's bounds, clamped to the interval: the points guarding its first and last
    // possible key. A bound that is the page's first (last) key is that key's point already.
    const ModelKey lo = std::max(p.lo, first), hi = std::min(p.hi, last);
    if (p.keys.empty() || p.keys.front() != lo) points->push_back({lo, first_pos});
    for (size_t j = 0; j < p.keys.size(); ++j) {
      const ModelKey x = p.keys[j];
      if (x < first || x > last) continue;
      points->push_back({x, base + (static_cast<double>(j) + 0.5) / c});
      key_min = std::min(key_min, x);
      key_max = std::max(key_max, x);
      ++keys;
    }
    if (p.keys.empty() || p.keys.back() != hi) points->push_back({hi, last_pos});
  }
  if (fitted != nullptr) *fitted = keys;
  if (points->empty()) return m;
  if (keys > 0) {  // clamp to the fitted keys (see the header)
    m.x_min = key_min;
    m.x_max = key_max;
    for (Point& p : *points) p.x = std::clamp(p.x, m.x_min, m.x_max);
  }
  m.line = LinearModel::Fit(*points);
  m.error = ErrorBounds::Of(m.line, *points);
  return m;
}

}  // namespace dmindex::learned
