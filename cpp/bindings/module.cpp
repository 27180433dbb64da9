// cpp/bindings/module.cpp: the _core extension module: exceptions, dtypes, devices, info.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/cpu.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/default_device.h"
#include "xpuruntime/errors.h"

#ifndef XRT_VERSION
#define XRT_VERSION "0.0.0"
#endif

namespace xrt::py {
namespace {

// Immortal: released references, so nothing is freed after the interpreter is gone.
nb::handle dtype_objects[kNumDTypes];

// The runtime's exception types, immortal like the dtypes.
PyObject* runtime_error_types[4];

void bind_errors(nb::module_& m) {
  auto base = nb::exception<XpuRuntimeError>(m, "XpuRuntimeError", PyExc_RuntimeError);
  // Note: OutOfMemoryError is a MemoryError too, so `except MemoryError` catches a device
  // running out as it catches the host running out (NumPy raises MemoryError there).
  nb::object oom_bases = nb::make_tuple(base, nb::handle(PyExc_MemoryError));
  runtime_error_types[0] = base.ptr();
  runtime_error_types[1] = nb::exception<CudaError>(m, "CudaError", base).ptr();
  runtime_error_types[2] =
      nb::exception<OutOfMemoryError>(m, "OutOfMemoryError", oom_bases).ptr();
  runtime_error_types[3] =
      nb::exception<UnsupportedOperationError>(m, "UnsupportedOperationError", base).ptr();
  for (PyObject* t : runtime_error_types) Py_INCREF(t);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    if (!set_python_error(p)) std::rethrow_exception(p);  // nanobind's own translators
  });
}

void bind_dtypes(nb::module_& m) {
  static const char* kinds[] = {"bool", "signed integer", "unsigned integer", "real floating",
                                "complex floating"};
  nb::class_<PyDType>(m, "DType", "An element type; the instances are xpuruntime.float32 etc.")
      .def_prop_ro("name", [](const PyDType& d) { return std::string(dtype_info(d.value).name); })
      .def_prop_ro("itemsize", [](const PyDType& d) { return itemsize(d.value); })
      .def_prop_ro("kind", [](const PyDType& d) { return kinds[static_cast<int>(kind(d.value))]; })
      .def("__str__", [](const PyDType& d) { return std::string(dtype_info(d.value).name); })
      .def("__repr__", [](const PyDType& d) {
        return "xpuruntime." + std::string(dtype_info(d.value).name);
      })
      .def("__eq__", [](const PyDType& a, nb::handle b) {
        return nb::isinstance<PyDType>(b) && nb::cast<const PyDType&>(b).value == a.value;
      }, nb::arg("other").none())
      .def("__ne__", [](const PyDType& a, nb::handle b) {
        return !(nb::isinstance<PyDType>(b) && nb::cast<const PyDType&>(b).value == a.value);
      }, nb::arg("other").none())
      .def("__hash__", [](const PyDType& d) { return 0x5bd1e995 + static_cast<int>(d.value); })
      .def("__reduce__", [](const PyDType& d) {
        return nb::make_tuple(nb::module_::import_("xpuruntime").attr("dtype"),
                              nb::make_tuple(std::string(dtype_info(d.value).name)));
      });
  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = static_cast<DType>(i);
    dtype_objects[i] = nb::cast(PyDType{d}).release();
    m.attr(std::string(dtype_info(d).name).c_str()) = dtype_objects[i];
  }
  m.def("result_type_of", [](nb::handle a, nb::handle b) {
    return dtype_object(result_type(dtype_arg(a), dtype_arg(b)));
  }, "Promotes two dtypes by the standard's table (TypeError where it is undefined).");
  m.def("scalar_result_type_of", [](nb::handle dtype, nb::handle scalar) {
    std::optional<Scalar> s = scalar_from_python(scalar);
    if (!s) throw TypeError("expected a Python bool, int, float or complex");
    return dtype_object(scalar_result_type(dtype_arg(dtype), s->kind));
  }, "The dtype a Python scalar takes next to an array of this dtype (the standard's rule).");
}

void bind_devices(nb::module_& m) {
  // Device(N) is CUDA device N, as in the design documents and torch.cuda; what the device
  // is (name, memory, capability) is added in Python (runtime/_device.py), read on demand.
  nb::class_<Device>(m, "Device", "A device: 'cpu', 'cuda:N', or N for 'cuda:N'.")
      .def("__init__", [](Device* self, const std::string& text) {
        new (self) Device(Device::parse(text));
      })
      .def("__init__", [](Device* self, nb::handle index) {
        // An int only: nanobind would accept a bool (True meaning cuda:1) or an index object.
        if (!PyLong_CheckExact(index.ptr()))
          throw TypeError("Device() takes a string such as 'cuda:0' or a CUDA device index "
                          "(int), not " + std::string(nb::type_name(index.type()).c_str()));
        long n = PyLong_AsLong(index.ptr());
        if (n < 0 || n > INT16_MAX) {
          PyErr_Clear();
          throw ValueError("a CUDA device index is in [0, 32767], got " +
                           std::string(nb::str(index).c_str()));
        }
        new (self) Device(Device::cuda(n));
      }, nb::arg("index"))
      .def("__init__", [](Device* self, const std::string& type, nb::handle index) {
        int64_t n = bounded_int_arg(index, "a device index", 0, INT16_MAX);
        new (self) Device(Device::parse(type + ":" + std::to_string(n)));
      }, nb::arg("type"), nb::arg("index"))
      .def_prop_ro("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_prop_ro("index", [](const Device& d) { return static_cast<int>(d.index); })
      .def("__eq__", [](const Device& a, nb::handle b) {
        return nb::isinstance<Device>(b) && nb::cast<const Device&>(b) == a;
      }, nb::arg("other").none())
      .def("__ne__", [](const Device& a, nb::handle b) {
        return !(nb::isinstance<Device>(b) && nb::cast<const Device&>(b) == a);
      }, nb::arg("other").none())
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 65536 + d.index; })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) { return "Device('" + d.str() + "')"; });
}

nb::dict library_dict(const cuda::LibraryStatus& s) {
  nb::dict d;
  d["found"] = s.found;
  d["path"] = s.path;
  d["found_via"] = s.found_via;
  d["reason"] = s.reason;
  return d;
}

// The C++ loader asks find (a Python callable, see _loader.find_cuda_library) where a CUDA
// library is. It is called with no loader lock held (Note [Finding libraries]).
void set_cuda_library_finder(nb::handle find) {
  if (find.is_none()) return cuda::set_library_finder(nullptr);
  // Immortal, like the dtypes: the loader may ask while the interpreter shuts down.
  PyObject* callable = nb::borrow(find).release().ptr();
  cuda::set_library_finder([callable](const char* name) {
    cuda::LibraryStatus s;
    if (!nb::is_alive()) return s;  // no opinion: the system's search decides
    nb::gil_scoped_acquire gil;
    try {
      nb::object found = nb::handle(callable)(name);
      if (!found.is_none()) {
        auto [path, via] = nb::cast<std::pair<std::string, std::string>>(found);
        s.found = true;
        s.path = std::move(path);
        s.found_via = std::move(via);
      }
    } catch (nb::python_error& e) {
      s.reason = e.matches(PyExc_LookupError) ? std::string(nb::str(e.value()).c_str())
                                              : std::string(e.what());
    } catch (const std::exception& e) {  // a result that is not (str, str)
      s.reason = std::string("the library finder answered badly: ") + e.what();
    }
    return s;
  });
}

void bind_info(nb::module_& m) {
  m.def("build_info", [] {
    nb::dict d;
    d["version"] = XRT_VERSION;
    d["compiler"] = __VERSION__;
    d["cxx_standard"] = static_cast<long>(__cplusplus);
#ifdef NDEBUG
    d["build_type"] = "Release";
#else
    d["build_type"] = "Debug";
#endif
    d["cuda_at_build"] = "none needed: CUDA is loaded at run time";
    return d;
  });
  m.def("blas_config", [] { return std::string(cpu::openblas_config()); });
  m.def("num_threads", &cpu::num_threads, "Threads the CPU kernels use.");
  m.def("set_num_threads", [](nb::handle n) {
    cpu::set_num_threads(static_cast<int>(
        bounded_int_arg(n, "set_num_threads: the thread count", 1, cpu::max_threads())));
  }, nb::arg("n"), "Sets the threads the CPU kernels and OpenBLAS use (1 to max_threads()).");
  m.def("max_threads", &cpu::max_threads, "The largest count set_num_threads accepts.");
}

// What the loader found of CUDA (xpuruntime/cuda_loader.h).
void bind_cuda_loader(nb::module_& c) {
  c.def("set_library_finder", &set_cuda_library_finder, nb::arg("find").none(),
        "find(name) -> (path, found_via), LookupError(reason) when not found, or None when it "
        "cannot look; asked before the system's search (None: the system's search only).");
  c.def("status", [] {
    const cuda::Status& s = cuda::status();
    nb::dict d;
    d["available"] = s.available;
    d["device_count"] = s.device_count;
    d["driver_version"] = s.driver_version;
    d["reason"] = s.reason;
    d["driver"] = library_dict(s.driver);
    d["nvrtc"] = library_dict(s.nvrtc);
    d["cublas"] = library_dict(s.cublas);
    d["cublaslt"] = library_dict(s.cublaslt);
    return d;
  });
  // Opens the library if needed (cuFFT, cuSOLVER, NCCL and cuDNN are loaded on first use).
  c.def("library_status", [](const std::string& name) {
    if (name == "cufft") return library_dict(cuda::library_status(cuda::Library::Cufft));
    if (name == "cusolver") return library_dict(cuda::library_status(cuda::Library::Cusolver));
    if (name == "nccl") return library_dict(cuda::library_status(cuda::Library::Nccl));
    if (name == "cudnn") return library_dict(cuda::library_status(cuda::Library::Cudnn));
    throw nb::value_error(("unknown CUDA library " + name).c_str());
  });
  c.def("cublas_version", &cuda::cublas_version);
}

}  // namespace

nb::handle dtype_object(DType dtype) { return dtype_objects[static_cast<int>(dtype)]; }

// Note [Python types as dtypes]: Python's bool, int, float and complex name dtypes in NumPy,
// PyTorch, CuPy and JAX (bool, the default integer, float64, complex128), and array API code
// passes them (SciPy's iterative methods call xp.zeros(shape, dtype=bool)), so they name ours
// too: bool, int64, float64 and complex128, the defaults. Strings and other libraries'
// dtypes stay errors: what "float32" or np.float32 means in another namespace is not ours
// to guess.
DType dtype_arg(nb::handle obj) {
  if (nb::isinstance<PyDType>(obj)) return nb::cast<const PyDType&>(obj).value;
  PyObject* o = obj.ptr();
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return kDefaultInt;
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return kDefaultFloat;
  if (o == reinterpret_cast<PyObject*>(&PyComplex_Type)) return kDefaultComplex;
  throw TypeError("expected an xpuruntime dtype (such as xpuruntime.float32) or bool, int, "
                  "float or complex, got " + std::string(nb::repr(obj).c_str()));
}

std::optional<DType> optional_dtype_arg(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return dtype_arg(obj);
}

Device default_device() { return ::xrt::default_device(); }

std::optional<Device> optional_device_arg(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  if (nb::isinstance<Device>(obj)) return nb::cast<Device>(obj);
  if (nb::isinstance<nb::str>(obj)) return Device::parse(nb::cast<std::string>(obj));
  throw TypeError("expected a device (xpuruntime.Device or a string such as 'cpu'), got " +
                  std::string(nb::repr(obj).c_str()));
}

bool set_python_error(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const BufferError& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  } catch (const OverflowError& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const CudaError& e) {
    PyErr_SetString(runtime_error_types[1], e.what());
  } catch (const OutOfMemoryError& e) {
    PyErr_SetString(runtime_error_types[2], e.what());
  } catch (const UnsupportedOperationError& e) {
    PyErr_SetString(runtime_error_types[3], e.what());
  } catch (const XpuRuntimeError& e) {
    PyErr_SetString(runtime_error_types[0], e.what());
  } catch (const nb::cast_error&) {
    // A safety net: argument conversions name the argument themselves; one that slipped
    // through must still not surface as "RuntimeError: std::bad_cast".
    PyErr_SetString(PyExc_TypeError, "an argument has a type this function cannot take");
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (...) {
    return false;
  }
  return true;
}

PyObject* raise_current() {
  if (!set_python_error(std::current_exception()))
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception in an xpuruntime call");
  return nullptr;
}

void read_arguments(const char* function, const char* const* params, int count, int required,
                    PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    PyObject* kwargs, PyObject** out) {
  if (nargs > count) {
    std::string takes = count == required
                            ? std::to_string(count)
                            : "from " + std::to_string(required) + " to " + std::to_string(count);
    throw TypeError(std::string(function) + "() takes " + takes + " positional argument" +
                    (count == 1 ? "" : "s") + " but " + std::to_string(nargs) +
                    (nargs == 1 ? " was" : " were") + " given");
  }
  for (int i = 0; i < count; ++i) out[i] = i < nargs ? args[i] : nullptr;
  auto put = [&](PyObject* name, PyObject* value) {
    if (!PyUnicode_Check(name))
      throw TypeError(std::string(function) + "() keywords must be strings");
    int at = 0;
    while (at < count && PyUnicode_CompareWithASCIIString(name, params[at]) != 0) ++at;
    if (at == count)
      throw TypeError(std::string(function) + "() got an unexpected keyword argument '" +
                      nb::str(name).c_str() + "'");
    if (out[at])
      throw TypeError(std::string(function) + "() got multiple values for argument '" +
                      params[at] + "'");
    out[at] = value;
  };
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) put(PyTuple_GET_ITEM(kwnames, k), args[nargs + k]);
  Py_ssize_t at = 0;
  PyObject *name, *value;
  while (kwargs && PyDict_Next(kwargs, &at, &name, &value)) put(name, value);
  for (int i = 0; i < required; ++i)
    if (!out[i])
      throw TypeError(std::string(function) + "() missing required argument '" + params[i] +
                      "'");
}

}  // namespace xrt::py

// The thread count as C symbols, for threadpoolctl's controller (runtime/_threadpoolctl.py),
// which reaches a library through ctypes. Exported despite -fvisibility=hidden.
extern "C" __attribute__((visibility("default"))) int xpuruntime_get_num_threads() {
  return xrt::cpu::num_threads();
}
extern "C" __attribute__((visibility("default"))) void xpuruntime_set_num_threads(int n) {
  // threadpoolctl may ask for more than the cap (a limit of "all cores" on a big host).
  xrt::cpu::set_num_threads(std::max(1, std::min(n, xrt::cpu::max_threads())));
}

NB_MODULE(_core, m) {
  using namespace xrt::py;
  m.attr("__version__") = XRT_VERSION;
  nb::set_leak_warnings(false);  // the dtype singletons live as long as the process
  bind_errors(m);
  bind_dtypes(m);
  bind_devices(m);
  bind_info(m);
  bind_tensor(m);
  bind_dlpack(m);
  bind_convert(m);
  bind_elementwise(m);
  bind_function(m);
  bind_reductions(m);
  bind_manipulation(m);
  bind_creation(m);
  bind_dispatch(m);
  bind_sorting(m);
  bind_indexing(m);
  bind_fft(m);
  bind_linalg(m);
  bind_runtime(m);
  bind_profiler(m);
  // Note: one way in: everything of the CUDA backend is in _core._cuda (xpuruntime.cuda
  // and xpuruntime.runtime re-export it); the top level holds what every device shares.
  nb::module_ cuda = m.def_submodule(
      "_cuda", "The CUDA backend: devices, graphs, memory, the JIT, the libraries.");
  bind_cuda_loader(cuda);
  bind_cuda(m, cuda);
  bind_cuda_jit(cuda);
  bind_cuda_kernels(cuda);
  bind_cuda_memory(cuda);
  bind_cuda_elementwise(cuda);
  bind_cuda_collectives(cuda);
  bind_cuda_attention(cuda);
}
