// A second-level model of a two-level index whose data lie in pages (tree leaves, blocks):
// it maps a model key to the run of pages that may hold it, for one interval of model keys
// (the keys a TopModel routes to it). XStore's sub-model (OSDI'20 §5.1, Fig. 6), trained on
// leaf-granular positions, with the boundary augmentation of §5.2.3 made complete.
//
// Positions are in page units. The pages overlapping the interval, in key order, are numbered
// 0 .. pages-1 (the "logical leaf numbers"); the j-th of the c keys of page l sits at
// l + (j + 0.5) / c, strictly inside [l, l + 1). Every page also contributes its bounds,
// clamped to the interval: the smallest model key of the interval it can hold, at the
// position of its first key inside the interval, and the largest, at the position of its
// last key inside the interval (an empty page both at l + 0.5; a page with no key inside,
// at its key nearest to the interval). Where the bounds are keys (a bulk-loaded page starts
// at its first key), they add nothing. Any position in [l, l + 1) would be sound (below);
// the nearest key's keeps the bound in line with the keys: a page straddling the interval's
// start whose bound sat at its own first key's position, half a page below the interval's
// first key right next to it, made the error bounds of near-linear keys 0.7 pages wide.
//
// Why the bounds (§5.2.3 adds only a point in the gap between two sub-models): for any model
// key x of the interval lying in page l at training time, the page's lower bound point
// (x_lo <= x, y >= l) gives Predict(x) + above >= l, and its upper bound point (x_hi >= x,
// y < l + 1) gives Predict(x) - below < l + 1, because Predict is monotone. So
// Pages(x) = [floor(Predict(x) - below), floor(Predict(x) + above)] contains l: for keys
// present at training and for absent ones, in the interior gaps and at the interval's ends.
// Keys strictly inside a page never sit on a page boundary, so an exact fit (sequential keys)
// predicts exactly one page.
// The line is fitted and asked only within [x_min, x_max], the model keys of the keys fitted:
// a model key outside is clamped to it first (a monotone step, so the argument holds). The
// bounds of the outer pages reach to the ends of the key space (the first leaf's low fence is
// -inf); unclamped, those two points would tilt the line and widen every range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "learned/linear_model.h"

namespace dmindex::learned {

// One page as training sees it: the model keys it can hold ([lo, hi], from its fences) and
// its keys' model keys, ascending (duplicates allowed: keys may share a projection).
struct PageSample {
  ModelKey lo = 0;
  ModelKey hi = kMaxModelKey;
  std::span<const ModelKey> keys;
};

struct PageRange {
  uint32_t first = 0;
  uint32_t last = 0;
  uint32_t size() const { return last - first + 1; }
};

struct PageModel {
  LinearModel line;
  ErrorBounds error;
  ModelKey x_min = 0;
  ModelKey x_max = kMaxModelKey;
  uint32_t pages = 0;  // 0: serves nothing

  // The pages that may hold x (a model key of the interval trained on), clamped to
  // [0, pages - 1]; pages must be > 0.
  PageRange Pages(ModelKey x) const;
  // The position of x, for measuring prediction errors.
  double Position(ModelKey x) const { return line.Predict(std::clamp(x, x_min, x_max)); }

  // Trains on `pages` (those overlapping the interval [first, last], in key order). Keys of
  // the pages outside the interval count for positions but are not fitted (nobody asks this
  // model for them). `points` is scratch space. Returns the number of keys fitted in *fitted.
  static PageModel Train(ModelKey first, ModelKey last, std::span<const PageSample> pages,
                         std::vector<Point>* points, uint64_t* fitted = nullptr);
};

}  // namespace dmindex::learned
