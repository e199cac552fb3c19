// A monotone linear model over model keys (key_projection.h): y = slope * (x - x0) + intercept
// with slope >= 0, fitted by least squares or to the narrowest band, and the error bounds of a
// fit over its points.
//
// Keys are centred on x0 (the smallest x fitted) before they become doubles, so a model over a
// narrow range of 64-bit keys keeps the precision of its differences (a double has 53 bits;
// hashed keys span 2^64). Sums are long double, mean first, then the centred cross products
// (two passes), so a fit over many points close together does not cancel.
// Predict is monotone in x: the conversion of x - x0 to double rounds monotonically, and a
// multiplication by a non-negative slope and an addition preserve order. That is what makes
// error bounds sound for keys between the fitted ones (rmi.h).
#pragma once

#include <cstdint>
#include <span>

#include "learned/key_projection.h"

namespace dmindex::learned {

struct Point {
  ModelKey x = 0;
  double y = 0;
};

struct LinearModel {
  double slope = 0;
  double intercept = 0;
  ModelKey x0 = 0;

  double Predict(ModelKey x) const {
    const double dx = x >= x0 ? static_cast<double>(x - x0) : -static_cast<double>(x0 - x);
    return slope * dx + intercept;
  }
  // Least squares over `points` (any order, at least one), slope clamped at 0 (a monotone
  // model: a decreasing fit becomes the horizontal line through the mean).
  static LinearModel Fit(std::span<const Point> points);
  // The line whose band [Predict - below, Predict + above] holding every point is narrowest
  // (the minimax line, slope >= 0), centred in that band. A learned index reads every page
  // the band of a prediction touches, so the band's width, not the squared error, is what a
  // lookup pays: least squares lets a few far points widen the band of every prediction.
  static LinearModel FitNarrowest(std::span<const Point> points);
};

// How far the points lie from a model's predictions: every point has
// Predict(x) - below <= y <= Predict(x) + above (both >= 0), also as computed in doubles (a
// margin of 1e-9 covers the rounding of those two operations).
struct ErrorBounds {
  double below = 0;
  double above = 0;
  static ErrorBounds Of(const LinearModel& m, std::span<const Point> points);
};

}  // namespace dmindex::learned
