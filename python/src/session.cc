// dmindex._dmindex.Session and Iterator: one thread's handle on an index, and ordered
// iteration as a Python iterator of (key, value) bytes pairs.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "handles.h"

namespace dmindex::python {
namespace {

using Release = nb::gil_scoped_release;

}  // namespace

SessionState::Use::Use(SessionState& s) : state_(s) {
  if (!s.session) Misuse("the session is closed");
  if (s.busy) Misuse("the session is in use by another thread (open one session per thread)");
  s.busy = true;
}

void SessionState::Close() {
  if (busy) Misuse("close: the session is in use by another thread");
  for (auto& weak : iterators)
    if (auto it = weak.lock()) it->it.reset();
  iterators.clear();
  session.reset();
}

namespace {

nb::object Get(PySession& self, nb::handle key) {
  const Bytes k = Bytes::Key(key);
  SessionState::Use session(*self.s);
  std::string value;
  Status st;
  {
    Release nogil;
    st = session->Lookup(k.slice(), &value);
  }
  if (st.IsNotFound()) return nb::none();
  Check(st);
  return ToBytes(value);
}

// Insert (an upsert) and Update share this: both write a value.
template <Status (Session::*Op)(Slice, Slice)>
void Write(PySession& self, nb::handle key, nb::handle value) {
  const Bytes k = Bytes::Key(key), v = Bytes::Value(value);
  SessionState::Use session(*self.s);
  Status st;
  {
    Release nogil;
    st = ((*session).*Op)(k.slice(), v.slice());
  }
  Check(st);
}

void Delete(PySession& self, nb::handle key) {
  const Bytes k = Bytes::Key(key);
  SessionState::Use session(*self.s);
  Status st;
  {
    Release nogil;
    st = session->Delete(k.slice());
  }
  Check(st);
}

nb::list MultiGet(PySession& self, nb::iterable keys) {
  std::vector<Bytes> held;
  for (nb::handle k : keys) held.push_back(Bytes::Key(k));
  std::vector<Slice> slices;
  for (const Bytes& b : held) slices.push_back(b.slice());
  SessionState::Use session(*self.s);
  std::vector<std::string> values;
  std::vector<Status> statuses;
  {
    Release nogil;
    statuses = session->MultiGet(slices, &values);
  }
  nb::list out;
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i].IsNotFound()) {
      out.append(nb::none());
      continue;
    }
    Check(statuses[i]);
    out.append(ToBytes(values[i]));
  }
  return out;
}

nb::list Scan(PySession& self, nb::handle start, size_t count) {
  const Bytes s = Bytes::Key(start);
  SessionState::Use session(*self.s);
  std::vector<KeyValue> pairs;
  Status st;
  {
    Release nogil;
    st = session->Scan(s.slice(), count, &pairs);
  }
  Check(st);
  nb::list out;
  for (const KeyValue& kv : pairs) out.append(nb::make_tuple(ToBytes(kv.key), ToBytes(kv.value)));
  return out;
}

// CompareAndSwap: (True, None) if swapped, else (False, the value found).
nb::tuple CompareAndSwap(PySession& self, nb::handle key, nb::handle expected, nb::handle desired) {
  const Bytes k = Bytes::Key(key), e = Bytes::Value(expected), d = Bytes::Value(desired);
  SessionState::Use session(*self.s);
  bool swapped = false;
  std::string current;
  Status st;
  {
    Release nogil;
    st = session->CompareAndSwap(k.slice(), e.slice(), d.slice(), &swapped, &current);
  }
  Check(st);
  if (swapped) return nb::make_tuple(true, nb::none());
  return nb::make_tuple(false, ToBytes(current));
}

uint64_t DeleteRange(PySession& self, nb::handle begin, nb::handle end) {
  const Bytes b = Bytes::Key(begin), e = Bytes::Key(end);
  SessionState::Use session(*self.s);
  uint64_t deleted = 0;
  Status st;
  {
    Release nogil;
    st = session->DeleteRange(b.slice(), e.slice(), &deleted);
  }
  Check(st);
  return deleted;
}

// A batch of (key, value) puts and (key, None) deletes, applied by Session::Write.
void WriteBatchOf(PySession& self, nb::iterable writes) {
  WriteBatch batch;
  for (nb::handle w : writes) {
    nb::tuple pair;
    if (!nb::try_cast(w, pair) || pair.size() != 2) Misuse("write: each write is a (key, value or None) tuple");
    const Bytes k = Bytes::Key(pair[0]);
    if (pair[1].is_none()) batch.Delete(k.slice());
    else batch.Put(k.slice(), Bytes::Value(pair[1]).slice());
  }
  SessionState::Use session(*self.s);
  Status st;
  {
    Release nogil;
    st = session->Write(batch);
  }
  Check(st);
}

PyIterator NewIterator(PySession& self, nb::handle start, nb::handle upper_bound, size_t readahead,
                       nb::handle lower_bound, uint32_t prefix_bytes, bool reverse) {
  ReadOptions ro;
  ro.readahead = readahead;
  if (!upper_bound.is_none()) ro.upper_bound = std::string(Bytes::Key(upper_bound).slice());
  if (!lower_bound.is_none()) ro.lower_bound = std::string(Bytes::Key(lower_bound).slice());
  ro.prefix_bytes = prefix_bytes;
  auto it = std::make_shared<IteratorState>();
  it->reverse = reverse;
  if (!start.is_none()) it->start = std::string(Bytes::Key(start).slice());
  SessionState::Use session(*self.s);
  it->session = self.s;
  it->it.emplace(session->NewIterator(ro));  // reads nothing until positioned
  self.s->iterators.push_back(it);
  return PyIterator{it};
}

// Positions the iterator (the GIL released: a batch is read); the session is marked busy.
template <typename Move>
void Position(IteratorState& s, Move move) {
  if (!s.it) Misuse("the iterator is closed (its session or index was closed)");
  SessionState::Use session(*s.session);
  {
    Release nogil;
    move(*s.it);
  }
  s.positioned = true;
}

nb::tuple Next(PyIterator& self) {
  IteratorState& s = *self.s;
  if (!s.positioned && s.reverse)
    Position(s, [&](Iterator& it) { s.start ? it.SeekForPrev(*s.start) : it.SeekToLast(); });
  else if (!s.positioned)
    Position(s, [&](Iterator& it) { s.start ? it.Seek(*s.start) : it.SeekToFirst(); });
  if (!s.it) Misuse("the iterator is closed (its session or index was closed)");
  if (!s.it->Valid()) {
    Check(s.it->status());
    throw nb::stop_iteration();
  }
  nb::tuple pair = nb::make_tuple(ToBytes(s.it->key()), ToBytes(s.it->value()));
  if (s.reverse) Position(s, [](Iterator& it) { it.Prev(); });
  else Position(s, [](Iterator& it) { it.Next(); });
  return pair;
}

void CloseIterator(PyIterator& self) {
  if (self.s->session->busy) Misuse("close: the iterator's session is in use by another thread");
  self.s->it.reset();
}

}  // namespace

void BindSession(nb::module_& m) {
  nb::class_<PySession>(m, "Session")
      .def("get", &Get, nb::arg("key"))
      .def("put", &Write<&Session::Insert>, nb::arg("key"), nb::arg("value"))
      .def("insert", &Write<&Session::Insert>, nb::arg("key"), nb::arg("value"))
      .def("update", &Write<&Session::Update>, nb::arg("key"), nb::arg("value"))
      .def("delete", &Delete, nb::arg("key"))
      .def("multi_get", &MultiGet, nb::arg("keys"))
      .def("scan", &Scan, nb::arg("start"), nb::arg("count"))
      .def("compare_and_swap", &CompareAndSwap, nb::arg("key"), nb::arg("expected"), nb::arg("desired"))
      .def("delete_range", &DeleteRange, nb::arg("begin"), nb::arg("end"))
      .def("write", &WriteBatchOf, nb::arg("writes"))
      .def("iterator", &NewIterator, nb::arg("start") = nb::none(), nb::arg("upper_bound") = nb::none(),
           nb::arg("readahead") = 0, nb::arg("lower_bound") = nb::none(), nb::arg("prefix_bytes") = 0,
           nb::arg("reverse") = false)
      .def("close", [](PySession& self) { self.s->Close(); })
      .def_prop_ro("closed", [](PySession& self) { return !self.s->session; })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PySession& self, nb::args) { self.s->Close(); });

  nb::class_<PyIterator>(m, "Iterator")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &Next)
      .def("seek", [](PyIterator& self, nb::handle target) {
        const std::string t(Bytes::Key(target).slice());
        Position(*self.s, [&](Iterator& it) { it.Seek(t); });
      }, nb::arg("target"))
      .def("seek_to_first", [](PyIterator& self) {
        Position(*self.s, [](Iterator& it) { it.SeekToFirst(); });
      })
      .def("close", &CloseIterator)
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyIterator& self, nb::args) { CloseIterator(self); });
}

}  // namespace dmindex::python
