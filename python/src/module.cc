// dmindex._dmindex: the C++ API (include/dmindex/) for Python. python/dmindex/__init__.py
// re-exports it with the error classes and the bench helpers; docs/PYTHON.md documents both.
#include <nanobind/stl/string.h>

#include "handles.h"

namespace dmindex::python {
namespace {

// A StatusError becomes the dmindex.Error subclass of its code, carrying code and message.
void TranslateStatus(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const StatusError& e) {
    nb::object error = nb::module_::import_("dmindex._errors")
                           .attr("error_of")(static_cast<int>(e.status.code()), e.status.message());
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  }
}

}  // namespace
}  // namespace dmindex::python

NB_MODULE(_dmindex, m) {
  namespace py = dmindex::python;
  nanobind::register_exception_translator(&py::TranslateStatus);
  py::BindIndex(m);
  py::BindSession(m);
}
