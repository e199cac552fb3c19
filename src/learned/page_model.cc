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
    auto position = [&](size_t j) { return base + (static_cast<double>(j) + 0.5) / c; };
    // The page's bounds, clamped to the interval: the points guarding the first and last
    // model key of the interval the page can hold. Any position in [l, l + 1) guards them
    // (header); each takes the position of the nearest key inside the interval, so a page
    // that straddles the interval's end does not pull the line with a point far from its
    // keys. A bound that is a key of the interval is that key's point already.
    const ModelKey lo = std::max(p.lo, first), hi = std::min(p.hi, last);
    const size_t ja = static_cast<size_t>(std::lower_bound(p.keys.begin(), p.keys.end(), lo) - p.keys.begin());
    const size_t jb = static_cast<size_t>(std::upper_bound(p.keys.begin(), p.keys.end(), hi) - p.keys.begin());
    if (p.keys.empty()) {
      points->push_back({lo, base + 0.5});
    } else if (ja == p.keys.size() || p.keys[ja] != lo) {
      points->push_back({lo, position(std::min(ja, p.keys.size() - 1))});
    }
    for (size_t j = ja; j < jb; ++j) {
      const ModelKey x = p.keys[j];
      points->push_back({x, position(j)});
      key_min = std::min(key_min, x);
      key_max = std::max(key_max, x);
      ++keys;
    }
    if (p.keys.empty()) {
      points->push_back({hi, base + 0.5});
    } else if (jb == 0 || p.keys[jb - 1] != hi) {
      points->push_back({hi, position(jb == 0 ? 0 : jb - 1)});
    }
  }
  if (fitted != nullptr) *fitted = keys;
  if (points->empty()) return m;
  if (keys > 0) {  // clamp to the fitted keys (see the header)
    m.x_min = key_min;
    m.x_max = key_max;
    for (Point& p : *points) p.x = std::clamp(p.x, m.x_min, m.x_max);
  }
  m.line = LinearModel::FitNarrowest(*points);
  m.error = ErrorBounds::Of(m.line, *points);
  return m;
}

}  // namespace dmindex::learned
