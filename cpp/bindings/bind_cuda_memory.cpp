// cpp/bindings/bind_cuda_memory.cpp: the CUDA allocators' controls and statistics, the
// pinned pool, and (in _core._testing) the caching allocator on a fake device.
#include <nanobind/stl/string.h>

#include <algorithm>
#include <chrono>

#include "bind_args.h"
#include "bindings.h"
#include "xpuruntime/runtime/backend.h"
#include "xpuruntime/cuda_memory.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/fake_memory.h"

namespace xrt::py {
namespace {

nb::dict stats_dict(const MemoryStats& stats) {
  nb::dict d;
  for (auto& [key, value] : stat_items(stats)) d[key.c_str()] = value;
  return d;
}

nb::list snapshot_list(const std::vector<SegmentInfo>& segments) {
  nb::list out;
  for (const SegmentInfo& s : segments) {
    nb::dict seg;
    seg["address"] = s.address;
    seg["size"] = s.size;
    seg["stream"] = s.stream;
    seg["pool"] = s.small ? "small" : "large";
    seg["private_pool"] = s.private_pool;
    nb::list blocks;
    for (const SegmentInfo::Block& b : s.blocks) {
      nb::dict block;
      block["address"] = b.address;
      block["size"] = b.size;
      block["state"] = b.allocated ? "allocated" : b.pending ? "pending" : "free";
      blocks.append(block);
    }
    seg["blocks"] = blocks;
    out.append(seg);
  }
  return out;
}

// Copies the bytes of src into dst (both contiguous, the same size, any devices).
void copy_into(const Tensor& dst, const Tensor& src) {
  size_t nbytes = size_t(src.numel()) * src.itemsize();
  if (!dst.is_contiguous() || !src.is_contiguous() || size_t(dst.numel()) * dst.itemsize() != nbytes)
    throw ValueError("copy_into needs two contiguous tensors of the same size in bytes");
  Device device = dst.device().is_cpu() ? src.device() : dst.device();
  if (device.is_cpu()) throw ValueError("copy_into copies to or from a CUDA tensor");
  nb::gil_scoped_release release;
  backend(device.type).copy_bytes(dst.data(), dst.device(), src.data(), src.device(), nbytes);
}

// Seconds per allocate+free pair of nbytes, repeated (the algorithm alone, no Python).
double time_allocate_free(CachingAllocator& allocator, size_t nbytes, StreamId stream,
                          int repeat) {
  allocator.free(allocator.allocate(nbytes, stream));  // warm
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i) allocator.free(allocator.allocate(nbytes, stream));
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / repeat;
}

// Seconds per allocation+free of a CUDA Storage through the backend (no Python).
double time_cuda_allocate_free(int device, size_t nbytes, int repeat) {
  Device d{DeviceType::CUDA, static_cast<int16_t>(device)};
  const Backend& b = backend(DeviceType::CUDA);
  b.allocate(nbytes, d);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeat; ++i) b.allocate(nbytes, d);
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / repeat;
}

void bind_fake_allocator(nb::module_& testing) {
  nb::class_<FakeAllocator>(testing, "FakeAllocator",
                            "The caching allocator on a fake device of `capacity` bytes.")
      .def(nb::init<size_t>(), nb::arg("capacity"))
      .def("malloc", &FakeAllocator::allocate, nb::arg("nbytes"), nb::arg("stream") = 0)
      .def("free", &FakeAllocator::free, nb::arg("address"))
      .def("record_stream", &FakeAllocator::record_stream, nb::arg("address"), nb::arg("stream"))
      .def("block_size", &FakeAllocator::block_size, nb::arg("address"))
      .def("empty_cache", [](FakeAllocator& a) { a.allocator().empty_cache(); })
      .def("stats", [](FakeAllocator& a) { return stats_dict(a.allocator().stats()); })
      .def("summary", [](FakeAllocator& a) { return a.allocator().summary(); })
      .def("snapshot", [](FakeAllocator& a) { return snapshot_list(a.allocator().snapshot()); })
      .def("set_limit", [](FakeAllocator& a, size_t n) { a.allocator().set_limit(n); })
      .def("reset_peak_stats", [](FakeAllocator& a) { a.allocator().reset_peak_stats(); })
      .def("reset_accumulated_stats",
           [](FakeAllocator& a) { a.allocator().reset_accumulated_stats(); })
      .def("begin_private_pool", [](FakeAllocator& a, PoolId id, StreamId stream) {
        a.allocator().begin_private_pool(id, stream);
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
      .def("time_malloc_free", [](FakeAllocator& a, size_t nbytes, int repeat) {
        return time_allocate_free(a.allocator(), nbytes, 0, repeat);
      }, nb::arg("nbytes"), nb::arg("repeat") = 100000,
         "Seconds per cached malloc+free pair, timed in C++.")
      .def_static("round_size", &CachingAllocator::round_size)
      .def_static("segment_size", &CachingAllocator::segment_size);
}

}  // namespace

void bind_cuda_memory(nb::module_& m) {
  m.def("_cuda_memory_stats", [](int device) { return stats_dict(cuda::memory_stats(device)); });
  m.def("_cuda_memory_summary", &cuda::memory_summary);
  m.def("_cuda_memory_snapshot",
        [](int device) { return snapshot_list(cuda::memory_snapshot(device)); });
  m.def("_cuda_empty_cache", [] {
    nb::gil_scoped_release release;
    cuda::empty_cache();
  });
  m.def("_cuda_reset_peak_memory_stats", &cuda::reset_peak_memory_stats);
  m.def("_cuda_reset_accumulated_memory_stats", &cuda::reset_accumulated_memory_stats);
  m.def("_cuda_set_memory_limit", &cuda::set_memory_limit);
  m.def("_cuda_set_memory_fraction", &cuda::set_memory_fraction);
  m.def("_cuda_set_allocator", [](const std::string& name) {
    cuda::set_allocator(cuda::parse_allocator_kind(name));
  });
  m.def("_cuda_allocator", [] { return cuda::allocator_name(cuda::allocator_kind()); });
  m.def("_cuda_record_stream", [](nb::handle tensor, cuda::StreamHandle stream) {
    cuda::record_stream(*tensor_arg(tensor, "tensor").storage(), stream);
  });
  m.def("_cuda_begin_private_pool", &cuda::begin_private_pool);
  m.def("_cuda_end_private_pool", &cuda::end_private_pool);
  m.def("_cuda_release_private_pool", &cuda::release_private_pool);
  m.def("_cuda_empty_pinned", [](nb::handle shape, nb::handle dtype, int device) {
    return cuda::empty_pinned(int_tuple_arg(shape, "shape"), dtype_arg(dtype), device);
  });
  m.def("_cuda_pinned_memory_stats",
        [](int device) { return stats_dict(cuda::pinned_memory_stats(device)); });
  m.def("_cuda_set_staging_threshold", &cuda::set_staging_threshold);
  m.def("_cuda_set_staging_streaming_stores", &cuda::set_staging_streaming_stores);
  m.def("_cuda_copy_into", [](nb::handle dst, nb::handle src) {
    copy_into(tensor_arg(dst, "dst"), tensor_arg(src, "src"));
  });

  nb::module_ testing = nb::hasattr(m, "_testing")
                            ? nb::borrow<nb::module_>(m.attr("_testing"))
                            : m.def_submodule("_testing", "Test doubles; not a public API.");
  bind_fake_allocator(testing);
  testing.def("time_cuda_malloc_free", &time_cuda_allocate_free, nb::arg("device"),
              nb::arg("nbytes"), nb::arg("repeat") = 100000,
              "Seconds per CUDA allocation+free through the backend, timed in C++.");
  testing.def("cuda_synchronize", [](int device) {
    nb::gil_scoped_release release;
    backend(DeviceType::CUDA).synchronize(Device{DeviceType::CUDA, static_cast<int16_t>(device)});
  });
}

}  // namespace xrt::py
