// cpp/bindings/bind_cuda.cpp: the `_core._cuda` submodule (devices, streams of other
// libraries, graphs, the libraries' knobs) and the namespace's default device.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/cuda/graph.h"
#include "xpuruntime/cuda/libraries.h"
#include "xpuruntime/cuda/runtime.h"
#include "xpuruntime/default_device.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt::py {

int cuda_index(nb::handle obj) {
  int index;
  if (obj.is_none()) {
    index = cuda::current_device();
  } else if (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) {
    index = static_cast<int>(bounded_int_arg(obj, "device", 0, INT32_MAX));
  } else {
    std::optional<Device> d = optional_device_arg(obj);
    if (d->is_cpu()) throw ValueError("expected a CUDA device, got 'cpu'");
    index = d->index;
  }
  cuda::check_device(index);
  return index;
}

namespace {

using cuda::Graph;

std::string type_name_of(nb::handle o) { return nb::type_name(o.type()).c_str(); }

/// Checks that a device exists here (CudaError with the reason when CUDA is unavailable).
Device checked_device(nb::handle obj) {
  Device d = obj.is_none() ? kCPU : *optional_device_arg(obj);
  if (!d.is_cpu()) backend(d).check_device(d.index);
  return d;
}

/// A foreign stream: an int handle or an object with __cuda_stream__ (0 and 1 both name the
/// legacy default stream, 2 the per-thread default stream).
Stream external_stream(nb::handle obj, nb::handle device) {
  nb::handle value = obj;
  nb::object held;
  if (PyObject_HasAttrString(obj.ptr(), "__cuda_stream__")) {
    held = obj.attr("__cuda_stream__")();
    if (!nb::isinstance<nb::tuple>(held) || nb::len(held) != 2)
      throw TypeError("__cuda_stream__ must return a (version, handle) tuple");
    value = held[1];
  }
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    throw TypeError("ExternalStream expects a stream handle (int) or an object with "
                    "__cuda_stream__, got " + type_name_of(obj));
  return cuda::external_stream(nb::cast<uintptr_t>(value),
                               device.is_none() ? -1 : cuda_index(device));
}

void bind_devices_api(nb::module_& m) {
  nb::class_<cuda::DeviceProperties>(m, "DeviceInfo", "What a CUDA device is.")
      .def_ro("index", &cuda::DeviceProperties::index)
      .def_ro("name", &cuda::DeviceProperties::name)
      .def_ro("uuid", &cuda::DeviceProperties::uuid)
      .def_ro("pci_bus_id", &cuda::DeviceProperties::pci_bus_id)
      .def_ro("total_memory", &cuda::DeviceProperties::total_memory, "Bytes.")
      .def_prop_ro("free_memory", [](const cuda::DeviceProperties& p) {
        return cuda::free_memory(p.index);
      }, "Bytes free now (asked from the driver at each read).")
      .def_prop_ro("compute_capability", [](const cuda::DeviceProperties& p) {
        return std::make_tuple(p.major, p.minor);
      })
      .def_ro("major", &cuda::DeviceProperties::major)
      .def_ro("minor", &cuda::DeviceProperties::minor)
      .def_ro("multi_processor_count", &cuda::DeviceProperties::multi_processor_count)
      .def_ro("max_threads_per_block", &cuda::DeviceProperties::max_threads_per_block)
      .def_ro("max_threads_per_multi_processor",
              &cuda::DeviceProperties::max_threads_per_multi_processor)
      .def_ro("warp_size", &cuda::DeviceProperties::warp_size)
      .def_ro("max_shared_memory_per_block", &cuda::DeviceProperties::max_shared_memory_per_block)
      .def_ro("max_shared_memory_per_multi_processor",
              &cuda::DeviceProperties::max_shared_memory_per_multi_processor)
      .def_ro("l2_cache_size", &cuda::DeviceProperties::l2_cache_size)
      .def_ro("clock_rate_khz", &cuda::DeviceProperties::clock_rate_khz)
      .def_ro("memory_clock_rate_khz", &cuda::DeviceProperties::memory_clock_rate_khz)
      .def_ro("memory_bus_width", &cuda::DeviceProperties::memory_bus_width)
      .def_ro("supports_fp16", &cuda::DeviceProperties::supports_fp16)
      .def_ro("supports_bf16", &cuda::DeviceProperties::supports_bf16)
      .def_ro("supports_int8", &cuda::DeviceProperties::supports_int8)
      .def_ro("supports_tf32", &cuda::DeviceProperties::supports_tf32)
      .def_ro("supports_fp8", &cuda::DeviceProperties::supports_fp8)
      .def("__repr__", [](const cuda::DeviceProperties& p) {
        return "DeviceInfo(cuda:" + std::to_string(p.index) + ", '" + p.name + "', sm_" +
               std::to_string(p.major) + std::to_string(p.minor) + ", " +
               std::to_string(p.multi_processor_count) + " SMs, " +
               std::to_string(p.total_memory >> 20) + " MiB)";
      });

  m.def("get_device_properties", [](nb::handle device) -> const cuda::DeviceProperties& {
    return cuda::device_properties(cuda_index(device));
  }, nb::arg("device").none() = nb::none(), nb::rv_policy::reference);
  m.def("current_device", [] {
    int index = cuda::current_device();
    cuda::check_device(index);
    return index;
  }, "The calling thread's current CUDA device index.");
  m.def("set_device", [](nb::handle device) { cuda::use_device(cuda_index(device)); },
        nb::arg("device"), "Makes device the calling thread's current CUDA device.");
  m.def("synchronize", [](nb::handle device) {
    int index = cuda_index(device);
    nb::gil_scoped_release release;
    cuda::synchronize_device(index);
  }, nb::arg("device").none() = nb::none(),
     "Waits (without the GIL) for all work queued on device (the current one by default).");
}

// Stream and Event are the runtime's (bind_runtime.cpp); CUDA adds its default streams.
void bind_streams(nb::module_& m, nb::module_& core) {
  nb::class_<Stream> stream = nb::borrow<nb::class_<Stream>>(core.attr("Stream"));
  stream.def_prop_ro_static("null", [](nb::handle) {
    return default_stream(Device::cuda(cuda_index(nb::none())));
  }, "The legacy default stream of the current device.");
  stream.def_prop_ro_static("ptds", [](nb::handle) {
    return cuda::per_thread_default_stream(cuda_index(nb::none()));
  }, "The per-thread default stream of the current device.");
  m.attr("Stream") = stream;
  m.attr("Event") = core.attr("Event");
  m.attr("current_stream") = core.attr("current_stream");
  m.attr("default_stream") = core.attr("default_stream");
  m.attr("set_stream") = core.attr("set_stream");
  m.def("_blocking_stream", [](nb::handle device) {
    return cuda::create_blocking_stream(cuda_index(device));
  }, nb::arg("device").none() = nb::none(),
     "A new blocking stream: it and the legacy default stream wait for each other's work, "
     "so a library running on it needs no events against callers on the legacy stream.");
  m.def("ExternalStream", &external_stream, nb::arg("ptr"), nb::arg("device").none() = nb::none(),
        "A Stream over a foreign handle (an int, or an object with __cuda_stream__); never "
        "destroyed here.");
}

void bind_graphs(nb::module_& m) {
  nb::class_<Graph>(m, "CUDAGraph", "A CUDA graph captured from a stream and replayed.")
      .def(nb::init<>())
      .def("capture_begin", [](Graph& g, const std::string& mode) {
        cuda::CaptureMode m;
        if (mode == "global") m = cuda::CaptureMode::Global;
        else if (mode == "thread_local") m = cuda::CaptureMode::ThreadLocal;
        else if (mode == "relaxed") m = cuda::CaptureMode::Relaxed;
        else throw ValueError("capture_error_mode must be 'global', 'thread_local' or "
                              "'relaxed', got '" + mode + "'");
        g.capture_begin(m);
      }, nb::arg("capture_error_mode") = "global",
         "Starts capturing the current stream (it must not be a default stream).")
      .def("capture_end", &Graph::capture_end, "Ends the capture and instantiates the graph.")
      .def("replay", &Graph::replay, "Launches the graph on the current stream (no host wait).")
      .def("reset", &Graph::reset, "Frees the graph and its memory pool.")
      .def("pool", &Graph::id, "The id of the graph's private memory pool.")
      .def_prop_ro("is_capturing", &Graph::capturing)
      .def_prop_ro("is_captured", &Graph::captured)
      .def_prop_ro("num_nodes", &Graph::num_nodes, "Nodes in the captured graph.");
  // Note [Foreign work in our graphs] in graph.cpp.
  m.def("_capture_kept", [](const Stream& stream, const std::string& key,
                            nb::callable make) -> nb::object {
    Graph* g = cuda::graph_capturing(stream.handle());
    if (!g) return nb::none();
    if (std::shared_ptr<void> thing = g->kept(key))
      return nb::borrow(static_cast<PyObject*>(thing.get()));
    nb::object made = make();
    PyObject* object = made.ptr();
    g->keep(key, std::shared_ptr<void>(made.release().ptr(), [](void* p) {
      if (!Py_IsInitialized()) return;  // at exit: leak rather than touch a dead interpreter
      PyGILState_STATE state = PyGILState_Ensure();
      Py_DECREF(static_cast<PyObject*>(p));
      PyGILState_Release(state);
    }));
    return nb::borrow(object);
  }, nb::arg("stream"), nb::arg("key"), nb::arg("make"),
     "What the graph of ours capturing stream keeps under key (make() on the first call), "
     "kept until the graph is discarded; None when no graph of ours captures stream.");
}

// cuFFT's plan caches (cuda/cufft.h, Note [cuFFT plans]).
void bind_fft_plans(nb::module_& m) {
  m.def("cufft_version", &cuda::cufft_version);
  m.def("cufft_plan_cache_info", [](nb::handle device) {
    cuda::FftPlanCacheInfo info = cuda::fft_plan_cache_info(cuda_index(device));
    nb::dict d;
    d["size"] = info.size;
    d["capacity"] = info.capacity;
    d["hits"] = info.hits;
    d["misses"] = info.misses;
    d["evictions"] = info.evictions;
    return d;
  }, nb::arg("device").none() = nb::none());
  m.def("set_cufft_plan_cache_capacity", &cuda::set_fft_plan_cache_capacity,
        nb::arg("capacity"));
  m.def("cufft_plan_cache_clear", &cuda::clear_fft_plan_cache);
}

}  // namespace

void bind_cuda(nb::module_& m, nb::module_& c) {
  bind_devices_api(c);
  bind_streams(c, m);
  bind_graphs(c);
  bind_fft_plans(c);
  c.def("_dlpack_stream_number", [](int device) {
    return backend(DeviceType::CUDA).dlpack_stream_number(
        Device::cuda(device));
  }, nb::arg("device"), "The DLPack stream number of device's current stream (1: legacy default).");
  c.def("_svd_jacobi_max_sweeps", &cuda::set_svd_jacobi_max_sweeps, nb::arg("sweeps"),
        "Sets the SVD's Jacobi sweep limit (0: cuSOLVER's default) and returns the previous "
        "one; a test hook.");

  m.def("set_default_device", [](nb::handle device) { set_default_device(checked_device(device)); },
        nb::arg("device").none(),
        "Sets the device creation functions use when given none (None: back to cpu).");
  m.def("get_default_device", [] { return xrt::default_device(); },
        "The device creation functions use when given none.");
  nb::class_<Device> cls = nb::borrow<nb::class_<Device>>(m.attr("Device"));
  cls.def("__enter__", [](const Device& d) {
    if (!d.is_cpu()) backend(d).check_device(d.index);
    push_default_device(d);
    return d;
  }, "`with Device('cuda:0'):` makes it the calling thread's default device.");
  cls.def("__exit__", [](const Device&, nb::args) { pop_default_device(); });
}

}  // namespace xrt::py
