#include "bench/op_stream.h"

#include <algorithm>
#include <cmath>

namespace dmindex::bench {

Result<std::shared_ptr<const StreamPlan>> StreamPlan::Make(const WorkloadSpec& spec,
                                                           uint64_t loaded, uint32_t threads,
                                                           uint64_t seed) {
  DMX_RETURN_IF_ERROR(spec.Validate());
  if (threads == 0) return Status::InvalidArgument("need at least one thread");
  if (loaded >= kMaxRecords / 2)
    return Status::InvalidArgument("too many records: " + std::to_string(loaded));
  if (loaded == 0 && spec.NeedsExistingRecords())
    return Status::InvalidArgument("workload '" + spec.name +
                                   "' reads existing records, so it needs at least one loaded key");
  auto plan = std::shared_ptr<StreamPlan>(new StreamPlan());
  plan->spec_ = spec;
  plan->loaded_ = loaded;
  plan->threads_ = threads;
  plan->seed_ = seed;
  plan->zeta_loaded_ = Zeta(loaded, spec.zipfian_theta);
  return std::shared_ptr<const StreamPlan>(std::move(plan));
}

uint64_t StreamPlan::VisibleRecord(uint32_t thread, uint64_t index) const {
  if (index < loaded_) return index;
  return loaded_ + (index - loaded_) * threads_ + thread;
}

std::vector<KeyValue> StreamPlan::LoadRecords() const {
  std::vector<KeyValue> records(loaded_);
  for (uint64_t r = 0; r < loaded_; ++r) {
    Key k = KeyOf(r);
    records[r] = {k, MakeValue(k, 0)};
  }
  std::sort(records.begin(), records.end(),
            [](const KeyValue& a, const KeyValue& b) { return a.key < b.key; });
  return records;
}

std::vector<Key> StreamPlan::ExpectedKeys(std::span<const uint64_t> inserts) const {
  std::vector<Key> keys;
  uint64_t total = loaded_;
  for (uint64_t n : inserts) total += n;
  keys.reserve(total);
  for (uint64_t r = 0; r < loaded_; ++r) keys.push_back(KeyOf(r));
  for (uint32_t t = 0; t < inserts.size(); ++t)
    for (uint64_t j = 0; j < inserts[t]; ++j) keys.push_back(KeyOf(VisibleRecord(t, loaded_ + j)));
  std::sort(keys.begin(), keys.end());
  return keys;
}

OpStream::OpStream(std::shared_ptr<const StreamPlan> plan, uint32_t thread)
    : plan_(std::move(plan)),
      thread_(thread),
      rng_(Mix64(plan_->seed()) ^ Mix64(0x5EED0000ull + thread)),
      scrambled_(std::max<uint64_t>(plan_->loaded(), 1), plan_->spec().zipfian_theta,
                 plan_->zeta_loaded()),
      recency_(std::max<uint64_t>(plan_->loaded(), 1), plan_->spec().zipfian_theta,
               plan_->zeta_loaded()),
      scan_zipf_(plan_->spec().max_scan_length - plan_->spec().min_scan_length + 1,
                 plan_->spec().zipfian_theta),
      sequential_next_(plan_->loaded() / plan_->threads() * thread) {
  const WorkloadSpec& spec = plan_->spec();
  double sum = 0;
  for (size_t k = 0; k < kOpKinds; ++k) cumulative_[k] = (sum += spec.Share(static_cast<OpKind>(k)));
  cumulative_.back() = 1.0;  // guard against rounding: every draw below 1 lands somewhere
}

OpKind OpStream::ChooseKind() {
  const double u = rng_.NextDouble();
  size_t k = 0;
  // Skip kinds with zero share too: their cumulative bound equals the previous one.
  while (k + 1 < kOpKinds && u >= cumulative_[k]) ++k;
  return static_cast<OpKind>(k);
}

uint64_t OpStream::ChooseRecord() {
  const uint64_t visible = plan_->loaded() + inserts_;
  uint64_t index = 0;
  switch (plan_->spec().request) {
    case Distribution::kUniform:
      index = rng_.Below(visible);
      break;
    case Distribution::kZipfian:  // StreamPlan::Make ensured loaded() > 0
      index = scrambled_.Next(rng_);
      break;
    case Distribution::kLatest:
      recency_.Grow(visible);
      index = visible - 1 - recency_.Next(rng_);
      break;
    case Distribution::kSequential:
      index = sequential_next_++ % visible;
      break;
    case Distribution::kHotspot:
      index = HotspotRecord();
      break;
    case Distribution::kExponential:
      index = ExponentialRecord(visible);
      break;
  }
  return plan_->VisibleRecord(thread_, index);
}

// YCSB's HotspotIntegerGenerator over the loaded records (as its CoreWorkload, which keys
// it on recordcount): the hot set is the first records, uniform within each set.
uint64_t OpStream::HotspotRecord() {
  const WorkloadSpec& spec = plan_->spec();
  const uint64_t n = plan_->loaded();
  const uint64_t hot = std::min<uint64_t>(n, static_cast<uint64_t>(n * spec.hotspot_data_fraction));
  const bool to_hot = hot == n || (hot > 0 && rng_.NextDouble() < spec.hotspot_op_fraction);
  return to_hot ? rng_.Below(hot) : hot + rng_.Below(n - hot);
}

// YCSB's ExponentialGenerator counted back from the newest visible record, redrawn while it
// falls before the first one (as CoreWorkload.nextKeynum does).
uint64_t OpStream::ExponentialRecord(uint64_t visible) {
  const WorkloadSpec& spec = plan_->spec();
  const double range = spec.exponential_frac * static_cast<double>(plan_->loaded());
  const double gamma = -std::log(1.0 - spec.exponential_percentile / 100.0) / std::max(range, 1.0);
  for (;;) {
    const double back = -std::log(1.0 - rng_.NextDouble()) / gamma;  // 1 - u in (0, 1]
    if (back < static_cast<double>(visible)) return visible - 1 - static_cast<uint64_t>(back);
  }
}

uint32_t OpStream::ChooseScanLength() {
  const WorkloadSpec& spec = plan_->spec();
  switch (spec.scan_length) {
    case ScanLengthDistribution::kUniform:
      return spec.min_scan_length +
             static_cast<uint32_t>(rng_.Below(spec.max_scan_length - spec.min_scan_length + 1));
    case ScanLengthDistribution::kZipfian:
      return spec.min_scan_length + static_cast<uint32_t>(scan_zipf_.Next(rng_));
    case ScanLengthDistribution::kConstant:
      return spec.max_scan_length;
  }
  return spec.max_scan_length;
}

Operation OpStream::Next() {
  Operation op;
  op.kind = ChooseKind();
  if (op.kind == OpKind::kInsert) {
    op.key = plan_->KeyOf(plan_->VisibleRecord(thread_, plan_->loaded() + inserts_));
    ++inserts_;
  } else {
    op.key = plan_->KeyOf(ChooseRecord());
  }
  if (op.kind == OpKind::kScan) op.scan_length = ChooseScanLength();
  if (op.kind != OpKind::kRead && op.kind != OpKind::kScan) op.value = NextValue(op.key);
  return op;
}

}  // namespace dmindex::bench
