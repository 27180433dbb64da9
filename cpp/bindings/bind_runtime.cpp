// cpp/bindings/bind_runtime.cpp: Stream and Event, the device-neutral runtime objects
// (`xpuruntime.cuda.Stream` and `.Event` are these, made on CUDA devices).
#include <nanobind/stl/string.h>

#include <cstdio>

#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/runtime/backend.h"

namespace xrt::py {
namespace {

std::string hex(uintptr_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%lx", static_cast<unsigned long>(v));
  return text;
}

/// A stream's or event's device: None (the current CUDA device, as PyTorch's
/// torch.cuda.Stream() means), an int (a CUDA index), "cpu", "cuda:N" or a Device.
Device runtime_device(nb::handle obj) {
  if (obj.is_none() || (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())))
    return Device::cuda(cuda_index(obj));
  Device d = *optional_device_arg(obj);
  backend(d).check_device(d.index);
  return d;
}

/// The device an unrecorded event records on by default: the current CUDA device.
Device event_device(const Event& e) {
  if (e.device()) return *e.device();
  return runtime_device(nb::none());
}

std::string stream_repr(const Stream& s) {
  std::string kind = s.device().is_cpu() ? "xpuruntime.Stream" : "xpuruntime.cuda.Stream";
  return "<" + kind + " " + s.device().str() + " " + hex(s.address()) + ">";
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<Stream>(m, "Stream",
                     "A device's queue of work (on CUDA a non-blocking stream); `with s:` makes "
                     "it current.")
      .def("__init__", [](Stream* self, nb::handle device, int priority) {
        new (self) Stream(create_stream(runtime_device(device), priority));
      }, nb::arg("device").none() = nb::none(), nb::arg("priority") = 0,
         "A new stream on device (default: the current CUDA device); lower priorities run "
         "first.")
      .def_prop_ro("ptr", &Stream::address,
                   "The native handle as an int (a CUstream; 0: the legacy default).")
      .def_prop_ro("device", &Stream::device)
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
      .def("__cuda_stream__", [](const Stream& s) {
        if (s.device().type != DeviceType::CUDA)
          throw TypeError("__cuda_stream__: this is a stream of " + s.device().str());
        return nb::make_tuple(0, s.address());
      })
      .def("__enter__", [](nb::handle self) {
        enter_stream_scope(nb::cast<const Stream&>(self));
        return nb::borrow(self);
      })
      .def("__exit__", [](const Stream&, nb::args) { exit_stream_scope(); })
      .def("__eq__", [](const Stream& a, nb::handle b) {
        return nb::isinstance<Stream>(b) && nb::cast<const Stream&>(b) == a;
      }, nb::arg("other").none())
      .def("__ne__", [](const Stream& a, nb::handle b) {
        return !(nb::isinstance<Stream>(b) && nb::cast<const Stream&>(b) == a);
      }, nb::arg("other").none())
      .def("__hash__", [](const Stream& s) {
        return static_cast<Py_hash_t>(std::hash<Stream>()(s));
      })
      .def("__repr__", &stream_repr);

  m.def("current_stream", [](nb::handle device) {
    return current_stream(runtime_device(device));
  }, nb::arg("device").none() = nb::none(),
     "The calling thread's current stream on device (what ops enqueue on).");
  m.def("default_stream", [](nb::handle device) {
    return default_stream(runtime_device(device));
  }, nb::arg("device").none() = nb::none(), "The default stream of device.");
  m.def("set_stream", [](const Stream& s) { set_current_stream(s); }, nb::arg("stream"),
        "Makes stream current on its device for the calling thread (no restore; prefer "
        "`with stream:`).");

  nb::class_<Event>(m, "Event", "A point in a stream's work: to order streams, wait, time.")
      .def(nb::init<bool, bool>(), nb::arg("enable_timing") = false, nb::arg("blocking") = false)
      .def("record", [](Event& e, nb::handle stream) {
        if (!stream.is_none()) return e.record(nb::cast<const Stream&>(stream));
        e.record(current_stream(event_device(e)));
      }, nb::arg("stream").none() = nb::none(),
         "Captures the work queued so far on stream (the current stream by default).")
      .def("wait", [](const Event& e, nb::handle stream) {
        if (!stream.is_none()) return nb::cast<const Stream&>(stream).wait(e);
        current_stream(event_device(e)).wait(e);
      }, nb::arg("stream").none() = nb::none(),
         "Makes stream (the current one by default) wait for this event.")
      .def("query", &Event::query, "True when the recorded work has finished.")
      .def("synchronize", &Event::synchronize, nb::call_guard<nb::gil_scoped_release>(),
           "Waits (without the GIL) for the recorded work.")
      .def("elapsed_time", &Event::elapsed_ms, nb::arg("end_event"),
           nb::call_guard<nb::gil_scoped_release>(),
           "Milliseconds between this event and end_event (waits for both).")
      .def_prop_ro("device", [](const Event& e) -> nb::object {
        if (!e.device()) return nb::none();
        return nb::cast(*e.device());
      }, "The device it was recorded on (None before the first record).")
      .def_prop_ro("is_recorded", &Event::recorded)
      .def_prop_ro("enable_timing", &Event::timing)
      .def_prop_ro("ptr", [](const Event& e) { return reinterpret_cast<uintptr_t>(e.handle()); })
      .def("__repr__", [](const Event& e) {
        std::string kind = e.device() && e.device()->is_cpu() ? "xpuruntime.Event"
                                                              : "xpuruntime.cuda.Event";
        return "<" + kind + " " + (e.device() ? e.device()->str() : std::string("unrecorded")) +
               (e.timing() ? " timing" : "") + ">";
      });
}

}  // namespace xrt::py
