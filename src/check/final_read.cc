#include "check/final_read.h"

#include <set>

namespace dmindex::check {
namespace {

constexpr size_t kScanPage = 500;

}  // namespace

Result<std::map<Key, Value>> ReadBackFinalState(Index& index, uint32_t process, History* history) {
  std::set<Key> keys;
  for (const auto& [key, value] : history->initial) keys.insert(key);
  for (const Operation& op : history->ops)
    if (op.kind != OpKind::kScan) keys.insert(op.key);

  auto opened = index.OpenSession(0);
  if (!opened.ok()) return opened.status();
  HistoryRecorder recorder(1, process);
  RecordingSession reader(**opened, recorder.log(0));
  std::map<Key, Value> present;
  for (Key key : keys) {
    Value v;
    Status s = reader.Lookup(key, &v);
    if (s.ok())
      present[key] = v;
    else if (!s.IsNotFound())
      return s;
  }
  // The iteration also finds keys that no operation wrote (they must not exist); each of
  // its batches is a recorded scan.
  ReadOptions ro;
  ro.readahead = kScanPage;
  Iterator it = reader.NewIterator(ro);
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
  }
  DMX_RETURN_IF_ERROR(it.status());
  AppendHistory(history, recorder.Merge({}));
  return present;
}

}  // namespace dmindex::check
