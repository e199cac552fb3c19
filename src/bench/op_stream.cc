#include "bench/op_stream.h"

#include <algorithm>
#include <cmath>

namespace dmindex::bench {
namespace {

// YCSB's ScrambledZipfianGenerator draws ranks over this many items (ITEM_COUNT, plus one:
// its ZipfianGenerator spans 0..ITEM_COUNT inclusive) and uses zeta(ITEM_COUNT).
constexpr uint64_t kYcsbZipfianItems = 10'000'000'000;

}  // namespace

void InsertCounter::Acknowledge(uint64_t record) {
  std::lock_guard lock(mu_);
  uint64_t last = last_.load(std::memory_order_relaxed);
  if (record != last + 1) {
    pending_.insert(record);
    return;
  }
  ++last;
  while (!pending_.empty() && *pending_.begin() == last + 1) {
    pending_.erase(pending_.begin());
    ++last;
  }
  last_.store(last, std::memory_order_release);
}

Result<std::shared_ptr<const StreamPlan>> StreamPlan::Make(const WorkloadSpec& spec,
                                                           uint64_t loaded, uint32_t threads,
                                                           uint64_t seed, uint64_t expected_ops) {
  DMX_RETURN_IF_ERROR(spec.Validate());
  if (threads == 0) return Status::InvalidArgument("need at least one thread");
  if (loaded >= kMaxRecords / 2)
    return Status::InvalidArgument("too many records: " + std::to_string(loaded));
  if (loaded == 0 && spec.NeedsExistingRecords())
    return Status::InvalidArgument("workload '" + spec.name +
                                   "' reads existing records, so it needs at least one loaded key");
  if (spec.insert_start > 0 && spec.insert_start >= loaded && spec.NeedsExistingRecords())
    return Status::InvalidArgument("workload '" + spec.name + "': insertstart " +
                                   std::to_string(spec.insert_start) + " is beyond the " +
                                   std::to_string(loaded) + " loaded records");
  auto plan = std::shared_ptr<StreamPlan>(new StreamPlan());
  plan->spec_ = spec;
  plan->loaded_ = loaded;
  plan->threads_ = threads;
  plan->seed_ = seed;
  plan->request_start_ = std::min(spec.insert_start, loaded);
  plan->request_count_ = spec.insert_count > 0 ? std::min(spec.insert_count, loaded - plan->request_start_)
                                               : loaded - plan->request_start_;
  // YCSB: expectednewkeys = (int)(operationcount * insertproportion * 2.0), with the
  // proportion as written (not normalised); the key range is [insertstart, insertstart +
  // insertcount + expectednewkeys], both ends included.
  const double new_keys = static_cast<double>(expected_ops) * spec.weight(OpKind::kInsert) * 2.0;
  plan->zipfian_key_items_ = plan->request_count_ + static_cast<uint64_t>(new_keys) + 1;
  plan->zeta_loaded_ = Zeta(loaded, spec.zipfian_theta);
  plan->zeta_ycsb_ = Zeta(kYcsbZipfianItems, spec.zipfian_theta);
  plan->inserts_ = std::make_shared<InsertCounter>(loaded);
  plan->sequential_ = std::make_shared<std::atomic<uint64_t>>(0);
  return std::shared_ptr<const StreamPlan>(std::move(plan));
}

std::vector<RecordPair> StreamPlan::LoadRecords() const {
  std::vector<RecordPair> records(loaded_);
  for (uint64_t r = 0; r < loaded_; ++r) {
    Key k = KeyOf(r);
    records[r] = {k, MakeValue(k, 0)};
  }
  std::sort(records.begin(), records.end(),
            [](const RecordPair& a, const RecordPair& b) { return a.key < b.key; });
  return records;
}

std::vector<Key> StreamPlan::ExpectedKeys(uint64_t inserted) const {
  std::vector<Key> keys;
  keys.reserve(loaded_ + inserted);
  for (uint64_t r = 0; r < loaded_ + inserted; ++r) keys.push_back(KeyOf(r));
  std::sort(keys.begin(), keys.end());
  return keys;
}

OpStream::OpStream(std::shared_ptr<const StreamPlan> plan, uint32_t thread)
    : plan_(std::move(plan)),
      thread_(thread),
      rng_(Mix64(plan_->seed()) ^ Mix64(0x5EED0000ull + thread)),
      ranks_(plan_->spec().zipfian_ranks == ZipfianRanks::kYcsb
                 ? ZipfianGenerator(kYcsbZipfianItems + 1, plan_->spec().zipfian_theta, plan_->zeta_ycsb())
                 : ZipfianGenerator(std::max<uint64_t>(plan_->loaded(), 1), plan_->spec().zipfian_theta,
                                    plan_->zeta_loaded())),
      // YCSB's SkewedLatestGenerator: a ZipfianGenerator over (loaded - 1) items, grown as
      // inserts are acknowledged.
      recency_(std::max<uint64_t>(plan_->loaded(), 2) - 1, plan_->spec().zipfian_theta),
      scan_zipf_(plan_->spec().max_scan_length - plan_->spec().min_scan_length + 1,
                 plan_->spec().zipfian_theta) {
  const WorkloadSpec& spec = plan_->spec();
  double sum = 0;
  size_t last_used = 0;
  for (size_t k = 0; k < kOpKinds; ++k) {
    cumulative_[k] = (sum += spec.Share(static_cast<OpKind>(k)));
    if (spec.Share(static_cast<OpKind>(k)) > 0) last_used = k;
  }
  // Guard against rounding: every draw below 1 lands on a kind the workload has.
  for (size_t k = last_used; k < kOpKinds; ++k) cumulative_[k] = 1.0;
}

OpKind OpStream::ChooseKind() {
  const double u = rng_.NextDouble();
  size_t k = 0;
  // Skip kinds with zero share too: their cumulative bound equals the previous one.
  while (k + 1 < kOpKinds && u >= cumulative_[k]) ++k;
  return static_cast<OpKind>(k);
}

// YCSB's nextKeynum(): a draw of the key chooser, redrawn while it names a record not yet
// acknowledged (exponential: counted back from the newest, redrawn while before record 0).
uint64_t OpStream::ChooseRecord() {
  const uint64_t last = plan_->inserts().Last();
  const uint64_t start = plan_->request_start(), count = plan_->request_count();
  const bool dex = plan_->spec().generators == Generators::kDex;
  switch (plan_->spec().request) {
    case Distribution::kUniform:
      // YCSB: the loaded records only; DEX: every record that exists.
      return dex ? rng_.Below(last + 1) : start + rng_.Below(count);
    case Distribution::kZipfian:
      switch (plan_->spec().zipfian_ranks) {
        case ZipfianRanks::kYcsb: return YcsbZipfianRecord(last);
        case ZipfianRanks::kRecords: return FnvHash64(ranks_.Next(rng_)) % plan_->loaded();
        case ZipfianRanks::kClustered: return ranks_.Next(rng_);
      }
      return 0;
    case Distribution::kLatest:
      return LatestRecord(last);
    case Distribution::kSequential:
      return start + plan_->sequential().fetch_add(1, std::memory_order_relaxed) % count;
    case Distribution::kHotspot:
      return HotspotRecord();
    case Distribution::kExponential:
      return ExponentialRecord(last);
  }
  return 0;
}

// ScrambledZipfianGenerator(insertstart, insertstart + insertcount + expectednewkeys): a rank
// over 10^10 items, FNV-hashed into the key range, which covers the expected inserts too.
uint64_t OpStream::YcsbZipfianRecord(uint64_t last) {
  for (;;) {
    const uint64_t record = plan_->request_start() + FnvHash64(ranks_.Next(rng_)) % plan_->zipfian_key_items();
    if (record <= last) return record;
  }
}

// SkewedLatestGenerator: newest - zipfian(newest), so the newest acknowledged record is the
// hottest; record 0 is never drawn (as in YCSB).
uint64_t OpStream::LatestRecord(uint64_t last) {
  if (last == 0) return 0;
  recency_.Grow(last);
  return last - std::min(recency_.Next(rng_), last - 1);
}

// HotspotIntegerGenerator over the requested records: the hot set is the first ones,
// uniform within each set.
uint64_t OpStream::HotspotRecord() {
  const WorkloadSpec& spec = plan_->spec();
  const uint64_t n = plan_->request_count();
  const uint64_t hot = std::min<uint64_t>(n, static_cast<uint64_t>(n * spec.hotspot_data_fraction));
  const bool to_hot = hot == n || (hot > 0 && rng_.NextDouble() < spec.hotspot_op_fraction);
  return plan_->request_start() + (to_hot ? rng_.Below(hot) : hot + rng_.Below(n - hot));
}

// ExponentialGenerator(percentile, recordcount x frac), counted back from the newest
// acknowledged record, redrawn while it falls before the first one.
uint64_t OpStream::ExponentialRecord(uint64_t last) {
  const WorkloadSpec& spec = plan_->spec();
  const double range = spec.exponential_frac * static_cast<double>(plan_->loaded());
  const double gamma = -std::log(1.0 - spec.exponential_percentile / 100.0) / std::max(range, 1.0);
  for (;;) {
    const double back = -std::log(1.0 - rng_.NextDouble()) / gamma;  // 1 - u in (0, 1]
    if (back < static_cast<double>(last) + 1) return last - static_cast<uint64_t>(back);
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
  const WorkloadSpec& spec = plan_->spec();
  if (unit_left_ > 0) {
    // The rest of a read unit: the records after the last one, wrapping among existing ones.
    --unit_left_;
    op.kind = OpKind::kRead;
    op.record = unit_record_ = (unit_record_ + 1) % (plan_->inserts().Last() + 1);
    op.key = plan_->KeyOf(op.record);
    ++drawn_;
    return op;
  }
  op.kind = ChooseKind();
  op.record = op.kind == OpKind::kInsert ? plan_->inserts().Next() : ChooseRecord();
  if (op.kind != OpKind::kInsert && spec.shift_phases > 1 && spec.shift_ops > 0 && op.record < plan_->loaded()) {
    // The working set's phase, from this thread's share of the operations so far.
    const uint64_t phase = drawn_ * plan_->threads() / spec.shift_ops;
    op.record = (op.record + phase % spec.shift_phases * (plan_->loaded() / spec.shift_phases)) % plan_->loaded();
  }
  ++drawn_;
  if (op.kind == OpKind::kRead && spec.read_unit > 1) {
    unit_left_ = spec.read_unit - 1;
    unit_record_ = op.record;
  }
  op.key = plan_->KeyOf(op.record);
  if (op.kind == OpKind::kInsert) ++inserts_;
  if (op.kind == OpKind::kScan) op.scan_length = ChooseScanLength();
  if (op.kind != OpKind::kRead && op.kind != OpKind::kScan) op.value = NextValue(op.key);
  return op;
}

void OpStream::Completed(const Operation& op) {
  if (op.kind == OpKind::kInsert) plan_->inserts().Acknowledge(op.record);
}

}  // namespace dmindex::bench
