#include "learned/top_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dmindex::learned {

TopModel TopModel::Train(std::span<const ModelKey> sorted, uint32_t models) {
  models = std::max<uint32_t>(models, 1);
  if (sorted.empty()) return TopModel(LinearModel{}, models);
  // The CDF at each key: its rank over the sample size, in [0, 1).
  std::vector<Point> cdf;
  cdf.reserve(sorted.size());
  const double n = static_cast<double>(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) cdf.push_back({sorted[i], static_cast<double>(i) / n});
  return TopModel(LinearModel::Fit(cdf), models);
}

uint32_t TopModel::Route(ModelKey x) const {
  const double at = std::floor(line_.Predict(x) * models_);
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
