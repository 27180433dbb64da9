// cpp/bindings/bind_tensor.cpp: the Tensor type: attributes, operators, conversions.
#include <nanobind/stl/string.h>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/profiler.h"

namespace xrt::py {
namespace {

nb::object not_implemented() { return nb::borrow(Py_NotImplemented); }

// A value read from a device waits for the device: without the GIL.
nb::object scalar_of(const Tensor& t, profiler::Cause cause = profiler::Cause::Item) {
  profiler::CauseScope why(cause);  // names the wait for the profiler
  if (t.device().is_cpu()) return scalar_to_python(item(t));
  Scalar s;
  {
    nb::gil_scoped_release release;
    s = item(t);
  }
  return scalar_to_python(s);
}

// to_device's stream: a Stream of the device, or a DLPack stream number.
Stream copy_stream(nb::handle stream, Device device) {
  if (nb::isinstance<Stream>(stream)) {
    const auto& s = nb::cast<const Stream&>(stream);
    if (s.device() != device)
      throw ValueError("to_device: the stream belongs to " + s.device().str() +
                       ", the copy runs on " + device.str());
    return s;
  }
  if (!PyLong_Check(stream.ptr()) || PyBool_Check(stream.ptr()))
    throw TypeError("to_device: stream must be a cuda.Stream or an int, got " +
                    std::string(nb::type_name(stream.type()).c_str()));
  return backend(device).stream_from_dlpack_number(device, int_arg(stream, "to_device: stream"));
}

// Note [Tensor buffers]: a CPU tensor exports the buffer protocol (PEP 3118), so that
// np.asarray(t), memoryview(t) and bytes(t) read it with no copy and no Python call: NumPy
// asks for a buffer before it calls __array__, which runs in Python (through DLPack) and took
// about 1.3 us for 16 floats. A device tensor and a bfloat16 one (no PEP 3118 format) refuse
// with BufferError; NumPy then calls __array__, which names the explicit copy for a device
// tensor and converts bfloat16 through ml_dtypes. A read-only tensor (broadcast views
// included) gives read-only buffers only. The buffer holds the Python object, and with it
// the storage.
int tensor_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  const Tensor* t = tensor_of(self);
  if (!t) {
    PyErr_SetString(PyExc_BufferError, "not a Tensor");
    return -1;
  }
  const char* refusal = nullptr;
  const DTypeInfo& info = dtype_info(t->dtype());
  bool c_order = t->is_contiguous();
  if (!t->device().is_cpu())
    refusal = "a device tensor exports no buffer; copy it with x.to_device(\"cpu\")";
  else if (info.buffer_format.empty())
    refusal = "this dtype has no buffer format (PEP 3118)";
  else if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && t->readonly())
    refusal = "the tensor is read-only";
  else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_order)
    refusal = "the tensor is not C-contiguous and the consumer takes no strides";
  else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && t->ndim() > 1 &&
           (flags & PyBUF_C_CONTIGUOUS) != PyBUF_C_CONTIGUOUS)
    refusal = "the tensor is not Fortran-contiguous";
  else if (((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS ||
            (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS) && !c_order)
    refusal = "the tensor is not contiguous";
  if (refusal) {
    PyErr_SetString(PyExc_BufferError, refusal);
    return -1;
  }
  const int ndim = t->ndim();
  auto* dims = static_cast<Py_ssize_t*>(PyMem_Malloc(sizeof(Py_ssize_t) * (2 * ndim + 1)));
  if (!dims) {
    PyErr_NoMemory();
    return -1;
  }
  const auto item = static_cast<Py_ssize_t>(t->itemsize());
  for (int d = 0; d < ndim; ++d) {
    dims[d] = static_cast<Py_ssize_t>(t->shape()[d]);
    dims[ndim + d] = static_cast<Py_ssize_t>(t->strides()[d]) * item;
  }
  view->buf = t->data();
  view->len = static_cast<Py_ssize_t>(t->numel()) * item;
  view->itemsize = item;
  view->readonly = t->readonly() ? 1 : 0;
  view->ndim = ndim;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(info.buffer_format.data()) : nullptr;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND && ndim > 0 ? dims : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES && ndim > 0 ? dims + ndim : nullptr;
  view->suboffsets = nullptr;
  view->internal = dims;
  view->obj = Py_NewRef(self);
  return 0;
}

void tensor_releasebuffer(PyObject*, Py_buffer* view) { PyMem_Free(view->internal); }

}  // namespace

std::optional<Tensor> operand(const Tensor& self, nb::handle other) {
  if (const Tensor* t = tensor_of(other)) return *t;
  std::optional<Scalar> s = operand_scalar(other);
  if (!s) return std::nullopt;
  DType dtype = scalar_result_type(self.dtype(), s->kind);
  return scalar_tensor(*s, dtype, self.device());
}

PyObject* tensor_result(Tensor&& t) {
  static const nb::handle type = nb::type<Tensor>();
  nb::object o = nb::inst_alloc(type);
  if (!o.is_valid()) return nullptr;  // the allocation's error is set
  new (nb::inst_ptr<Tensor>(o)) Tensor(std::move(t));
  nb::inst_mark_ready(o);
  return o.release().ptr();
}

// Note [Pooled Tensor objects]: every op makes a Python object for its result and most
// results die soon. nanobind (3.1 and later) can keep a dead object's memory for the next
// one (nb::pooled): the Python allocation, and nanobind's registration of the C++ address in
// its instance table and the removal from it, are skipped. The C++ Tensor is destroyed at
// once as before (its memory goes back to the allocator); only the Python shell waits, up
// to kPooledTensorObjects of them. Python subclasses of Tensor are not pooled.
#if NB_VERSION_MAJOR > 3 || (NB_VERSION_MAJOR == 3 && NB_VERSION_MINOR >= 1)
constexpr uint32_t kPooledTensorObjects = 128;
#define XRT_TENSOR_POOL , nb::pooled(kPooledTensorObjects)
#else
#define XRT_TENSOR_POOL
#endif

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor", nb::is_weak_referenceable() XRT_TENSOR_POOL,
                     "An n-dimensional array on a device (Array API array).")
      .def_prop_ro("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("size", &Tensor::numel)
      .def_prop_ro("strides", [](const Tensor& t) { return shape_tuple(t.strides()); },
                   "Strides in elements (xpuruntime extension).")
      .def_prop_ro("T", [](const Tensor& t) {
        if (t.ndim() != 2)
          throw ValueError("T is defined for 2-D tensors only (this one has " +
                           std::to_string(t.ndim()) + " dimensions); use mT or permute_dims");
        return t.matrix_transpose();
      })
      .def_prop_ro("mT", &Tensor::matrix_transpose)
      .def("to_device", [](const Tensor& t, nb::handle device, nb::handle stream) {
        Device target = optional_device_arg(device).value_or(t.device());
        if (target.is_cpu() && t.device().is_cpu()) {
          if (!stream.is_none()) throw ValueError("stream must be None for a cpu tensor");
          return t;
        }
        std::optional<StreamGuard> scope;  // the copy runs on the given stream
        if (!stream.is_none())
          scope.emplace(copy_stream(stream, t.device().is_cpu() ? target : t.device()));
        nb::gil_scoped_release release;  // a copy to the host waits for the device
        return to_device(t, target);
      }, nb::arg("device"), nb::kw_only(), nb::arg("stream").none() = nb::none(),
         "Copies to device (a view when it is already there); on CUDA the copy runs on "
         "stream (a cuda.Stream or a DLPack stream number), else on the current stream.")
      .def("__matmul__", [](const Tensor& a, nb::handle b) -> nb::object {
        if (!nb::isinstance<Tensor>(b)) return not_implemented();
        return nb::cast(matmul(a, nb::cast<const Tensor&>(b)));
      }, nb::is_operator())
      .def("__rmatmul__", [](const Tensor& b, nb::handle a) -> nb::object {
        if (!nb::isinstance<Tensor>(a)) return not_implemented();
        return nb::cast(matmul(nb::cast<const Tensor&>(a), b));
      }, nb::is_operator())
      .def("__bool__", [](const Tensor& t) {
        return nb::bool_(scalar_of(t, profiler::Cause::Bool));
      })
      .def("__float__", [](const Tensor& t) { return nb::steal(PyNumber_Float(scalar_of(t).ptr())); })
      .def("__int__", [](const Tensor& t) { return nb::steal(PyNumber_Long(scalar_of(t).ptr())); })
      .def("__complex__", [](const Tensor& t) {
        Scalar s = item(t);
        if (s.kind == Scalar::Kind::Complex) return nb::steal(PyComplex_FromDoubles(s.c.real(), s.c.imag()));
        return nb::steal(PyComplex_FromDoubles(s.to<double>(), 0.0));
      })
      .def("__index__", [](const Tensor& t) {
        if (!is_integer(t.dtype()))
          throw TypeError("only integer tensors can be used as an index (dtype " +
                          std::string(dtype_info(t.dtype()).name) + ")");
        return scalar_of(t);
      })
      .def("_item", [](const Tensor& t) { return scalar_of(t); },
           "The value of a one-element tensor as a Python scalar (item() checks the size).")
      .def("_is_readonly", &Tensor::readonly)
      .def("_is_contiguous", &Tensor::is_contiguous)
      .def("_data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data()); })
      .def("_cast_from", [](Tensor& t, const Tensor& src) { copy_into(t, src); },
           nb::arg("src"),
           "self[...] = src converted to self's dtype (the same shape, or one src broadcasts "
           "to): one kernel where astype and a copy take two (the native engine's graph IO).")
      .def("_shape_if", [](const Tensor& t, nb::handle dtype, const Device& device) -> nb::object {
        if (t.dtype() != dtype_arg(dtype) || t.device() != device || !t.is_contiguous())
          return nb::none();
        return shape_tuple(t.shape());
      }, nb::arg("dtype"), nb::arg("device"),
         "The shape when the tensor has dtype, lives on device and is C-contiguous, else "
         "None: the inference session's input check in one call (Note [Session overhead]).")
      .def("_reinterpret", [](const Tensor& t, nb::handle dtype) {
        DType d = dtype_arg(dtype);
        if (itemsize(d) != t.itemsize())
          throw ValueError("_reinterpret needs a dtype of the same size");
        return Tensor(t.storage(), t.shape(), t.strides(), t.byte_offset(), d);
      }, "A view of the same bytes as another dtype of the same size.");
  // Note [Tensor buffers]: the type's buffer slots, set on the heap type nanobind made.
  auto* type = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr());
  if (type->tp_as_buffer) {
    type->tp_as_buffer->bf_getbuffer = tensor_getbuffer;
    type->tp_as_buffer->bf_releasebuffer = tensor_releasebuffer;
    PyType_Modified(type);
  }
}

}  // namespace xrt::py
