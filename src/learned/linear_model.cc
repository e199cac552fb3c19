#include "learned/linear_model.h"

#include <algorithm>

namespace dmindex::learned {

LinearModel LinearModel::Fit(std::span<const Point> points) {
  LinearModel m;
  if (points.empty()) return m;
  m.x0 = points.front().x;
  for (const Point& p : points) m.x0 = std::min(m.x0, p.x);
  const long double n = static_cast<long double>(points.size());
  long double sum_x = 0, sum_y = 0;
  for (const Point& p : points) {
    sum_x += static_cast<long double>(p.x - m.x0);
    sum_y += p.y;
  }
  const long double mean_x = sum_x / n, mean_y = sum_y / n;
  long double sxx = 0, sxy = 0;
  for (const Point& p : points) {
    const long double dx = static_cast<long double>(p.x - m.x0) - mean_x;
    sxx += dx * dx;
    sxy += dx * (p.y - mean_y);
  }
  const long double slope = sxx > 0 && sxy > 0 ? sxy / sxx : 0;
  m.slope = static_cast<double>(slope);
  m.intercept = static_cast<double>(mean_y - slope * mean_x);
  return m;
}

ErrorBounds ErrorBounds::Of(const LinearModel& m, std::span<const Point> points) {
  ErrorBounds e;
  for (const Point& p : points) {
    const double pred = m.Predict(p.x);
    e.below = std::max(e.below, pred - p.y);
    e.above = std::max(e.above, p.y - pred);
  }
  // The bounds are used as Predict(x) - below and + above, each rounded once more: a margin
  // far above a rounding error (positions are well below 2^32) keeps every point inside.
  const double margin = 1e-9;
  e.below += margin;
  e.above += margin;
  return e;
}

}  // namespace dmindex::learned
