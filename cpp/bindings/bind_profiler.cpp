// cpp/bindings/bind_profiler.cpp: _core._profiler, the recording side of xpuruntime.profiler:
// sessions, ranges, NVTX, and the Python line a wait came from.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>

#include "bindings.h"
#include "xpuruntime/profiler.h"

namespace xrt::py {
namespace {

// Frames from files under this folder (the package) are skipped: a wait belongs to the
// user's line that called into xpuruntime.
std::string package_dir;

// Note: the profiler asks from inside a wait, often with the GIL released around it; the
// thread's own state (it called from Python) takes the GIL back for the walk. A thread that
// never ran Python (a worker of the thread pool) gets no line rather than a GIL it could
// deadlock on.
bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

profiler::SourceLine locate() {
  profiler::SourceLine out;
  if (finalizing() || !PyGILState_GetThisThreadState()) return out;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyFrameObject* frame = PyThreadState_GetFrame(PyThreadState_Get());
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    bool ours = file && !package_dir.empty() &&
                std::strncmp(file, package_dir.data(), package_dir.size()) == 0;
    if (file && !ours) {
      out.file = file;
      out.line = PyFrame_GetLineNumber(frame);
      const char* name = PyUnicode_AsUTF8(code->co_name);
      out.function = name ? name : "";
      Py_DECREF(code);
      Py_DECREF(frame);
      break;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  PyErr_Clear();
  PyGILState_Release(gil);
  return out;
}

nb::dict result_dict(const profiler::Result& r) {
  nb::list records;
  for (size_t i = 0; i < r.records.size(); ++i) {
    const profiler::Record& e = r.records[i];
    records.append(nb::make_tuple(
        static_cast<int>(e.kind), e.begin_ns, e.end_ns, r.device_begin_ns[i], r.device_end_ns[i],
        e.bytes, e.address, e.shapes, e.id, e.thread, e.flags, static_cast<int>(e.device_type),
        e.device_index, e.op));
  }
  nb::list decisions;
  for (const auto& d : r.decisions) decisions.append(record_dict(d));
  nb::list lines;
  for (const auto& l : r.lines) lines.append(nb::make_tuple(l.file, l.line, l.function));
  nb::dict out;
  out["records"] = records;
  out["shapes"] = r.shapes;
  out["decisions"] = decisions;
  out["names"] = r.names;
  out["op_names"] = r.op_names;
  out["lines"] = lines;
  out["thread_ids"] = r.thread_ids;
  out["dropped"] = r.dropped;
  out["untimed"] = r.untimed;
  out["start_ns"] = r.start_ns;
  out["stop_ns"] = r.stop_ns;
  out["device_clock_error_ns"] = r.device_clock_error_ns;
  return out;
}

}  // namespace

void bind_profiler(nb::module_& m) {
  nb::module_ p = m.def_submodule("_profiler", "The profiler's recording side (C++ buffer).");
  profiler::set_source_locator(&locate);
  p.def("set_package_dir", [](std::string dir) { package_dir = std::move(dir); });
  p.def("start", [](bool device_time, bool shapes, bool memory, bool nvtx, size_t max_records,
                    size_t max_timed_ops) {
    profiler::Options o;
    o.device_time = device_time;
    o.shapes = shapes;
    o.memory = memory;
    o.nvtx = nvtx;
    o.max_records = max_records;
    o.max_timed_ops = max_timed_ops;
    profiler::start(o);
  }, nb::arg("device_time"), nb::arg("shapes"), nb::arg("memory"), nb::arg("nvtx"),
     nb::arg("max_records"), nb::arg("max_timed_ops"), "Starts recording.");
  p.def("stop", [] {
    profiler::Result r;
    {
      nb::gil_scoped_release release;  // waits for the devices it timed
      r = profiler::stop();
    }
    return result_dict(r);
  }, "Stops recording; the records, device times resolved, and their tables.");
  p.def("recording", &profiler::recording);
  p.def("push_range", &profiler::push_range, nb::arg("name"));
  p.def("pop_range", &profiler::pop_range);
  p.def("mark", &profiler::mark, nb::arg("name"));
  p.def("set_nvtx", &profiler::set_nvtx, nb::arg("on"));
  p.def("nvtx_on", &profiler::nvtx_on);
  p.def("now_ns", &profiler::now_ns, "The profiler's clock (CLOCK_MONOTONIC), nanoseconds.");
  p.def("cause_names", [] {
    std::vector<std::string> names;
    for (int c = 0; c <= static_cast<int>(profiler::Cause::Copy); ++c)
      names.push_back(profiler::cause_name(static_cast<profiler::Cause>(c)));
    return names;
  });
}

}  // namespace xrt::py
