// cpp/bindings/bind_args.h: argument conversions of the manipulation and creation bindings
// (ints, axis tuples, sequences of tensors) and tuple results. Header-only and inline: each
// conversion is a few CPython calls on the hot path of a view function.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "bindings.h"
#include "xpuruntime/errors.h"

namespace xrt::py {

inline std::string type_name_of(nb::handle o) { return nb::type_name(o.type()).c_str(); }

/// A Python int or an object with __index__ (NumPy integers, 0-d integer tensors); not bool.
inline bool is_int(nb::handle o) {
  return !PyBool_Check(o.ptr()) && (PyLong_Check(o.ptr()) || PyIndex_Check(o.ptr()));
}

inline bool is_tuple_or_list(nb::handle o) {
  return PyTuple_Check(o.ptr()) || PyList_Check(o.ptr());
}

/// An int argument; TypeError for other types (bool included), OverflowError past int64.
inline int64_t int_arg(nb::handle o, const char* what) {
  PyObject* p = o.ptr();
  nb::object index;
  if (!PyLong_CheckExact(p)) {
    if (!is_int(o))
      throw TypeError(std::string(what) + " must be an integer, got " + type_name_of(o));
    index = nb::steal(PyNumber_Index(p));
    if (!index.is_valid()) throw nb::python_error();
    p = index.ptr();
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
  if (overflow)
    throw OverflowError(std::string(what) + " is out of the int64 range: " +
                        nb::repr(nb::handle(p)).c_str());
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

/// An int argument clamped to [-2^62, 2^62] (diagonal offsets: every larger one means the same).
inline int64_t clamped_int_arg(nb::handle o, const char* what) {
  constexpr int64_t limit = int64_t{1} << 62;
  if (PyLong_Check(o.ptr()) && !PyBool_Check(o.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    if (overflow) return overflow > 0 ? limit : -limit;
    return std::max<int64_t>(-limit, std::min<int64_t>(limit, v));
  }
  return int_arg(o, what);
}

inline std::optional<int64_t> optional_int_arg(nb::handle o, const char* what) {
  if (o.is_none()) return std::nullopt;
  return int_arg(o, what);
}

/// An int or a tuple (or list) of ints, as Dims.
inline Dims int_tuple_arg(nb::handle o, const char* what) {
  PyObject* p = o.ptr();
  if (!is_tuple_or_list(o)) {
    if (!is_int(o))
      throw TypeError(std::string(what) + " must be an int or a tuple of ints, got " +
                      type_name_of(o));
    return Dims{int_arg(o, what)};
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(p);
  PyObject** items = PySequence_Fast_ITEMS(p);
  Dims out(static_cast<int>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!is_int(items[i]))
      throw TypeError(std::string(what) + " must hold ints only, got " +
                      type_name_of(items[i]));
    out[static_cast<int>(i)] = int_arg(items[i], what);
  }
  return out;
}

/// None, True or False; TypeError naming the argument for anything else (no truthiness:
/// copy="yes" is a mistake, not a yes).
inline std::optional<bool> optional_bool_arg(nb::handle o, const char* what) {
  if (o.is_none()) return std::nullopt;
  if (!PyBool_Check(o.ptr()))
    throw TypeError(std::string(what) + " must be True, False or None, got " + type_name_of(o));
  return o.ptr() == Py_True;
}

/// An int argument that must lie in [low, high]; ValueError naming it otherwise.
inline int64_t bounded_int_arg(nb::handle o, const char* what, int64_t low, int64_t high) {
  int64_t v;
  try {
    v = int_arg(o, what);
  } catch (const OverflowError&) {
    throw ValueError(std::string(what) + " must lie in [" + std::to_string(low) + ", " +
                     std::to_string(high) + "], got " + nb::repr(o).c_str());
  }
  if (v < low || v > high)
    throw ValueError(std::string(what) + " must lie in [" + std::to_string(low) + ", " +
                     std::to_string(high) + "], got " + std::to_string(v));
  return v;
}

inline bool bool_arg(nb::handle o, const char* what) {
  if (!PyBool_Check(o.ptr()))
    throw TypeError(std::string(what) + " must be a bool or None, got " + type_name_of(o));
  return o.ptr() == Py_True;
}

inline const Tensor& tensor_arg(nb::handle o, const char* what) {
  const Tensor* t = tensor_of(o);
  if (!t)
    throw TypeError(std::string(what) + " must be an xpuruntime Tensor, got " + type_name_of(o));
  return *t;
}

/// A tuple or list of tensors.
inline std::vector<Tensor> tensor_sequence_arg(nb::handle o, const char* what) {
  if (!is_tuple_or_list(o))
    throw TypeError(std::string(what) + " must be a tuple or list of tensors, got " +
                    type_name_of(o));
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o.ptr());
  PyObject** items = PySequence_Fast_ITEMS(o.ptr());
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) out.push_back(tensor_arg(items[i], what));
  return out;
}

inline nb::tuple shape_tuple(const Dims& dims) {
  PyObject* t = PyTuple_New(dims.size());
  for (int i = 0; i < dims.size(); ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(dims[i]));
  return nb::steal<nb::tuple>(t);
}

inline nb::tuple tensor_tuple(std::vector<Tensor> tensors) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(tensors.size()));
  nb::tuple result = nb::steal<nb::tuple>(t);
  for (size_t i = 0; i < tensors.size(); ++i) {
    PyObject* item = nb::cast(std::move(tensors[i])).release().ptr();
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), item);
  }
  return result;
}

}  // namespace xrt::py
