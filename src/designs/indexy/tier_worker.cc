#include "designs/indexy/tier_worker.h"

#include <algorithm>
#include <limits>
#include <mutex>

namespace dmindex::designs::indexy {
namespace {

void Count(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

// How long the background sleeps when it has nothing to do (a writer crossing the high mark
// wakes it at once), and at least between two pre-cleaning passes. A pass over all units is
// followed by a pause of kPassPauseFactor times its own length, so pre-cleaning takes about a
// tenth of a core however large X grows (the paper paces passes by inserts, the authors' code
// by time; the check-back only needs passes to be far enough apart for quiet units to show).
constexpr std::chrono::microseconds kIdle{10'000};
constexpr std::chrono::microseconds kPassPause{2'000};
constexpr int kPassPauseFactor = 9;
// After a release round that freed nothing (everything is the root, or Y fails): doubling
// from the first to the last while rounds keep failing, so a failing Y costs little CPU. A
// writer reaching the limit wakes the background at once.
constexpr std::chrono::microseconds kNoProgressPause{1'000};
constexpr std::chrono::microseconds kNoProgressPauseMax{64'000};
// A release target no X reaches: the policies choose every unit.
constexpr uint64_t kEveryUnit = std::numeric_limits<uint64_t>::max() / 2;

}  // namespace

TierWorker::TierWorker(Tiers& tiers)
    : tiers_(tiers), policy_(tiers.options()), thread_([this] { Run(); }) {}

TierWorker::~TierWorker() { Stop(); }

void TierWorker::Stop() {
  tiers_.budget().Stop();
  if (thread_.joinable()) thread_.join();
}

void TierWorker::NoteError(const Status& s) {
  Count(errors_);
  std::lock_guard lock(error_mu_);
  last_error_ = s.ToString();
}

std::string TierWorker::last_error() const {
  std::lock_guard lock(error_mu_);
  return last_error_;
}

void TierWorker::Run() {
  std::unique_ptr<XWorker> w = tiers_.x().NewWorker();
  MemoryBudget& budget = tiers_.budget();
  runtime::Clock::time_point pass_start = runtime::Now();
  std::chrono::microseconds no_progress_pause = kNoProgressPause;
  while (!budget.stopped()) {
    if (budget.AtHigh()) {
      if (ReleaseRound(*w)) {
        no_progress_pause = kNoProgressPause;
      } else {
        budget.WaitForWork(no_progress_pause);
        no_progress_pause = std::min(no_progress_pause * 2, kNoProgressPauseMax);
      }
      continue;
    }
    if (budget.CleaningDue()) {
      auto step = cleaner_.Step(*w, tiers_);
      if (!step.ok()) {
        NoteError(step.status());
        budget.WaitForWork(kPassPause);
        continue;
      }
      Count(cleaned_units_, step->units);
      Count(cleaned_entries_, step->written);
      if (step->pass_ended) {
        Count(clean_passes_);
        const auto took = std::chrono::duration_cast<std::chrono::microseconds>(runtime::Now() - pass_start);
        budget.WaitForWork(std::max(kPassPause, took * kPassPauseFactor));
        pass_start = runtime::Now();
      }
      continue;
    }
    budget.WaitForWork(kIdle);
  }
  w->Reclaim();
}

bool TierWorker::ReleaseRound(XWorker& w) {
  MemoryBudget& budget = tiers_.budget();
  ReclaimRetired(w);
  const uint64_t target = budget.ReleaseTarget();
  if (target == 0) return true;
  Count(release_rounds_);
  const uint64_t round = budget.RoundBegins();
  const uint64_t entries = tiers_.x().entries();
  const double bytes_per_entry =
      entries == 0 ? 1.0 : static_cast<double>(tiers_.x().Bytes().total) / static_cast<double>(entries);
  RoundOutcome out;
  for (const uint64_t ask : {target, kEveryUnit}) {
    // The second time, every unit in the policy's order: the estimates the first choice went
    // by (sampled counters) may name units that hold nothing while others hold entries.
    auto units = policy_.Select(w, ask, bytes_per_entry);
    if (!units.ok()) {
      NoteError(units.status());
      out.failure = units.status();
      break;
    }
    Count(ranked_candidates_, policy_.last_candidates());
    Count(ranked_single_candidates_, policy_.last_single_candidates());
    ReleaseUnits(w, *units, target, &out);
    if (out.freed > 0 || !out.failure.ok() || out.stale) break;
  }
  // Accesses before count half from now on, once a quarter of the limit was released since
  // the last time (the paper resets counters after a release; a walk over every tracked node
  // after every small round would cost more than the round).
  released_since_decay_ += out.freed;
  if (released_since_decay_ >= tiers_.options().limit_bytes / 4) {
    w.DecayAccesses();
    released_since_decay_ = 0;
  }
  ReclaimRetired(w);
  if (out.freed == 0 && out.failure.ok() && !out.stale) {
    // Nothing was released. A failure only if X cannot get below its limit even once the
    // epochs freed what is retired: retired memory waits for operations under way (it was
    // seen to be most of a small X), and memory may have come back during the round.
    const XBytes b = tiers_.x().Bytes();
    if (b.total - std::min(b.retired, b.total) >= tiers_.options().limit_bytes) {
      out.failure = Status::OutOfSpace("nothing in X can be released: it holds " + std::to_string(b.total) +
                                       " bytes, " + std::to_string(b.retired) + " of them retired");
      out.nothing = true;
    }
  }
  // A round that freed something did not fail, even if some unit's release did; one whose
  // units had all left X since they were chosen did not either (the next one chooses again).
  budget.RoundEnded(round, out.freed > 0 || out.stale ? Status::Ok() : out.failure, out.nothing);
  return out.freed > 0;
}

void TierWorker::ReleaseUnits(XWorker& w, const std::vector<XUnit>& units, uint64_t target, RoundOutcome* out) {
  for (const XUnit& u : units) {
    if (tiers_.budget().stopped()) break;
    auto r = w.Release(u, tiers_);
    if (!r.ok()) {
      if (r.status().IsNotFound()) {  // the unit left X since it was chosen (a node grew or shrank)
        out->stale = true;
      } else {
        NoteError(r.status());
        out->failure = r.status();
      }
      continue;
    }
    Count(released_units_);
    Count(released_entries_, r->entries);
    Count(released_bytes_, r->bytes);
    Count(release_written_, r->written);
    if (u.single) Count(released_single_units_);
    else if (u.accesses == 0) Count(released_unaccessed_units_);
    out->freed += r->bytes;
    // Enough, counting what the epochs will free: stop at the low mark, not below.
    if (out->freed >= target) break;
  }
}

void TierWorker::ReclaimRetired(XWorker& w) {
  // Released nodes are freed two epochs after their unlink, once every thread that was inside
  // an operation then has left it: a few rounds of short operations.
  for (int i = 0; i < 64 && w.Reclaim() > 0; ++i) runtime::Yield();
}

BackgroundCounters TierWorker::Counters() const {
  BackgroundCounters c;
  c.release_rounds = release_rounds_.load(std::memory_order_relaxed);
  c.released_units = released_units_.load(std::memory_order_relaxed);
  c.released_entries = released_entries_.load(std::memory_order_relaxed);
  c.released_bytes = released_bytes_.load(std::memory_order_relaxed);
  c.release_written = release_written_.load(std::memory_order_relaxed);
  c.released_single_units = released_single_units_.load(std::memory_order_relaxed);
  c.released_unaccessed_units = released_unaccessed_units_.load(std::memory_order_relaxed);
  c.ranked_candidates = ranked_candidates_.load(std::memory_order_relaxed);
  c.ranked_single_candidates = ranked_single_candidates_.load(std::memory_order_relaxed);
  c.cleaned_units = cleaned_units_.load(std::memory_order_relaxed);
  c.cleaned_entries = cleaned_entries_.load(std::memory_order_relaxed);
  c.clean_passes = clean_passes_.load(std::memory_order_relaxed);
  c.errors = errors_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace dmindex::designs::indexy
