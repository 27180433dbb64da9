// cpp/bindings/bind_dlpack.cpp: __dlpack__, __dlpack_device__ and from_dlpack (capsules);
// the C exchange API is dlpack_exchange.cpp.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <utility>
#include <vector>

#include "bind_args.h"
#include "bindings.h"
#include "dlpack_exchange.h"
#include "xpuruntime/dlpack.h"
#include "xpuruntime/dlpack_protocol.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/stream.h"

namespace xrt::py {
namespace {

namespace dl = xrt::dlpack;

void release_owner(void*, void* owner) {
  if (!Py_IsInitialized()) return;  // at exit: leak rather than touch a dead interpreter
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(owner));
  PyGILState_Release(state);
}

/// A view of foreign memory at ptr (the first element), owner kept alive by the storage.
Tensor from_pointer(uintptr_t ptr, std::vector<int64_t> shape, std::vector<int64_t> strides,
                    nb::handle dtype, nb::handle device, nb::handle owner, bool readonly) {
  DType d = dtype_arg(dtype);
  std::optional<Device> where = optional_device_arg(device);
  if (!where) throw ValueError("_from_pointer needs a device");
  if (shape.size() != strides.size())
    throw ValueError("shape and strides must have the same length");
  int64_t low = 0, high = 0;
  bool empty = false;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0) throw ValueError("a shape cannot be negative");
    if (shape[k] == 0) empty = true;
    else (strides[k] < 0 ? low : high) += (shape[k] - 1) * strides[k];
  }
  int64_t item = static_cast<int64_t>(itemsize(d));
  size_t nbytes = empty ? 0 : static_cast<size_t>((high - low + 1) * item);
  char* base = reinterpret_cast<char*>(ptr) + low * item;
  auto storage = Storage::wrap(base, nbytes, *where, release_owner, owner.inc_ref().ptr(),
                               readonly);
  Dims dims(static_cast<int>(shape.size())), steps(static_cast<int>(shape.size()));
  for (size_t k = 0; k < shape.size(); ++k) {
    dims[static_cast<int>(k)] = shape[k];
    steps[static_cast<int>(k)] = strides[k];
  }
  return Tensor(std::move(storage), std::move(dims), std::move(steps), -low * item, d);
}

constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kUsedVersioned = "used_dltensor_versioned";
constexpr const char* kLegacy = "dltensor";
constexpr const char* kUsedLegacy = "used_dltensor";

// A capsule nobody consumed still owns its managed tensor.
template <class Managed> void capsule_destructor(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // renamed "used_...": the consumer owns it
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
  PyErr_Restore(type, value, traceback);
}

void versioned_destructor(PyObject* c) { capsule_destructor<dl::DLManagedTensorVersioned>(c, kVersioned); }
void legacy_destructor(PyObject* c) { capsule_destructor<dl::DLManagedTensor>(c, kLegacy); }

std::optional<Device> dl_device_arg(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  if (!nb::isinstance<nb::tuple>(obj) || nb::len(obj) != 2)
    throw TypeError("dl_device must be a (device_type, device_id) tuple");
  auto type = bounded_int_arg(obj[0], "dl_device's device_type", 0, INT32_MAX);
  auto id = bounded_int_arg(obj[1], "dl_device's device_id", 0, INT32_MAX);
  return dl::device_from_dlpack(static_cast<int32_t>(type), static_cast<int32_t>(id));
}


// The consumer's stream as DLPack numbers it (nullopt: None).
std::optional<int64_t> consumer_stream(nb::handle stream) {
  if (stream.is_none()) return std::nullopt;
  if (!PyLong_Check(stream.ptr()) || PyBool_Check(stream.ptr()))
    throw TypeError("__dlpack__: stream must be an int or None, got " +
                    std::string(nb::type_name(stream.type()).c_str()));
  return int_arg(stream, "__dlpack__: stream");
}

nb::object export_capsule(const Tensor& t, nb::handle stream, nb::handle max_version,
                          nb::handle dl_device, nb::handle copy) {
  dl::ExportRequest request;
  if (t.device().is_cpu() && !stream.is_none())
    throw ValueError("stream must be None for a cpu tensor (got " +
                     std::string(nb::repr(stream).c_str()) + ")");
  request.stream = consumer_stream(stream);
  if (!max_version.is_none()) {
    if (!nb::isinstance<nb::tuple>(max_version) || nb::len(max_version) != 2)
      throw TypeError("max_version must be a (major, minor) tuple or None");
    // Any major version from 1 up (however large) can read ours.
    nb::handle major = max_version[0];
    if (!is_int(major))
      throw TypeError("max_version must be a tuple of two ints, got a major version of type " +
                      type_name_of(major));
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(nb::int_(major).ptr(), &overflow);
    request.versioned = overflow > 0 || (!overflow && value >= 1);
  }
  request.dl_device = dl_device_arg(dl_device);
  request.copy = optional_bool_arg(copy, "__dlpack__: copy");
  dl::ExportPlan plan = dl::prepare_export(t, request);
  if (request.versioned) {
    auto* m = dl::export_versioned(plan.tensor, plan.copied);
    PyObject* capsule = PyCapsule_New(m, kVersioned, versioned_destructor);
    if (!capsule) { m->deleter(m); throw nb::python_error(); }
    return nb::steal(capsule);
  }
  auto* m = dl::export_legacy(plan.tensor);
  PyObject* capsule = PyCapsule_New(m, kLegacy, legacy_destructor);
  if (!capsule) { m->deleter(m); throw nb::python_error(); }
  return nb::steal(capsule);
}

// Takes the managed tensor out of a capsule; the capsule is marked used only on success.
Tensor import_capsule(nb::handle capsule) {
  PyObject* c = capsule.ptr();
  const char* name = PyCapsule_GetName(c);
  if (!name) throw nb::python_error();
  std::string_view n(name);
  if (n == kUsedVersioned || n == kUsedLegacy)
    throw BufferError("this DLPack capsule was already consumed (a capsule can be imported once)");
  if (n == kVersioned) {
    Tensor t = dl::import_versioned(
        static_cast<dl::DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, name)));
    PyCapsule_SetName(c, kUsedVersioned);
    return t;
  }
  if (n == kLegacy) {
    Tensor t = dl::import_legacy(static_cast<dl::DLManagedTensor*>(PyCapsule_GetPointer(c, name)));
    PyCapsule_SetName(c, kUsedLegacy);
    return t;
  }
  throw TypeError("expected a DLPack capsule ('dltensor' or 'dltensor_versioned'), got a "
                  "capsule named '" + std::string(n) + "'");
}

// Interned names and keyword tuples for the producer call. Note: interned keywords let a
// producer's argument parser match them by identity (NumPy's compares strings otherwise).
struct Names {
  PyObject* dlpack = PyUnicode_InternFromString("__dlpack__");
  PyObject* dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  PyObject* getattr = PyUnicode_InternFromString("__getattr__");
  PyObject* max_version = PyUnicode_InternFromString("max_version");
  PyObject* stream = PyUnicode_InternFromString("stream");
  PyObject* copy = PyUnicode_InternFromString("copy");
  PyObject* version = Py_BuildValue("(ii)", 1, 1);
  // Indexed by (stream given) * 2 + (copy given), after max_version.
  PyObject* kw[4] = {PyTuple_Pack(1, max_version), PyTuple_Pack(2, max_version, copy),
                     PyTuple_Pack(2, max_version, stream),
                     PyTuple_Pack(3, max_version, stream, copy)};
  PyObject* kw_stream = PyTuple_Pack(1, stream);
};
const Names& names() {
  static const Names* n = new Names();
  return *n;
}

// Where a producer's data lives (from __dlpack_device__; nullopt when it cannot say or
// names a device we do not address). An answer that is not a pair of ints is a broken
// producer: BufferError saying what came back.
std::optional<Device> producer_device(nb::handle obj) {
  PyObject* result = PyObject_CallMethodNoArgs(obj.ptr(), names().dlpack_device);
  if (!result) {
    PyErr_Clear();
    return std::nullopt;
  }
  nb::object device = nb::steal(result);
  auto broken = [&] {
    return BufferError("from_dlpack: __dlpack_device__ returned " +
                       std::string(nb::repr(device).c_str()) +
                       "; expected a (device_type, device_id) tuple of ints");
  };
  // Note: the tuple's items are read in place (an accessor would look each one up anew).
  if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 2) throw broken();
  int32_t type, id;
  try {
    type = static_cast<int32_t>(
        bounded_int_arg(PyTuple_GET_ITEM(result, 0), "device_type", 0, INT32_MAX));
    id = static_cast<int32_t>(
        bounded_int_arg(PyTuple_GET_ITEM(result, 1), "device_id", 0, INT32_MAX));
  } catch (const std::exception&) {
    throw broken();
  }
  if (type == dl::kDLCPU || type == dl::kDLCUDAHost) return kCPU;
  if (type != dl::kDLCUDA && type != dl::kDLCUDAManaged) return std::nullopt;
  return dl::device_from_dlpack(type, id);
}

// Note [NumPy arrays live on the host]: a numpy.ndarray (the type itself, not a subclass,
// which may be anything) is host memory, so its import skips the __dlpack_device__ call: a
// method lookup, a tuple built by NumPy and read back here, about a quarter of
// xrt.from_dlpack(ndarray) (callgrind: 4,412 instructions a call before). The type is known
// by name, so NumPy is never imported for it.
bool is_numpy_array(nb::handle obj) {
  return std::strcmp(Py_TYPE(obj.ptr())->tp_name, "numpy.ndarray") == 0;
}

// Calls obj.__dlpack__(max_version=(1, 1)[, stream=...][, copy=...]). A producer that does
// not take these keywords is asked again with the stream alone (DLPack before 2023), then
// with nothing. *passed_copy says whether the producer saw copy=.
nb::object call_producer(nb::handle obj, std::optional<int64_t> stream, std::optional<bool> copy,
                         bool* passed_copy) {
  const Names& n = names();
  nb::object stream_value;
  PyObject* args[4] = {obj.ptr(), n.version, nullptr, nullptr};
  size_t count = 2;
  if (stream) {
    stream_value = nb::int_(*stream);
    args[count++] = stream_value.ptr();
  }
  if (copy) args[count++] = *copy ? Py_True : Py_False;
  PyObject* kwnames = n.kw[(stream ? 2 : 0) + (copy ? 1 : 0)];
  constexpr size_t self = 1 | PY_VECTORCALL_ARGUMENTS_OFFSET;
  PyObject* result = PyObject_VectorcallMethod(n.dlpack, args, self, kwnames);
  *passed_copy = copy.has_value();
  if (!result && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    *passed_copy = false;
    if (stream) {
      PyObject* retry[2] = {obj.ptr(), stream_value.ptr()};
      result = PyObject_VectorcallMethod(n.dlpack, retry, self, n.kw_stream);
    }
    if (!result && (!stream || PyErr_ExceptionMatches(PyExc_TypeError))) {
      PyErr_Clear();
      result = PyObject_VectorcallMethod(n.dlpack, args, self, nullptr);
    }
  }
  if (!result) throw nb::python_error();
  return nb::steal(result);
}

}  // namespace

// Note: the type's dictionaries through _PyType_Lookup (no exception when it is absent):
// PyObject_HasAttr on a type or on a NumPy scalar raised and cleared an AttributeError,
// its message formatted, about 2,000 host instructions a call, on every NumPy scalar a
// user kernel took. The object itself is asked only where it could answer otherwise: it
// has a __dict__, or its class a Python __getattr__ (a proxy).
bool has_dlpack(nb::handle obj) {
  const Names& n = names();
  PyTypeObject* type = Py_TYPE(obj.ptr());
  if (_PyType_Lookup(type, n.dlpack)) return true;
  if (type->tp_dictoffset == 0 && !_PyType_Lookup(type, n.getattr)) return false;
  return PyObject_HasAttr(obj.ptr(), n.dlpack);
}

Tensor from_dlpack(nb::handle obj, std::optional<Device> device, std::optional<bool> copy) {
  const Tensor* tensor = tensor_of(obj);  // Note [Tensor checks]
  bool is_tensor = tensor != nullptr;
  bool is_capsule = !is_tensor && PyCapsule_CheckExact(obj.ptr());
  if (!is_tensor && !is_capsule && !device && !copy)
    if (const dl::ExchangeAPI* api = exchange_api_of(obj))
      return import_through_exchange(*api, obj);  // no device, no copy: nothing to finish
  bool producer_copied = false;
  if (is_tensor) return dl::finish_import(*tensor, device, copy, false);
  if (is_capsule) return dl::finish_import(import_capsule(obj), device, copy, false);
  if (!has_dlpack(obj))
    throw TypeError("from_dlpack: an object of type '" +
                    std::string(nb::type_name(obj.type()).c_str()) +
                    "' does not support DLPack (it has no __dlpack__ method)");
  // Note: the producer is never asked to move its data (dl_device): many cannot, and
  // finish_import moves it in order on our current stream, which the producer's stream
  // handshake has made wait for its work.
  dl::ImportRequest request = dl::plan_import(
      is_numpy_array(obj) ? std::optional<Device>(kCPU) : producer_device(obj), device, copy);
  nb::object capsule = call_producer(obj, request.stream, request.copy, &producer_copied);
  if (!PyCapsule_CheckExact(capsule.ptr()))
    throw TypeError("__dlpack__ of '" + std::string(nb::type_name(obj.type()).c_str()) +
                    "' returned something other than a capsule");
  return dl::finish_import(import_capsule(capsule), device, copy, producer_copied);
}

// Note [from_dlpack's call]: xrt.from_dlpack(torch_tensor) is the exchange API's fast path
// (issue 15: <= 0.3 us), so its entry is a METH_FASTCALL function that reads its one
// positional argument and two keywords itself, and makes the result's object directly
// (tensor_result): nanobind's dispatch of a function with keyword-only defaults and its
// result cast cost about 300 instructions a call (callgrind, CPU torch tensor).
PyObject* from_dlpack_call(PyObject*, PyObject* const* args, Py_ssize_t nargsf,
                           PyObject* kwnames) {
  try {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n != 1)
      throw TypeError("from_dlpack() takes 1 positional argument (x) but " +
                      std::to_string(n) + " were given");
    nb::handle device = nb::none(), copy = nb::none();
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i) {
      PyObject* name = PyTuple_GET_ITEM(kwnames, i);
      nb::handle value = args[n + i];
      if (PyUnicode_CompareWithASCIIString(name, "device") == 0) {
        device = value;
      } else if (PyUnicode_CompareWithASCIIString(name, "copy") == 0) {
        copy = value;
      } else {
        throw TypeError("from_dlpack() got an unexpected keyword argument '" +
                        std::string(nb::str(name).c_str()) + "'");
      }
    }
    return tensor_result(from_dlpack(args[0], optional_device_arg(device),
                                     optional_bool_arg(copy, "from_dlpack: copy")));
  } catch (...) {
    return raise_current();
  }
}

void bind_dlpack(nb::module_& m) {
  nb::class_<Tensor> cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__dlpack__", &export_capsule, nb::kw_only(), nb::arg("stream").none() = nb::none(),
          nb::arg("max_version").none() = nb::none(), nb::arg("dl_device").none() = nb::none(),
          nb::arg("copy").none() = nb::none(),
          "Exports the tensor as a DLPack capsule (versioned when max_version >= (1, 0)).");
  cls.def("__dlpack_device__", [](const Tensor& t) {
    return nb::make_tuple(t.device().dlpack_type(), static_cast<int>(t.device().index));
  });
  static PyMethodDef from_dlpack_def = {
      "from_dlpack", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(from_dlpack_call)),
      METH_FASTCALL | METH_KEYWORDS,
      "from_dlpack(x, *, device=None, copy=None)\n--\n\nImports any DLPack producer (or a "
      "capsule) without copying when it can."};
  nb::object function = nb::steal(PyCFunction_NewEx(&from_dlpack_def, nullptr, m.attr("__name__").ptr()));
  if (!function.is_valid()) throw nb::python_error();
  m.attr("from_dlpack") = function;
  cls.attr("__dlpack_c_exchange_api__") =
      nb::capsule(&tensor_exchange_api(), "dlpack_exchange_api");
  m.def("_time_exchange_import", &time_exchange_import, nb::arg("obj"),
        nb::arg("count") = 100000,
        "Nanoseconds per call of from_dlpack(obj)'s pieces through obj's C exchange API.");
  m.def("_from_pointer", &from_pointer, nb::arg("ptr"), nb::arg("shape"), nb::arg("strides"),
        nb::arg("dtype"), nb::arg("device"), nb::arg("owner"), nb::arg("readonly") = false,
        "A Tensor over foreign memory (strides in elements), keeping owner alive: the "
        "__cuda_array_interface__ import.");
}

}  // namespace xrt::py
