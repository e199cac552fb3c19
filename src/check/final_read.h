// The final read of a correctness run: after every operation of a history has completed
// (all compute processes of a multi-process run exited), read back what the index holds, as
// recorded operations, so that the checkers judge the final state too (CheckHistory with the
// reads appended, and CheckFinalState).
#pragma once

#include <cstdint>
#include <map>

#include "check/history.h"
#include "dmindex/index.h"

namespace dmindex::check {

// Looks up every key `history` mentions (initial state and point operations), then scans the
// whole key space in pages, all recorded as operations of thread 0 of `process` and appended
// to *history. Returns the keys the lookups found, with their values (the state
// CheckFinalState takes). Fails if a read fails with anything but NotFound.
Result<std::map<Key, Value>> ReadBackFinalState(Index& index, uint32_t process, History* history);

}  // namespace dmindex::check
