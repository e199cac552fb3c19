// The objects behind the Python classes of dmindex._dmindex (docs/PYTHON.md), and how Python
// values become keys and values.
//
// Each Python object holds a shared_ptr to its state; a state holds the state it was opened
// from (session -> index, iterator -> session), so C++ objects are destroyed in the order the
// C++ API needs (iterator before session before index) whatever order Python drops them in.
// Closing a state closes what was opened from it first. Every state is touched only with the
// GIL held; a blocking call releases the GIL after marking its session (or index) busy, and
// close() refuses a busy state instead of destroying what another thread is using.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "dmindex/cluster.h"
#include "dmindex/index.h"
#include "dmindex/iterator.h"
#include "dmindex/status.h"

namespace dmindex::python {

namespace nb = nanobind;

// A non-OK Status on its way to Python: translated to the dmindex.Error subclass of its code
// (python/dmindex/_errors.py) by the module's exception translator.
struct StatusError {
  Status status;
};
// Throws StatusError for a non-OK status.
void Check(const Status& s);
// InvalidArgument: the misuse of an object (closed, in use by another thread).
[[noreturn]] void Misuse(const std::string& message);

// A key or value from Python: bytes or str (UTF-8) are borrowed, valid while the Python object
// lives (the caller holds it); a bytearray or other buffer is copied (it could change while
// the GIL is released); an int key is its 8-byte big-endian encoding (U64Key). TypeError
// otherwise.
class Bytes {
 public:
  static Bytes Key(nb::handle h) { return Bytes(h, true); }
  static Bytes Value(nb::handle h) { return Bytes(h, false); }
  Slice slice() const { return view_; }

 private:
  Bytes(nb::handle h, bool integer_allowed);
  std::string copy_;
  Slice view_;
};
nb::bytes ToBytes(Slice s);

struct IndexState;
struct SessionState;

struct IteratorState {
  std::shared_ptr<SessionState> session;
  std::optional<Iterator> it;  // destroyed before `session` (declared after it)
  std::optional<std::string> start;
  bool reverse = false;  // SeekForPrev(start) or SeekToLast, then Prev
  bool positioned = false;
};

struct SessionState {
  std::shared_ptr<IndexState> index;
  std::unique_ptr<Session> session;  // destroyed before `index`
  std::vector<std::weak_ptr<IteratorState>> iterators;
  bool busy = false;  // a call on another thread has it, with the GIL released
  // The session, or InvalidArgument if closed or busy; marks it busy until the Use ends.
  class Use;
  void Close();
};

class SessionState::Use {
 public:
  explicit Use(SessionState& s);
  ~Use() { state_.busy = false; }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;
  Session& operator*() const { return *state_.session; }
  Session* operator->() const { return state_.session.get(); }

 private:
  SessionState& state_;
};

struct IndexState {
  std::unique_ptr<Index> index;
  std::vector<std::weak_ptr<SessionState>> sessions;
  int busy = 0;  // calls on other threads, with the GIL released
  Index& Get() const;
  // Closes every session (and their iterators), then the index; InvalidArgument if any of
  // them is in use by another thread (nothing is closed then).
  void Close();
  // The same, then Index::Drop: the index is deleted (NotSupported: closed only; Busy: it
  // stays open, its sessions closed). `force`: DropOptions::force.
  void Drop(bool force);
  // Closes every session, or InvalidArgument naming `call` if one is in use.
  void CloseSessions(const char* call);
};

// The Python objects: a handle on a state.
struct PySession {
  std::shared_ptr<SessionState> s;
};
struct PyIterator {
  std::shared_ptr<IteratorState> s;
};

void BindIndex(nb::module_& m);
void BindSession(nb::module_& m);

}  // namespace dmindex::python
