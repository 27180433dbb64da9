// cpp/bindings/convert.cpp: Python values to tensors (asarray and friends) and the
// namespace functions of the foundation (creation, matmul, astype).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <vector>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/norm.h"

namespace xrt::py {
namespace {

// ---- Python scalars -------------------------------------------------------------------

std::optional<Scalar> int_scalar(PyObject* o) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (!overflow) return Scalar::from_int(v);
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (!PyErr_Occurred()) return Scalar::from_uint(u);
    PyErr_Clear();
  }
  throw OverflowError("Python integer " + std::string(nb::str(o).c_str()) +
                      " is out of range for every integer dtype");
}

// ---- Nested sequences -----------------------------------------------------------------

bool is_sequence(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

// The shape comes from the first element at each depth; the walk then checks that every
// sub-sequence agrees (else the sequence is ragged) and finds the widest scalar kind
// (bool < int < float < complex, numbered as Scalar::Kind).
//
// Note [Sequences that change under us]: finding a leaf's kind and converting it may run
// Python code (__getattr__, __index__, __float__) that mutates the very lists being read.
// So the walk holds a strong reference to each sub-sequence while it reads it and to every
// leaf until the conversion ends, and reads a list's length afresh before each item: a list
// that shrinks raises RuntimeError (as iterating a changing dict does) instead of reading
// freed memory.
struct SequenceScan {
  Dims shape;
  int kind = -1;
  std::vector<nb::object> leaves;

  explicit SequenceScan(PyObject* obj) {
    for (PyObject* o = obj; is_sequence(o);) {
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      shape.push_back(n);
      if (shape.size() > 64) throw ValueError("asarray: nesting deeper than 64 levels");
      if (n == 0) break;
      o = PySequence_Fast_ITEMS(o)[0];
    }
    leaves.reserve(static_cast<size_t>(shape_numel(shape)));
    walk(nb::borrow(obj), 0);
  }

  void walk(const nb::object& obj, int depth) {
    PyObject* o = obj.ptr();
    if (depth < shape.size()) {
      if (!is_sequence(o) || PySequence_Fast_GET_SIZE(o) != shape[depth])
        throw ValueError("asarray: the nested sequence is ragged (expected shape " +
                         shape_str(shape) + ")");
      for (int64_t i = 0; i < shape[depth]; ++i) {
        if (PySequence_Fast_GET_SIZE(o) != shape[depth]) {
          PyErr_SetString(PyExc_RuntimeError,
                          "asarray: a list changed size while it was being converted");
          throw nb::python_error();
        }
        walk(nb::borrow(PySequence_Fast_ITEMS(o)[i]), depth + 1);
      }
      return;
    }
    if (is_sequence(o))
      throw ValueError("asarray: the nested sequence is ragged (expected shape " +
                       shape_str(shape) + ")");
    kind = std::max(kind, leaf_kind(o));
    leaves.push_back(obj);
  }

  static int leaf_kind(PyObject* obj) {
    if (std::optional<Scalar> s = scalar_from_python(obj))
      return s->kind == Scalar::Kind::UInt ? 1 : static_cast<int>(s->kind);
    nb::handle h(obj);
    if (nb::isinstance<Tensor>(h)) {
      const Tensor& t = nb::cast<const Tensor&>(h);
      if (t.ndim() != 0) throw ValueError("asarray: a nested sequence may hold 0-d tensors only");
      return is_complex(t.dtype()) ? 4 : is_floating(t.dtype()) ? 3 : t.dtype() == DType::Bool ? 0 : 1;
    }
    // NumPy and other scalars, through the number protocol.
    if (PyIndex_Check(obj)) return 1;
    if (PyObject_HasAttrString(obj, "__float__")) return 3;
    if (PyObject_HasAttrString(obj, "__complex__")) return 4;
    throw TypeError("asarray: cannot convert an object of type '" +
                    std::string(nb::type_name(h.type()).c_str()) + "' inside a sequence");
  }
};

Scalar leaf_value(PyObject* o) {
  if (std::optional<Scalar> s = scalar_from_python(o)) return *s;  // the common leaf first
  if (nb::isinstance<Tensor>(nb::handle(o))) return item(nb::cast<const Tensor&>(nb::handle(o)));
  if (PyIndex_Check(o)) {
    nb::object i = nb::steal(PyNumber_Index(o));
    if (!i.is_valid()) throw nb::python_error();
    return *int_scalar(i.ptr());
  }
  if (PyObject_HasAttrString(o, "__float__")) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return Scalar::from_float(v);
  }
  Py_complex c = PyComplex_AsCComplex(o);
  if (c.real == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return Scalar::from_complex({c.real, c.imag});
}

DType default_dtype_for(int kind) {
  switch (kind) {
    case 0: return DType::Bool;
    case 1: return kDefaultInt;
    case 3: return kDefaultFloat;
    case 4: return kDefaultComplex;
    default: return kDefaultFloat;  // empty sequence
  }
}

Tensor from_sequence(nb::handle obj, std::optional<DType> dtype, Device device) {
  SequenceScan scan(obj.ptr());
  DType d = dtype.value_or(default_dtype_for(scan.kind));
  if (!dtype && scan.kind == 1) {  // ints past int64 need an explicit uint64
    for (const nb::object& leaf : scan.leaves)
      if (PyLong_Check(leaf.ptr()) && !PyBool_Check(leaf.ptr())) {
        Scalar s = *int_scalar(leaf.ptr());
        if (s.kind == Scalar::Kind::UInt)
          throw OverflowError("Python integer " + std::to_string(s.u) +
                              " does not fit the default integer dtype int64; pass dtype=uint64");
      }
  }
  Tensor host = empty(scan.shape, d, kCPU);
  size_t item_size = itemsize(d);
  char* at = static_cast<char*>(host.data());
  for (size_t i = 0; i < scan.leaves.size(); ++i, at += item_size) {
    // scalar_tensor converts by full()'s cast rule (OverflowError for an int that does not
    // fit) into a host scalar the thread keeps: no tensor made and no op run per element,
    // which made a list of 16 floats cost 3.6 us against NumPy's 0.5.
    Tensor converted = scalar_tensor(leaf_value(scan.leaves[i].ptr()), d, kCPU);
    std::memcpy(at, converted.data(), item_size);
  }
  return to_device(host, device);
}

// ---- Buffer protocol ------------------------------------------------------------------

std::optional<DType> dtype_from_format(const char* format, Py_ssize_t itemsize) {
  std::string f(format ? format : "B");
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.erase(0, 1);
  if (f == "l" || f == "L") f = (itemsize == 8 ? (f == "l" ? "q" : "Q") : (f == "l" ? "i" : "I"));
  if (f == "c") f = "B";
  for (int i = 0; i < kNumDTypes; ++i) {
    const DTypeInfo& info = dtype_info(static_cast<DType>(i));
    if (!info.buffer_format.empty() && info.buffer_format == f && info.itemsize == itemsize)
      return static_cast<DType>(i);
  }
  return std::nullopt;
}

Tensor from_buffer(nb::handle obj) {
  auto* view = new Py_buffer;
  if (PyObject_GetBuffer(obj.ptr(), view, PyBUF_RECORDS_RO) != 0) {
    delete view;
    throw nb::python_error();
  }
  auto release = [](void*, void* ctx) {
    PyGILState_STATE state = PyGILState_Ensure();
    PyBuffer_Release(static_cast<Py_buffer*>(ctx));
    PyGILState_Release(state);
    delete static_cast<Py_buffer*>(ctx);
  };
  std::optional<DType> d = dtype_from_format(view->format, view->itemsize);
  if (!d) {
    std::string format = view->format ? view->format : "?";
    PyBuffer_Release(view);
    delete view;
    throw TypeError("asarray: buffer format '" + format + "' has no xpuruntime dtype");
  }
  Dims shape(view->shape, view->shape + view->ndim);
  Dims strides;
  for (int i = 0; i < view->ndim; ++i) {
    if (view->strides[i] % view->itemsize != 0) {
      PyBuffer_Release(view);
      delete view;
      throw BufferError("asarray: buffer strides are not multiples of the item size");
    }
    strides.push_back(view->strides[i] / view->itemsize);
  }
  auto storage = Storage::wrap(view->buf, static_cast<size_t>(view->len), kCPU, release, view,
                               view->readonly != 0);
  return Tensor(std::move(storage), std::move(shape), std::move(strides), 0, *d);
}

// ---- Argument helpers -----------------------------------------------------------------

Dims shape_arg(nb::handle obj) {
  Dims shape;
  if (PyLong_Check(obj.ptr())) {
    shape.push_back(int_arg(obj, "shape"));
  } else if (PyTuple_Check(obj.ptr()) || PyList_Check(obj.ptr())) {
    for (nb::handle d : obj) {
      if (!PyIndex_Check(d.ptr()) || PyBool_Check(d.ptr()))
        throw TypeError("shape entries must be integers, got " + std::string(nb::repr(d).c_str()));
      shape.push_back(int_arg(d, "a shape entry"));
    }
  } else {
    throw TypeError("shape must be an int or a tuple of ints, got " +
                    std::string(nb::repr(obj).c_str()));
  }
  for (int64_t d : shape)
    if (d < 0) throw ValueError("negative dimensions are not allowed: " + shape_str(shape));
  return shape;
}



DType dtype_for_fill(const Scalar& value) {
  switch (value.kind) {
    case Scalar::Kind::Bool: return DType::Bool;
    case Scalar::Kind::Int: return kDefaultInt;
    case Scalar::Kind::UInt: return DType::UInt64;
    case Scalar::Kind::Float: return kDefaultFloat;
    case Scalar::Kind::Complex: return kDefaultComplex;
  }
  return kDefaultFloat;
}

}  // namespace

std::optional<Scalar> scalar_from_python(nb::handle obj) {
  PyObject* o = obj.ptr();
  if (PyBool_Check(o)) return Scalar::from_bool(o == Py_True);
  if (PyLong_CheckExact(o) || (PyLong_Check(o) && !PyBool_Check(o))) return int_scalar(o);
  if (PyFloat_Check(o)) return Scalar::from_float(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) {
    return Scalar::from_complex({PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)});
  }
  return std::nullopt;
}

// Note [NumPy scalars as operands]: the standard defines Python scalars next to arrays; a
// NumPy scalar is the same number in another dress (np.float64 even subclasses float), so it
// counts as the Python scalar of its kind. The check runs only after the fast paths failed,
// and never imports NumPy: a type from the numpy module with an item() method is enough.
std::optional<Scalar> operand_scalar(nb::handle obj) {
  if (std::optional<Scalar> s = scalar_from_python(obj)) return s;
  const char* type_name = Py_TYPE(obj.ptr())->tp_name;
  bool numpy_scalar = std::strncmp(type_name, "numpy.", 6) == 0 &&
                      std::strcmp(type_name, "numpy.ndarray") != 0 && nb::hasattr(obj, "item");
  if (!numpy_scalar) return std::nullopt;
  return scalar_from_python(obj.attr("item")());
}

// Note [Array fill values]: the standard's full and full_like take a Python scalar; NumPy's
// and PyTorch's also take a NumPy scalar or a 0-d array, and array API code passes them
// (SciPy's iterative methods call xp.full(n, xp.asarray(code), dtype=xp.int32)). A NumPy
// scalar acts as the Python scalar of its kind (Note [NumPy scalars as operands]). A 0-d
// array's value is copied on the target device (no host wait for a device's own array) and
// cast as astype casts, as NumPy's full casts it (a Python int out of range stays an
// OverflowError). full takes the array's dtype when none is given, full_like keeps x's, as
// NumPy does.
std::variant<Scalar, Tensor> fill_value_arg(nb::handle obj, const char* what) {
  if (std::optional<Scalar> s = operand_scalar(obj)) return *s;
  std::optional<Tensor> t;
  if (const Tensor* p = tensor_of(obj)) t = *p;
  else if (has_dlpack(obj) || PyObject_CheckBuffer(obj.ptr()))
    t = asarray(obj, std::nullopt, std::nullopt, std::nullopt);
  if (!t)
    throw TypeError(std::string(what) + " must be a Python bool, int, float or complex, or a "
                    "0-d array, got " + type_name_of(obj));
  if (t->ndim() != 0)
    throw TypeError(std::string(what) + " must be a scalar or a 0-d array, got an array of "
                    "shape " + shape_str(t->shape()));
  return *t;
}

nb::object scalar_to_python(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::Bool: return nb::bool_(s.b);
    case Scalar::Kind::Int: return nb::int_(s.i);
    case Scalar::Kind::UInt: return nb::steal(PyLong_FromUnsignedLongLong(s.u));
    case Scalar::Kind::Float: return nb::float_(s.c.real());
    case Scalar::Kind::Complex: return nb::steal(PyComplex_FromDoubles(s.c.real(), s.c.imag()));
  }
  return nb::none();
}

Tensor asarray(nb::handle obj, std::optional<DType> dtype, std::optional<Device> device,
               std::optional<bool> copy) {
  auto finish = [&](Tensor t, bool fresh) {
    Device target = device.value_or(t.device());
    DType d = dtype.value_or(t.dtype());
    bool needs_copy = target != t.device() || d != t.dtype();
    if (needs_copy && copy == false)
      throw ValueError("asarray: copy=False, but converting to " +
                       std::string(dtype_info(d).name) + " on " + target.str() +
                       " needs a copy");
    if (target != t.device()) t = to_device(t, target), fresh = true;
    if (d != t.dtype()) return astype(t, d, true);
    if (copy == true && !fresh) return astype(t, d, true);
    return t;
  };
  if (nb::isinstance<Tensor>(obj)) return finish(nb::cast<const Tensor&>(obj), false);
  if (std::optional<Scalar> s = scalar_from_python(obj)) {
    if (copy == false) throw ValueError("asarray: copy=False, but a Python scalar must be copied");
    DType d = dtype.value_or(dtype_for_fill(*s));
    return full(Dims{}, *s, d, device.value_or(default_device()));
  }
  // A plain list or tuple first: the protocol checks below ask the object for attributes it
  // lacks, and each failed lookup raises and clears an AttributeError (about 0.5 us of a
  // 16-element list's 1.7).
  if (PyList_CheckExact(obj.ptr()) || PyTuple_CheckExact(obj.ptr())) {
    if (copy == false) throw ValueError("asarray: copy=False, but a sequence must be copied");
    return from_sequence(obj, dtype, device.value_or(default_device()));
  }
  if (has_dlpack(obj)) {
    Tensor t = from_dlpack(obj, std::nullopt, copy == true && !dtype && !device ? copy : std::nullopt);
    return finish(t, copy == true && !dtype && !device);
  }
  if (PyObject_HasAttrString(obj.ptr(), "__cuda_array_interface__")) {
    // Numba, cuDF and older CUDA libraries speak only this protocol; its import (stream
    // wait included) is Python code in xpuruntime.adapters.
    nb::object t = nb::module_::import_("xpuruntime.adapters._cuda_array_interface")
                       .attr("from_cuda_array_interface")(obj);
    return finish(nb::cast<Tensor>(t), false);
  }
  if (PyObject_CheckBuffer(obj.ptr())) {
    // Note: arrays (our tensors, DLPack producers such as NumPy) keep their device, as the
    // standard asks; a plain buffer (bytes, array.array, memoryview) is host data like a
    // list and goes to the default device.
    if (!device) device = default_device();
    return finish(from_buffer(obj), false);
  }
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    if (copy == false) throw ValueError("asarray: copy=False, but a sequence must be copied");
    return from_sequence(obj, dtype, device.value_or(default_device()));
  }
  throw TypeError("asarray: cannot convert an object of type '" +
                  std::string(nb::type_name(obj.type()).c_str()) + "' to a tensor");
}

void bind_convert(nb::module_& m) {
  m.def("asarray", [](nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy) {
    return asarray(obj, optional_dtype_arg(dtype), optional_device_arg(device),
                   optional_bool_arg(copy, "asarray: copy"));
  }, nb::arg("obj").none(), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
     nb::arg("device").none() = nb::none(), nb::arg("copy").none() = nb::none());

  m.def("empty", [](nb::handle shape, nb::handle dtype, nb::handle device) {
    return empty(shape_arg(shape), optional_dtype_arg(dtype).value_or(kDefaultFloat),
                 optional_device_arg(device).value_or(default_device()));
  }, nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
     nb::arg("device").none() = nb::none());
  m.def("zeros", [](nb::handle shape, nb::handle dtype, nb::handle device) {
    return full(shape_arg(shape), Scalar::from_int(0),
                optional_dtype_arg(dtype).value_or(kDefaultFloat),
                optional_device_arg(device).value_or(default_device()));
  }, nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
     nb::arg("device").none() = nb::none());
  m.def("ones", [](nb::handle shape, nb::handle dtype, nb::handle device) {
    return full(shape_arg(shape), Scalar::from_int(1),
                optional_dtype_arg(dtype).value_or(kDefaultFloat),
                optional_device_arg(device).value_or(default_device()));
  }, nb::arg("shape"), nb::arg("dtype").none() = nb::none(), nb::kw_only(),
     nb::arg("device").none() = nb::none());
  m.def("full", [](nb::handle shape, nb::handle fill_value, nb::handle dtype, nb::handle device) {
    Dims dims = shape_arg(shape);
    std::variant<Scalar, Tensor> value = fill_value_arg(fill_value, "full: fill_value");
    std::optional<DType> d = optional_dtype_arg(dtype);
    Device target = optional_device_arg(device).value_or(default_device());
    if (const Scalar* s = std::get_if<Scalar>(&value))
      return full(dims, *s, d.value_or(dtype_for_fill(*s)), target);
    const Tensor& fill = std::get<Tensor>(value);  // Note [Array fill values]
    Tensor out = empty(dims, d.value_or(fill.dtype()), target);
    copy_into(out, to_device(fill, target));
    return out;
  }, nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype").none() = nb::none(),
     nb::kw_only(), nb::arg("device").none() = nb::none());
  m.def("arange", [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype,
                     nb::handle device) {
    auto number = [](nb::handle o, const char* what) {
      std::optional<Scalar> s = scalar_from_python(o);
      if (!s || s->kind == Scalar::Kind::Complex || s->kind == Scalar::Kind::Bool)
        throw TypeError(std::string("arange: ") + what + " must be an int or a float");
      return *s;
    };
    Scalar a = number(start, "start");
    Scalar b = stop.is_none() ? a : number(stop, "stop");
    if (stop.is_none()) a = Scalar::from_int(0);
    Scalar c = number(step, "step");
    bool all_int = a.kind != Scalar::Kind::Float && b.kind != Scalar::Kind::Float &&
                   c.kind != Scalar::Kind::Float;
    DType d = optional_dtype_arg(dtype).value_or(all_int ? kDefaultInt : kDefaultFloat);
    return arange(a, b, c, d, optional_device_arg(device).value_or(default_device()));
  }, nb::arg("start"), nb::arg("stop").none() = nb::none(), nb::arg("step") = 1,
     nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("device").none() = nb::none());

  m.def("matmul", [](nb::handle x1, nb::handle x2) {
    return matmul(tensor_arg(x1, "matmul: x1"), tensor_arg(x2, "matmul: x2"));
  }, nb::arg("x1"), nb::arg("x2"));
  // xpuruntime.nn.linear (Note [Fused linear]); activation as linear's enum value.
  m.def("_linear", [](nb::handle x, nb::handle weight, nb::handle bias, int activation) {
    Tensor xt = tensor_arg(x, "linear: x"), wt = tensor_arg(weight, "linear: weight");
    std::optional<Tensor> b;
    if (!bias.is_none()) b = tensor_arg(bias, "linear: bias");
    return linear(xt, wt, b ? &*b : nullptr, static_cast<Activation>(activation));
  }, nb::arg("x"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("activation"));
  // xpuruntime.nn.PackedLinearWeight (Note [Packed linear weights]).
  m.def("_pack_linear_weight", [](nb::handle weight) {
    return pack_linear_weight(tensor_arg(weight, "pack_linear_weight: weight"));
  }, nb::arg("weight"));
  m.def("_linear_packed", [](nb::handle x, const Tensor& packed, int64_t out_features,
                             nb::handle bias, int activation) {
    Tensor xt = tensor_arg(x, "linear: x");
    std::optional<Tensor> b;
    if (!bias.is_none()) b = tensor_arg(bias, "linear: bias");
    return linear_packed(xt, packed, out_features, b ? &*b : nullptr,
                         static_cast<Activation>(activation));
  }, nb::arg("x"), nb::arg("packed"), nb::arg("out_features"), nb::arg("bias").none(),
     nb::arg("activation"));
  // xrt.nn.scaled_dot_product_attention's output layout, and its CPU kernel "rows" (Note
  // [CPU attention]).
  m.def("_attention_output", &empty_attention_output, nb::arg("q"), nb::arg("dv"));
  m.def("_attention_rows", [](const Tensor& q, const Tensor& k, const Tensor& v,
                              std::optional<Tensor> mask, bool causal, double scale, Tensor out) {
    attention_rows(q, k, v, mask ? &*mask : nullptr, causal, scale, out);
    return out;
  }, nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("mask").none(), nb::arg("causal"),
     nb::arg("scale"), nb::arg("out"));
  // xpuruntime.nn's row ops (Note [Row ops]); the Python side checks the argument types.
  m.def("_softmax", [](nb::handle x, int64_t axis, bool log) {
    return softmax(tensor_arg(x, log ? "log_softmax: x" : "softmax: x"), axis, log);
  }, nb::arg("x"), nb::arg("axis"), nb::arg("log"));
  m.def("_layer_norm", [](nb::handle x, int64_t ndim, nb::handle weight, nb::handle bias,
                          double eps) {
    Tensor xt = tensor_arg(x, "layer_norm: x");
    std::optional<Tensor> w, b;
    if (!weight.is_none()) w = tensor_arg(weight, "layer_norm: weight");
    if (!bias.is_none()) b = tensor_arg(bias, "layer_norm: bias");
    return layer_norm(xt, ndim, w ? &*w : nullptr, b ? &*b : nullptr, eps);
  }, nb::arg("x"), nb::arg("normalized_ndim"), nb::arg("weight").none(), nb::arg("bias").none(),
     nb::arg("eps"));
  m.def("_rms_norm", [](nb::handle x, int64_t ndim, nb::handle weight, double eps) {
    Tensor xt = tensor_arg(x, "rms_norm: x");
    std::optional<Tensor> w;
    if (!weight.is_none()) w = tensor_arg(weight, "rms_norm: weight");
    return rms_norm(xt, ndim, w ? &*w : nullptr, eps);
  }, nb::arg("x"), nb::arg("normalized_ndim"), nb::arg("weight").none(), nb::arg("eps"));
  m.def("_add_norm", [](nb::handle x, nb::handle residual, int64_t ndim, nb::handle weight,
                        nb::handle bias, double eps, bool rms) {
    const char* op = rms ? "rms_norm" : "layer_norm";
    Tensor xt = tensor_arg(x, op), rt = tensor_arg(residual, op);
    std::optional<Tensor> w, b;
    if (!weight.is_none()) w = tensor_arg(weight, op);
    if (!bias.is_none()) b = tensor_arg(bias, op);
    return add_norm(xt, rt, ndim, w ? &*w : nullptr, b ? &*b : nullptr, eps, rms);
  }, nb::arg("x"), nb::arg("residual"), nb::arg("normalized_ndim"), nb::arg("weight").none(),
     nb::arg("bias").none(), nb::arg("eps"), nb::arg("rms"));
  m.def("astype", [](nb::handle x, nb::handle dtype, bool copy, nb::handle device) {
    Tensor t = tensor_arg(x, "astype: x");
    if (std::optional<Device> d = optional_device_arg(device)) t = to_device(t, *d);
    return astype_keeping_layout(t, dtype_arg(dtype), copy);
  }, nb::arg("x"), nb::arg("dtype"), nb::kw_only(), nb::arg("copy") = true,
     nb::arg("device").none() = nb::none());
}

}  // namespace xrt::py
