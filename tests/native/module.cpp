// tests/native/module.cpp: xpuruntime_testing, the test-only extension module (built when
// the CMake option XRT_BUILD_TEST_MODULE is ON): the caching allocator on a fake device.
// Not part of the product; the tests import it and skip without it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <exception>
#include <typeinfo>

#include "fake_memory.h"
#include "memory_dicts.h"
#include "xpuruntime/errors.h"

namespace nb = nanobind;

namespace xrt::testing {
namespace {

// xpuruntime.OutOfMemoryError (an immortal reference), so an OOM reads as the product's.
nb::handle out_of_memory_error;

// Note: translators are tried newest first by every nanobind module of the process (they
// share nanobind's state), so this one must not shadow _core's: it takes exactly the two
// types the fake device raises (not their subclasses, such as LinAlgError) and maps them
// as _core does; anything else is rethrown, on to the next translator.
void translate_errors(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const std::exception& e) {
    if (typeid(e) == typeid(OutOfMemoryError))
      PyErr_SetString(out_of_memory_error.ptr(), e.what());
    else if (typeid(e) == typeid(ValueError))
      PyErr_SetString(PyExc_ValueError, e.what());
    else
      throw;
  }
}

// Seconds per allocate+free pair of nbytes, repeated (the algorithm alone, no Python).
double time_allocate_free(CachingAllocator& allocator, size_t nbytes, int repeat) {
  Stream stream = fake_stream(0);
  allocator.free(allocator.allocate(nbytes, stream));  // warm
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i) allocator.free(allocator.allocate(nbytes, stream));
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / repeat;
}

void bind_fake_allocator(nb::module_& m) {
  using py::snapshot_list;
  using py::stats_dict;
  nb::class_<FakeAllocator>(m, "FakeAllocator",
                            "The caching allocator on a fake device of `capacity` bytes.")
      .def(nb::init<size_t>(), nb::arg("capacity"))
      .def("malloc", &FakeAllocator::allocate, nb::arg("nbytes"), nb::arg("stream") = 0)
      .def("free", &FakeAllocator::free, nb::arg("address"))
      .def("record_stream", &FakeAllocator::record_stream, nb::arg("address"), nb::arg("stream"))
      .def("block_size", &FakeAllocator::block_size, nb::arg("address"))
      .def("hammer", &FakeAllocator::hammer, nb::arg("threads"), nb::arg("iterations"),
           nb::arg("one_stream"), nb::call_guard<nb::gil_scoped_release>())
      .def("empty_cache", [](FakeAllocator& a) { a.allocator().empty_cache(); })
      .def("stats", [](FakeAllocator& a) { return stats_dict(a.allocator().stats()); })
      .def("summary", [](FakeAllocator& a) { return a.allocator().summary(); })
      .def("snapshot", [](FakeAllocator& a) { return snapshot_list(a.allocator().snapshot()); })
      .def("set_limit", [](FakeAllocator& a, size_t n) { a.limited().set_limit(n); },
           "Caps the bytes the fake device lends the allocator (0: no cap).")
      .def("reset_peak_stats", [](FakeAllocator& a) { a.allocator().reset_peak_stats(); })
      .def("reset_accumulated_stats",
           [](FakeAllocator& a) { a.allocator().reset_accumulated_stats(); })
      .def("begin_private_pool", [](FakeAllocator& a, PoolId id, StreamId stream) {
        a.allocator().begin_private_pool(id, fake_stream(stream));
      })
      .def("end_private_pool", [](FakeAllocator& a, PoolId id) {
        a.allocator().end_private_pool(id);
      })
      .def("release_private_pool", [](FakeAllocator& a, PoolId id) {
        a.allocator().release_private_pool(id);
      })
      .def("fail_next", [](FakeAllocator& a, int n) { a.memory().fail_next(n); },
           "The next n raw allocations fail as if the device were full.")
      .def("complete", [](FakeAllocator& a, StreamId s) { a.memory().complete(s); },
           "Events recorded on stream so far complete.")
      .def("complete_all", [](FakeAllocator& a) { a.memory().complete_all(); })
      .def_prop_ro("capacity", [](FakeAllocator& a) { return a.memory().capacity(); })
      .def_prop_ro("raw_used", [](FakeAllocator& a) { return a.memory().used(); })
      .def_prop_ro("raw_allocations", [](FakeAllocator& a) { return a.memory().allocations(); })
      .def_prop_ro("raw_frees", [](FakeAllocator& a) { return a.memory().frees(); })
      .def_prop_ro("event_waits", [](FakeAllocator& a) { return a.memory().waits(); })
      .def_prop_ro("events_pending", [](FakeAllocator& a) { return a.memory().events_pending(); })
      .def_prop_ro("synchronizations",
                   [](FakeAllocator& a) { return a.memory().synchronizations(); })
      .def("observe", &FakeAllocator::observe, nb::arg("on") = true,
           "Starts (or stops) recording what the allocator tells its observer.")
      .def_prop_ro("observed", [](FakeAllocator& a) { return a.observer().entries; },
                   "[(what, address, size, requested)] told to the observer so far.")
      .def("time_malloc_free", [](FakeAllocator& a, size_t nbytes, int repeat) {
        return time_allocate_free(a.allocator(), nbytes, repeat);
      }, nb::arg("nbytes"), nb::arg("repeat") = 100000,
         "Seconds per cached malloc+free pair, timed in C++.")
      .def_static("round_size", &CachingAllocator::round_size)
      .def_static("segment_size", &CachingAllocator::segment_size);
}

}  // namespace
}  // namespace xrt::testing

NB_MODULE(xpuruntime_testing, m) {
  using namespace xrt::testing;
  m.doc() = "Test doubles of xpuruntime (not a public API; built with XRT_BUILD_TEST_MODULE).";
  nb::module_ product = nb::module_::import_("xpuruntime");
  out_of_memory_error = nb::object(product.attr("OutOfMemoryError")).release();
  nb::register_exception_translator(&translate_errors);
  bind_fake_allocator(m);
}
