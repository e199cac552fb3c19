// The first level of a two-level recursive model index (Kraska et al., SIGMOD'18; XStore
// OSDI'20 §5.1): a monotone linear model of the keys' CDF that routes a model key to one of
// `models` second-level models. Routing is monotone, so each second-level model i serves one
// contiguous interval of model keys, [RouteStart(i), RouteStart(i + 1)), computed here from
// the very function that routes (no inverse in floating point that could disagree with it).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "learned/linear_model.h"

namespace dmindex::learned {

class TopModel {
 public:
  TopModel() = default;
  TopModel(LinearModel line, uint32_t models) : line_(line), models_(models) {}

  // Fits the CDF of `sorted` (ascending model keys, duplicates allowed, any non-empty sample
  // of the keys) and routes to `models` (>= 1) second-level models.
  static TopModel Train(std::span<const ModelKey> sorted, uint32_t models);

  uint32_t models() const { return models_; }
  const LinearModel& line() const { return line_; }

  // clamp(floor(CDF(x) * models), 0, models - 1): monotone in x.
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
  LinearModel line_;
  uint32_t models_ = 1;
};

}  // namespace dmindex::learned
