// Histories on disk, so that the histories of several compute processes that shared an index
// can be merged and checked together (dmindex check --history-out, --merge).
//
// JSON: a header naming the design and index (merging histories of different indexes is an
// error), the clock origin (steady_clock, comparable across processes of one machine: see
// history.h), the initial state, and one compact array per operation.
#pragma once

#include <string>

#include "check/history.h"
#include "dmindex/status.h"

namespace dmindex::check {

struct HistoryFile {
  std::string design;
  std::string index;     // the catalog name of the index the operations ran on
  uint32_t process = 0;  // the compute process that recorded it
  History history;
};

Status WriteHistoryFile(const std::string& path, const HistoryFile& file);
// InvalidArgument (naming the file) if it is missing, not a history or malformed.
Result<HistoryFile> ReadHistoryFile(const std::string& path);

}  // namespace dmindex::check
