// Tiers::Scan: X and Y merged by key, chunk by chunk (docs/INDEXY.md, "Operations").
//
// Each chunk reads up to n entries of X from the cursor (tombstones included), then Y from the
// same cursor up to X's last key. The chunk ends at the smaller of the two sources' last keys
// (a source that ran out of the range does not bound it), so neither source runs ahead of the
// other; keys up to there are merged, X winning ties and X's tombstones hiding Y's keys, and
// the next chunk starts after it. Why that is a correct scan, given that the background writes
// Y before it unlinks anything from X:
//  * a key present throughout is returned: X's walk either saw it, or passed its place while
//    it was absent from X, hence in Y (written there before it left X), and Y is read after;
//  * a value returned from Y was current at some instant: X lacked the key when its walk
//    passed, so Y's value was the key's; Y changed since only by writes of values X held.
#include <algorithm>
#include <optional>

#include "designs/indexy/tiers.h"

namespace dmindex::designs::indexy {
namespace {

struct Pending {
  std::string key;
  std::string value;
  bool tombstone = false;
};

}  // namespace

Status Tiers::Scan(XWorker& w, const KeyRange& range, size_t count, std::vector<KeyValue>* out) {
  out->clear();
  if (count == 0 || range.Empty()) return Status::Ok();
  std::string cursor = range.start;
  bool inclusive = !range.after_start;
  std::vector<Pending> xs, ys;
  for (;;) {
    const size_t n = std::max<size_t>(count - out->size(), 8);
    // 1. X from the cursor.
    xs.clear();
    bool x_done = true;  // X has nothing more in the range
    DMX_RETURN_IF_ERROR(w.Scan(cursor, inclusive, [&](const XEntryView& e) {
      if (range.end && e.key >= Slice(*range.end)) return false;
      xs.push_back({std::string(e.key), std::string(e.value), (e.flags & xflags::kTombstone) != 0});
      if (xs.size() < n) return true;
      x_done = false;
      return false;
    }));
    // 2. Y from the cursor, up to X's last key - unless nothing was ever written to Y up to
    // now, after X's walk: a key that left X before the walk passed it was written to Y
    // before it left (and y_written_ set before that write).
    ys.clear();
    bool y_done = true;
    if (y_written_.load(std::memory_order_seq_cst)) {
      y_scans_.fetch_add(1, std::memory_order_relaxed);
      auto it = y_->NewIterator();
      if (!it.ok()) return it.status();
      tiering::ColdIterator& yi = **it;
      for (yi.Seek(cursor); yi.Valid(); yi.Next()) {
        const std::string_view k = yi.key();
        if (!inclusive && k == cursor) continue;
        if (range.end && k >= std::string_view(*range.end)) break;
        if (!x_done && k > std::string_view(xs.back().key)) break;
        ys.push_back({std::string(k), std::string(yi.value()), false});
        if (ys.size() == n) {
          y_done = false;
          break;
        }
      }
      DMX_RETURN_IF_ERROR(yi.status());
    }
    // 3. The chunk's end, and the merge up to it.
    std::optional<std::string> end;  // none: both sources ran out of the range
    if (!x_done) end = xs.back().key;
    if (!y_done && (!end || ys.back().key < *end)) end = ys.back().key;
    size_t i = 0, j = 0;
    while (out->size() < count) {
      const bool have_x = i < xs.size() && (!end || xs[i].key <= *end);
      const bool have_y = j < ys.size() && (!end || ys[j].key <= *end);
      if (!have_x && !have_y) break;
      if (have_x && (!have_y || xs[i].key <= ys[j].key)) {
        if (have_y && xs[i].key == ys[j].key) ++j;  // X's entry is the newer one
        if (!xs[i].tombstone) out->push_back({std::move(xs[i].key), std::move(xs[i].value)});
        ++i;
      } else {
        out->push_back({std::move(ys[j].key), std::move(ys[j].value)});
        ++j;
      }
    }
    if (!end || out->size() >= count) return Status::Ok();
    cursor = std::move(*end);
    inclusive = false;
  }
}

}  // namespace dmindex::designs::indexy
