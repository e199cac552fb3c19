#include "bench/latency_histogram.h"

#include <cmath>

namespace dmindex::bench {

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
}

double LatencyHistogram::BucketMiddleNs(size_t bucket) {
  if (bucket < kSub) return static_cast<double>(bucket);
  const int shift = static_cast<int>(bucket >> kSubBits) - 1;
  const double low = std::ldexp(static_cast<double>(kSub | (bucket & (kSub - 1))), shift);
  return low + std::ldexp(1.0, shift) / 2;
}

double LatencyHistogram::PercentileUs(double p) const {
  if (count_ == 0) return 0;
  // The rank-th smallest recording, 1-based.
  uint64_t rank = static_cast<uint64_t>(std::ceil(p * static_cast<double>(count_)));
  if (rank < 1) rank = 1;
  if (rank > count_) rank = count_;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return BucketMiddleNs(i) / 1e3;
  }
  return BucketMiddleNs(kBuckets - 1) / 1e3;
}

}  // namespace dmindex::bench
