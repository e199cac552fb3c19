#include "bench/request_mass.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "bench/zipfian.h"

namespace dmindex::bench {
namespace {

// Head ranks of YCSB's scrambled zipfian added one by one, per item of its key range.
constexpr uint64_t kYcsbExactRanksPerItem = 16;
constexpr uint64_t kYcsbRankItems = 10'000'000'001;  // op_stream.cc's kYcsbZipfianItems + 1

double RankWeight(uint64_t rank, double theta) { return std::exp(-theta * std::log(static_cast<double>(rank + 1))); }

// Per-record request probabilities of the chosen record (before read units), over [0, n).
// Unnormalised where that is simpler: the caller normalises.
std::optional<std::vector<double>> RecordMass(const StreamPlan& plan) {
  const WorkloadSpec& spec = plan.spec();
  const uint64_t n = plan.loaded(), start = plan.request_start(), count = plan.request_count();
  std::vector<double> p(n, 0.0);
  switch (spec.request) {
    case Distribution::kUniform:
      if (spec.generators == Generators::kDex) std::fill(p.begin(), p.end(), 1.0);
      else std::fill(p.begin() + static_cast<std::ptrdiff_t>(start), p.begin() + static_cast<std::ptrdiff_t>(start + count), 1.0);
      return p;
    case Distribution::kHotspot: {
      // As OpStream::HotspotRecord: uniform within the hot and within the cold records.
      const uint64_t hot = std::min<uint64_t>(count, static_cast<uint64_t>(count * spec.hotspot_data_fraction));
      const double to_hot = hot == count ? 1.0 : hot > 0 ? spec.hotspot_op_fraction : 0.0;
      for (uint64_t r = 0; r < count; ++r)
        p[start + r] = r < hot ? to_hot / static_cast<double>(hot) : (1 - to_hot) / static_cast<double>(count - hot);
      return p;
    }
    case Distribution::kZipfian:
      break;
    default:
      return std::nullopt;  // moves with the inserts
  }
  const double theta = spec.zipfian_theta;
  switch (spec.zipfian_ranks) {
    case ZipfianRanks::kClustered:
      for (uint64_t r = 0; r < n; ++r) p[r] = RankWeight(r, theta);
      return p;
    case ZipfianRanks::kRecords:
      for (uint64_t r = 0; r < n; ++r) p[FnvHash64(r) % n] += RankWeight(r, theta);
      return p;
    case ZipfianRanks::kYcsb: {
      // Ranks over 10^10 items, normalised by zeta(10^10) as the generator is, hashed into
      // the key range [start, start + items); records beyond the loaded ones are redrawn.
      const uint64_t items = plan.zipfian_key_items();
      const uint64_t exact = std::min(kYcsbRankItems, kYcsbExactRanksPerItem * items);
      const double zeta = plan.zeta_ycsb();
      for (uint64_t r = 0; r < exact; ++r) {
        const uint64_t record = start + FnvHash64(r) % items;
        if (record < n) p[record] += RankWeight(r, theta) / zeta;
      }
      const double tail = std::max(0.0, 1.0 - Zeta(exact, theta) / zeta) / static_cast<double>(items);
      for (uint64_t r = start; r < std::min(n, start + items); ++r) p[r] += tail;
      return p;
    }
  }
  return std::nullopt;
}

// The probability of each record being requested (summing to one), read units included.
std::optional<std::vector<double>> RequestProbabilities(const StreamPlan& plan) {
  const uint64_t n = plan.loaded();
  if (n == 0 || n > kTopRecordsShareMaxRecords) return std::nullopt;
  auto p = RecordMass(plan);
  if (!p) return std::nullopt;
  // A read unit of U records: record r is touched by the units that start at r - U + 1 .. r
  // (wrapping, as OpStream does among the existing records).
  const uint32_t unit = plan.spec().read_unit;
  if (unit > 1 && plan.spec().weight(OpKind::kRead) > 0) {
    std::vector<double> touched(n, 0.0);
    double window = 0;
    for (uint64_t j = 0; j < unit; ++j) window += (*p)[(n - j % n) % n];  // units ending at 0
    for (uint64_t r = 0; r < n; ++r) {
      if (r > 0) window += (*p)[r] - (*p)[(r + n - unit % n) % n];
      touched[r] = window;
    }
    p = std::move(touched);
  }
  double total = 0;
  for (double v : *p) total += v;
  if (!(total > 0)) return std::nullopt;
  for (double& v : *p) v /= total;
  return p;
}

// The oracle's share; p is reordered.
double TopShare(std::vector<double>& p, uint64_t k) {
  if (k >= p.size()) return 1.0;
  if (k == 0) return 0.0;
  std::nth_element(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(k - 1), p.end(), std::greater<>());
  double top = 0;
  for (uint64_t i = 0; i < k; ++i) top += p[i];
  return top;
}

// A cache of k records whose record i is present with probability in(p_i * t), for the
// characteristic time t at which the presences add up to k: the hit ratio sum p_i in(p_i t).
template <typename In>
double CharacteristicTimeHitRatio(const std::vector<double>& p, uint64_t k, In in) {
  const auto requested = static_cast<uint64_t>(std::count_if(p.begin(), p.end(), [](double v) { return v > 0; }));
  if (k >= requested) return 1.0;  // every requested record fits
  if (k == 0) return 0.0;
  auto held = [&](double t) {
    double sum = 0;
    for (double v : p) sum += in(v * t);
    return sum;
  };
  double lo = 0, hi = 1;
  while (held(hi) < static_cast<double>(k)) hi *= 2;
  for (int i = 0; i < 50 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (held(mid) < static_cast<double>(k) ? lo : hi) = mid;
  }
  double hit = 0;
  for (double v : p) hit += v * in(v * hi);
  return hit;
}

}  // namespace

std::optional<double> TopRecordsShare(const StreamPlan& plan, uint64_t k) {
  auto p = RequestProbabilities(plan);
  if (!p) return std::nullopt;
  return TopShare(*p, k);
}

std::optional<CacheReferences> CacheHitReferences(const StreamPlan& plan, uint64_t k) {
  auto p = RequestProbabilities(plan);
  if (!p) return std::nullopt;
  CacheReferences c;
  c.lru = CharacteristicTimeHitRatio(*p, k, [](double x) { return -std::expm1(-x); });
  c.random = CharacteristicTimeHitRatio(*p, k, [](double x) { return x / (1 + x); });
  c.oracle = TopShare(*p, k);
  return c;
}

}  // namespace dmindex::bench
