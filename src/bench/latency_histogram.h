// Latency histogram with log-linear buckets (64 linear sub-buckets per power of two, so any
// recorded value is known within 1.6%), cheap enough to record every operation. Each thread
// keeps its own; the runner merges them after the run.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace dmindex::bench {

class LatencyHistogram {
 public:
  void Record(uint64_t ns) {
    ++buckets_[BucketOf(ns)];
    ++count_;
    sum_ns_ += ns;
  }
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  double MeanUs() const { return count_ ? sum_ns_ / 1e3 / static_cast<double>(count_) : 0.0; }
  // The latency below which a fraction p (0 < p <= 1) of the recordings fall, in µs; 0 when
  // empty. Reported at the middle of the bucket that holds it.
  double PercentileUs(double p) const;

 private:
  static constexpr int kSubBits = 6;
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;
  static constexpr size_t kBuckets = (64 - kSubBits + 1) * kSub;

  static size_t BucketOf(uint64_t ns) {
    if (ns < kSub) return ns;
    const int shift = 63 - __builtin_clzll(ns) - kSubBits;
    return (static_cast<size_t>(shift + 1) << kSubBits) | ((ns >> shift) & (kSub - 1));
  }
  static double BucketMiddleNs(size_t bucket);

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ns_ = 0;
};

}  // namespace dmindex::bench
