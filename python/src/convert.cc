#include <Python.h>

#include <climits>

#include "handles.h"

namespace dmindex::python {

void Check(const Status& s) {
  if (!s.ok()) throw StatusError{s};
}

void Misuse(const std::string& message) { throw StatusError{Status::InvalidArgument(message)}; }

Bytes::Bytes(nb::handle h, bool integer_allowed) {
  PyObject* o = h.ptr();
  if (PyBytes_Check(o)) {
    view_ = Slice(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
    return;
  }
  if (PyUnicode_Check(o)) {
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(o, &size);
    if (!utf8) throw nb::python_error();
    view_ = Slice(utf8, static_cast<size_t>(size));
    return;
  }
  if (integer_allowed && PyLong_Check(o) && !PyBool_Check(o)) {
    const unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      Misuse("an integer key must be in 0 .. 2^64-1 (it becomes its 8-byte big-endian encoding)");
    }
    copy_ = U64Key(v).str();
    view_ = copy_;
    return;
  }
  if (PyObject_CheckBuffer(o)) {
    Py_buffer buffer;
    if (PyObject_GetBuffer(o, &buffer, PyBUF_SIMPLE) != 0) throw nb::python_error();
    copy_.assign(static_cast<const char*>(buffer.buf), static_cast<size_t>(buffer.len));
    PyBuffer_Release(&buffer);
    view_ = copy_;
    return;
  }
  throw nb::type_error(integer_allowed ? "a key is bytes, str (UTF-8) or an int (8-byte big-endian)"
                                       : "a value is bytes or str (UTF-8)");
}

nb::bytes ToBytes(Slice s) { return nb::bytes(s.data(), s.size()); }

}  // namespace dmindex::python
