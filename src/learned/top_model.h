// The first level of a two-level recursive model index (Kraska et al., SIGMOD'18; XStore
// OSDI'20 §5.1): a monotone model of the keys' CDF that routes a model key to one of
// `models` second-level models. Routing is monotone, so each second-level model i serves one
// contiguous interval of model keys, [RouteStart(i), RouteStart(i + 1)), computed here from
// the very function that routes (no inverse in floating point that could disagree with it).
//
// The CDF is piecewise linear through `segments` + 1 knots at equal quantiles of the keys
// (the paper's top model is one least-squares line). One line routes evenly only keys spread
// evenly over their range; keys whose density changes - lognormal keys, YCSB's user<n> keys
// (numbers of 19 and 20 digits: half of them start with '1') - would crowd a few sub-models
// with many times their share, whose error bounds then span more leaves (more bytes per
// lookup, and past XStore's max_read_leaves a fallback to the server: 37% of the lookups on
// lognormal keys with one line, 2.6% with 16 segments; docs/results/xstore.md "Key sets"). A few
// segments follow such a CDF; on uniform keys they route as one line does.
// Monotone: each segment's interpolation is monotone (as LinearModel::Predict is) and is
// capped at the next knot's value, where the next segment starts.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "learned/linear_model.h"

namespace dmindex::learned {

class TopModel {
 public:
  TopModel() = default;
  // `knots`: x strictly ascending, y non-decreasing in [0, 1) (the CDF at x).
  TopModel(std::vector<Point> knots, uint32_t models) : knots_(std::move(knots)), models_(models) {}

  // Fits the CDF of `sorted` (ascending model keys, duplicates allowed, any non-empty sample
  // of the keys) with `segments` (>= 1) pieces and routes to `models` (>= 1) second-level
  // models.
  static TopModel Train(std::span<const ModelKey> sorted, uint32_t models, uint32_t segments);

  uint32_t models() const { return models_; }
  const std::vector<Point>& knots() const { return knots_; }

  // The modelled CDF at x, in [0, 1): monotone in x.
  double Cdf(ModelKey x) const;
  // clamp(floor(Cdf(x) * models), 0, models - 1): monotone in x.
  uint32_t Route(ModelKey x) const;
  // The smallest model key routed to model i or above; nullopt if none is (then models i and
  // above serve nothing). RouteStart(0) is 0.
  std::optional<ModelKey> RouteStart(uint32_t i) const;

  // One model's interval of model keys, inclusive; empty if nothing routes to it.
  struct Interval {
    ModelKey first = 0;
    ModelKey last = 0;
    bool empty = true;
  };
  Interval Serves(uint32_t i) const;

 private:
  std::vector<Point> knots_;
  uint32_t models_ = 1;
};

}  // namespace dmindex::learned
