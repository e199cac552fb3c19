#include "learned/linear_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dmindex::learned {
namespace {

struct Centred {
  long double dx;
  long double y;
};

// The residuals' extremes for a slope: every point has lo <= y - slope * dx <= hi.
struct Band {
  long double lo;
  long double hi;
  long double width() const { return hi - lo; }
};

Band BandOf(const std::vector<Centred>& pts, long double slope) {
  Band b{INFINITY, -INFINITY};
  for (const Centred& p : pts) {
    const long double r = p.y - slope * p.dx;
    b.lo = std::min(b.lo, r);
    b.hi = std::max(b.hi, r);
  }
  return b;
}

// The steepest slope between two points of distinct x: the narrowest band's slope lies in
// [0, this] (above it every residual falls as x grows: a steeper slope only widens the band).
// The steepest pair of points is a pair of neighbours in x order.
long double SteepestSlope(std::vector<Centred> pts) {
  std::sort(pts.begin(), pts.end(), [](const Centred& a, const Centred& b) { return a.dx < b.dx; });
  long double steepest = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    if (pts[i].dx > pts[i - 1].dx) steepest = std::max(steepest, (pts[i].y - pts[i - 1].y) / (pts[i].dx - pts[i - 1].dx));
  }
  return steepest;
}

}  // namespace

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

LinearModel LinearModel::FitNarrowest(std::span<const Point> points) {
  LinearModel m = Fit(points);  // x0; and the fallback if the search finds nothing narrower
  if (points.size() < 3) return m;
  std::vector<Centred> pts;
  pts.reserve(points.size());
  for (const Point& p : points) pts.push_back({static_cast<long double>(p.x - m.x0), p.y});
  // The band's width is a convex function of the slope (a maximum of linear functions minus
  // a minimum of them), so a golden-section search over [0, steepest] converges on its
  // minimum; 80 steps shrink the bracket by 0.618^80 (~1e-17 of its length).
  long double a = 0, b = SteepestSlope(pts);
  const long double phi = (std::sqrt(5.0L) - 1) / 2;
  long double c = b - phi * (b - a), d = a + phi * (b - a);
  long double wc = BandOf(pts, c).width(), wd = BandOf(pts, d).width();
  for (int step = 0; step < 80 && b > a; ++step) {
    if (wc <= wd) {
      b = d, d = c, wd = wc;
      c = b - phi * (b - a);
      wc = BandOf(pts, c).width();
    } else {
      a = c, c = d, wc = wd;
      d = a + phi * (b - a);
      wd = BandOf(pts, d).width();
    }
  }
  const long double slope = (a + b) / 2;
  const Band best = BandOf(pts, slope);
  const Band least_squares = BandOf(pts, m.slope);
  if (!(best.width() < least_squares.width())) return m;
  m.slope = static_cast<double>(slope);
  m.intercept = static_cast<double>((best.lo + best.hi) / 2);
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
