// The internal restart signal: an operation that met a conflict (a latch that changed, a
// stale cached node, a lost race on a CAS) returns RetryStatus() and its caller starts it over.
// It travels as a Status with the code the public header reserves (status.h: value 6), so it
// passes through DMX_RETURN_IF_ERROR like any error, but it is no public code: every public
// entry point loops on it or translates it (Session, index.h), and no public call returns it.
#pragma once

#include <string>

#include "dmindex/status.h"

namespace dmindex {

inline constexpr Status::Code kRetryCode = static_cast<Status::Code>(6);

inline Status RetryStatus(std::string why = {}) { return Status::FromCode(kRetryCode, std::move(why)); }
inline bool IsRetry(const Status& s) { return s.code() == kRetryCode; }

}  // namespace dmindex
