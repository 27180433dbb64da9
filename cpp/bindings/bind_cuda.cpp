// cpp/bindings/bind_cuda.cpp: the CUDA runtime objects (devices, streams, events, graphs) and
// the namespace's default device.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "bindings.h"
#include "cuda/cufft.h"
#include "cuda/cusolver.h"
#include "cuda/device_info.h"
#include "cuda/graph.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"
#include "xpuruntime/default_device.h"
#include "xpuruntime/errors.h"

namespace xrt::py {
namespace {

using cuda::Event;
using cuda::Graph;
using cuda::Stream;

std::string type_name_of(nb::handle o) { return nb::type_name(o.type()).c_str(); }

/// A CUDA device index from None (the current device), an int, "cuda[:N]" or a Device;
/// checks that it exists.
int cuda_index(nb::handle obj) {
  int index;
  if (obj.is_none()) {
    index = cuda::current_device();
  } else if (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) {
    index = nb::cast<int>(obj);
  } else {
    std::optional<Device> d = optional_device_arg(obj);
    if (d->is_cpu()) throw ValueError("expected a CUDA device, got 'cpu'");
    index = d->index;
  }
  cuda::check_device(index);
  return index;
}

/// Checks that a device exists here (CudaError with the reason when CUDA is unavailable).
Device checked_device(nb::handle obj) {
  Device d = obj.is_none() ? kCPU : *optional_device_arg(obj);
  if (!d.is_cpu()) cuda::check_device(d.index);
  return d;
}

Device cuda_device(int index) { return Device{DeviceType::CUDA, static_cast<int16_t>(index)}; }

uintptr_t stream_ptr(const Stream& s) { return reinterpret_cast<uintptr_t>(s.handle()); }

std::string hex(uintptr_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%lx", static_cast<unsigned long>(v));
  return text;
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
  auto handle = reinterpret_cast<cuda::CUstream>(nb::cast<uintptr_t>(value));
  int index;
  if (!device.is_none() || handle == nullptr || handle == cuda::CU_STREAM_LEGACY ||
      handle == cuda::CU_STREAM_PER_THREAD) {
    index = cuda_index(device);
  } else {
    // The stream's context tells its device (primary contexts: the ones everyone shares).
    index = cuda::current_device();
    cuda::check_device(index);
    cuda::CUcontext ctx = nullptr;
    XRT_CU(cuStreamGetCtx, handle, &ctx);
    for (int i = 0; i < cuda::device_count(); ++i)
      if (cuda::primary_context(i) == ctx) index = i;
  }
  return Stream::borrow(index, handle);
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
  m.def("set_device", [](nb::handle device) {
    int index = cuda_index(device);
    cuda::set_current_device(index);
    cuda::activate(index);
  }, nb::arg("device"), "Makes device the calling thread's current CUDA device.");
  m.def("synchronize", [](nb::handle device) {
    int index = cuda_index(device);
    nb::gil_scoped_release release;
    cuda::synchronize_device(index);
  }, nb::arg("device").none() = nb::none(),
     "Waits (without the GIL) for all work queued on device (the current one by default).");
}

void bind_streams(nb::module_& m) {
  nb::class_<Stream>(m, "Stream", "A CUDA stream (non-blocking); `with s:` makes it current.")
      .def("__init__", [](Stream* self, nb::handle device, int priority) {
        new (self) Stream(Stream::create(cuda_index(device), priority));
      }, nb::arg("device").none() = nb::none(), nb::arg("priority") = 0)
      .def_prop_ro_static("null", [](nb::handle) {
        return Stream::borrow(cuda_index(nb::none()), nullptr);
      }, "The legacy default stream of the current device.")
      .def_prop_ro_static("ptds", [](nb::handle) {
        return Stream::borrow(cuda_index(nb::none()), cuda::CU_STREAM_PER_THREAD);
      }, "The per-thread default stream of the current device.")
      .def_prop_ro("ptr", &stream_ptr, "The CUstream handle as an int (0: legacy default).")
      .def_prop_ro("device", [](const Stream& s) { return cuda_device(s.device()); })
      .def_prop_ro("priority", &Stream::priority)
      .def("query", &Stream::query, "True when all work queued so far has finished.")
      .def("synchronize", &Stream::synchronize, nb::call_guard<nb::gil_scoped_release>(),
           "Waits (without the GIL) for the work queued so far.")
      .def("wait_event", [](const Stream& s, const Event& e) { s.wait(e); }, nb::arg("event"),
           "Work queued later waits for the event (no host wait).")
      .def("wait_stream", [](const Stream& s, const Stream& other) { s.wait(other); },
           nb::arg("stream"), "Work queued later waits for the work queued so far on stream.")
      .def("record_event", [](const Stream& s, nb::handle event) {
        nb::object e = event.is_none() ? nb::cast(new Event(), nb::rv_policy::take_ownership)
                                       : nb::borrow(event);
        nb::cast<Event&>(e).record(s);
        return e;
      }, nb::arg("event").none() = nb::none(), "Records an event (a new one by default).")
      .def("__cuda_stream__", [](const Stream& s) { return nb::make_tuple(0, stream_ptr(s)); })
      .def("__enter__", [](nb::handle self) {
        cuda::enter_scope(nb::cast<const Stream&>(self));
        return nb::borrow(self);
      })
      .def("__exit__", [](const Stream&, nb::args) { cuda::exit_scope(); })
      .def("__eq__", [](const Stream& a, nb::handle b) {
        return nb::isinstance<Stream>(b) && nb::cast<const Stream&>(b) == a;
      }, nb::arg("other").none())
      .def("__ne__", [](const Stream& a, nb::handle b) {
        return !(nb::isinstance<Stream>(b) && nb::cast<const Stream&>(b) == a);
      }, nb::arg("other").none())
      .def("__hash__", [](const Stream& s) {
        return static_cast<Py_hash_t>(stream_ptr(s) * 31 + static_cast<uintptr_t>(s.device()));
      })
      .def("__repr__", [](const Stream& s) {
        return "<xpuruntime.cuda.Stream cuda:" + std::to_string(s.device()) + " " +
               hex(stream_ptr(s)) + ">";
      });

  m.def("ExternalStream", &external_stream, nb::arg("ptr"), nb::arg("device").none() = nb::none(),
        "A Stream over a foreign handle (an int, or an object with __cuda_stream__); never "
        "destroyed here.");
  m.def("current_stream", [](nb::handle device) { return cuda::current(cuda_index(device)); },
        nb::arg("device").none() = nb::none(),
        "The calling thread's current stream on device (what ops enqueue on).");
  m.def("default_stream", [](nb::handle device) {
    return Stream::borrow(cuda_index(device), nullptr);
  }, nb::arg("device").none() = nb::none(), "The legacy default stream of device.");
  m.def("set_stream", [](const Stream& s) { cuda::set_current(s); }, nb::arg("stream"),
        "Makes stream current on its device for the calling thread (no restore; prefer "
        "`with stream:`).");

  nb::class_<Event>(m, "Event", "A CUDA event: a point in a stream's work.")
      .def(nb::init<bool, bool>(), nb::arg("enable_timing") = false, nb::arg("blocking") = false)
      .def("record", [](Event& e, nb::handle stream) {
        if (!stream.is_none()) return e.record(nb::cast<const Stream&>(stream));
        int index = e.device() >= 0 ? e.device() : cuda_index(nb::none());
        e.record(cuda::current(index));
      }, nb::arg("stream").none() = nb::none(),
         "Captures the work queued so far on stream (the current stream by default).")
      .def("wait", [](const Event& e, nb::handle stream) {
        if (!stream.is_none()) return nb::cast<const Stream&>(stream).wait(e);
        int index = e.device() >= 0 ? e.device() : cuda_index(nb::none());
        cuda::current(index).wait(e);
      }, nb::arg("stream").none() = nb::none(),
         "Makes stream (the current one by default) wait for this event.")
      .def("query", &Event::query, "True when the recorded work has finished.")
      .def("synchronize", &Event::synchronize, nb::call_guard<nb::gil_scoped_release>(),
           "Waits (without the GIL) for the recorded work.")
      .def("elapsed_time", &Event::elapsed_ms, nb::arg("end_event"),
           nb::call_guard<nb::gil_scoped_release>(),
           "Milliseconds between this event and end_event (waits for both).")
      .def_prop_ro("device", [](const Event& e) -> nb::object {
        if (e.device() < 0) return nb::none();
        return nb::cast(cuda_device(e.device()));
      }, "The device it was recorded on (None before the first record).")
      .def_prop_ro("is_recorded", &Event::recorded)
      .def_prop_ro("enable_timing", &Event::timing)
      .def_prop_ro("ptr", [](const Event& e) { return reinterpret_cast<uintptr_t>(e.handle()); })
      .def("__repr__", [](const Event& e) {
        return "<xpuruntime.cuda.Event " + (e.device() < 0 ? std::string("unrecorded")
                                            : "cuda:" + std::to_string(e.device())) +
               (e.timing() ? " timing" : "") + ">";
      });
}

void bind_graphs(nb::module_& m) {
  nb::class_<Graph>(m, "CUDAGraph", "A CUDA graph captured from a stream and replayed.")
      .def(nb::init<>())
      .def("capture_begin", [](Graph& g, const std::string& mode) {
        cuda::CUstreamCaptureMode m;
        if (mode == "global") m = cuda::CU_STREAM_CAPTURE_MODE_GLOBAL;
        else if (mode == "thread_local") m = cuda::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        else if (mode == "relaxed") m = cuda::CU_STREAM_CAPTURE_MODE_RELAXED;
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

void bind_cuda(nb::module_& m) {
  nb::module_ c = m.def_submodule("_cuda", "CUDA devices, streams, events and graphs.");
  bind_devices_api(c);
  bind_streams(c);
  bind_graphs(c);
  bind_fft_plans(c);
  c.def("_dlpack_stream_number", &cuda::dlpack_stream_number, nb::arg("device"),
        "The DLPack stream number of device's current stream (1: legacy default).");
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
    if (!d.is_cpu()) cuda::check_device(d.index);
    push_default_device(d);
    return d;
  }, "`with Device('cuda:0'):` makes it the calling thread's default device.");
  cls.def("__exit__", [](const Device&, nb::args) { pop_default_device(); });
}

}  // namespace xrt::py
