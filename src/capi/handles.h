// What the C API's opaque handles (include/dmindex/c.h) hold, and the guard every C entry
// point runs its body in, so that no exception crosses into C.
//
// Lifetimes: a C++ Session must be destroyed before its Index, and an Iterator before its
// Session. The handles therefore share ownership down that chain (an iterator keeps its
// session's state alive, a session its index's), so the C caller may destroy handles in any
// order. "Closed" handles keep their state but no object: every later call is refused.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "dmindex/c.h"
#include "dmindex/index.h"

struct dmindex_status_t {
  dmindex::Status status;
  std::string text = "OK";  // status.ToString(), kept for dmindex_status_message
};

struct dmindex_options_t {
  dmindex::IndexOptions options;
};

struct dmindex_cluster_t {
  std::shared_ptr<dmindex::Cluster> cluster;
};

namespace dmindex::capi {

struct IndexState {
  std::unique_ptr<Index> index;
  std::atomic<bool> closed{false};
};

struct SessionState {
  std::shared_ptr<IndexState> index;  // declared first: outlives `session`
  std::unique_ptr<Session> session;   // null once closed
  size_t iterators = 0;               // alive on this session (the session's thread only)
};

// Fills `out` (if any) with `s` and returns its code.
dmindex_code_t Report(dmindex_status_t* out, const Status& s) noexcept;

// Runs `body` (returning a Status), turning an escaping exception into a Status.
template <typename Body>
dmindex_code_t Guard(dmindex_status_t* out, Body&& body) noexcept {
  try {
    return Report(out, body());
  } catch (const std::bad_alloc&) {
    return Report(out, Status::OutOfSpace("out of memory in the dmindex C API"));
  } catch (const std::exception& e) {
    return Report(out, Status::Corruption(std::string("internal error (an exception in dmindex): ") + e.what()));
  } catch (...) {
    return Report(out, Status::Corruption("internal error (an unknown exception in dmindex)"));
  }
}

// `what` refused as NULL (InvalidArgument), or OK.
inline Status NotNull(const void* p, const char* what) {
  return p != nullptr ? Status::Ok() : Status::InvalidArgument(std::string(what) + " is NULL");
}
// The byte string (p, n): NULL is allowed only with n == 0 (the empty string).
Status BytesOf(const char* p, size_t n, const char* what, Slice* out);
// A copy of `bytes` in memory from malloc (dmindex_free), or null if out of memory.
char* MallocCopy(Slice bytes);
// *out = a malloc'd copy of `bytes` (OutOfSpace if there is no memory).
Status CopyOut(Slice bytes, char** out);

}  // namespace dmindex::capi

struct dmindex_index_t {
  std::shared_ptr<dmindex::capi::IndexState> state;
};

struct dmindex_session_t {
  std::shared_ptr<dmindex::capi::SessionState> state;
};
