// cpp/bindings/bind_indexing.cpp: Tensor.__getitem__/__setitem__ (a Python key becomes a
// TensorIndex; the meaning lives in core/indexing_ops.cpp) and take, take_along_axis,
// nonzero.
#include <nanobind/stl/string.h>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/indexing.h"

namespace xrt::py {
namespace {

std::string type_name_of(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

// An int (or an object with __index__) as an int64. Past int64 it is out of range for any
// axis, and is said so here, where its value is still known.
int64_t integer_arg(PyObject* obj) {
  nb::object value = nb::steal(PyNumber_Index(obj));
  if (!value.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow)
    throw IndexError("index " + std::string(nb::str(value).c_str()) + " is out of bounds");
  return v;
}

// Array-likes (lists, NumPy arrays and scalars) index as the tensor asarray makes of them;
// an empty list is an empty integer index, as in NumPy.
bool is_array_like(PyObject* obj) {
  return PyList_Check(obj) || PyTuple_Check(obj) || has_dlpack(obj) ||
         (PyObject_CheckBuffer(obj) && !PyBytes_Check(obj) && !PyByteArray_Check(obj));
}

void add_item(TensorIndex& index, nb::handle key) {
  PyObject* obj = key.ptr();
  if (PyLong_CheckExact(obj)) return index.push_back(IndexItem::integer(integer_arg(obj)));
  if (PySlice_Check(obj)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(obj, &start, &stop, &step) < 0) throw nb::python_error();
    return index.push_back(IndexItem::slice(start, stop, step));
  }
  if (obj == Py_None) return index.push_back(IndexItem::new_axis());
  if (obj == Py_Ellipsis) return index.push_back(IndexItem::ellipsis());
  if (PyBool_Check(obj)) return index.push_back(IndexItem::boolean(obj == Py_True));
  if (nb::isinstance<Tensor>(key)) return index.push_array(nb::cast<const Tensor&>(key));
  if (PyLong_Check(obj)) return index.push_back(IndexItem::integer(integer_arg(obj)));
  if (is_array_like(obj)) {
    Tensor t = asarray(key, std::nullopt, std::nullopt, std::nullopt);
    if (t.numel() == 0 && PyList_Check(obj)) t = astype(t, kDefaultIndex, false);
    return index.push_array(std::move(t));
  }
  if (PyIndex_Check(obj)) return index.push_back(IndexItem::integer(integer_arg(obj)));
  throw IndexError(
      "only integers, slices (`:`), ellipsis (`...`), None and integer or "
      "boolean arrays are valid indices, not '" +
      type_name_of(key) + "'");
}

TensorIndex index_arg(nb::handle key) {
  TensorIndex index;
  if (PyTuple_Check(key.ptr())) {
    Py_ssize_t n = PyTuple_GET_SIZE(key.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) add_item(index, PyTuple_GET_ITEM(key.ptr(), i));
  } else {
    add_item(index, key);
  }
  return index;
}

int64_t axis_arg(nb::handle axis, const char* what) {
  if (!PyIndex_Check(axis.ptr()) || PyBool_Check(axis.ptr()))
    throw TypeError(std::string(what) + ": axis must be an int, got '" + type_name_of(axis) + "'");
  return int_arg(axis, (std::string(what) + ": axis").c_str());
}

Tensor get(const Tensor& self, nb::handle key) { return getitem(self, index_arg(key)); }

void set(Tensor& self, nb::handle key, nb::handle value) {
  TensorIndex index = index_arg(key);
  if (nb::isinstance<Tensor>(value)) return setitem(self, index, nb::cast<const Tensor&>(value));
  if (std::optional<Scalar> s = scalar_from_python(value)) return setitem(self, index, *s);
  setitem(self, index, asarray(value, std::nullopt, std::nullopt, std::nullopt));
}

// Note [Direct subscript slots]: Python reaches a bound __getitem__ through a generic slot
// that looks the method up and packs its arguments on every x[...]; that is most of the
// cost of x[0]. The slots below call get/set directly and report errors as the bound
// methods do (set_python_error), never by running the key again: a key's __index__ is
// user code and runs once. Only an exception set_python_error does not know takes the
// bound method's path a second time. Assigning
// Tensor.__getitem__ (as the signature wrappers do) resets the slots to the generic ones;
// _install_subscript_slots() puts them back afterwards.
nb::handle bound_getitem, bound_setitem;

Tensor* tensor_of(PyObject* self) {
  return nb::inst_ready(self) ? nb::inst_ptr<Tensor>(self) : nullptr;
}

PyObject* subscript(PyObject* self, PyObject* key) {
  if (Tensor* t = tensor_of(self)) {
    try {
      return nb::cast(get(*t, key), nb::rv_policy::move).release().ptr();
    } catch (...) {
      if (set_python_error(std::current_exception())) return nullptr;
    }
  }
  return PyObject_CallFunctionObjArgs(bound_getitem.ptr(), self, key, nullptr);
}

int assign_subscript(PyObject* self, PyObject* key, PyObject* value) {
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "tensor elements cannot be deleted");
    return -1;
  }
  if (Tensor* t = tensor_of(self)) {
    try {
      set(*t, key, value);
      return 0;
    } catch (...) {
      if (set_python_error(std::current_exception())) return -1;
    }
  }
  PyObject* result = PyObject_CallFunctionObjArgs(bound_setitem.ptr(), self, key, value, nullptr);
  Py_XDECREF(result);
  return result ? 0 : -1;
}

void install_subscript_slots() {
  auto* type = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr());
  type->tp_as_mapping->mp_subscript = subscript;
  type->tp_as_mapping->mp_ass_subscript = assign_subscript;
  PyType_Modified(type);
}

}  // namespace

void bind_indexing(nb::module_& m) {
  nb::handle tensor = nb::type<Tensor>();
  nb::cpp_function_def(&get, nb::scope(tensor), nb::name("__getitem__"), nb::is_method(),
                       nb::arg("key").none());
  nb::cpp_function_def(&set, nb::scope(tensor), nb::name("__setitem__"), nb::is_method(),
                       nb::arg("key").none(), nb::arg("value").none());
  bound_getitem = nb::object(tensor.attr("__getitem__")).release();  // immortal, like the type
  bound_setitem = nb::object(tensor.attr("__setitem__")).release();
  install_subscript_slots();
  m.def("_install_subscript_slots", &install_subscript_slots,
        "Points Tensor's subscript slots at the direct C++ paths again (after __getitem__ or "
        "__setitem__ was reassigned).");

  m.def(
      "take",
      [](const Tensor& x, const Tensor& indices, nb::handle axis) {
        std::optional<int64_t> a;
        if (!axis.is_none()) a = axis_arg(axis, "take");
        return take(x, indices, a);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis").none() = nb::none());
  m.def(
      "take_along_axis",
      [](const Tensor& x, const Tensor& indices, nb::handle axis) {
        return take_along_axis(x, indices, axis_arg(axis, "take_along_axis"));
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = -1);
  m.def(
      "nonzero",
      [](const Tensor& x) { return tensor_tuple(nonzero(x)); },
      nb::arg("x"));
}

}  // namespace xrt::py
