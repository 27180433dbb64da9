// cpp/bindings/bind_cuda_kernels.cpp: `_core._cuda._UserKernel`, the compiled half of
// xpuruntime.kernels: Python arguments converted into a packed buffer and launched. The
// replay of recorded ElementwiseKernel and ReductionKernel calls is bind_cuda_replay.cpp.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <string>

#include "bind_args.h"
#include "kernel_arguments.h"
#include "xpuruntime/cuda/runtime.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/stream.h"

namespace xrt::py {

using cuda::KernelArguments;
using cuda::UserKernel;

cuda::Dim3 dim3_of(nb::handle o, const char* what) {
  cuda::Dim3 d;
  if (!is_tuple_or_list(o)) {
    d.x = static_cast<unsigned>(int_arg(o, what));
    if (int_arg(o, what) < 0) throw ValueError(std::string(what) + " must not be negative");
    return d;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o.ptr());
  if (n < 1 || n > 3) throw ValueError(std::string(what) + " must have 1 to 3 entries");
  PyObject** items = PySequence_Fast_ITEMS(o.ptr());
  unsigned* out[3] = {&d.x, &d.y, &d.z};
  for (Py_ssize_t i = 0; i < n; ++i) {
    int64_t v = int_arg(items[i], what);
    if (v < 0 || v > 0xffffffffLL)
      throw ValueError(std::string(what) + " entries must be in [0, 2**32), got " +
                       std::to_string(v));
    *out[i] = static_cast<unsigned>(v);
  }
  return d;
}

void add_tensor(KernelArguments& out, const Tensor& t, int& device) {
  if (t.device().type != DeviceType::CUDA)
    throw ValueError("kernel arguments must live on a CUDA device, got a tensor on " +
                     t.device().str());
  if (device >= 0 && t.device().index != device)
    throw ValueError("kernel arguments must be on the kernel's device cuda:" +
                     std::to_string(device) + ", got one on " + t.device().str());
  device = t.device().index;
  out.add_pointer(t.data());
}

/// CuPy's rules: a tensor passes its data pointer, bool a C++ bool, int a long long, float
/// a double, complex a complex<double>, a NumPy scalar (or one-element array) its own bytes;
/// any DLPack array on the device is imported without a copy. Beyond CuPy: bytes pass their
/// contents by value (a struct the caller packed).
void add_argument(KernelArguments& out, nb::handle a, int& device,
                  std::vector<nb::object>& imported) {
  PyObject* p = a.ptr();
  if (const Tensor* t = tensor_of(a)) return add_tensor(out, *t, device);
  if (PyBool_Check(p)) {
    bool v = p == Py_True;
    return out.add_bytes(&v, sizeof v, alignof(bool));
  }
  if (PyLong_CheckExact(p)) {
    long long v = int_arg(a, "a kernel's int argument");
    return out.add_bytes(&v, sizeof v, alignof(long long));
  }
  if (PyFloat_CheckExact(p)) {
    double v = PyFloat_AS_DOUBLE(p);
    return out.add_bytes(&v, sizeof v, alignof(double));
  }
  if (PyComplex_CheckExact(p)) {
    std::complex<double> v(PyComplex_RealAsDouble(p), PyComplex_ImagAsDouble(p));
    return out.add_bytes(&v, sizeof v, alignof(double));
  }
  if (PyBytes_CheckExact(p)) {
    // A struct packed by the caller (xpuruntime.kernels passes array layouts this way).
    return out.add_bytes(PyBytes_AS_STRING(p), static_cast<size_t>(PyBytes_GET_SIZE(p)), 8);
  }
  // has_dlpack looks __dlpack__ up on the type with an interned name: a NumPy scalar (no
  // DLPack) costs no string and no AttributeError here.
  bool dlpack = has_dlpack(a);
  if (dlpack) {
    // A device array (CuPy, torch, JAX) first: some also offer the buffer protocol, only to
    // refuse it for device memory.
    nb::tuple where = nb::cast<nb::tuple>(a.attr("__dlpack_device__")());
    if (nb::len(where) >= 1 && nb::cast<int>(where[0]) != 1 /* kDLCPU */) {
      nb::object t = nb::cast(from_dlpack(a, std::nullopt, std::nullopt));
      imported.push_back(t);
      return add_tensor(out, nb::cast<const Tensor&>(t), device);
    }
  }
  if (PyObject_CheckBuffer(p) && !PyByteArray_Check(p)) {
    // NumPy scalars (np.float32(1), structured np.void records) and one-element arrays.
    Py_buffer view;
    if (PyObject_GetBuffer(p, &view, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
    std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release(&view, PyBuffer_Release);
    if (view.len != view.itemsize || !PyBuffer_IsContiguous(&view, 'C'))
      throw TypeError("a host array passed to a kernel must hold exactly one element (it is "
                      "passed by value); got " + type_name_of(a) + " of " +
                      std::to_string(view.len / std::max<Py_ssize_t>(view.itemsize, 1)) +
                      " elements: move arrays to the device first");
    size_t size = static_cast<size_t>(view.itemsize);
    size_t align = size >= 16 ? 16 : size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
    while (size % align) align /= 2;
    return out.add_bytes(view.buf, size, align);
  }
  if (dlpack) {
    nb::object t = nb::cast(from_dlpack(a, std::nullopt, std::nullopt));
    imported.push_back(t);
    return add_tensor(out, nb::cast<const Tensor&>(t), device);
  }
  if (PyLong_Check(p) || PyFloat_Check(p) || PyComplex_Check(p)) {
    // Subclasses of int, float and complex (other than NumPy's) pass as their base type.
    auto* complex_type = reinterpret_cast<PyObject*>(&PyComplex_Type);
    PyObject* base_value = PyLong_Check(p)    ? PyNumber_Long(p)
                           : PyFloat_Check(p) ? PyNumber_Float(p)
                                              : PyObject_CallOneArg(complex_type, p);
    nb::object base = nb::steal(base_value);
    if (!base.is_valid()) throw nb::python_error();
    return add_argument(out, base, device, imported);
  }
  throw TypeError("a kernel argument must be a Tensor, an array on the device (DLPack), a "
                  "NumPy scalar, bool, int, float or complex; got " + type_name_of(a));
}

namespace {

/// The stream a launch goes to: stream (an xpuruntime Stream) or, for None, the current
/// stream of the arguments' device (device < 0: no tensor argument, the current device).
Stream launch_stream(nb::handle stream, int device) {
  if (stream.is_none()) {
    if (device < 0) device = cuda::current_device();
    return current_stream(Device{DeviceType::CUDA, static_cast<int16_t>(device)});
  }
  if (!nb::isinstance<Stream>(stream))
    throw TypeError("stream must be an xpuruntime Stream or None, got " + type_name_of(stream));
  const Stream& s = nb::cast<const Stream&>(stream);
  if (device >= 0 && s.device().index != device)
    throw ValueError("the stream is on " + s.device().str() +
                     ", the kernel's arguments on cuda:" + std::to_string(device));
  return s;
}

}  // namespace

void launch_packed(UserKernel& kernel, cuda::Dim3 grid, cuda::Dim3 block, size_t shared_bytes,
                   nb::handle stream, int device, KernelArguments& buffer) {
  Stream s = launch_stream(stream, device);
  if (!kernel.compiled(s.device().index)) {
    nb::gil_scoped_release release;  // NVRTC may take seconds
    kernel.function(s.device());
  }
  kernel.launch(grid, block, shared_bytes, s, buffer);
}

KernelArguments& argument_buffer() {
  static thread_local KernelArguments buffer;
  buffer.clear();
  return buffer;
}

namespace {

void launch(UserKernel& kernel, nb::handle grid, nb::handle block, nb::handle args,
            size_t shared_bytes, nb::handle stream) {
  cuda::Dim3 g = dim3_of(grid, "grid"), b = dim3_of(block, "block");
  if (!is_tuple_or_list(args))
    throw TypeError("kernel arguments must be a tuple or list, got " + type_name_of(args));
  KernelArguments& buffer = argument_buffer();
  int device = -1;
  std::vector<nb::object> imported;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(args.ptr());
  PyObject** items = PySequence_Fast_ITEMS(args.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) add_argument(buffer, items[i], device, imported);
  launch_packed(kernel, g, b, shared_bytes, stream, device, buffer);
}

/// RawKernel's call (kernel(grid, block, args, shared_mem=0, stream=None)): a stream that
/// is not ours (torch's, CuPy's, anything with __cuda_stream__) goes through the Python
/// layer's as_stream first. Bound as the type's __call__, so that a launch from Python runs
/// no Python frame of ours.
void call_kernel(UserKernel& kernel, nb::handle grid, nb::handle block, nb::handle args,
                 size_t shared_bytes, nb::handle stream) {
  if (stream.is_none() || nb::isinstance<Stream>(stream))
    return launch(kernel, grid, block, args, shared_bytes, stream);
  // Leaked on purpose: a static nb::object would be released after the interpreter.
  static PyObject* as_stream =
      nb::object(nb::module_::import_("xpuruntime.kernels._raw").attr("as_stream")).release().ptr();
  nb::object ours = nb::handle(as_stream)(stream);
  launch(kernel, grid, block, args, shared_bytes, ours);
}

// Note [RawKernel's call slot]: a launch is the type's call slot, which CPython calls with
// the arguments' tuple as it made them. Bound as a __call__ method instead, a Python
// subclass (RawKernel) got CPython's slot_tp_call, which looks __call__ up and calls it with
// the instance prepended, then nanobind's dispatch parsed the arguments again. The slot
// reads (grid, block, args, shared_mem=0, stream=None), by position or by name, with
// read_arguments, the reader of the elementwise functions' C entries.
PyObject* user_kernel_tp_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* const params[] = {"grid", "block", "args", "shared_mem", "stream"};
  try {
    UserKernel& kernel = initialised<UserKernel>(self);
    PyObject* values[5];
    read_arguments("RawKernel.__call__", params, 5, 3, PySequence_Fast_ITEMS(args),
                   PyTuple_GET_SIZE(args), nullptr, kwargs, values);
    size_t shared_bytes = 0;
    if (values[3]) {
      int64_t v = int_arg(values[3], "shared_mem");
      if (v < 0) throw ValueError("shared_mem must be >= 0, got " + std::to_string(v));
      shared_bytes = static_cast<size_t>(v);
    }
    call_kernel(kernel, values[0], values[1], values[2], shared_bytes,
                values[4] ? nb::handle(values[4]) : nb::none());
    Py_RETURN_NONE;
  } catch (...) {
    return raise_current();
  }
}

PyType_Slot user_kernel_slots[] = {{Py_tp_call, reinterpret_cast<void*>(user_kernel_tp_call)},
                                   {0, nullptr}};

}  // namespace

void bind_cuda_kernels(nb::module_& m) {
  nb::class_<UserKernel>(m, "_UserKernel", nb::type_slots(user_kernel_slots),
                         "A user's kernel: compiled per device on first launch, through the "
                         "JIT's memory and disk caches; a call launches it (Note [RawKernel's "
                         "call slot]).")
      .def("__init__", [](UserKernel* self, std::string source, std::string name,
                          std::vector<std::string> options,
                          std::vector<std::string> name_expressions) {
        new (self) UserKernel({std::move(source), std::move(options),
                               std::move(name_expressions)}, std::move(name));
      }, nb::arg("source"), nb::arg("name"), nb::arg("options") = std::vector<std::string>(),
         nb::arg("name_expressions") = std::vector<std::string>())
      .def_prop_ro("name", &UserKernel::name)
      .def("compile", [](UserKernel& k, int device) {
        nb::gil_scoped_release release;
        k.function(Device{DeviceType::CUDA, static_cast<int16_t>(device)});
      }, nb::arg("device"), "Compiles for cuda:device now (launches compile on demand).")
      .def("attribute", [](UserKernel& k, int device, int attribute) {
        return k.attribute(Device{DeviceType::CUDA, static_cast<int16_t>(device)}, attribute);
      }, nb::arg("device"), nb::arg("attribute"), "cuFuncGetAttribute of the function.")
      .def("launch", &launch, nb::arg("grid"), nb::arg("block"), nb::arg("args"),
           nb::arg("shared_mem") = 0, nb::arg("stream").none() = nb::none(),
           "Launches on stream (None: the current stream of the arguments' device).");
  bind_cuda_replay(m);
  m.def("_module_global", [](std::string source, std::vector<std::string> options,
                             std::vector<std::string> name_expressions, std::string name,
                             int device) {
    std::pair<void*, size_t> global;
    {
      nb::gil_scoped_release release;  // NVRTC may take seconds
      global = cuda::module_global(Device{DeviceType::CUDA, static_cast<int16_t>(device)},
                                   {std::move(source), std::move(options),
                                    std::move(name_expressions)}, name);
    }
    return nb::make_tuple(reinterpret_cast<uintptr_t>(global.first), global.second);
  }, nb::arg("source"), nb::arg("options"), nb::arg("name_expressions"), nb::arg("name"),
     nb::arg("device"),
     "(address, bytes) of a global variable of the source's module on cuda:device.");
  m.def("_lowered_names", [](std::string source, std::vector<std::string> options,
                             std::vector<std::string> name_expressions, std::string arch) {
    nb::gil_scoped_release release;
    return cuda::lowered_names({std::move(source), std::move(options),
                                std::move(name_expressions)}, arch);
  }, nb::arg("source"), nb::arg("options"), nb::arg("name_expressions"), nb::arg("arch"),
     "The mangled names NVRTC gives name_expressions (through the JIT caches).");
}

}  // namespace xrt::py
